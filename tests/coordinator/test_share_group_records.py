"""The records a share group's life writes to __consumer_offsets (KIP-932 record types 10-15),
held to Apache Kafka 4.4: one librdkafka ShareConsumer joins a group on a 2-partition topic,
gets its partitions once their share state is initialized, leaves, and the group is deleted.
Both brokers run the same sequence; the records are read raw and compared type by type, key
by key and value by value, with member ids, the topic id and assignment times masked, and the
metadata hash checked to be KIP-1101's hash of the topic on each broker.  The first
ShareSnapshot of each share partition in __share_group_state (the group coordinator's
InitializeShareGroupState) is compared too."""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, ShareConsumer, TopicPartition
from confluent_kafka.admin import AdminClient

from pykafkad.coordinator.metadata_hash import group_hash, topic_hash
from pykafkad.coordinator.partitioning import partition_for
from pykafkad.coordinator.share_group import group_records as gr
from pykafkad.coordinator.share_group import state_records as sr
from pykafkad.testing import run_broker
from tests.failover.outage import wait_for
from tests.failover.share_scenario import STATE_TOPIC, state_partition
from tests.integration.clients import WAIT_S, create_led_topic, needs_java

pytestmark = needs_java

TOPIC = f"share-life-{uuid.uuid4().hex[:6]}"
GROUP = f"{TOPIC}-g"
OFFSETS_PARTITIONS = 50


@pytest.fixture(scope="module")
def pykafkad_records(tmp_path_factory):
    with run_broker(tmp_path_factory.mktemp("share-life")) as b:
        yield _life(b.bootstrap_servers)


@pytest.fixture(scope="module")
def kafka_records():
    from compat.kafka_broker import run_kafka

    with run_kafka() as k:
        yield _life(k.bootstrap_servers)


def _life(bootstrap: str) -> list:
    """Join, assignment, leave, delete; the group's records as (type, key, value)."""
    create_led_topic(bootstrap, TOPIC, 2)
    consumer = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": GROUP})
    consumer.subscribe([TOPIC])
    producer = Producer({"bootstrap.servers": bootstrap})
    received = []

    def delivered():
        # share.auto.offset.reset is latest: records made before the first fetch are
        # skipped, so a record goes to each partition each time round
        for p in (0, 1):
            producer.produce(TOPIC, b"x", partition=p)
        assert producer.flush(WAIT_S) == 0
        received.extend(m for m in consumer.poll(0.5) if m.error() is None)
        return received
    wait_for(delivered, "a record through the share group", 2 * WAIT_S)
    consumer.close()
    admin = AdminClient({"bootstrap.servers": bootstrap})

    def deleted():  # NON_EMPTY_GROUP until the leave is in
        try:
            admin.delete_consumer_groups([GROUP])[GROUP].result(WAIT_S)
        except KafkaException:
            return False
        return True
    wait_for(deleted, "the group's deletion")
    records = _records(bootstrap)
    topic_id = _topic_id(records)
    return records, [_first_snapshot(bootstrap, topic_id, p) for p in (0, 1)]


def _topic_id(records: list) -> bytes:
    for record_type, _, value in records:
        if record_type == gr.TARGET_MEMBER and value and len(value) > 4:
            return value[3:19]  # version, array length, then the first topic id
    raise AssertionError("no partition was ever assigned")


def _first_snapshot(bootstrap: str, topic_id: bytes, partition: int):
    """The first ShareSnapshot of the share partition (what InitializeShareGroupState
    wrote): (snapshot epoch, state epoch, leader epoch, start offset, delivery-complete
    count)."""
    key = sr.encode_key(sr.ShareStateKey(sr.SNAPSHOT, GROUP, topic_id, partition))
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{uuid.uuid4().hex[:6]}",
                  "enable.auto.commit": False})
    c.assign([TopicPartition(STATE_TOPIC, state_partition(GROUP, topic_id, partition), 0)])
    found = []
    try:
        def read():
            for m in c.consume(100, 0.5):
                if m.error() is None and m.key()[2:] == key[2:] and m.value() is not None \
                        and int.from_bytes(m.key()[:2], "big") == sr.SNAPSHOT:
                    v = sr.decode_value(sr.SNAPSHOT, m.value())
                    found.append((v.snapshot_epoch, v.state_epoch, v.leader_epoch,
                                  v.start_offset, v.delivery_complete_count))
            return found
        wait_for(read, "the share partition's first snapshot", 2 * WAIT_S)
    finally:
        c.close()
    return found[0]


