"""The high watermark the replica layer sets on a log: bounded by the log start and end
offsets, never moved back by ``maybe_increment``, and the bound of the LSO and DeleteRecords."""

from __future__ import annotations

import pytest

from pykafkad.log.errors import OffsetOutOfRangeError
from tests.log.batches import make_batch


def _append(log, n: int) -> None:
    log.append(make_batch(n), 0)


def test_unmanaged_it_follows_the_log_end(open_log):
    log = open_log()
    _append(log, 3)
    assert not log.high_watermark_managed
    assert log.high_watermark == log.last_stable_offset == 3


def test_set_it_stays_below_the_log_end_until_moved(open_log):
    log = open_log()
    assert log.update_high_watermark(0) == 0
    _append(log, 3)
    assert (log.high_watermark, log.last_stable_offset, log.log_end_offset) == (0, 0, 3)
    assert log.update_high_watermark(10) == 3  # never past the log end
    assert not log.maybe_increment_high_watermark(2)  # never back
    assert log.high_watermark == 3


def test_delete_records_is_bounded_by_it_and_lifts_it(open_log):
    log = open_log()
    _append(log, 4)
    log.update_high_watermark(2)
    with pytest.raises(OffsetOutOfRangeError):
        log.delete_records(3)
    assert log.delete_records(-1) == 2  # -1: up to the high watermark
    log.update_high_watermark(0)  # below the log start: raised to it
    assert log.high_watermark == 2


def test_retention_keeps_segments_above_it(open_log):
    batch = make_batch(2, pad=40)
    log = open_log(segment_bytes=len(batch) * 2, retention_bytes=0, retention_ms=-1)
    for _ in range(5):
        log.append(batch, 0)  # segments at 0, 4, 8
    log.update_high_watermark(5)
    assert log.apply_retention() == 1  # only [0, 4) is committed wholly
    assert log.log_start_offset == 4
    log.update_high_watermark(10)
    assert log.apply_retention() == 2  # the rest, the active segment included
    assert log.log_start_offset == log.log_end_offset == 10
