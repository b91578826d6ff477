"""Produce checks every record as Kafka's LogValidator does: malformed records behind a correct
CRC, timestamps out of ``message.timestamp.before/after.max.ms``, keyless records on compacted
topics, and topics whose ``compression.type`` makes the broker rewrite batches.

The answers are Apache Kafka 4.4.0's: ``malformed_batches.EXPECTED`` records them, the tests
without Java hold pykafkad to it, and ``test_record_checks_answer_as_kafka`` sends the same bytes
to a reference Kafka and compares both brokers' full answers and stored batches.
"""

from __future__ import annotations

import re
import time
import uuid

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource
from kafka import KafkaProducer
from kafka.errors import InvalidTimestampError

from compat.wire_client import WireClient
from tests.integration.clients import (
    WAIT_S,
    confluent_consume,
    confluent_produce,
    create_topic,
    kafka_python_consume,
    needs_java,
)
from tests.integration.malformed_batches import EXPECTED, config_cases, malformed_cases
from wire.messages.fetch_request import FetchPartition, FetchRequest, FetchTopic
from wire.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from wire.records import codecs
from wire.records.batch import build_batch, iter_batch_headers
from wire.records.header import HEADER_SIZE

#: errors a just-created topic may answer until its partition has a leader
_NOT_READY = (3, 6)


def produce_raw(client: WireClient, topic: str, records: bytes):
    """One Produce (v9) of ``records`` to partition 0; waits out a new topic's leader election."""
    deadline = time.monotonic() + WAIT_S
    while True:
        resp = client.send(ProduceRequest(acks=-1, timeout_ms=5000, topic_data=[TopicProduceData(
            name=topic, partition_data=[PartitionProduceData(index=0, records=records)])]), 9)
        part = resp.responses[0].partition_responses[0]
        if part.error_code not in _NOT_READY or time.monotonic() > deadline:
            return part
        time.sleep(0.1)


def stored_batch(client: WireClient, topic: str, offset: int) -> tuple:
    """The batch stored at ``offset``: its header fields a broker may set, and its records
    section decompressed (or the raw bytes when they do not decompress)."""
    resp = client.send(FetchRequest(
        replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 20, isolation_level=0,
        session_id=0, session_epoch=-1, topics=[FetchTopic(topic=topic, partitions=[
            FetchPartition(partition=0, fetch_offset=offset, partition_max_bytes=1 << 20,
                           current_leader_epoch=-1)])], forgotten_topics_data=[]), 12)
    records = resp.responses[0].partitions[0].records
    for pos, h in iter_batch_headers(records):
        if h.base_offset <= offset <= h.last_offset:
            section = records[pos + HEADER_SIZE: pos + h.size]
            data = codecs.decompress(h.compression, section) if h.compression else bytes(section)
            # under LogAppendTime maxTimestamp is the broker's clock
            max_ts = "append time" if h.is_log_append_time else h.max_timestamp
            return (h.base_offset - offset, h.attributes, h.last_offset_delta, h.base_timestamp,
                    max_ts, h.producer_id, h.producer_epoch, h.base_sequence,
                    h.record_count, data)
    raise AssertionError(f"no batch at offset {offset}")


def _normalized(text: str | None, topic: str) -> str | None:
    """Times and topic names differ between two runs; everything else must not."""
    if text is None:
        return None
    return re.sub(r"-?\d{10,}", "N", text.replace(topic, "T"))


