"""A damaged data directory never takes the broker down as a whole and never loses records
silently.

Every case builds its damage on a data dir written by the real broker with stock clients, then
restarts the broker as users do (a subprocess, so exit status and log lines are what they see)
and checks with stock clients what is served.
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaException, TopicPartition

from pykafkad.cluster import TOPICS_FILE
from pykafkad.coordinator.partitioning import partition_for
from tests.integration.broker_process import BrokerProcess
from tests.integration.clients import (
    WAIT_S,
    confluent_consume,
    confluent_produce,
    create_topic,
)
from tests.kraft.released_broker import run_released_broker

OFFSETS_PARTITIONS = 50


def _stop(proc: BrokerProcess) -> str:
    """Stops the broker cleanly; returns what it logged."""
    assert proc.terminate() == 0
    return proc.proc.stderr.read()


def _kill(proc: BrokerProcess) -> str:
    proc.kill()
    return proc.proc.stderr.read()


def _values(n: int, prefix: str = "m") -> list[dict]:
    return [{"value": f"{prefix}{i}".encode()} for i in range(n)]


def _consume_from(bootstrap: str, topic: str, offset: int, count: int) -> list[int]:
    """Offsets of up to ``count`` records read from ``offset`` on (confluent-kafka)."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "damaged-dir-reader",
                  "enable.auto.commit": False, "enable.partition.eof": True})
    c.assign([TopicPartition(topic, 0, offset)])
    out: list[int] = []
    deadline = time.monotonic() + WAIT_S
    try:
        while len(out) < count and time.monotonic() < deadline:
            msg = c.poll(0.5)
            if msg is None:
                continue
            if msg.error() is not None:
                if msg.error().code() == -191:  # _PARTITION_EOF: nothing more to read
                    break
                raise KafkaException(msg.error())
            out.append(msg.offset())
    finally:
        c.close()
    return out


def _run_broker_expecting_exit(data: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pykafkad", "--host", "127.0.0.1", "--port", "0",
         "--data-dir", str(data)],
        capture_output=True, text=True, timeout=60)


