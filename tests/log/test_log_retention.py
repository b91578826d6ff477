from __future__ import annotations

import pytest

from pykafkad.log.config import LogConfig
from pykafkad.log.errors import OffsetOutOfRangeError
from tests.log.batches import make_batch, parse_batches

HOUR = 3_600_000


def test_retention_by_time_deletes_old_segments(open_log, clock):
    log = open_log(segment_bytes=300, retention_ms=HOUR)
    t0 = clock.now
    for i in range(6):
        log.append(make_batch(2, pad=40, timestamp=t0 + i), 0)
    old = [s.base_offset for s in log.segments]
    clock.advance(HOUR // 2)
    for i in range(3):
        log.append(make_batch(2, pad=40, timestamp=clock.now + i), 0)
    assert log.apply_retention() == 0
    clock.advance(HOUR // 2 + 10)
    deleted = log.apply_retention()
    assert deleted == len(old)
    assert log.log_start_offset == log.segments[0].base_offset == 12
    assert not any((log.dir / f"{b:020d}.log").exists() for b in old)
    with pytest.raises(OffsetOutOfRangeError):
        log.read(0, 100)
    assert parse_batches(log.read(12, 1 << 20).to_bytes())[0].base_offset == 12
    assert log.leader_epochs.entries == [(0, 12)]


def test_retention_can_delete_the_active_segment(open_log, clock):
    log = open_log(retention_ms=1000)
    log.append(make_batch(3, timestamp=clock.now), 0)
    clock.advance(5000)
    assert log.apply_retention() == 1
    assert log.log_start_offset == log.log_end_offset == 3
    assert [s.base_offset for s in log.segments] == [3]
    assert log.read(3, 100) == ([], 0)
    # An empty active segment is never deleted.
    clock.advance(5000)
    assert log.apply_retention() == 0
    assert log.append(make_batch(1), 0).base_offset == 3


def test_retention_by_size(open_log):
    batch = make_batch(2, pad=40)
    log = open_log(segment_bytes=len(batch) * 2, retention_bytes=len(batch) * 5, retention_ms=-1)
    for _ in range(10):
        log.append(batch, 0)
    assert len(log.segments) == 5
    # Kafka deletes a segment only while the excess is at least that segment's size: the
    # excess is 5 batches, segments hold 2, so two go and 6 batches (> 5) remain.
    assert log.apply_retention() == 2
    assert log.size_in_bytes == len(batch) * 6
    assert log.log_start_offset == 8
    log.update_config(LogConfig(segment_bytes=len(batch) * 2, retention_bytes=0))
    assert log.apply_retention() == 3  # everything, the active segment included
    assert log.size_in_bytes == 0 and log.log_start_offset == log.log_end_offset == 20


def test_retention_disabled_and_compact_policy(open_log, clock):
    log = open_log(segment_bytes=200, retention_ms=-1, retention_bytes=-1)
    for _ in range(4):
        log.append(make_batch(2, pad=40, timestamp=1), 0)
    clock.advance(10 * HOUR)
    assert log.apply_retention() == 0
    log.update_config(LogConfig(segment_bytes=200, retention_ms=1, cleanup_policy="compact"))
    assert log.apply_retention() == 0
    log.update_config(LogConfig(segment_bytes=200, retention_ms=1, cleanup_policy="compact,delete"))
    assert log.apply_retention() == 4


def test_delete_records(open_log):
    log = open_log(segment_bytes=300)
    for _ in range(8):
        log.append(make_batch(3, pad=30), 0)
    bases = [s.base_offset for s in log.segments]
    assert len(bases) >= 3
    new_start = bases[2] + 1  # inside the third segment
    assert log.delete_records(new_start) == new_start
    assert log.log_start_offset == new_start
    assert [s.base_offset for s in log.segments][0] == bases[2]
    with pytest.raises(OffsetOutOfRangeError):
        log.read(new_start - 1, 100)
    # Reading at the log start returns the batch containing it.
    assert parse_batches(log.read(new_start, 1).to_bytes())[0].base_offset == bases[2]
    # Never moves backwards; -1 means the high watermark; beyond it is out of range.
    assert log.delete_records(1) == new_start
    with pytest.raises(OffsetOutOfRangeError):
        log.delete_records(log.log_end_offset + 1)
    with pytest.raises(OffsetOutOfRangeError):
        log.delete_records(-2)
    assert log.delete_records(-1) == log.log_end_offset == 24
    assert log.read(24, 100) == ([], 0)
    assert log.append(make_batch(1), 0).log_start_offset == 24