def answers(bootstrap: str, default_cases: dict, topic_cases: list) -> dict[str, tuple]:
    """Every case sent to the broker at ``bootstrap``: the normalized Produce answer, and for
    accepted batches what was stored."""
    out: dict[str, tuple] = {}
    groups: dict[str, list[tuple[str, bytes]]] = {"default": list(default_cases.items())}
    configs: dict[str, dict] = {"default": {}}
    for group, config, name, records, _ in topic_cases:
        configs[group] = config
        groups.setdefault(group, []).append((name, records))
    with WireClient(bootstrap) as c:
        for group, cases in groups.items():
            topic = f"validate-{group}-{uuid.uuid4().hex[:8]}"
            create_topic(bootstrap, topic, config=configs[group])
            for name, records in cases:
                part = produce_raw(c, topic, records)
                answer = (part.error_code, _normalized(part.error_message, topic),
                          [(e.batch_index, _normalized(e.batch_index_error_message, topic))
                           for e in part.record_errors])
                if part.error_code == 0:
                    answer += stored_batch(c, topic, part.base_offset)
                out[f"{group}/{name}"] = answer
    return out


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_malformed_records_answer_kafkas_code(broker, topic_name, case, record_walk):
    """Each malformed batch gets Kafka's error code and nothing is stored; what Kafka accepts
    is stored (with either record walk, C or Python)."""
    create_topic(broker.bootstrap_servers, topic_name)
    with WireClient(broker.bootstrap_servers) as c:
        part = produce_raw(c, topic_name, malformed_cases()[case])
        assert part.error_code == EXPECTED[case]
        if part.error_code:
            assert part.base_offset == -1
            assert produce_raw(c, topic_name, build_batch([(b"k", b"v")])).base_offset == 0
        else:
            assert part.base_offset == 0


@pytest.mark.parametrize("case", [c[:3] for c in config_cases()], ids=lambda c: f"{c[0]}/{c[2]}")
def test_topic_config_record_rules(broker, topic_name, case, record_walk):
    group, config, name = case
    expected = {(g, n): (recs, code) for g, _, n, recs, code in config_cases()}
    records, code = expected[group, name]
    create_topic(broker.bootstrap_servers, topic_name, config=config)
    with WireClient(broker.bootstrap_servers) as c:
        part = produce_raw(c, topic_name, records)
    assert part.error_code == code
    if code == 32:
        assert part.error_message == "One or more records have been rejected due to invalid timestamp"
        assert part.record_errors and all(
            "is out of range" in e.batch_index_error_message
            or "without key" in e.batch_index_error_message
            or "Producer should not set timestamp type to LogAppendTime" in
            e.batch_index_error_message for e in part.record_errors)
    if group == "compact" and code == 87:
        assert [e.batch_index for e in part.record_errors] == (
            [0, 2] if name == "keyless" else [0])
        assert part.error_message.startswith(
            f"One or more records have been rejected due to {len(part.record_errors)} record "
            "errors in total, and only showing the first three errors at most: "
            "[RecordError(batchIndex=0, message='Compacted topic cannot accept message without "
            f"key in topic partition {topic_name}-0')")


@needs_java
def test_record_checks_answer_as_kafka(broker, reference_kafka):
    """The same bytes to pykafkad and to Apache Kafka: the same error codes, messages and
    record_errors, and for accepted batches the same stored header fields and records."""
    cases, topic_cases = malformed_cases(), config_cases()  # the very same bytes to both
    theirs = answers(reference_kafka.bootstrap_servers, cases, topic_cases)
    assert {k.split("/", 1)[1]: v[0] for k, v in theirs.items() if k.startswith("default/")} \
        == EXPECTED
    assert {f"{g}/{n}": code for g, _, n, _, code in topic_cases} == {
        k: v[0] for k, v in theirs.items() if not k.startswith("default/")}
    ours = answers(broker.bootstrap_servers, cases, topic_cases)
    assert ours.keys() == theirs.keys()
    for name in theirs:
        assert ours[name] == theirs[name], name


