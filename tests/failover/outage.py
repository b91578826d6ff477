"""Outage scenarios run the same way on a pykafkad and an Apache Kafka cluster
(compat.failover's targets), each returning what the clients saw, so a test can hold
pykafkad's answers to Kafka's."""

from __future__ import annotations

import time
import uuid

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    NewTopic,
)

from compat.failover import FailoverTarget, active_controller, replica_logs
from compat.wire_client import WireClient
from wire.messages.create_topics_request import CreatableTopic, CreateTopicsRequest
from wire.messages.incremental_alter_configs_request import (
    AlterableConfig,
    AlterConfigsResource,
    IncrementalAlterConfigsRequest,
)
from wire.messages.metadata_request import MetadataRequest, MetadataRequestTopic

WAIT_S = 60.0


def wait_for(cond, what: str, timeout: float = WAIT_S):
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = cond()
        except (OSError, KafkaException):
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)  # polling other processes: nothing to wait on


def metadata(bootstrap: str, topic: str):
    """(error code, leader, leader epoch, isr) of partition 0, as that broker answers
    Metadata v12."""
    with WireClient(bootstrap, timeout=10) as client:
        resp = client.request(3, 12, MetadataRequest(
            topics=[MetadataRequestTopic(name=topic)], allow_auto_topic_creation=False))
    t = resp.topics[0]
    if not t.partitions:  # not known to this broker yet
        return t.error_code, -1, -1, []
    p = t.partitions[0]
    return p.error_code, p.leader_id, p.leader_epoch, sorted(p.isr_nodes)


def produce(bootstrap: str, topic: str, values: list[bytes], **conf) -> list[str]:
    """Produces to partition 0 and returns each delivery's error name ('' when acknowledged)."""
    out: list[str] = []
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0, **conf})
    for v in values:
        p.produce(topic, value=v, partition=0,
                  on_delivery=lambda err, _m: out.append(err.name() if err else ""))
    p.flush(WAIT_S)
    return out


def consume_all(bootstrap: str, topic: str) -> list[bytes]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic}-reader",
                  "enable.auto.commit": False, "enable.partition.eof": True})
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        out = []
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                if m.error().code() == -191:  # _PARTITION_EOF
                    return out
                continue
            out.append(m.value())
        raise AssertionError("the partition's end was not reached")
    finally:
        c.close()


#: how each KIP-320 consumer of offline_then_unclean resets: librdkafka's auto.offset.reset
TRUNCATION_RESETS = ("error", "earliest")


def _truncation_consumer(bootstrap: str, topic: str, reset: str) -> Consumer:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic}-{reset}",
                  "enable.auto.commit": False, "auto.offset.reset": reset,
                  "topic.metadata.refresh.interval.ms": 500})
    c.assign([TopicPartition(topic, 0, 0)])
    return c


def _poll_values(c: Consumer, n: int) -> list[tuple[int, bytes]]:
    out: list[tuple[int, bytes]] = []
    deadline = time.monotonic() + WAIT_S
    while len(out) < n and time.monotonic() < deadline:
        m = c.poll(0.2)
        if m is not None and not m.error():
            out.append((m.offset(), m.value()))
    return out


def _poll_outcome(c: Consumer, n: int) -> list:
    """The consumer's first error (its code, and whether it tells of a truncation) or its
    next ``n`` records (offset, value)."""
    out: list = []
    deadline = time.monotonic() + WAIT_S
    while len(out) < n and time.monotonic() < deadline:
        m = c.poll(0.2)
        if m is None:
            continue
        if m.error():
            return [(m.error().code(), "Partition log truncation detected" in m.error().str())]
        out.append((m.offset(), m.value()))
    return out


