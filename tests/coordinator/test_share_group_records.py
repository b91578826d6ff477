"""The records a share group's life writes to __consumer_offsets (KIP-932 record types 10-15),
held to Apache Kafka 4.4.  Two lives, run the same on both brokers with librdkafka's
ShareConsumer: one member joins a group on a 2-partition topic, gets its partitions once their
share state is initialized, leaves, and the group is deleted; and a member whose 1-partition
topic grows to 2 partitions; and a group whose offsets are altered (AlterShareGroupOffsets)
before its first member joins.  The records are read raw and compared type by type, key by key
and value by value, with member ids, the topic id and assignment times masked, and the
metadata hash checked to be KIP-1101's hash of the topic on each broker.  The first
ShareSnapshot of the share partitions in __share_group_state (the group coordinator's
InitializeShareGroupState) is compared too, and the tombstones DeleteGroups has written
there."""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, ShareConsumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewPartitions

from compat.wire_client import WireClient
from pykafkad.coordinator.metadata_hash import group_hash, topic_hash
from pykafkad.coordinator.partitioning import partition_for
from pykafkad.coordinator.share_group import group_records as gr
from pykafkad.coordinator.share_group import state_records as sr
from pykafkad.testing import run_broker
from tests.failover.outage import wait_for
from tests.failover.share_scenario import STATE_TOPIC, state_partition
from tests.integration.clients import WAIT_S, create_led_topic, needs_java
from wire.messages import alter_share_group_offsets_request as alter
from wire.messages import delete_share_group_offsets_request as delete_offsets
from wire.messages.find_coordinator_request import FindCoordinatorRequest

pytestmark = needs_java

RUN = uuid.uuid4().hex[:6]
#: (topic, group) of each life: the same names on both brokers
LIFE = (f"share-life-{RUN}", f"share-life-{RUN}-g")
GROWN = (f"share-grown-{RUN}", f"share-grown-{RUN}-g")
ALTERED = (f"share-altered-{RUN}", f"share-altered-{RUN}-g")
OFFSETS_DELETED = (f"share-deleted-{RUN}", f"share-deleted-{RUN}-g")
OFFSETS_PARTITIONS = 50


@pytest.fixture(scope="module")
def pykafkad_records(tmp_path_factory):
    with run_broker(tmp_path_factory.mktemp("share-life")) as b:
        yield _lives(b.bootstrap_servers)


@pytest.fixture(scope="module")
def kafka_records():
    from compat.kafka_broker import run_kafka

    with run_kafka() as k:
        yield _lives(k.bootstrap_servers)


def _lives(bootstrap: str) -> dict:
    return {"life": _life(bootstrap), "grown": _grown(bootstrap),
            "altered": _altered(bootstrap), "offsets_deleted": _offsets_deleted(bootstrap)}


def _consume_until(bootstrap: str, consumer, topic: str, partitions, done, what: str) -> None:
    """Produces a record to each partition and polls, until ``done(records received)``
    (share.auto.offset.reset is latest: records made before the first fetch are skipped)."""
    producer = Producer({"bootstrap.servers": bootstrap})
    received = []

    def check():
        for p in partitions:
            try:
                producer.produce(topic, b"x", partition=p)
            except KafkaException:  # a partition the producer does not know yet
                producer.poll(0.1)
        producer.flush(WAIT_S)
        received.extend(m for m in consumer.poll(0.5) if m.error() is None)
        return done(received)
    wait_for(check, what, 2 * WAIT_S)


def _close_and_delete(bootstrap: str, consumer, group: str) -> list:
    consumer.close()
    admin = AdminClient({"bootstrap.servers": bootstrap})

    def deleted():  # NON_EMPTY_GROUP until the leave is in
        try:
            admin.delete_consumer_groups([group])[group].result(WAIT_S)
        except KafkaException:
            return False
        return True
    wait_for(deleted, "the group's deletion")
    return _records(bootstrap, group, ended=_deleted)


def _life(bootstrap: str) -> tuple[list, list]:
    """Join, assignment, leave, delete: the group's records as (type, member, value), and
    the first snapshot of both share partitions."""
    topic, group = LIFE
    create_led_topic(bootstrap, topic, 2)
    consumer = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group})
    consumer.subscribe([topic])
    _consume_until(bootstrap, consumer, topic, (0, 1), bool, "a record through the group")
    records = _close_and_delete(bootstrap, consumer, group)
    topic_id = _topic_id(records)
    return (records, [_first_snapshot(bootstrap, group, topic_id, p) for p in (0, 1)],
            [_state_tombstones(bootstrap, group, topic_id, p) for p in (0, 1)])


