"""Harness-side facts for the cluster scenarios: which broker a client bootstraps from, which
broker leads what, and a group id whose coordinator is another broker.

A group's coordinator is the leader of its ``__consumer_offsets`` partition, and Kafka picks
that partition as ``Utils.abs(groupId.hashCode()) % <partitions of __consumer_offsets>``
(GroupCoordinatorService.partitionFor), with Java's String.hashCode and a Utils.abs that maps
Integer.MIN_VALUE to 0.  The clients then check, each with its own API, that the coordinator
they found is that broker.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator

from compat.runner import WAIT_S, Env, NotApplicable

OFFSETS_TOPIC = "__consumer_offsets"


def java_string_hash(text: str) -> int:
    """Java's String.hashCode: over UTF-16 code units, in 32-bit two's complement."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + int.from_bytes(data[i:i + 2], "big")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def offsets_partition(group: str, partitions: int) -> int:
    """The ``__consumer_offsets`` partition of ``group``, as Kafka computes it."""
    h = java_string_hash(group)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


def _admin(bootstrap: str):
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": bootstrap})


def broker_id_at(bootstrap: str, address: str) -> int:
    """The node id of the broker listening at ``address`` (host:port)."""
    md = _admin(bootstrap).list_topics(timeout=WAIT_S)
    for b in md.brokers.values():
        if f"{b.host}:{b.port}" == address:
            return b.id
    raise AssertionError(f"no broker at {address} in {sorted(str(b) for b in md.brokers.values())}")


def broker_ids(bootstrap: str) -> set[int]:
    return set(_admin(bootstrap).list_topics(timeout=WAIT_S).brokers)


def leaders(bootstrap: str, topic: str) -> dict[int, int]:
    """{partition: leader id} of ``topic``."""
    t = _admin(bootstrap).list_topics(topic, timeout=WAIT_S).topics[topic]
    return {p.id: p.leader for p in t.partitions.values()}


#: creating __consumer_offsets (50 partitions x 3 replicas by default) takes Kafka more than
#: WAIT_S on a loaded two-core machine: it is waited for once, longer
OFFSETS_TOPIC_WAIT_S = 120


def _offsets_topic_leaders(bootstrap: str) -> dict[int, int]:
    """The leaders of every ``__consumer_offsets`` partition, once the topic exists (a
    FindCoordinator creates it: a describe of a group sends one, again every few seconds until
    the topic is there) and every partition is led."""
    admin = _admin(bootstrap)
    deadline = time.monotonic() + OFFSETS_TOPIC_WAIT_S
    asked = 0.0
    while time.monotonic() < deadline:
        t = admin.list_topics(OFFSETS_TOPIC, timeout=WAIT_S).topics.get(OFFSETS_TOPIC)
        if t is not None and t.error is None and t.partitions and all(
                p.leader >= 0 for p in t.partitions.values()):
            return {p.id: p.leader for p in t.partitions.values()}
        if (t is None or t.error is not None) and time.monotonic() - asked > 5:
            asked = time.monotonic()
            try:
                admin.describe_consumer_groups(["compat-create-offsets-topic"])[
                    "compat-create-offsets-topic"].result(WAIT_S)
            except Exception:  # noqa: BLE001 - only the FindCoordinator it sends matters
                pass
        time.sleep(0.2)  # the topic's creation has no notification to wait on
    raise AssertionError(f"{OFFSETS_TOPIC} was not created with a leader for every partition "
                         f"in {OFFSETS_TOPIC_WAIT_S}s")


def group_led_elsewhere(env: Env) -> tuple[str, int, int]:
    """A fresh group id whose coordinator is not the broker at ``env.first_broker``:
    (group, coordinator's node id, bootstrap broker's node id)."""
    home = broker_id_at(env.bootstrap, env.first_broker)
    led_by = _offsets_topic_leaders(env.bootstrap)
    for i in range(1000):
        group = env.name(f"group{i}")
        leader = led_by[offsets_partition(group, len(led_by))]
        if leader != home:
            return group, leader, home
    raise AssertionError(f"every {OFFSETS_TOPIC} partition is led by broker {home}")


