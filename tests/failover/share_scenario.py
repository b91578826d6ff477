"""Share groups (KIP-932) on three nodes, run the same way on a pykafkad and an Apache Kafka
cluster (compat.failover's targets): stock share consumers read a topic whose partitions are
led by different brokers, and acknowledgements outlive the death of the share coordinator (the
leader of the share partition's __share_group_state partition) and of the share-partition
leader.  Each scenario returns what the clients saw."""

from __future__ import annotations

import base64
import time
import uuid

from confluent_kafka import AcknowledgeType, Producer, ShareConsumer
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
)

from compat.failover import FailoverTarget, replica_logs
from compat.wire_client import WireClient
from pykafkad.coordinator.partitioning import partition_for
from tests.failover.outage import WAIT_S, wait_for
from wire.messages.metadata_request import MetadataRequest, MetadataRequestTopic

STATE_TOPIC = "__share_group_state"
STATE_PARTITIONS = 50


def _bootstrap(target: FailoverTarget, nodes=None) -> str:
    return ",".join(target.bootstrap(n) for n in (nodes or target.node_ids)
                    if target.running(n))


def topic_view(bootstrap: str, topic: str) -> tuple[bytes, dict[int, tuple[int, list[int]]]]:
    """(topic id, {partition: (leader, isr)}) as Metadata v12 answers."""
    with WireClient(bootstrap.split(",")[0], timeout=10) as client:
        resp = client.request(3, 12, MetadataRequest(
            topics=[MetadataRequestTopic(name=topic)], allow_auto_topic_creation=False))
    t = resp.topics[0]
    return t.topic_id, {p.partition_index: (p.leader_id, sorted(p.isr_nodes))
                        for p in t.partitions}


def state_partition(group: str, topic_id: bytes, partition: int) -> int:
    """The __share_group_state partition of a share partition: its key
    "group:topicId:partition" hashed as Kafka's share coordinator does."""
    tid = base64.urlsafe_b64encode(topic_id).decode().rstrip("=")
    return partition_for(f"{group}:{tid}:{partition}", STATE_PARTITIONS)