def test_consumers_read_every_good_record_after_refused_batches(broker, topic_name):
    """A refused batch leaves nothing in the log: librdkafka and kafka-python consumers read
    every good record, in order, without stalling or raising CorruptRecordError."""
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, topic_name)
    confluent_produce(bootstrap, topic_name, [{"value": b"a%d" % i} for i in range(5)])
    with WireClient(bootstrap) as c:
        for name in ("random_bytes", "fewer_records_than_count", "zstd_corrupt_payload",
                     "length_too_long", "zstd_random_records"):
            assert produce_raw(c, topic_name, malformed_cases()[name]).error_code != 0
    confluent_produce(bootstrap, topic_name, [{"value": b"b%d" % i} for i in range(5)],
                      **{"compression.codec": "zstd"})
    want = [b"a%d" % i for i in range(5)] + [b"b%d" % i for i in range(5)]
    got = confluent_consume(bootstrap, topic_name, len(want))
    assert [m.value() for m in got] == want
    assert [m.offset() for m in got] == list(range(10))
    got = kafka_python_consume(bootstrap, topic_name, len(want))
    assert [r.value for r in got] == want


def test_stock_producers_get_invalid_timestamp(broker, topic_name):
    """A record timestamp beyond ``message.timestamp.after.max.ms`` (default one hour) or before
    ``message.timestamp.before.max.ms`` is refused with INVALID_TIMESTAMP; a LogAppendTime topic
    takes it and stamps the append time instead."""
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, topic_name, config={"message.timestamp.before.max.ms": "60000"})
    now = int(time.time() * 1000)
    errors = []
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "message.send.max.retries": 0})
    for ts in (now + 2 * 3600 * 1000, now - 3600 * 1000):
        p.produce(topic_name, value=b"x", timestamp=ts,
                  on_delivery=lambda err, msg: errors.append(err))
        p.flush(WAIT_S)
    assert [e.name() for e in errors] == ["INVALID_TIMESTAMP"] * 2
    kp = KafkaProducer(bootstrap_servers=bootstrap, retries=0)
    with pytest.raises(InvalidTimestampError):
        kp.send(topic_name, value=b"x", timestamp_ms=now + 2 * 3600 * 1000).get(WAIT_S)
    assert kp.send(topic_name, value=b"ok", timestamp_ms=now).get(WAIT_S).offset == 0
    kp.close()

    lat = f"{topic_name}-lat"
    create_topic(bootstrap, lat, config={"message.timestamp.type": "LogAppendTime"})
    confluent_produce(bootstrap, lat, [{"value": b"x", "timestamp": now + 2 * 3600 * 1000}])
    (msg,) = confluent_consume(bootstrap, lat, 1)
    assert msg.timestamp()[1] < now + 3600 * 1000


@pytest.mark.parametrize("topic_codec, level", [
    ("gzip", None), ("gzip", "1"), ("snappy", None), ("lz4", None), ("lz4", "17"), ("zstd", None),
    ("zstd", "-5"), ("uncompressed", None)])