def offline_then_unclean(target: FailoverTarget) -> dict:
    """A partition on brokers 1 (leader) and 2, min.insync.replicas=1: broker 2 dies and
    leaves the ISR, records go on to 1 alone, then 1 dies too; broker 2 comes back, out of
    sync; then the topic allows unclean elections; then broker 1 comes back.  Two brokers are
    down at once, so the controllers must be other nodes (a quorum of its own).  Consumers
    that read everything of broker 1 before it died (one per TRUNCATION_RESETS) then meet the
    truncated log (KIP-320: OffsetForLeaderEpoch when the leader changes)."""
    seen: dict = {}
    bootstrap = target.bootstrap(3)  # broker 3 holds no replica and stays up throughout
    topic = f"failover-unclean-{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, replica_assignment=[[1, 2]], config={
        "min.insync.replicas": "1"})])[topic].result(WAIT_S)
    wait_for(lambda: metadata(bootstrap, topic)[3] == [1, 2], "both replicas in sync")
    seen["first"] = produce(bootstrap, topic, [b"a%d" % i for i in range(5)])
    target.kill_node(2)
    wait_for(lambda: metadata(bootstrap, topic)[3] == [1], "2 out of the ISR")
    seen["alone"] = produce(bootstrap, topic, [b"b%d" % i for i in range(5)])
    consumers = {r: _truncation_consumer(bootstrap, topic, r) for r in TRUNCATION_RESETS}
    seen["read_before"] = {r: [v for _, v in _poll_values(c, 10)] for r, c in consumers.items()}
    epoch_before = metadata(bootstrap, topic)[2]
    target.kill_node(1)
    seen["offline"] = wait_for(lambda: (lambda m: m if m[1] == -1 else None)(
        metadata(bootstrap, topic)), "the partition offline")
    seen["offline_produce"] = produce(bootstrap, topic, [b"c"], **{"message.timeout.ms": 3000})
    target.start_node(2)
    wait_for(lambda: len(_brokers(bootstrap)) == 2, "broker 2 registered again")
    seen["after_2_returned"] = metadata(bootstrap, topic)
    # sent to a live broker itself: librdkafka's admin client sends it to Metadata's
    # controller_id, which Kafka picks at random among the brokers and can be the dead one
    # ("Timed out waiting for controller")
    with WireClient(bootstrap, timeout=WAIT_S) as client:
        altered = client.request(44, 1, IncrementalAlterConfigsRequest(resources=[
            AlterConfigsResource(resource_type=2, resource_name=topic, configs=[AlterableConfig(
                name="unclean.leader.election.enable", config_operation=0, value="true")])]))
    assert [r.error_code for r in altered.responses] == [0], altered.responses
    seen["unclean"] = wait_for(lambda: (lambda m: m if m[1] == 2 else None)(
        metadata(bootstrap, topic)), "2 elected uncleanly")
    seen["unclean_epoch_bumped"] = seen["unclean"][2] > epoch_before
    seen["values_on_2"] = consume_all(bootstrap, topic)
    seen["later"] = produce(bootstrap, topic, [b"d%d" % i for i in range(3)])
    seen["read_after_truncation"] = {r: _poll_outcome(c, 3) for r, c in consumers.items()}
    for c in consumers.values():
        c.close()
    target.start_node(1)
    wait_for(lambda: metadata(bootstrap, topic)[3] == [1, 2], "1 back in the ISR")
    seen["values_at_end"] = consume_all(bootstrap, topic)
    seen["replicas_identical"] = wait_for(
        lambda: (lambda logs: logs[0] and logs[0] == logs[1])(
            replica_logs(target, topic, 0)[:2]), "1 truncated to 2's log")
    return seen


def _brokers(bootstrap: str) -> list[int]:
    with WireClient(bootstrap, timeout=10) as client:
        resp = client.request(3, 12, MetadataRequest(topics=[], allow_auto_topic_creation=False))
    return sorted(b.node_id for b in resp.brokers)


