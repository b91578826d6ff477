"""Compacted topics with a real broker and the stock clients: after the cleaner ran, consumers
read the newest value of each key at its original offset, through every kind of batch the
cleaner writes (rebuilt, recompressed, empty, with a delete horizon), also after a restart."""

from __future__ import annotations

import random

from confluent_kafka import Producer
from kafka import KafkaProducer

from pykafkad.testing import run_broker
from tests.integration.clients import (
    WAIT_S,
    confluent_consume,
    create_topic,
    kafka_python_consume,
)
from wire.records.batch import iter_batch_headers
from wire.records.header import DELETE_HORIZON_FLAG

KEYS = 60
ROUNDS = 8
DELETE_RETENTION_MS = 60_000
TOPIC_CONFIG = {
    "cleanup.policy": "compact",
    "segment.bytes": "1048576",
    "delete.retention.ms": str(DELETE_RETENTION_MS),
}


def _value(r: int, k: int) -> bytes:
    # compressible by a third only, so that the data spans several 1 MiB segments
    return b"r%d-k%d:" % (r, k) + random.Random(r * 1000 + k).randbytes(8000) + bytes(4000)


def _key(k: int) -> bytes:
    return b"key-%03d" % k


def _produce_rounds(bootstrap: str, topic: str) -> dict[bytes, tuple[int, bytes | None]]:
    """Round 0 from kafka-python (idempotent), the others from librdkafka with zstd batches;
    key "doomed" gets a value, then a tombstone. Returns key -> (offset, value) of the last."""
    newest: dict[bytes, tuple[int, bytes | None]] = {}
    kp = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=2)
    futures = [
        (_key(k), _value(0, k), kp.send(topic, _value(0, k), key=_key(k))) for k in range(KEYS)
    ]
    futures.append((b"doomed", b"soon gone", kp.send(topic, b"soon gone", key=b"doomed")))
    for key, value, f in futures:
        newest[key] = (f.get(WAIT_S).offset, value)
    kp.close()

    delivered = []
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "compression.type": "zstd",
            "linger.ms": 20,
            "batch.size": 100_000,
        }
    )

    def on_delivery(err, msg):
        assert err is None, err
        delivered.append((msg.key(), msg.offset(), msg.value()))

    for r in range(1, ROUNDS):
        for k in range(KEYS):
            producer.produce(topic, _value(r, k), key=_key(k), on_delivery=on_delivery)
        if r == 1:
            producer.produce(topic, None, key=b"doomed", on_delivery=on_delivery)
        producer.poll(0)
    assert producer.flush(WAIT_S) == 0
    for key, offset, value in sorted(delivered, key=lambda d: d[1]):
        newest[key] = (offset, value)
    return newest


def _consumed(messages, confluent: bool) -> dict[bytes, tuple[int, bytes | None]]:
    out = {}
    for m in messages:
        key, offset, value = (
            (m.key(), m.offset(), m.value()) if confluent else (m.key, m.offset, m.value)
        )
        assert key not in out, f"{key!r} appears twice after compaction"
        out[key] = (offset, value)
    return out


def _stored_batches(b, topic: str) -> list:
    plog = b.broker.logs.get(topic, 0)
    data = b.call(lambda: plog.read(plog.log_start_offset, 1 << 30).to_bytes())
    return [h for _, h in iter_batch_headers(data, strict=True)]


def _check_consumers(b, topic: str, expected: dict) -> None:
    got = _consumed(confluent_consume(b.bootstrap_servers, topic, len(expected)), True)
    assert got == expected
    got = _consumed(kafka_python_consume(b.bootstrap_servers, topic, len(expected)), False)
    assert got == expected


def test_compacted_topic_keeps_the_newest_value_per_key(tmp_path, topic_name):
    now = [1_800_000_000_000]
    data = tmp_path / "data"
    with run_broker(data, clock=lambda: now[0]) as b:
        create_topic(b.bootstrap_servers, topic_name, config=TOPIC_CONFIG)
        newest = _produce_rounds(b.bootstrap_servers, topic_name)
        plog = b.broker.logs.get(topic_name, 0)
        leo = plog.log_end_offset
        assert leo == KEYS * ROUNDS + 2
        assert len(plog.segments) >= 4
        # the active segment is never cleaned: start a new one so that everything is
        b.call(plog.roll)
        cleaned = b.call(b.broker.logs.clean_all)
        assert (topic_name, 0) in cleaned
        assert plog.log_end_offset == leo and plog.log_start_offset == 0

        headers = _stored_batches(b, topic_name)
        assert sum(h.record_count for h in headers) == KEYS + 1  # the tombstone stays, for now
        # kafka-python's last batch, all of whose records were overwritten, stays as an empty
        # batch (the producer's sequence numbers), and zstd batches were recompressed
        assert any(h.record_count == 0 and h.producer_id >= 0 for h in headers)
        assert any(h.compression == 4 and h.attributes & DELETE_HORIZON_FLAG for h in headers)
        _check_consumers(b, topic_name, newest)

        # past delete.retention.ms, the next cleaning drops the tombstone
        now[0] += DELETE_RETENTION_MS
        p = Producer({"bootstrap.servers": b.bootstrap_servers})
        p.produce(topic_name, b"late", key=b"late")
        assert p.flush(WAIT_S) == 0
        del p
        b.call(plog.roll)
        assert (topic_name, 0) in b.call(lambda: b.broker.logs.clean_all(force=True))
        del newest[b"doomed"]
        newest[b"late"] = (leo, b"late")
        _check_consumers(b, topic_name, newest)
        leo += 1

    # after a restart: the same records, appends at the old end, and cleaning goes on
    with run_broker(data, clock=lambda: now[0]) as b:
        _check_consumers(b, topic_name, newest)
        p = KafkaProducer(bootstrap_servers=b.bootstrap_servers, acks="all")
        assert p.send(topic_name, b"after", key=_key(0)).get(WAIT_S).offset == leo
        p.close()
        plog = b.broker.logs.get(topic_name, 0)
        b.call(plog.roll)
        assert (topic_name, 0) in b.call(lambda: b.broker.logs.clean_all(force=True))
        newest[_key(0)] = (leo, b"after")
        _check_consumers(b, topic_name, newest)


