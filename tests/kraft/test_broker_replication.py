"""Three KRaft node processes (combined broker+controller, run_cluster) replicating each
other's partitions over their PLAINTEXT listeners: admin requests are forwarded to the active
controller, acks=all waits for the ISR, every replica's log ends byte for byte the leader's, a
consumer reads up to the high watermark only, a dead follower leaves the ISR through
AlterPartition after replica.lag.time.max.ms (then min.insync.replicas=3 refuses acks=all with
NOT_ENOUGH_REPLICAS), and a broker that does not lead a
partition answers NOT_LEADER_OR_FOLLOWER."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, Producer
from confluent_kafka import TopicPartition as CTopicPartition
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewPartitions,
    NewTopic,
)

from compat.wire_client import WireClient
from pykafkad.coordinator.partitioning import partition_for
from pykafkad.testing import run_cluster
from tests.integration.clients import WAIT_S, confluent_consume, confluent_produce, needs_java
from wire.errors import ErrorCode
from wire.messages.find_coordinator_request import FindCoordinatorRequest
from wire.messages.init_producer_id_request import InitProducerIdRequest
from wire.messages.list_offsets_request import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsTopic,
)
from wire.messages.metadata_request import MetadataRequest, MetadataRequestTopic
from wire.messages.offset_fetch_request import OffsetFetchRequest, OffsetFetchRequestTopic

#: the ISR shrinks long before the dead broker's session ends (so AlterPartition does it,
#: not the controller's fencing)
CONFIG = {"replica.lag.time.max.ms": "5000", "broker.session.timeout.ms": "60000",
          "broker.heartbeat.interval.ms": "500"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with run_cluster(3, config=CONFIG, data_dir=tmp_path_factory.mktemp("brokers")) as c:
        yield c


def wait_for(cond, what: str, timeout: float = 60):
    """Polls ``cond()`` until it returns something truthy (returned), within ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = cond()
        if value:
            return value
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what}")


def node_bootstrap(cluster, node_id: int) -> str:
    n = cluster.nodes[node_id]
    return f"{n.host}:{n.port}"


def running_bootstrap(cluster) -> str:
    return ",".join(node_bootstrap(cluster, i) for i, n in cluster.nodes.items() if n.running)


def partition_state(bootstrap: str, topic: str, index: int = 0):
    """(leader, replicas, isr) as the broker at ``bootstrap`` (that one: librdkafka would ask
    any broker it knows) answers Metadata v12, or None."""
    with WireClient(bootstrap) as client:
        resp = client.request(3, 12, MetadataRequest(
            topics=[MetadataRequestTopic(name=topic)], allow_auto_topic_creation=False))
    t = resp.topics[0]
    p = next((p for p in t.partitions if p.partition_index == index), None)
    if t.error_code or p is None or p.error_code or p.leader_id < 0:
        return None
    return p.leader_id, list(p.replica_nodes), sorted(p.isr_nodes)


def create_topic(cluster, partitions: int = 1, rf: int = 3, **config) -> str:
    """Created through a broker (forwarded to the controller); returns once every broker's
    Metadata shows a leader for each partition."""
    name = f"r-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    futures = admin.create_topics([NewTopic(name, partitions, rf, config={
        k.replace("_", "."): str(v) for k, v in config.items()})])
    futures[name].result(WAIT_S)
    for node_id in cluster.nodes:
        for p in range(partitions):
            wait_for(lambda n=node_id, p=p: partition_state(node_bootstrap(cluster, n), name, p),
                     f"{name}-{p} on broker {node_id}")
    return name


def partition_dir(cluster, node_id: int, topic: str, index: int = 0) -> Path:
    return Path(cluster.data_dir) / f"node-{node_id}" / "data" / f"{topic}-{index}"


def log_files(cluster, node_id: int, topic: str) -> dict[str, bytes]:
    d = partition_dir(cluster, node_id, topic)
    if not d.is_dir():
        return {}
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())
            if p.suffix == ".log" or p.name == "leader-epoch-checkpoint"}


def active_controller(cluster) -> int:
    for n in cluster.nodes.values():
        path = Path(cluster.data_dir) / f"node-{n.node_id}" / "data" / "__cluster_metadata-0" \
            / "quorum-state"
        if n.running and path.exists():
            leader = json.loads(path.read_text()).get("leaderId", -1)
            if leader >= 0:
                return leader
    return -1