def _records(bootstrap: str) -> list:
    """The group's records in its __consumer_offsets partition, up to the ShareGroupMetadata
    tombstone that ends a deletion."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{uuid.uuid4().hex[:6]}",
                  "enable.auto.commit": False})
    c.assign([TopicPartition("__consumer_offsets",
                             partition_for(GROUP, OFFSETS_PARTITIONS), 0)])
    out: list = []
    try:
        def ended():
            for m in c.consume(100, 0.5):
                if m.error() is None and m.key() is not None:
                    record_type, group, member = gr.decode_key(m.key()) \
                        if int.from_bytes(m.key()[:2], "big") in gr.RECORD_TYPES \
                        else (None, None, None)
                    if group == GROUP:
                        out.append((record_type, member, m.value()))
            return out and out[-1][0] == gr.GROUP_METADATA and out[-1][2] is None
        wait_for(ended, "the group's records", 2 * WAIT_S)
    finally:
        c.close()
    return out


def _masked(records: list) -> list:
    """Member ids as m0, m1, ...; the topic id as T; the metadata hash as H when it is
    KIP-1101's hash of the topic (kept as a number otherwise); assignment times as TS."""
    members: dict[str, str] = {}
    topic_id = _topic_id(records)
    expected_hash = group_hash({TOPIC: topic_hash(topic_id, TOPIC, [[], []])})
    out = []
    for record_type, member, value in records:
        if member is not None:
            member = members.setdefault(member, f"m{len(members)}")
        text = None
        if value is not None:
            if record_type == gr.GROUP_METADATA:
                epoch, h = gr.decode_group_metadata(value)
                text = f"epoch={epoch} hash={'H' if h == expected_hash and h else h}"
            elif record_type == gr.TARGET_METADATA and len(value) == 17:
                text = value[:-8].hex() + "TS"
            else:
                text = value.hex()
            text = text.replace(topic_id.hex(), "T")
        out.append((record_type, member, text))
    return out


def test_share_group_life_writes_kafkas_records(pykafkad_records, kafka_records):
    ours, theirs = _masked(pykafkad_records[0]), _masked(kafka_records[0])
    assert ours == theirs
    # what Kafka 4.4 does, spelled out: the first ShareGroupMetadata is at epoch 2 with the
    # topic's hash; partitions are recorded initializing, then initialized, and only then
    # assigned (epoch 3); the empty group's hash is 0; deletion records the topic deleting
    types = [t for t, _, _ in theirs]
    assert types == [10, 11, 13, 12, 14, 15, 15, 11, 13, 12, 14,
                     14, 13, 10, 11, 12, 15, 12, 15, 11], types
    assert theirs[1][2] == "epoch=2 hash=H" and theirs[7][2] == "epoch=3 hash=H"
    assert theirs[14][2] == "epoch=4 hash=0"


def test_share_state_is_initialized_as_kafka_initializes_it(pykafkad_records, kafka_records):
    """At the group epoch of the heartbeat that found the partitions (2), start offset -1
    (the share-partition leader resolves share.auto.offset.reset), no delivery count yet."""
    assert pykafkad_records[1] == kafka_records[1] == [(0, 2, 0, -1, -1)] * 2


def test_the_member_ends_with_both_partitions(pykafkad_records):
    """The last assignment pykafkad wrote (epoch 3) holds both partitions of the topic."""
    current = [v for t, _, v in pykafkad_records[0] if t == gr.CURRENT_MEMBER and v]
    epoch, assignment = gr.decode_current_member(current[-1])
    assert epoch == 3
    assert [sorted(p) for p in assignment.values()] == [[0, 1]]