def test_topic_compression_type_recompresses(broker, topic_name, topic_codec, level):
    """A topic's compression.type other than ``producer`` makes the broker rewrite each batch
    with that codec and its ``compression.<codec>.level`` (as Kafka does), keeping offsets,
    timestamps, keys, values, headers and the idempotent producer's id and sequence; every
    client reads it back."""
    bootstrap = broker.bootstrap_servers
    config = {"compression.type": topic_codec}
    if level is not None:
        config[f"compression.{topic_codec}.level"] = level
    create_topic(bootstrap, topic_name, config=config)
    now = int(time.time() * 1000)
    sent = [{"key": b"k%d" % i, "value": b"v%d" % i * 20, "headers": [("h", b"%d" % i)],
             "timestamp": now - 1000 + i} for i in range(20)]
    producer_codec = "none" if topic_codec != "uncompressed" else "lz4"
    confluent_produce(bootstrap, topic_name, sent, **{"compression.codec": producer_codec,
                                                      "enable.idempotence": True})
    kp = KafkaProducer(bootstrap_servers=bootstrap, compression_type="gzip")
    kp.send(topic_name, key=b"kp", value=b"from kafka-python", timestamp_ms=now).get(WAIT_S)
    kp.close()

    want_codec = {"gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4, "uncompressed": 0}[topic_codec]
    with WireClient(bootstrap) as c:
        first = stored_batch(c, topic_name, 0)
        last = stored_batch(c, topic_name, 20)
    assert first[1] & 7 == want_codec and last[1] & 7 == want_codec
    assert first[5] >= 0 and first[7] == 0  # producer id and first sequence kept

    got = confluent_consume(bootstrap, topic_name, 21)
    assert [(m.key(), m.value(), m.headers(), m.timestamp()[1]) for m in got[:20]] == [
        (m["key"], m["value"], m["headers"], m["timestamp"]) for m in sent]
    assert got[20].value() == b"from kafka-python"
    assert [m.offset() for m in got] == list(range(21))
    records = kafka_python_consume(bootstrap, topic_name, 21)
    assert [r.value for r in records] == [m["value"] for m in sent] + [b"from kafka-python"]


def test_confluent_producer_gets_invalid_record_for_keyless_compacted(broker, topic_name):
    create_topic(broker.bootstrap_servers, topic_name, config={"cleanup.policy": "compact"})
    with pytest.raises(AssertionError, match="INVALID_RECORD"):
        confluent_produce(broker.bootstrap_servers, topic_name, [{"value": b"no key"}],
                          **{"message.send.max.retries": 0})


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_confluent_producer_and_max_decompressed_message_bytes(broker, topic_name, codec):
    """``max.decompressed.message.bytes`` bounds each record of a compressed batch: librdkafka
    gets INVALID_RECORD for a 4 KiB record under a 512-byte limit and delivers a small one; an
    uncompressed large record passes; raising the limit (IncrementalAlterConfigs) lets the large
    compressed record in."""
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, topic_name, config={"max.decompressed.message.bytes": "512"})
    big = {"key": b"key", "value": bytes(4096)}
    with pytest.raises(AssertionError, match="INVALID_RECORD"):
        confluent_produce(bootstrap, topic_name, [big], **{
            "compression.codec": codec, "message.send.max.retries": 0})
    confluent_produce(bootstrap, topic_name, [{"key": b"key", "value": bytes(64)}],
                      **{"compression.codec": codec})
    confluent_produce(bootstrap, topic_name, [big], **{"compression.codec": "none"})
    admin = AdminClient({"bootstrap.servers": bootstrap})
    resource = ConfigResource("topic", topic_name, incremental_configs=[ConfigEntry(
        "max.decompressed.message.bytes", "8192",
        incremental_operation=AlterConfigOpType.SET)])
    admin.incremental_alter_configs([resource])[resource].result(WAIT_S)
    confluent_produce(bootstrap, topic_name, [big], **{"compression.codec": codec})
    got = confluent_consume(bootstrap, topic_name, 3)
    assert [len(m.value()) for m in got] == [64, 4096, 4096]


@pytest.mark.parametrize("codec", [codecs.GZIP, codecs.ZSTD])
def test_max_decompressed_message_bytes_stops_a_zip_bomb(broker, topic_name, codec):
    """A compressed record declaring 65 MiB under a 512-byte limit is INVALID_RECORD with no
    message, as Kafka answers, decided from the first bytes decompressed: decompressing the
    whole batch would have hit the broker's 64 MiB ceiling (MESSAGE_TOO_LARGE) instead."""
    create_topic(broker.bootstrap_servers, topic_name,
                 config={"max.decompressed.message.bytes": "512"})
    bomb = build_batch([(b"k", b"v"), (None, bytes(65 << 20))], compression=codec)
    with WireClient(broker.bootstrap_servers) as c:
        part = produce_raw(c, topic_name, bomb)
        assert (part.error_code, part.error_message, part.record_errors) == (87, None, [])
        assert produce_raw(c, topic_name, build_batch(
            [(b"k", b"v")], compression=codec)).base_offset == 0