def test_admin_requests_are_forwarded_and_every_broker_describes_the_topic(cluster):
    topic = create_topic(cluster, partitions=3, rf=3)
    states = [[partition_state(node_bootstrap(cluster, n), topic, p) for p in range(3)]
              for n in cluster.nodes]
    assert states[0] == states[1] == states[2]
    # the controller's placement: every broker leads one partition, each of rf 3
    assert sorted(s[0] for s in states[0]) == [1, 2, 3]
    assert all(sorted(s[1]) == [1, 2, 3] for s in states[0])
    # a second create of the same topic: the controller's answer comes back through the broker
    admin = AdminClient({"bootstrap.servers": node_bootstrap(cluster, 2)})
    with pytest.raises(Exception) as e:
        admin.create_topics([NewTopic(topic, 1, 3)])[topic].result(WAIT_S)
    assert e.value.args[0].code() == KafkaError.TOPIC_ALREADY_EXISTS


def test_acks_all_produce_leaves_byte_identical_logs_on_every_replica(cluster):
    topic = create_topic(cluster)
    messages = [{"value": b"value-%d" % i, "key": b"k%d" % (i % 7)} for i in range(300)]
    confluent_produce(cluster.bootstrap_servers, topic, messages,
                      **{"acks": "all", "batch.num.messages": 20})
    confluent_produce(cluster.bootstrap_servers, topic, messages[:50],
                      **{"acks": "all", "enable.idempotence": True})

    def identical():
        files = [log_files(cluster, n, topic) for n in cluster.nodes]
        return files[0] and files[0] == files[1] == files[2] and files[0]
    files = wait_for(identical, "three identical replicas")
    assert sum(len(b) for n, b in files.items() if n.endswith(".log")) > 300 * 10
    got = confluent_consume(cluster.bootstrap_servers, topic, 350)
    assert [m.value() for m in got] == [m["value"] for m in messages + messages[:50]]


def list_offset(bootstrap: str, topic: str, timestamp: int = -1) -> tuple[int, int]:
    """(error code, offset) of ListOffsets v7 (latest: the high watermark) from one broker."""
    req = ListOffsetsRequest(replica_id=-1, isolation_level=0, topics=[ListOffsetsTopic(
        name=topic, partitions=[ListOffsetsPartition(
            partition_index=0, current_leader_epoch=-1, timestamp=timestamp)])])
    with WireClient(bootstrap) as client:
        resp = client.request(2, 7, req)
    p = resp.topics[0].partitions[0]
    return p.error_code, p.offset


def test_a_broker_that_does_not_lead_answers_not_leader_or_follower(cluster):
    topic = create_topic(cluster, rf=3)
    one = create_topic(cluster, rf=1)
    leader, replicas, _ = partition_state(cluster.bootstrap_servers, topic)
    for node_id in cluster.nodes:
        code, _ = list_offset(node_bootstrap(cluster, node_id), topic)
        assert code == (ErrorCode.NONE if node_id == leader else ErrorCode.NOT_LEADER_OR_FOLLOWER)
    one_leader = partition_state(cluster.bootstrap_servers, one)[0]
    for node_id in cluster.nodes:  # a broker without a replica: the same error, as Kafka
        code, _ = list_offset(node_bootstrap(cluster, node_id), one)
        assert code == (ErrorCode.NONE if node_id == one_leader
                        else ErrorCode.NOT_LEADER_OR_FOLLOWER)


def topic_config(bootstrap: str, topic: str, key: str) -> str | None:
    """The topic config as the broker at ``bootstrap`` describes it."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    entries = admin.describe_configs([resource])[resource].result(WAIT_S)
    entry = entries.get(key)
    return None if entry is None else entry.value


def poll_until(consumer, seen: list, count: int) -> None:
    def more():
        m = consumer.poll(0.2)
        if m is not None and not m.error():
            seen.append(m.value())
        return len(seen) >= count
    wait_for(more, f"{count} records")


def init_producer_id(bootstrap: str):
    """An idempotent producer's InitProducerId (v4) to one broker: (error code, id, epoch)."""
    with WireClient(bootstrap) as client:
        resp = client.request(22, 4, InitProducerIdRequest(
            transactional_id=None, transaction_timeout_ms=60000))
    return resp.error_code, resp.producer_id, resp.producer_epoch