def test_cleaned_batches_of_every_codec_are_readable(tmp_path):
    """Batches partly overwritten are rebuilt with their codec: kafka-python (CRC-checking)
    and librdkafka read them."""
    codecs = {"gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
    now = [1_800_000_000_000]
    with run_broker(tmp_path / "data", clock=lambda: now[0]) as b:
        expected = {}
        for name in codecs:
            topic = f"compact-{name}"
            create_topic(b.bootstrap_servers, topic, config=TOPIC_CONFIG)
            producer = Producer(
                {
                    "bootstrap.servers": b.bootstrap_servers,
                    "compression.type": name,
                    "linger.ms": 50,
                }
            )
            offsets = {}

            def on_delivery(err, msg, offsets=offsets):
                assert err is None, err
                offsets[msg.key()] = (msg.offset(), msg.value())

            for r in range(3):
                # every round overwrites the even keys only: old batches lose half their records
                for k in range(20):
                    if r == 0 or k % 2 == 0:
                        value = b"%s round %d key %d " % (name.encode(), r, k) * 20
                        producer.produce(topic, value, key=_key(k), on_delivery=on_delivery)
                assert producer.flush(WAIT_S) == 0
            expected[topic] = dict(offsets)
            plog = b.broker.logs.get(topic, 0)
            b.call(plog.roll)
        cleaned = b.call(b.broker.logs.clean_all)
        for name, codec in codecs.items():
            topic = f"compact-{name}"
            assert (topic, 0) in cleaned
            headers = _stored_batches(b, topic)
            assert {h.compression for h in headers} == {codec}
            assert sum(h.record_count for h in headers) == 20
            _check_consumers(b, topic, expected[topic])


def test_broker_runs_the_cleaner_by_itself(tmp_path, topic_name):
    """The broker's own timer (log.cleaner.backoff.ms) cleans compacted topics."""
    import time

    with run_broker(tmp_path / "d", config={"log.cleaner.backoff.ms": "50"}) as b:
        create_topic(b.bootstrap_servers, topic_name, config=TOPIC_CONFIG)
        newest = _produce_rounds(b.bootstrap_servers, topic_name)
        plog = b.broker.logs.get(topic_name, 0)
        end = plog.log_end_offset
        deadline = time.monotonic() + WAIT_S
        # bounded wait for the broker's timer to have cleaned past the first rounds
        while b.call(lambda: b.broker.logs.cleaner.checkpoints.get((topic_name, 0), 0)) == 0:
            assert time.monotonic() < deadline, "the cleaner never ran"
            time.sleep(0.05)
        from kafka import KafkaConsumer
        from kafka import TopicPartition as KTopicPartition

        consumer = KafkaConsumer(bootstrap_servers=b.bootstrap_servers)
        tp = KTopicPartition(topic_name, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        got = []
        while consumer.position(tp) < end:
            assert time.monotonic() < deadline + WAIT_S
            for records in consumer.poll(timeout_ms=500).values():
                got.extend(records)
        consumer.close()
        assert len(got) < end  # older values are gone, offsets kept
        last = {}
        for r in got:
            last[r.key] = (r.offset, r.value)
        live = {k: v for k, v in newest.items() if v[1] is not None}
        assert {k: v for k, v in last.items() if v[1] is not None} == live


def test_compacted_topic_refuses_keyless_records(broker, topic_name):
    """As Kafka: INVALID_RECORD, and nothing of that batch is appended."""
    import pytest
    from kafka.errors import InvalidRecordError

    create_topic(broker.bootstrap_servers, topic_name, config={"cleanup.policy": "compact"})
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers, retries=0)
    with pytest.raises(InvalidRecordError):
        producer.send(topic_name, value=b"no key").get(WAIT_S)
    assert producer.send(topic_name, key=b"k", value=b"keyed").get(WAIT_S).offset == 0
    producer.close()
