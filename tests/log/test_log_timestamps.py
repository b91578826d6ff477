from __future__ import annotations

import sys
import types

from tests.log.batches import make_batch


def test_offset_for_timestamp_finds_the_exact_record(open_log):
    log = open_log(segment_bytes=400, index_interval_bytes=100)
    ts = 10_000
    expected = {}
    offset = 0
    for _ in range(12):
        stamps = [ts, ts + 5, ts + 3]  # not monotonic inside a batch
        log.append(make_batch(3, timestamps=stamps), 0)
        for i, t in enumerate(stamps):
            expected.setdefault(offset + i, t)
        offset += 3
        ts += 10
    assert len(log.segments) > 2

    def brute(target):
        for off in sorted(expected):
            if expected[off] >= target:
                return off, expected[off]
        return None

    for target in range(9_990, ts + 10, 2):
        assert log.offset_for_timestamp(target) == brute(target), target
    assert log.offset_for_timestamp(ts + 100) is None


def test_offset_for_timestamp_respects_log_start(open_log):
    log = open_log()
    log.append(make_batch(4, timestamps=[100, 200, 300, 400]), 0)
    log.append(make_batch(2, timestamps=[500, 600]), 0)
    log.delete_records(2)
    assert log.offset_for_timestamp(0) == (2, 300)
    assert log.offset_for_timestamp(250) == (2, 300)
    assert log.offset_for_timestamp(301) == (3, 400)


def test_log_append_time_lookup_uses_batch_timestamp(open_log):
    log = open_log(message_timestamp_type="LogAppendTime")
    log.append(make_batch(3, timestamp=1), 0, now_ms=1000)
    log.append(make_batch(3, timestamp=1), 0, now_ms=2000)
    assert log.offset_for_timestamp(500) == (0, 1000)
    assert log.offset_for_timestamp(1001) == (3, 2000)
    assert log.max_timestamp() == (3, 2000)


def test_max_timestamp(open_log):
    log = open_log(segment_bytes=100)
    assert log.max_timestamp() is None
    log.append(make_batch(3, timestamps=[5, 90, 7]), 0)
    log.append(make_batch(3, timestamps=[50, 60, 90]), 0)
    log.append(make_batch(2, timestamps=[10, 20]), 0)
    assert len(log.segments) > 1
    # The first record carrying the largest timestamp (Kafka: first max wins).
    assert log.max_timestamp() == (1, 90)


def test_compressed_batches_without_a_decoder_answer_with_the_batch(open_log, monkeypatch):
    log = open_log()
    log.append(make_batch(3, timestamps=[100, 200, 300]), 0)
    # attributes=1 (gzip) with bytes that are not a valid gzip stream: records can't be read.
    log.append(make_batch(3, timestamps=[400, 500, 600], attributes=1, payload=b"\x00" * 20), 0)
    assert log.offset_for_timestamp(450) == (3, 600)
    assert log.offset_for_timestamp(200) == (1, 200)


def test_compressed_batches_use_decode_records(open_log, monkeypatch):
    class Rec:
        def __init__(self, offset, timestamp):
            self.offset, self.timestamp = offset, timestamp

    def decode_records(batch):
        base = int.from_bytes(batch[:8], "big")
        return [Rec(base, 400), Rec(base + 1, 500), Rec(base + 2, 600)]

    fake = types.ModuleType("wire.records.batch")
    fake.decode_records = decode_records
    monkeypatch.setitem(sys.modules, "wire.records.batch", fake)
    log = open_log()
    log.append(make_batch(1, timestamps=[100]), 0)
    log.append(make_batch(3, timestamps=[400, 500, 600], attributes=1, payload=b"\x00" * 20), 0)
    assert log.offset_for_timestamp(450) == (2, 500)
    assert log.max_timestamp() == (3, 600)


def test_epoch_for_offset(open_log):
    log = open_log()
    log.append(make_batch(2), 0)
    log.append(make_batch(2), 3)
    assert [log.epoch_for_offset(o) for o in range(4)] == [0, 0, 3, 3]
