"""Crash safety of compaction: a crash at any point of writing or swapping in cleaned segments
recovers, on the next open, to either the old segments or the cleaned ones, never a mix."""

from __future__ import annotations

import os
import shutil

import pytest

from pykafkad.log import cleaner_job, cleaner_swap
from pykafkad.log.cleaner import LogCleaner
from pykafkad.log.config import LogConfig
from pykafkad.log.partition import PartitionLog
from tests.log.test_cleaner import (
    KEY,
    newest_per_key,
    produce,
    read_batches,
    read_records,
)

CONFIG = LogConfig(cleanup_policy="compact", segment_bytes=1 << 20, index_interval_bytes=64)


class Crash(BaseException):
    """The process dies here: nothing after it runs, not even cleanup handlers."""


def _build(dir, clock, *, rounds=6, keys=5, roll_every=7, config=CONFIG):
    log = PartitionLog.open(dir, config, clock)
    appended = []
    n = 0
    for r in range(rounds):
        for k in range(keys):
            appended += produce(
                log, [(b"key-%d" % k, b"value-%d-%d" % (r, k))], timestamp=clock.now + n
            )
            n += 1
            if n % roll_every == 0:
                log.roll()
    log.roll()
    return log, appended


def _leftovers(dir) -> list[str]:
    return sorted(
        n for n in os.listdir(dir) if n.endswith((".cleaned", ".swap", ".deleted", ".tmp"))
    )


def _count_renames(tmp_path, clock, monkeypatch, **build) -> int:
    log, _ = _build(tmp_path / "dry" / "t-0", clock, **build)
    calls = []
    real = cleaner_swap._rename

    def counting(src, dst):
        calls.append((src, dst))
        real(src, dst)

    monkeypatch.setattr(cleaner_swap, "_rename", counting)
    assert LogCleaner(None).clean(KEY, log, clock.now) is not None
    monkeypatch.setattr(cleaner_swap, "_rename", real)
    log.close()
    return len(calls)


def _crash_at_rename(monkeypatch, image, fail_at: int, *, after: bool = False):
    """Kills the clean at rename ``fail_at`` (1-based), before it or just after it; the files
    as they are at that instant are copied to ``image`` (the disk a restart would find)."""
    real = cleaner_swap._rename
    calls = [0]

    def crashing(src, dst):
        calls[0] += 1
        if calls[0] == fail_at:
            if after:
                real(src, dst)
            shutil.copytree(os.path.dirname(src), image)
            raise Crash(f"crash at rename {fail_at}")
        real(src, dst)

    monkeypatch.setattr(cleaner_swap, "_rename", crashing)


def test_crash_at_every_step_of_a_swap_recovers_old_or_cleaned(tmp_path, clock, monkeypatch):
    total = _count_renames(tmp_path, clock, monkeypatch)
    # .cleaned -> .swap (3 files), 5 old segments -> .deleted (3 files each), .swap -> final
    assert total == 3 + 5 * 3 + 3
    outcomes = set()
    cases = [(k, False) for k in range(1, total + 1)] + [(total, True)]
    for k, after in cases:
        base = tmp_path / f"case-{k}-{after}"
        log, appended = _build(base / "t-0", clock)
        before = read_records(log)
        leo = log.log_end_offset
        image = base / "image" / "t-0"
        _crash_at_rename(monkeypatch, image, k, after=after)
        with pytest.raises(Crash):
            LogCleaner(None).clean(KEY, log, clock.now)
        monkeypatch.undo()
        # restart after the crash: unclean shutdown, every segment revalidated
        recovered = PartitionLog.open(image, CONFIG, clock, recover=True, recovery_point=0)
        try:
            assert _leftovers(image) == []
            got = read_records(recovered)
            if got == before:
                outcomes.add("old")
            else:
                assert got == newest_per_key(appended), (k, after)
                outcomes.add("cleaned")
            assert recovered.log_end_offset == leo
            assert recovered.log_start_offset == 0
            for fetch in range(leo):
                assert read_batches(recovered, fetch)[0][0].last_offset >= fetch
            # and the cleaner finishes the job on the recovered log
            LogCleaner(None).clean(KEY, recovered, clock.now, force=True)
            assert read_records(recovered) == newest_per_key(appended)
            assert _leftovers(image) == []
        finally:
            recovered.close()
            log.close()
    assert outcomes == {"old", "cleaned"}