def test_producer_ids_come_in_blocks_the_controller_allocates(cluster):
    """Each broker hands out ids from its own block (AllocateProducerIds); before its first
    block arrives it answers COORDINATOR_LOAD_IN_PROGRESS, which clients retry."""
    firsts = {}
    for node_id in cluster.nodes:
        at = node_bootstrap(cluster, node_id)

        def ask(at=at):
            code, pid, epoch = init_producer_id(at)
            assert code in (ErrorCode.NONE, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
            return (pid, epoch) if code == ErrorCode.NONE else None
        pid, epoch = wait_for(ask, f"a producer id from broker {node_id}")
        assert epoch == 0
        assert init_producer_id(at) == (ErrorCode.NONE, pid + 1, 0)
        firsts[node_id] = pid
    # Kafka's blocks are 1000 ids: three brokers, three blocks
    assert len({pid // 1000 for pid in firsts.values()}) == 3


def find_coordinator(bootstrap: str, group: str) -> tuple[int, int]:
    """(error code, node id) of FindCoordinator v4 for a group, from one broker."""
    with WireClient(bootstrap) as client:
        resp = client.request(10, 4, FindCoordinatorRequest(key_type=0, coordinator_keys=[group]))
    c = resp.coordinators[0]
    return c.error_code, c.node_id


def offset_fetch(bootstrap: str, group: str, topic: str, partitions: int) -> tuple[int, list]:
    """(top-level error, committed offsets) of OffsetFetch v3 from one broker."""
    with WireClient(bootstrap) as client:
        resp = client.request(9, 3, OffsetFetchRequest(group_id=group, topics=[
            OffsetFetchRequestTopic(name=topic, partition_indexes=list(range(partitions)))]))
    offsets = sorted((p.partition_index, p.committed_offset)
                     for t in resp.topics for p in t.partitions)
    return resp.error_code, offsets


def test_a_group_is_coordinated_by_the_leader_of_its_offsets_partition(cluster):
    topic = create_topic(cluster, partitions=3)
    confluent_produce(cluster.bootstrap_servers, topic,
                      [{"value": b"%d" % i, "partition": i % 3} for i in range(30)], acks="all")
    group = f"g-{topic}"
    c = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": group,
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    try:
        c.subscribe([topic])
        seen = []
        poll_until(c, seen, 30)
        c.commit(asynchronous=False)
    finally:
        c.close()
    assert sorted(seen, key=int) == [b"%d" % i for i in range(30)]
    # every broker names the leader of the group's __consumer_offsets partition
    index = partition_for(group, 50)
    leader = partition_state(cluster.bootstrap_servers, "__consumer_offsets", index)[0]
    for node_id in cluster.nodes:
        assert find_coordinator(node_bootstrap(cluster, node_id), group) == (0, leader)
    # the coordinator has the offsets; another broker is not the coordinator
    for node_id in cluster.nodes:
        code, offsets = offset_fetch(node_bootstrap(cluster, node_id), group, topic, 3)
        if node_id == leader:
            assert (code, offsets) == (0, [(0, 10), (1, 10), (2, 10)])
        else:
            assert code == ErrorCode.NOT_COORDINATOR


def auto_create(bootstrap: str, topic: str) -> tuple[int, int]:
    """(error code, partitions) of a Metadata v12 allowing auto-creation, from one broker."""
    with WireClient(bootstrap) as client:
        resp = client.request(3, 12, MetadataRequest(
            topics=[MetadataRequestTopic(name=topic)], allow_auto_topic_creation=True))
    t = resp.topics[0]
    return t.error_code, len(t.partitions)


@needs_java
def test_auto_topic_creation_goes_through_the_controller_as_on_kafka(cluster, reference_kafka):
    """The Metadata that asks for an unknown topic is answered UNKNOWN_TOPIC_OR_PARTITION by
    Kafka 4.4 while its controller creates the topic; the next ones see it."""
    answers = {}
    for name, bootstrap in (("kafka", reference_kafka.bootstrap_servers),
                            ("pykafkad", node_bootstrap(cluster, 2))):
        topic = f"auto-{uuid.uuid4().hex[:8]}"
        first = auto_create(bootstrap, topic)
        later = wait_for(lambda b=bootstrap, t=topic: (lambda a: a if a[0] == 0 else None)(
            auto_create(b, t)), f"{topic} on {name}")
        answers[name] = (first, later)
    assert answers["pykafkad"] == answers["kafka"] == (
        (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 0), (0, 1))


def test_partitions_added_and_topics_deleted_through_any_broker(cluster):
    """CreatePartitions and DeleteTopics are forwarded; each broker opens the logs of its new
    replicas, and removes every replica's log of a deleted topic (renamed -delete first)."""
    topic = create_topic(cluster, partitions=1)
    confluent_produce(cluster.bootstrap_servers, topic, [{"value": b"x"}] * 5, acks="all")
    admin = AdminClient({"bootstrap.servers": node_bootstrap(cluster, 3)})
    admin.create_partitions([NewPartitions(topic, 3)])[topic].result(WAIT_S)
    for node_id in cluster.nodes:
        for p in range(3):
            wait_for(lambda n=node_id, p=p: partition_state(node_bootstrap(cluster, n), topic, p),
                     f"{topic}-{p} on broker {node_id}")
    wait_for(lambda: all(partition_dir(cluster, n, topic, p).is_dir()
                         for n in cluster.nodes for p in range(3)), "nine replica logs")
    confluent_produce(cluster.bootstrap_servers, topic,
                      [{"value": b"p%d" % p, "partition": p} for p in range(3)], acks="all")
    admin.delete_topics([topic])[topic].result(WAIT_S)

    def gone():
        dirs = [d.name for n in cluster.nodes
                for d in (Path(cluster.data_dir) / f"node-{n}" / "data").iterdir()
                if d.name.startswith(topic) and not d.name.endswith("-delete")]
        answers = [partition_state(node_bootstrap(cluster, n), topic) for n in cluster.nodes]
        return not dirs and answers == [None, None, None]
    wait_for(gone, f"{topic} deleted on every broker")


def test_the_next_producer_id_block_is_prefetched(cluster):
    """Past 90% of its block a broker asks the controller for the next one (Kafka's
    prefetch): ids go on from the next block, never repeating."""
    at = node_bootstrap(cluster, 1)
    wait_for(lambda: init_producer_id(at)[0] == ErrorCode.NONE, "a first block")
    ids = []
    with WireClient(at) as client:
        def more():
            while len(ids) < 1500:
                resp = client.request(22, 4, InitProducerIdRequest(
                    transactional_id=None, transaction_timeout_ms=60000))
                # a block that is late answers the retriable error, as Kafka's broker does
                assert resp.error_code in (ErrorCode.NONE,
                                           ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
                if resp.error_code:
                    return False
                ids.append(resp.producer_id)
            return True
        wait_for(more, "1500 producer ids")
    assert len(set(ids)) == 1500 and ids == sorted(ids)
    blocks = sorted({pid // 1000 for pid in ids})
    assert len(blocks) == 2  # one block used up, the prefetched one taken over


def test_a_dead_follower_leaves_the_isr_and_the_high_watermark_waits_for_it(cluster):
    topic = create_topic(cluster, min_insync_replicas=2)
    confluent_produce(cluster.bootstrap_servers, topic,
                      [{"value": b"before-%d" % i} for i in range(20)], acks="all")
    leader, replicas, isr = partition_state(cluster.bootstrap_servers, topic)
    assert isr == [1, 2, 3]
    controller = active_controller(cluster)
    follower = next(r for r in replicas if r not in (leader, controller))
    leader_at = node_bootstrap(cluster, leader)
    wait_for(lambda: list_offset(leader_at, topic) == (0, 20), "the high watermark at 20")
    cluster.kill(follower)  # the last test of the module: the node stays down
    # acks=1: the leader and the live follower have the batch; the ISR still names the dead
    # follower, so the high watermark stays, and consumers see up to it only
    confluent_produce(leader_at, topic, [{"value": b"after-%d" % i} for i in range(10)],
                      acks="1")
    assert list_offset(leader_at, topic) == (0, 20)
    c = Consumer({"bootstrap.servers": leader_at, "group.id": f"g-{topic}",
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    try:
        c.assign([CTopicPartition(topic, 0, 0)])
        seen = []
        poll_until(c, seen, 20)
        # after replica.lag.time.max.ms the leader drops it (AlterPartition) and the HW moves
        # to the log end: the rest is readable
        live = sorted([leader, next(r for r in replicas if r not in (leader, follower))])
        wait_for(lambda: (partition_state(leader_at, topic) or (0, 0, []))[2] == live,
                 "the ISR without the dead follower")
        poll_until(c, seen, 30)
        assert seen == [b"before-%d" % i for i in range(20)] + [b"after-%d" % i
                                                              for i in range(10)]
    finally:
        c.close()
    assert list_offset(leader_at, topic) == (0, 30)
    # the dead broker is still registered and unfenced (its session lasts a minute): the ISR
    # shrank through the leader's AlterPartition, not through the controller's fencing
    assert follower in [b.id for b in AdminClient(
        {"bootstrap.servers": leader_at}).list_topics(timeout=10).brokers.values()]
    # min.insync.replicas=3 (IncrementalAlterConfigs, forwarded to the controller) with an
    # ISR of two: acks=all is refused before anything is written
    admin = AdminClient({"bootstrap.servers": leader_at})
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic, incremental_configs=[
        ConfigEntry("min.insync.replicas", "3",
                    incremental_operation=AlterConfigOpType.SET)])
    admin.incremental_alter_configs([resource])[resource].result(WAIT_S)
    wait_for(lambda: topic_config(leader_at, topic, "min.insync.replicas") == "3",
             "min.insync.replicas=3 on the leader")
    errors = []
    p = Producer({"bootstrap.servers": leader_at, "acks": "all", "message.timeout.ms": 3000,
                  "retries": 0})
    p.produce(topic, b"refused", on_delivery=lambda err, msg: errors.append(err))
    p.flush(WAIT_S)
    assert [e.code() for e in errors] == [KafkaError.NOT_ENOUGH_REPLICAS]
    # (Kafka's leader does not move the HW while the ISR is below min.insync.replicas
    # either, KIP-966): nothing more was appended
    assert list_offset(leader_at, topic) == (0, 30)