def _grown(bootstrap: str) -> tuple[list, list]:
    """A member reads a 1-partition topic that then grows to 2 partitions: the new
    partition's share state is initialized (at start offset 0) before it is assigned."""
    topic, group = GROWN
    create_led_topic(bootstrap, topic, 1)
    consumer = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group})
    consumer.subscribe([topic])
    _consume_until(bootstrap, consumer, topic, (0,), bool, "a record through the group")
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_partitions([NewPartitions(topic, 2)])[topic].result(WAIT_S)

    def holds_both(_):
        return _holds(_records(bootstrap, group, ended=lambda out: True), 2)
    _consume_until(bootstrap, consumer, topic, (0,), holds_both, "the new partition assigned")
    records = _close_and_delete(bootstrap, consumer, group)
    return records, [_first_snapshot(bootstrap, group, _topic_id(records), 1)]


def _altered(bootstrap: str) -> tuple[list, list, list]:
    """Offsets altered to 2 on a 1-partition topic of 5 records before any member: the
    member then reads from 2 (the group coordinator does not initialize the partition
    again)."""
    topic, group = ALTERED
    create_led_topic(bootstrap, topic, 1)
    producer = Producer({"bootstrap.servers": bootstrap})
    for _ in range(5):
        producer.produce(topic, b"x", partition=0)
    assert producer.flush(WAIT_S) == 0
    with WireClient(bootstrap) as w:
        wait_for(lambda: w.request(10, 6, FindCoordinatorRequest(
            key_type=0, coordinator_keys=[group])).coordinators[0].error_code == 0,
            "the group coordinator")
        answers = []

        def altered():
            r = w.request(91, 0, alter.AlterShareGroupOffsetsRequest(group_id=group, topics=[
                alter.AlterShareGroupOffsetsRequestTopic(topic_name=topic, partitions=[
                    alter.AlterShareGroupOffsetsRequestPartition(
                        partition_index=0, start_offset=2)])]))
            answers[:] = [r.error_code] + [p.error_code for t in r.responses
                                           for p in t.partitions]
            return answers == [0, 0]
        wait_for(altered, f"the offsets altered (last answer {answers})")
    consumer = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group})
    consumer.subscribe([topic])
    offsets: list[int] = []

    def read():
        offsets.extend(m.offset() for m in consumer.poll(0.5) if m.error() is None)
        return len(offsets) >= 3
    wait_for(read, "the records from offset 2", 2 * WAIT_S)
    records = _close_and_delete(bootstrap, consumer, group)
    return records, [_first_snapshot(bootstrap, group, _topic_id(records), 0)], offsets


def _offsets_deleted(bootstrap: str) -> list:
    """A member reads a record of a 1-partition topic and leaves; the group's offsets of the
    topic are deleted (DeleteShareGroupOffsets): the group's records up to the last
    ShareGroupStatePartitionMetadata listing the topic nowhere."""
    topic, group = OFFSETS_DELETED
    create_led_topic(bootstrap, topic, 1)
    consumer = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group})
    consumer.subscribe([topic])
    _consume_until(bootstrap, consumer, topic, (0,), bool, "a record through the group")
    consumer.close()
    answers: list = []
    with WireClient(bootstrap) as w:
        def deleted():  # NON_EMPTY_GROUP until the leave is in
            r = w.request(92, 0, delete_offsets.DeleteShareGroupOffsetsRequest(
                group_id=group, topics=[
                    delete_offsets.DeleteShareGroupOffsetsRequestTopic(topic_name=topic)]))
            answers[:] = [r.error_code] + [t.error_code for t in r.responses]
            return answers == [0, 0]
        wait_for(deleted, f"the offsets deleted (last answer {answers})")

    def settled(out: list) -> bool:
        last = [v for t, _, v in out if t == gr.STATE_PARTITIONS]
        return bool(last) and last[-1] is not None and not any(
            gr.decode_state_partitions(last[-1]))
    return _records(bootstrap, group, ended=settled)


def _holds(records: list, n: int) -> bool:
    """Whether a member's assignment has ``n`` partitions."""
    return any(sum(len(p) for p in gr.decode_current_member(v)[1].values()) == n
               for t, _, v in records if t == gr.CURRENT_MEMBER and v)