def quorum_lost(target: FailoverTarget) -> dict:
    """Two of three nodes die: the survivor keeps serving the partition it leads, and metadata
    changes (CreateTopics) through it fail."""
    seen: dict = {}
    survivor = active_controller(target)[0]
    others = [n for n in target.node_ids if n != survivor]
    bootstrap = target.bootstrap(survivor)
    topic = f"failover-quorum-{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, replica_assignment=[[survivor]])])[topic].result(WAIT_S)
    wait_for(lambda: metadata(bootstrap, topic)[1] == survivor, "the topic led by the survivor")
    seen["before"] = produce(bootstrap, topic, [b"x%d" % i for i in range(3)])
    for n in others:
        target.kill_node(n)
    seen["produce_without_quorum"] = produce(bootstrap, topic, [b"y%d" % i for i in range(3)])
    seen["consume_without_quorum"] = consume_all(bootstrap, topic)
    # CreateTopics straight to the survivor: an admin client would send it to the Metadata
    # controller_id, which Kafka picks at random among the brokers it still lists (a dead
    # one, often, and then the client only waits for it)
    name = f"{topic}-new"
    t0 = time.monotonic()
    with WireClient(bootstrap, timeout=90) as client:
        resp = client.request(19, 7, CreateTopicsRequest(topics=[CreatableTopic(
            name=name, num_partitions=1, replication_factor=1, assignments=[], configs=[])],
            timeout_ms=30000, validate_only=False))
    result = resp.topics[0]
    seen["create_topics"] = (result.error_code, result.error_message)
    seen["create_topics_s"] = round(time.monotonic() - t0, 1)
    for n in others:
        target.start_node(n)
    admin.create_topics([NewTopic(name + "2", 1, 1)])[name + "2"].result(WAIT_S)
    seen["create_after_recovery"] = "created"
    return seen


def txn_coordinator(bootstrap: str, transactional_id: str) -> int:
    """The node FindCoordinator (key type 1, v4) names for a transactional id, -1 if none."""
    from wire.messages.find_coordinator_request import FindCoordinatorRequest

    with WireClient(bootstrap, timeout=10) as client:
        resp = client.request(10, 4, FindCoordinatorRequest(
            key_type=1, coordinator_keys=[transactional_id]))
    c = resp.coordinators[0]
    return c.node_id if c.error_code == 0 else -1


def txn_coordinator_dies(target: FailoverTarget) -> dict:
    """A transaction is open (records produced to a partition led elsewhere) when the broker
    coordinating it is killed: the producer's commit finds the new coordinator (the new leader
    of the __transaction_state partition, which loaded the transaction) and completes; a
    read_committed consumer then reads the records exactly once."""
    seen: dict = {}
    bootstrap = ",".join(target.bootstrap(n) for n in target.node_ids)
    topic = f"failover-txn-{uuid.uuid4().hex[:6]}"
    tid = f"{topic}-tid"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 3, config={"min.insync.replicas": "2"})])[
        topic].result(WAIT_S)
    wait_for(lambda: len(metadata(target.bootstrap(1), topic)[3]) == 3, "the topic in sync")
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": tid, "linger.ms": 0})
    p.init_transactions(WAIT_S)
    coordinator = wait_for(lambda: txn_coordinator(bootstrap, tid) if txn_coordinator(
        bootstrap, tid) >= 0 else None, "a transaction coordinator")
    p.begin_transaction()
    for i in range(5):
        p.produce(topic, value=b"t%d" % i, partition=0)
    p.flush(WAIT_S)
    target.kill_node(coordinator)
    survivors = [n for n in target.node_ids if n != coordinator]
    t0 = time.monotonic()
    try:
        p.commit_transaction(WAIT_S)
        seen["commit"] = "committed"
    except KafkaException as e:
        seen["commit"] = e.args[0].name()
    seen["commit_s"] = round(time.monotonic() - t0, 1)
    seen["new_coordinator_is_a_survivor"] = txn_coordinator(
        target.bootstrap(survivors[0]), tid) in survivors
    c = Consumer({"bootstrap.servers": ",".join(target.bootstrap(n) for n in survivors),
                  "group.id": f"{topic}-reader", "isolation.level": "read_committed",
                  "enable.auto.commit": False, "enable.partition.eof": True})
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        values = []
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                if m.error().code() == -191 and values:
                    break
                continue
            values.append(m.value())
        seen["read_committed"] = values
    finally:
        c.close()
    target.start_node(coordinator)
    return seen


