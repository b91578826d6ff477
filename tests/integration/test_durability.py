"""Data survives a clean restart and a kill -9; retention removes whole old segments."""

from __future__ import annotations

from pathlib import Path

from kafka import KafkaProducer

from pykafkad.testing import run_broker
from tests.integration.broker_process import BrokerProcess
from tests.integration.clients import (
    WAIT_S,
    confluent_consume,
    confluent_produce,
    create_topic,
    kafka_python_consume,
)


def _produce(bootstrap, topic, start, n):
    p = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=2)
    futures = [p.send(topic, f"m{i}".encode()) for i in range(start, start + n)]
    offsets = [f.get(WAIT_S).offset for f in futures]
    p.close()
    return offsets


def test_clean_restart_keeps_data_and_topic_id(tmp_path, topic_name):
    data = tmp_path / "data"
    with run_broker(data) as b:
        create_topic(b.bootstrap_servers, topic_name, partitions=2)
        assert _produce(b.bootstrap_servers, topic_name, 0, 100)[-1] >= 0
        topic_id = b.broker.topics.get(topic_name).topic_id
    with run_broker(data) as b:
        assert b.broker.topics.get(topic_name).topic_id == topic_id
        got = kafka_python_consume(b.bootstrap_servers, topic_name, 100, partitions=(0, 1))
        assert sorted(r.value for r in got) == sorted(f"m{i}".encode() for i in range(100))
        # appends continue after the old end
        offsets = _produce(b.bootstrap_servers, topic_name, 100, 10)
        assert min(offsets) > 0


def test_sigterm_then_kill_9_recovery(tmp_path, topic_name):
    data = tmp_path / "data"
    proc = BrokerProcess(data).start()
    try:
        create_topic(proc.bootstrap_servers, topic_name)
        _produce(proc.bootstrap_servers, topic_name, 0, 50)
        assert proc.terminate() == 0
        assert (data / ".kafka_cleanshutdown").exists()

        proc = BrokerProcess(data).start()
        _produce(proc.bootstrap_servers, topic_name, 50, 50)
        proc.kill()  # kill -9: no clean shutdown marker, recovery on the next start
        assert not (data / ".kafka_cleanshutdown").exists()

        # a torn tail, as if the machine died mid-write
        seg = sorted((data / f"{topic_name}-0").glob("*.log"))[-1]
        with open(seg, "ab") as f:
            f.write(b"\x00\x00\x00\x00\x00\x00\x00\x64\x00\x00\x01\x00garbage")

        proc = BrokerProcess(data).start()
        got = confluent_consume(proc.bootstrap_servers, topic_name, 100)
        assert [m.value() for m in got] == [f"m{i}".encode() for i in range(100)]
        assert _produce(proc.bootstrap_servers, topic_name, 100, 1) == [100]
    finally:
        if proc.proc.poll() is None:
            proc.kill()


def test_retention_deletes_whole_old_segments(tmp_path, topic_name):
    """retention.bytes removes the oldest whole segments; retention.ms, measured against each
    segment's largest timestamp by the broker's (fake) clock, removes the rest."""
    now = [1_800_000_000_000]
    with run_broker(tmp_path / "d", clock=lambda: now[0]) as b:
        create_topic(b.bootstrap_servers, topic_name, config={
            "segment.bytes": str(1 << 20), "retention.bytes": str(2 << 20),
            "retention.ms": "60000"})
        value = b"x" * 100_000
        msgs = [{"value": value, "timestamp": now[0] - 1000} for _ in range(45)]
        confluent_produce(b.bootstrap_servers, topic_name, msgs, **{"linger.ms": 0})
        plog = b.broker.logs.get(topic_name, 0)
        segments = sorted(Path(plog.dir).glob("*.log"))
        assert len(segments) >= 4

        assert b.call(b.broker.apply_retention) >= 1  # by size: the oldest segments go
        remaining = sorted(Path(plog.dir).glob("*.log"))
        assert remaining == segments[len(segments) - len(remaining):]
        assert plog.log_start_offset == int(remaining[0].stem) > 0
        got = kafka_python_consume(b.bootstrap_servers, topic_name, 45 - plog.log_start_offset)
        assert got[0].offset == plog.log_start_offset and len(got) == 45 - plog.log_start_offset

        now[0] += 120_000  # every record is now older than retention.ms
        b.call(b.broker.apply_retention)
        assert plog.log_start_offset == plog.log_end_offset == 45
        offsets = _produce(b.bootstrap_servers, topic_name, 0, 1)
        assert offsets == [45]