def earliest(bootstrap: str, group: str) -> None:
    """share.auto.offset.reset=earliest for the group, set through every node: pykafkad keeps
    group configs per node (Kafka: in the metadata log), and on Kafka this is the same
    change thrice."""
    res = ConfigResource(ConfigResource.Type.GROUP, group, incremental_configs=[ConfigEntry(
        "share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)])
    for node in bootstrap.split(","):
        admin = AdminClient({"bootstrap.servers": node})
        for f in admin.incremental_alter_configs([res]).values():
            f.result(WAIT_S)


def produce(bootstrap: str, topic: str, partitions, n: int) -> None:
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for index in partitions:
        for i in range(n):
            p.produce(topic, b"p%d-v%d" % (index, i), partition=index)
    assert p.flush(WAIT_S) == 0


def share_consumer(bootstrap: str, group: str, topic: str) -> ShareConsumer:
    c = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group,
                       "share.acknowledgement.mode": "explicit"})
    c.subscribe([topic])
    return c


def poll_until(consumers, done, ack, what: str) -> list[tuple[int, int, int]]:
    """Polls the consumers in turn until ``done(received)``; each record is acknowledged
    with ``ack(message)`` (None: left acquired).  Returns (partition, offset, delivery count)
    of every record received."""
    received: list[tuple[int, int, int]] = []
    deadline = time.monotonic() + WAIT_S
    while not done(received):
        assert time.monotonic() < deadline, f"{what}: got {sorted(received)}"
        for c in consumers:
            for m in c.poll(0.3):
                assert m.error() is None, m.error()
                received.append((m.partition(), m.offset(), m.delivery_count()))
                kind = ack(m)
                if kind is not None:
                    c.acknowledge(m, kind)
            c.commit_sync(WAIT_S)
    return received


def _new_topic(target: FailoverTarget, prefix: str) -> tuple[str, bytes, dict]:
    bootstrap = _bootstrap(target)
    topic = f"{prefix}-{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 3, 3)])[topic].result(WAIT_S)
    view = wait_for(lambda: (lambda v: v if len(v[1]) == 3 and all(
        len(isr) == 3 for _, isr in v[1].values()) else None)(topic_view(bootstrap, topic)),
        "the topic's partitions in sync")
    return topic, view[0], view[1]


def two_members_read_everything(target: FailoverTarget) -> dict:
    """Two librdkafka ShareConsumers of one group read a 3-partition topic (10 records a
    partition, each partition led by another broker): every record once."""
    seen: dict = {}
    bootstrap = _bootstrap(target)
    topic, _, parts = _new_topic(target, "share-two")
    group = f"{topic}-g"
    seen["leaders"] = len({leader for leader, _ in parts.values()})
    earliest(bootstrap, group)
    produce(bootstrap, topic, range(3), 10)
    members = [share_consumer(bootstrap, group, topic) for _ in range(2)]
    try:
        got = poll_until(members, lambda r: len({(p, o) for p, o, _ in r}) >= 30,
                         lambda m: AcknowledgeType.ACCEPT, "two members")
    finally:
        for c in members:
            c.close()
    seen["records"] = len({(p, o) for p, o, _ in got})
    seen["twice"] = len(got) - seen["records"]
    return seen


def java_member(bootstrap: str, topic: str, group: str):
    """compat/java/ShareGroupMember.java as a process, once it says it is subscribed."""
    import subprocess

    from compat import maven
    from compat.clients import java
    from compat.kafka_specs import SPECS_VERSION

    source = java.SOURCE.with_name("ShareGroupMember.java")
    cp = maven.classpath(java.jars_dir(SPECS_VERSION))
    proc = subprocess.Popen(
        ["java", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", cp, str(source),
         bootstrap, topic, group],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for line in proc.stdout:
        if line.startswith("##READY"):
            return proc
    raise AssertionError(f"the Java member did not start: {proc.wait()}")


def three_clients_read_everything(target: FailoverTarget) -> dict:
    """The Java KafkaShareConsumer, then two librdkafka ShareConsumers with it, in one group
    read a 3-partition topic (10 records a partition, each partition led by another broker):
    every record once."""
    import threading

    seen: dict = {}
    bootstrap = _bootstrap(target)
    topic, _, parts = _new_topic(target, "share-three")
    group = f"{topic}-g"
    seen["leaders"] = len({leader for leader, _ in parts.values()})
    earliest(bootstrap, group)
    proc = java_member(bootstrap, topic, group)
    from_java: list[tuple[int, int, int]] = []

    def read_java():
        for line in proc.stdout:
            if line.startswith("##R "):
                p, o, d = map(int, line.split()[1:])
                from_java.append((p, o, d))
    reader = threading.Thread(target=read_java, daemon=True)
    reader.start()
    # the Java member, alone at first, reads the first record of each partition; then the
    # other two join and the rest is shared
    produce(bootstrap, topic, range(3), 1)
    wait_for(lambda: len(from_java) >= 3, "the Java member's first records")
    members = [share_consumer(bootstrap, group, topic) for _ in range(2)]
    try:
        produce(bootstrap, topic, range(3), 9)
        got = poll_until(members, lambda r: len({(p, o) for p, o, _ in r + from_java}) >= 30,
                         lambda m: AcknowledgeType.ACCEPT, "three members")
    finally:
        for c in members:
            c.close()
        proc.stdin.write("stop\n")
        proc.stdin.close()
        proc.wait(WAIT_S)
        reader.join(WAIT_S)
    every = got + from_java
    seen["records"] = len({(p, o) for p, o, _ in every})
    seen["twice"] = len(every) - seen["records"]
    seen["java_read_some"] = bool(from_java)
    return seen


def _state_replicated(target: FailoverTarget, index: int) -> bool:
    logs = [log for n, log in zip(target.node_ids, replica_logs(target, STATE_TOPIC, index), strict=True)
            if target.running(n)]
    return bool(logs[0]) and all(log == logs[0] for log in logs[1:])


def state_survives_failovers(target: FailoverTarget) -> dict:
    """One share partition whose leader is not its share coordinator:

    1. a member ACCEPTs offsets 0-3 and leaves (4-9 are released);
    2. the share coordinator is killed; a second member gets 4-9, ACCEPTs 4-6 and keeps 7-9
       acquired; the coordinator comes back;
    3. the share-partition leader is killed: a third member gets 7-9 only (the new leader
       read the state from the share coordinator)."""
    seen: dict = {}
    bootstrap = _bootstrap(target)
    topic, topic_id, parts = _new_topic(target, "share-failover")
    for _ in range(50):  # a group whose share coordinator does not lead partition 0
        group = f"{topic}-g{uuid.uuid4().hex[:4]}"
        index = state_partition(group, topic_id, 0)
        try:
            _, state = topic_view(bootstrap, STATE_TOPIC)
        except (OSError, IndexError):
            state = {}
        coordinator = state.get(index, (-1, []))[0]
        if state and coordinator != parts[0][0]:
            break
        if not state:  # the state topic is created by the first share group's use
            break
    earliest(bootstrap, group)
    produce(bootstrap, topic, [0], 10)

    def on_p0(k):
        return lambda r: {o for p, o, _ in r if p == 0} >= k

    c1 = share_consumer(bootstrap, group, topic)
    try:
        first = poll_until([c1], on_p0(set(range(10))),
                           lambda m: AcknowledgeType.ACCEPT if m.offset() < 4 else None,
                           "the first member")
    finally:
        c1.close()
    seen["first"] = sorted(o for _, o, _ in first)
    _, state = wait_for(lambda: (lambda v: v if index in v[1] and v[1][index][0] >= 0 else None)(
        topic_view(bootstrap, STATE_TOPIC)), "the share state partition")
    coordinator = state[index][0]
    leader = parts[0][0]
    seen["coordinator_is_not_the_leader"] = coordinator != leader
    wait_for(lambda: _state_replicated(target, index), "the share state on every replica")
    target.kill_node(coordinator)
    survivors = [n for n in target.node_ids if n != coordinator]
    wait_for(lambda: topic_view(_bootstrap(target, survivors), STATE_TOPIC)[1][index][0]
             in survivors, "a new share coordinator")
    c2 = share_consumer(_bootstrap(target, survivors), group, topic)
    second = poll_until([c2], on_p0(set(range(4, 10))),
                        lambda m: AcknowledgeType.ACCEPT if m.offset() < 7 else None,
                        "the second member")
    seen["second"] = sorted(o for _, o, _ in second)
    target.start_node(coordinator)
    wait_for(lambda: all(len(isr) == 3 for _, isr in topic_view(_bootstrap(target), topic)[1]
                         .values()) and len(topic_view(_bootstrap(target), STATE_TOPIC)[1]
                                            [index][1]) == 3, "every replica back in sync")
    wait_for(lambda: _state_replicated(target, index), "the share state on every replica")
    leader = topic_view(_bootstrap(target), topic)[1][0][0]
    target.kill_node(leader)
    survivors = [n for n in target.node_ids if n != leader]
    wait_for(lambda: topic_view(_bootstrap(target, survivors), topic)[1][0][0] in survivors,
             "a new leader of partition 0")
    # the second member leaves (its records were on the dead leader): a share group splits
    # the partitions among its members, and the third must be given partition 0
    c2.close()
    c3 = share_consumer(_bootstrap(target, survivors), group, topic)
    try:
        third = poll_until([c3], on_p0(set(range(7, 10))), lambda m: AcknowledgeType.ACCEPT,
                           "the third member")
    finally:
        c3.close()
    seen["third"] = sorted((o, d) for _, o, d in third)
    target.start_node(leader)
    return seen