def test_crash_between_groups_leaves_valid_partial_compaction(tmp_path, clock, monkeypatch):
    # small segments, so each full segment is its own group
    config = LogConfig(cleanup_policy="compact", segment_bytes=300, index_interval_bytes=64)
    total = _count_renames(tmp_path, clock, monkeypatch, config=config, roll_every=1000)
    for k in range(1, total + 1, 2):
        base = tmp_path / f"case-{k}"
        log, appended = _build(base / "t-0", clock, config=config, roll_every=1000)
        before = {o: (key, v) for o, key, v in read_records(log)}
        leo = log.log_end_offset
        image = base / "image" / "t-0"
        _crash_at_rename(monkeypatch, image, k)
        with pytest.raises(Crash):
            LogCleaner(None).clean(KEY, log, clock.now)
        monkeypatch.undo()
        recovered = PartitionLog.open(image, config, clock, recover=True, recovery_point=0)
        try:
            assert _leftovers(image) == []
            got = read_records(recovered)
            # a subset of the old records, unchanged and at their offsets, with every newest
            # value of a key still there
            assert all(before[o] == (key, v) for o, key, v in got)
            assert set(newest_per_key(appended)) <= set(got)
            assert recovered.log_end_offset == leo
        finally:
            recovered.close()
            log.close()


def test_crash_while_writing_the_cleaned_segment(tmp_path, clock, monkeypatch):
    log, appended = _build(tmp_path / "t-0", clock)
    before = read_records(log)
    image = tmp_path / "image" / "t-0"
    real = cleaner_job.seal_cleaned_segment

    def crashing(cleaned, last):
        real(cleaned, last)
        shutil.copytree(log.dir, image)
        raise Crash("crash before the swap")

    monkeypatch.setattr(cleaner_job, "seal_cleaned_segment", crashing)
    with pytest.raises(Crash):
        LogCleaner(None).clean(KEY, log, clock.now)
    monkeypatch.undo()
    assert any(n.endswith(".cleaned") for n in os.listdir(image))
    recovered = PartitionLog.open(image, CONFIG, clock, recover=True, recovery_point=0)
    assert _leftovers(image) == []
    assert read_records(recovered) == before
    recovered.close()
    log.close()


def test_swap_files_are_discarded_while_cleaned_files_remain(tmp_path, clock):
    """KAFKA-6264: a .swap at or above a leftover .cleaned base offset is an unfinished rename."""
    log, appended = _build(tmp_path / "t-0", clock)
    before = read_records(log)
    log.close()
    first = tmp_path / "t-0" / "00000000000000000000.log"
    shutil.copy(first, str(first) + ".swap")
    (tmp_path / "t-0" / "00000000000000000000.index.cleaned").write_bytes(b"")
    reopened = PartitionLog.open(tmp_path / "t-0", CONFIG, clock)
    assert _leftovers(reopened.dir) == []
    assert read_records(reopened) == before
    reopened.close()


def test_regions_read_before_a_swap_stay_readable(tmp_path, clock):
    log, appended = _build(tmp_path / "t-0", clock)
    before = log.read(0, 1 << 30)
    data = before.to_bytes()
    LogCleaner(None).clean(KEY, log, clock.now)
    # a Fetch response built before the swap still sends the old bytes
    assert before.to_bytes() == data
    assert read_records(log) == newest_per_key(appended)
    log.close()