def expect_spread(leader_of: dict[int, int], brokers: set[int], what: str) -> None:
    """Every broker leads at least one partition."""
    if set(leader_of.values()) != brokers:
        raise AssertionError(f"{what}: leaders {leader_of} do not cover brokers {sorted(brokers)}")


def _isr(bootstrap: str, topic: str) -> tuple[int, list[int], list[int]]:
    """(leader, replicas, isr) of partition 0, as Metadata shows them."""
    p = _admin(bootstrap).list_topics(topic, timeout=WAIT_S).topics[topic].partitions[0]
    return p.leader, list(p.replicas), list(p.isrs)


def wait_isr(bootstrap: str, topic: str, size: int) -> None:
    deadline = time.monotonic() + WAIT_S
    while len(_isr(bootstrap, topic)[2]) != size:
        if time.monotonic() > deadline:
            raise AssertionError(f"the ISR of {topic}-0 is {_isr(bootstrap, topic)[2]}, not "
                                 f"{size} replicas, after {WAIT_S}s")
        time.sleep(0.2)  # ISR changes have no notification a client can wait on


@contextlib.contextmanager
def follower_stopped(env: Env, topic: str) -> Iterator[int]:
    """One follower of ``topic``-0 (not the bootstrap broker) stopped cleanly, so that the
    controller shrinks the ISR; started again, and back in the ISR, on exit."""
    if env.nodes is None:
        raise NotApplicable("needs a cluster the harness started (it stops a node)")
    leader, replicas, _ = _isr(env.bootstrap, topic)
    home = broker_id_at(env.bootstrap, env.first_broker)
    follower = next(r for r in replicas if r not in (leader, home))
    env.nodes.stop_node(follower)
    try:
        wait_isr(env.first_broker, topic, len(replicas) - 1)
        yield follower
    finally:
        env.nodes.start_node(follower)
        wait_isr(env.first_broker, topic, len(replicas))


def not_enough_replicas(env: Env, produce: Callable[[str, str], str | None], refusal: str,
                        produce_ok: Callable[[str, str], str | None] | None = None) -> None:
    """The not-enough-replicas scenario around one client's ``produce(topic, value)``, which
    sends one record with acks=all and no retries and returns None or the client's error text;
    ``refusal`` is the text of NOT_ENOUGH_REPLICAS in that client's words.  ``produce_ok``
    (default: ``produce``) sends the records before and after the node is down."""
    from compat.clients.setup import expect

    if env.nodes is None:
        raise NotApplicable("needs a cluster the harness started (it stops a node)")
    produce_ok = produce_ok or produce
    topic = env.topic(replication_factor=3, config={"min.insync.replicas": "3"})
    expect(produce_ok(topic, "before"), None, "acks=all with a full ISR")
    with follower_stopped(env, topic) as stopped:
        error = produce(topic, "refused")
        if error is None or refusal not in error:
            raise AssertionError(f"acks=all with broker {stopped} down: got {error!r}, expected "
                                 f"{refusal!r}")
    expect(produce_ok(topic, "after"), None, "acks=all with the ISR full again")
    expect(read_values(env.bootstrap, topic, 2), ["before", "after"], "records written")


def read_values(bootstrap: str, topic: str, count: int) -> list[str]:
    """Partition 0's values from the start up to its end, once ``count`` came (the harness's
    librdkafka consumer)."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic}-check",
                  "enable.auto.commit": False, "enable.partition.eof": True})
    c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    out: list[str] = []
    deadline = time.monotonic() + WAIT_S
    try:
        while time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error() is None:
                out.append(m.value().decode())
            elif m.error().code() != KafkaError._PARTITION_EOF:
                raise AssertionError(f"consume error: {m.error()}")
            elif len(out) >= count:
                break
    finally:
        c.close()
    return out


def harness_produce(env: Env, topic: str, value: str) -> str | None:
    """One acks=all record from the harness's librdkafka producer: None or the error's name."""
    from confluent_kafka import Producer

    errors: list = []
    p = Producer({"bootstrap.servers": env.bootstrap, "acks": "all"})
    p.produce(topic, value.encode(), on_delivery=lambda err, _msg: err and errors.append(err))
    if p.flush(WAIT_S):
        return "not delivered in time"
    return errors[0].name() if errors else None