# -- pykafkad-topics.json ----------------------------------------------------------------------
@pytest.mark.parametrize("damage, problem", [
    (lambda text: text[: len(text) // 2], "is not valid JSON"),
    (lambda text: text.replace('"partitions": 2', '"partitions": "two"'),
     '"partitions" must be a positive integer'),
])
def test_a_damaged_topics_file_exits_2_with_one_line(tmp_path, topic_name, damage, problem):
    data = tmp_path / "data"
    with run_released_broker(data) as released:  # the file a released pykafkad wrote
        create_topic(released, topic_name, partitions=2)
    path = data / TOPICS_FILE
    path.write_text(damage(path.read_text()))

    result = _run_broker_expecting_exit(data)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert str(path) in lines[0] and problem in lines[0]


# -- __consumer_offsets ------------------------------------------------------------------------
def _two_groups_on_different_partitions() -> tuple[str, str]:
    a = "damaged-group-a"
    for i in range(100):
        b = f"healthy-group-{i}"
        if partition_for(b, OFFSETS_PARTITIONS) != partition_for(a, OFFSETS_PARTITIONS):
            return a, b
    raise AssertionError("unreachable")


def _commit(bootstrap: str, group: str, topic: str, offset: int) -> None:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        c.commit(offsets=[TopicPartition(topic, 0, offset)], asynchronous=False)
    finally:
        c.close()


def _committed(bootstrap: str, group: str, topic: str, timeout: float = WAIT_S) -> int:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        return c.committed([TopicPartition(topic, 0)], timeout=timeout)[0].offset
    finally:
        c.close()


def _flip_byte_in_last_batch(segment: Path) -> None:
    """Flips a byte in the records of the segment's last batch (its CRC no longer matches)."""
    data = segment.read_bytes()
    pos = 0
    last = 0
    while pos + 12 <= len(data):
        last = pos
        pos += 12 + struct.unpack_from(">i", data, pos + 8)[0]
    with open(segment, "r+b") as f:
        f.seek(last + 70)
        byte = f.read(1)
        f.seek(last + 70)
        f.write(bytes([byte[0] ^ 0xFF]))


def test_a_corrupt_consumer_offsets_partition_fails_alone(tmp_path, topic_name):
    data = tmp_path / "data"
    damaged, healthy = _two_groups_on_different_partitions()
    proc = BrokerProcess(data).start()
    create_topic(proc.bootstrap_servers, topic_name)
    confluent_produce(proc.bootstrap_servers, topic_name, _values(10))
    _commit(proc.bootstrap_servers, damaged, topic_name, 3)
    _commit(proc.bootstrap_servers, healthy, topic_name, 7)
    _stop(proc)
    partition = partition_for(damaged, OFFSETS_PARTITIONS)
    segment = sorted((data / f"__consumer_offsets-{partition}").glob("*.log"))[-1]
    _flip_byte_in_last_batch(segment)

    proc = BrokerProcess(data).start()
    try:
        assert _committed(proc.bootstrap_servers, healthy, topic_name) == 7
        # the damaged group is unavailable (NOT_COORDINATOR), never silently without offsets
        with pytest.raises(KafkaException):
            _committed(proc.bootstrap_servers, damaged, topic_name, timeout=3)
        # the rest of the broker keeps working
        confluent_produce(proc.bootstrap_servers, topic_name, _values(1, "after"))
        got = confluent_consume(proc.bootstrap_servers, topic_name, 11)
        assert [m.offset() for m in got] == list(range(11))
    finally:
        logged = _stop(proc)
    errors = [line for line in logged.splitlines() if " ERROR " in line]
    assert len(errors) == 1, logged
    assert f"__consumer_offsets-{partition}" in errors[0] and "CRC" in errors[0]


# -- indexes -----------------------------------------------------------------------------------
#: the smallest segments Kafka allows, an index entry every few batches of 2 KB
_SMALL_SEGMENTS = {"segment.bytes": str(1 << 20), "index.interval.bytes": "5000"}


def _fill_segments(data: Path, topic: str, n: int) -> None:
    proc = BrokerProcess(data).start()
    try:
        create_topic(proc.bootstrap_servers, topic, config=_SMALL_SEGMENTS)
        confluent_produce(proc.bootstrap_servers, topic,
                          [{"value": b"v" * 2000} for _ in range(n)], **{"batch.num.messages": 1})
    finally:
        _stop(proc)


def _index_entries(path: Path) -> list[tuple[int, int]]:
    data = path.read_bytes()
    return [struct.unpack_from(">ii", data, i) for i in range(0, len(data), 8)]


def _write_entry(path: Path, i: int, rel_offset: int, position: int) -> None:
    with open(path, "r+b") as f:
        f.seek(8 * i)
        f.write(struct.pack(">ii", rel_offset, position))


def test_a_wrong_entry_in_a_sealed_segment_index_is_rebuilt(tmp_path, topic_name):
    data = tmp_path / "data"
    _fill_segments(data, topic_name, 1200)
    pdir = data / f"{topic_name}-0"
    index = sorted(pdir.glob("*.index"))[0]
    base = int(index.stem)
    entries = _index_entries(index)
    assert len(entries) > 4 and len(sorted(pdir.glob("*.log"))) > 2
    # an entry that still sorts between its neighbours but points one batch past the batch
    # that holds its offset: followed blindly, a read from that offset skips records
    i = len(entries) // 2
    rel, pos = entries[i]
    log = index.with_suffix(".log").read_bytes()
    wrong = pos + 12 + struct.unpack_from(">i", log, pos + 8)[0]
    assert pos < wrong < entries[i + 1][1]
    _write_entry(index, i, rel, wrong)

    proc = BrokerProcess(data).start()
    try:
        start = base + rel  # the lookup for this offset lands on the wrong entry
        assert _consume_from(proc.bootstrap_servers, topic_name, start, 5) == list(
            range(start, start + 5))
        got = confluent_consume(proc.bootstrap_servers, topic_name, 1200)
        assert [m.offset() for m in got] == list(range(1200))
    finally:
        logged = _stop(proc)
    assert "Found a corrupted index file" in logged and str(index) in logged


def test_a_wrong_entry_in_the_active_segment_index_is_rebuilt(tmp_path, topic_name):
    data = tmp_path / "data"
    _fill_segments(data, topic_name, 600)
    pdir = data / f"{topic_name}-0"
    index = sorted(pdir.glob("*.index"))[-1]
    base = int(index.stem)
    entries = _index_entries(index)
    assert len(entries) >= 3
    i = len(entries) // 2
    rel, pos = entries[i]
    _write_entry(index, i, rel, pos - (1 << 31))  # the sign bit flipped: a negative position

    proc = BrokerProcess(data).start()
    try:
        start = base + rel
        assert _consume_from(proc.bootstrap_servers, topic_name, start, 600) == list(
            range(start, 600))
        confluent_produce(proc.bootstrap_servers, topic_name, _values(1))
        assert _consume_from(proc.bootstrap_servers, topic_name, 600, 1) == [600]
    finally:
        logged = _stop(proc)
    assert "Found a corrupted index file" in logged
    assert "Traceback" not in logged


# -- stray partitions and interrupted deletions ----------------------------------------------
def test_a_partition_dir_of_another_topic_id_is_never_adopted(tmp_path, topic_name):
    data = tmp_path / "data"
    with run_released_broker(data) as released:
        create_topic(released, topic_name)
        confluent_produce(released, topic_name, _values(20, "old"))
    (data / TOPICS_FILE).unlink()  # the topics are lost, their directories are not

    proc = BrokerProcess(data).start()
    try:
        create_topic(proc.bootstrap_servers, topic_name)
        delivered = confluent_produce(proc.bootstrap_servers, topic_name, _values(1, "new"))
        assert delivered[0].offset() == 0
        got = confluent_consume(proc.bootstrap_servers, topic_name, 1)
        assert [(m.offset(), m.value()) for m in got] == [(0, b"new0")]
    finally:
        logged = _stop(proc)
    strays = [p for p in data.iterdir() if p.name.endswith("-stray")]
    assert len(strays) == 1 and strays[0].name.startswith(f"{topic_name}-0.")
    assert sorted(strays[0].glob("*.log"))  # set aside, not deleted
    assert "marked stray and renamed to" in logged


def test_a_deletion_interrupted_by_kill_9_finishes_at_start(tmp_path, topic_name):
    data = tmp_path / "data"
    with run_released_broker(data) as released:
        create_topic(released, topic_name, partitions=2)
        confluent_produce(released, topic_name, _values(20, "old"))
    # the state the released pykafkad's DeleteTopics left once the topic was gone from
    # pykafkad-topics.json (its commit point) and before its directories were renamed: a
    # kill -9 right there
    path = data / TOPICS_FILE
    topics = json.loads(path.read_text())
    deleted = topics["topics"].pop(topic_name)
    topics["deleting"] = [deleted["topic_id"]]
    path.write_text(json.dumps(topics))
    # ... and one directory already renamed to -delete
    (data / f"{topic_name}-1").rename(data / f"{topic_name}-1.0123456789abcdef-delete")

    proc = BrokerProcess(data).start()
    try:
        assert not any(p.name.startswith(topic_name) for p in data.iterdir())
        assert "deleting" not in json.loads(path.read_text())
        create_topic(proc.bootstrap_servers, topic_name, partitions=2)
        delivered = confluent_produce(proc.bootstrap_servers, topic_name,
                                      [{"value": b"new", "partition": p} for p in (0, 1)])
        assert sorted(m.offset() for m in delivered) == [0, 0]
    finally:
        _stop(proc)


# -- recovery ----------------------------------------------------------------------------------
def test_truncation_during_recovery_is_logged(tmp_path, topic_name):
    data = tmp_path / "data"
    proc = BrokerProcess(data).start()
    create_topic(proc.bootstrap_servers, topic_name)
    confluent_produce(proc.bootstrap_servers, topic_name, _values(30))
    _kill(proc)
    segment = sorted((data / f"{topic_name}-0").glob("*.log"))[-1]
    size = segment.stat().st_size
    with open(segment, "ab") as f:
        f.write(b"\x00" * 8 + b"\x00\x00\x01\x00" + b"torn")

    proc = BrokerProcess(data).start()
    try:
        got = confluent_consume(proc.bootstrap_servers, topic_name, 30)
        assert [m.value() for m in got] == [f"m{i}".encode() for i in range(30)]
    finally:
        logged = _stop(proc)
    warnings = [line for line in logged.splitlines() if "Corruption found in segment" in line]
    assert len(warnings) == 1, logged
    assert str(segment) in warnings[0] and "16 bytes cut" in warnings[0]
    assert segment.stat().st_size == size