def group_coordinator(bootstrap: str, group: str) -> int:
    """The node FindCoordinator (key type 0, v4) names for a group, -1 if none."""
    from wire.messages.find_coordinator_request import FindCoordinatorRequest

    with WireClient(bootstrap, timeout=10) as client:
        resp = client.request(10, 4, FindCoordinatorRequest(key_type=0, coordinator_keys=[group]))
    c = resp.coordinators[0]
    return c.node_id if c.error_code == 0 else -1


def _coordinator_dies(target: FailoverTarget, group: str, coordinator: int, ask):
    """Kills the group's coordinator, then asks the new one with ``ask(client)`` (None: not
    yet) until it answers; the old node is started again.  The coordinator answers before
    its followers have the group's records (Kafka waits for them), so the kill waits until
    every replica holds the same __consumer_offsets log."""
    from pykafkad.coordinator.partitioning import partition_for

    offsets_partition = partition_for(group, 50)

    def replicated() -> bool:
        logs = replica_logs(target, "__consumer_offsets", offsets_partition)
        return bool(logs[0]) and all(log == logs[0] for log in logs[1:])
    wait_for(replicated, "the group's records on every replica")
    target.kill_node(coordinator)
    survivors = [n for n in target.node_ids if n != coordinator]
    survivor_bootstrap = ",".join(target.bootstrap(n) for n in survivors)

    def answered():
        node = group_coordinator(survivor_bootstrap, group)
        if node not in survivors:
            return None
        with WireClient(target.bootstrap(node), timeout=10) as c:
            return ask(c)
    answer = wait_for(answered, "the new coordinator to answer the member")
    target.start_node(coordinator)
    return answer


def consumer_group_coordinator_dies(target: FailoverTarget) -> dict:
    """A KIP-848 member is in a group when the group's coordinator is killed: the new leader
    of the group's __consumer_offsets partition loads the group, and the member goes on
    heartbeating with its epoch and keeps its partitions."""
    from compat.consumer_group_scenario import _hb, _join
    from wire.messages.consumer_group_describe_request import ConsumerGroupDescribeRequest
    from wire.messages.consumer_group_heartbeat_request import TopicPartitions

    seen: dict = {}
    bootstrap = ",".join(target.bootstrap(n) for n in target.node_ids)
    topic = f"failover-cg-{uuid.uuid4().hex[:6]}"
    group = f"{topic}-group"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 2, 3)])[topic].result(WAIT_S)
    wait_for(lambda: len(metadata(target.bootstrap(1), topic)[3]) == 3, "the topic in sync")
    coordinator = wait_for(lambda: group_coordinator(bootstrap, group) if group_coordinator(
        bootstrap, group) >= 0 else None, "a group coordinator")

    def joined():
        with WireClient(target.bootstrap(coordinator), timeout=10) as c:
            r = _join(c, group, "member-a", topic)
        return r if r.error_code == 0 and r.assignment and sum(
            len(tp.partitions) for tp in r.assignment.topic_partitions) == 2 else None
    a = wait_for(joined, "the member's assignment")
    owned = [TopicPartitions(topic_id=tp.topic_id, partitions=list(tp.partitions))
             for tp in a.assignment.topic_partitions]

    def heartbeat(c: WireClient):
        r = _hb(c, group, "member-a", a.member_epoch, topic_partitions=owned)
        if r.error_code in (14, 15, 16):  # loading / not available / not coordinator
            return None
        return r, c.request(69, 1, ConsumerGroupDescribeRequest(group_ids=[group])).groups[0]
    r, d = _coordinator_dies(target, group, coordinator, heartbeat)
    seen["heartbeat"] = (r.error_code, r.member_epoch == a.member_epoch)
    seen["described"] = (d.error_code, d.group_state, [
        (m.member_id, m.member_epoch == a.member_epoch,
         sorted(p for tp in m.assignment.topic_partitions for p in tp.partitions))
        for m in d.members])
    return seen