def _deleted(out: list) -> bool:
    return bool(out) and out[-1][0] == gr.GROUP_METADATA and out[-1][2] is None


def _records(bootstrap: str, group: str, ended) -> list:
    """The group's records in its __consumer_offsets partition, read until ``ended(read)``
    (one pass when that is always true)."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{uuid.uuid4().hex[:6]}",
                  "enable.auto.commit": False})
    c.assign([TopicPartition("__consumer_offsets",
                             partition_for(group, OFFSETS_PARTITIONS), 0)])
    out: list = []
    try:
        def read():
            while True:
                batch = c.consume(100, 0.5)
                for m in batch:
                    if m.error() is None and m.key() is not None \
                            and int.from_bytes(m.key()[:2], "big") in gr.RECORD_TYPES:
                        record_type, g, member = gr.decode_key(m.key())
                        if g == group:
                            out.append((record_type, member, m.value()))
                if not batch:
                    return ended(out)
        wait_for(read, "the group's records", 2 * WAIT_S)
    finally:
        c.close()
    return out


def _topic_id(records: list) -> bytes:
    for record_type, _, value in records:
        if record_type == gr.TARGET_MEMBER and value and len(value) > 4:
            return value[3:19]  # version, array length, then the first topic id
    raise AssertionError("no partition was ever assigned")


def _first_snapshot(bootstrap: str, group: str, topic_id: bytes, partition: int):
    """The first ShareSnapshot of the share partition (what InitializeShareGroupState
    wrote): (snapshot epoch, state epoch, leader epoch, start offset, delivery-complete
    count)."""
    key = sr.encode_key(sr.ShareStateKey(sr.SNAPSHOT, group, topic_id, partition))
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{uuid.uuid4().hex[:6]}",
                  "enable.auto.commit": False})
    c.assign([TopicPartition(STATE_TOPIC, state_partition(group, topic_id, partition), 0)])
    found = []
    try:
        def read():
            for m in c.consume(100, 0.5):
                if m.error() is None and m.key() == key and m.value() is not None:
                    v = sr.decode_value(sr.SNAPSHOT, m.value())
                    found.append((v.snapshot_epoch, v.state_epoch, v.leader_epoch,
                                  v.start_offset, v.delivery_complete_count))
            return found
        wait_for(read, "the share partition's first snapshot", 2 * WAIT_S)
    finally:
        c.close()
    return found[0]


def _state_tombstones(bootstrap: str, group: str, topic_id: bytes, partition: int) -> list:
    """The record types (0 ShareSnapshot, 1 ShareUpdate) of the tombstones the share
    partition's keys got in __share_group_state, read to the partition's end once the
    snapshot's tombstone is there (what DeleteGroups had its share coordinator write)."""
    keys = {sr.encode_key(sr.ShareStateKey(t, group, topic_id, partition)): t
            for t in (sr.SNAPSHOT, sr.UPDATE)}
    tp = TopicPartition(STATE_TOPIC, state_partition(group, topic_id, partition), 0)
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{uuid.uuid4().hex[:6]}",
                  "enable.auto.commit": False})
    c.assign([tp])
    found: list[int] = []
    try:
        def read():
            for m in c.consume(100, 0.5):
                if m.error() is None and m.key() in keys and m.value() is None:
                    found.append(keys[m.key()])
            if sr.SNAPSHOT not in found:
                return False
            end = c.get_watermark_offsets(tp, timeout=WAIT_S)[1]
            return c.position([tp])[0].offset >= end
        wait_for(read, "the share partition's tombstones", 2 * WAIT_S)
    finally:
        c.close()
    return found


def _masked(records: list, topic: str) -> list:
    """Member ids as m0, m1, ...; the topic id as T; the metadata hash as Hn when it is
    KIP-1101's hash of the topic with n partitions (kept as a number otherwise); assignment
    times as TS."""
    members: dict[str, str] = {}
    topic_id = _topic_id(records)
    hashes = {group_hash({topic: topic_hash(topic_id, topic, [[]] * n)}): f"H{n}"
              for n in (1, 2)}
    out = []
    for record_type, member, value in records:
        if member is not None:
            member = members.setdefault(member, f"m{len(members)}")
        text = None
        if value is not None:
            if record_type == gr.GROUP_METADATA:
                epoch, h = gr.decode_group_metadata(value)
                text = f"epoch={epoch} hash={hashes.get(h, h)}"
            elif record_type == gr.TARGET_METADATA and len(value) == 17:
                text = value[:-8].hex() + "TS"
            else:
                text = value.hex()
            text = text.replace(topic_id.hex(), "T")
        out.append((record_type, member, text))
    return out


