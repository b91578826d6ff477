"""The cleaner's heavy half in a child process (the broker's way): the same result as inline,
failures come back as the round's failure, and an aborted round leaves no cleaned files."""

from __future__ import annotations

import os
import threading

import pytest

from pykafkad.log.cleaner import (
    CleaningAborted,
    LogAccess,
    LogCleaner,
    clean_log,
    log_to_clean,
)
from pykafkad.log.cleaner_job import run_in_process
from tests.log.test_cleaner import KEY, compacted_log, produce_rounds, read_records


def in_process(job, access):
    return run_in_process(job, access.abort)


def _cleaned_files(log) -> list[str]:
    return [n for n in os.listdir(log.dir) if n.endswith(".cleaned")]


def test_a_round_in_a_child_process_cleans_like_one_inline(open_log, clock, tmp_path):
    results = []
    for name, run_job in (("inline", None), ("child", in_process)):
        log = compacted_log(open_log, dir=tmp_path / f"{name}-0")
        produce_rounds(log, clock, rounds=5, keys=6)
        log.roll()
        cleaned = LogCleaner(None).clean_all({KEY: log}, clock.now, run_job=run_job)
        assert KEY in cleaned
        assert _cleaned_files(log) == []
        results.append(([(o, k, v) for o, k, v in read_records(log)], cleaned[KEY].end_offset))
    assert results[0] == results[1]
    assert {k for _, k, _ in results[1][0]} == {b"key-%d" % k for k in range(6)}


def test_a_failure_in_the_child_makes_the_log_uncleanable(open_log, clock):
    log = compacted_log(open_log)
    appended = produce_rounds(log, clock, rounds=4, keys=4)
    log.roll()
    first = log.segments[0]
    with open(first.log_path, "r+b") as f:  # a batch header that frames as nothing
        f.seek(8)
        f.write(b"\x00\x00\x00\x01")
    cleaner = LogCleaner(None)
    assert cleaner.clean_all({KEY: log}, clock.now, run_job=in_process) == {}
    assert KEY in cleaner.uncleanable
    assert _cleaned_files(log) == []
    later = log.segments[1].base_offset
    assert read_records(log, later) == [r for r in appended if r[0] >= later]


def test_an_aborted_round_kills_the_child_and_removes_its_files(open_log, clock):
    log = compacted_log(open_log)
    appended = produce_rounds(log, clock, rounds=4, keys=4)
    log.roll()
    stop = threading.Event()
    stop.set()  # the broker is stopping
    ltc = log_to_clean(log, None, clock.now)
    with pytest.raises(CleaningAborted):
        clean_log(log, ltc, clock.now, access=LogAccess(abort=stop), run_job=in_process)
    assert _cleaned_files(log) == []
    assert read_records(log) == appended