def _streams_heartbeat(c: WireClient, group: str, topic: str, epoch: int, active=()):
    """A StreamsGroupHeartbeat of member-s: a one-subtopology, stateless topology reading
    ``topic`` (no internal topics to wait for), reporting the ``active`` tasks it owns."""
    import wire.messages.streams_group_heartbeat_request as hb

    full = epoch == 0
    return c.send(hb.StreamsGroupHeartbeatRequest(
        group_id=group, member_id="member-s", member_epoch=epoch,
        endpoint_information_epoch=0, rebalance_timeout_ms=30000 if full else -1,
        topology=hb.Topology(epoch=0, subtopologies=[hb.Subtopology(
            subtopology_id="0", source_topics=[topic], source_topic_regex=[],
            state_changelog_topics=[], repartition_sink_topics=[], repartition_source_topics=[],
            copartition_groups=[])]) if full else None,
        active_tasks=[hb.TaskIds(subtopology_id=s, partitions=list(p)) for s, p in active],
        standby_tasks=[], warmup_tasks=[], process_id="process-s" if full else None,
        user_endpoint=None, client_tags=[] if full else None,
        task_offsets=[], task_end_offsets=[]), 0)


def streams_group_coordinator_dies(target: FailoverTarget) -> dict:
    """KIP-1071: a streams-group member holds its tasks when the group's coordinator is
    killed; the new leader of the group's __consumer_offsets partition loads the group (its
    topology, members and assignment records), and the member goes on with its epoch."""
    from wire.messages.streams_group_describe_request import StreamsGroupDescribeRequest

    bootstrap = ",".join(target.bootstrap(n) for n in target.node_ids)
    topic = f"failover-sg-{uuid.uuid4().hex[:6]}"
    group = f"{topic}-app"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 2, 3)])[topic].result(WAIT_S)
    wait_for(lambda: len(metadata(target.bootstrap(1), topic)[3]) == 3, "the topic in sync")
    coordinator = wait_for(lambda: group_coordinator(bootstrap, group) if group_coordinator(
        bootstrap, group) >= 0 else None, "a group coordinator")
    epoch, tasks = 0, []

    def assigned():
        nonlocal epoch, tasks
        with WireClient(target.bootstrap(coordinator), timeout=10) as c:
            r = _streams_heartbeat(c, group, topic, epoch, tasks)
        if r.error_code:
            return None
        epoch = r.member_epoch
        if r.active_tasks is not None:
            tasks = [(t.subtopology_id, sorted(t.partitions)) for t in r.active_tasks]
        return True if tasks == [("0", [0, 1])] else None
    wait_for(assigned, "the member's two tasks")
    with WireClient(target.bootstrap(coordinator), timeout=10) as c:
        before = _streams_view(c.send(StreamsGroupDescribeRequest(group_ids=[group]), 0))
    def heartbeat(c: WireClient):
        r = _streams_heartbeat(c, group, topic, epoch, tasks)
        if r.error_code in (14, 15, 16):  # loading / not available / not coordinator
            return None
        return r, c.send(StreamsGroupDescribeRequest(group_ids=[group]), 0)
    r, described = _coordinator_dies(target, group, coordinator, heartbeat)
    d = described.groups[0]
    return {"heartbeat": (r.error_code, r.member_epoch == epoch),
            "loaded_as_it_was": _streams_view(described) == before,
            "described": (d.error_code, d.group_state, [
                (m.member_id, m.member_epoch == epoch,
                 [(t.subtopology_id, sorted(t.partitions)) for t in m.assignment.active_tasks])
                for m in d.members])}


def _streams_view(described) -> tuple:
    """What a StreamsGroupDescribe says of the group's state: epochs, topology, members with
    their process, epochs and tasks (what the new coordinator must load unchanged)."""
    g = described.groups[0]
    return (g.error_code, g.group_state, g.group_epoch, g.assignment_epoch,
            repr(g.topology), sorted((m.member_id, m.member_epoch, m.process_id, m.topology_epoch,
                                      repr(m.assignment), repr(m.target_assignment))
                                     for m in g.members))