def test_share_group_life_writes_kafkas_records(pykafkad_records, kafka_records):
    topic = LIFE[0]
    ours = _masked(pykafkad_records["life"][0], topic)
    theirs = _masked(kafka_records["life"][0], topic)
    assert ours == theirs
    # what Kafka 4.4 does, spelled out: the first ShareGroupMetadata is at epoch 2 with the
    # topic's hash; partitions are recorded initializing, then initialized, and only then
    # assigned (epoch 3); the empty group's hash is 0; deletion records the topic deleting
    types = [t for t, _, _ in theirs]
    assert types == [10, 11, 13, 12, 14, 15, 15, 11, 13, 12, 14,
                     14, 13, 10, 11, 12, 15, 12, 15, 11], types
    assert theirs[1][2] == "epoch=2 hash=H2" and theirs[7][2] == "epoch=3 hash=H2"
    assert theirs[14][2] == "epoch=4 hash=0"


def test_share_state_is_initialized_as_kafka_initializes_it(pykafkad_records, kafka_records):
    """At the group epoch of the heartbeat that found the partitions (2), start offset -1
    (the share-partition leader resolves share.auto.offset.reset), no delivery count yet."""
    assert pykafkad_records["life"][1] == kafka_records["life"][1] == [(0, 2, 0, -1, -1)] * 2


def test_deleting_the_group_writes_kafkas_share_state_tombstones(pykafkad_records,
                                                                 kafka_records):
    """DeleteGroups has each share partition's state deleted: one ShareSnapshot tombstone."""
    assert pykafkad_records["life"][2] == kafka_records["life"][2] == [[sr.SNAPSHOT]] * 2


def test_a_grown_topic_writes_kafkas_records(pykafkad_records, kafka_records):
    """The growth bumps the group epoch (a new hash); the new partition is initialized,
    then assigned at the next epoch."""
    topic = GROWN[0]
    ours = _masked(pykafkad_records["grown"][0], topic)
    theirs = _masked(kafka_records["grown"][0], topic)
    assert ours == theirs
    assert [text for t, _, text in theirs if t == gr.GROUP_METADATA and text][:4] == [
        "epoch=2 hash=H1", "epoch=3 hash=H1", "epoch=4 hash=H2", "epoch=5 hash=H2"]


def test_a_new_partition_of_a_known_topic_starts_at_offset_0(pykafkad_records, kafka_records):
    """Initialized at the epoch of the growth (4), at offset 0: no record of it is skipped."""
    assert pykafkad_records["grown"][1] == kafka_records["grown"][1] == [(0, 4, 0, 0, 0)]


def test_the_member_ends_with_both_partitions(pykafkad_records):
    """The last assignment pykafkad wrote (epoch 3) holds both partitions of the topic."""
    current = [v for t, _, v in pykafkad_records["life"][0] if t == gr.CURRENT_MEMBER and v]
    epoch, assignment = gr.decode_current_member(current[-1])
    assert epoch == 3
    assert [sorted(p) for p in assignment.values()] == [[0, 1]]


def test_altered_offsets_write_kafkas_records(pykafkad_records, kafka_records):
    """The partition is recorded initializing, then initialized, by the alter (at state
    epoch 1, the new group's epoch); the first member (epoch 2) reads from offset 2."""
    topic = ALTERED[0]
    ours, theirs = pykafkad_records["altered"], kafka_records["altered"]
    assert _masked(ours[0], topic) == _masked(theirs[0], topic)
    assert ours[1] == theirs[1] == [(0, 1, 0, 2, 0)]
    assert ours[2][:3] == theirs[2][:3] == [2, 3, 4]


def test_deleted_share_offsets_write_kafkas_records(pykafkad_records, kafka_records):
    """DeleteShareGroupOffsets takes the topic out of the group's
    ShareGroupStatePartitionMetadata, as Kafka's group coordinator records it."""
    topic = OFFSETS_DELETED[0]
    ours = _masked(pykafkad_records["offsets_deleted"], topic)
    theirs = _masked(kafka_records["offsets_deleted"], topic)
    assert ours == theirs
