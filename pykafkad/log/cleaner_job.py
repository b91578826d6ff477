"""The heavy half of a cleaning round: reading the old segments, building the offset map and
writing the cleaned segments (``.cleaned`` files, sealed), from a ``CleanJob`` that holds
everything the round needs to know about the live log.

A job is plain data, so the round runs where it costs the broker least: inline (tests, a
direct ``clean_all``) or in a child process (``run_in_process``, the broker's housekeeping),
where its per-record Python work cannot hold the broker's GIL. It opens its own views of the
old segments (read only; non-active segments never change) and never touches the live log:
the swap is the owner's (``cleaner.clean_log``).
"""

from __future__ import annotations

import os
import pickle
import signal
import struct
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from pykafkad.log.cleaner_filter import (
    BatchFilter,
    CleanedTransactionMetadata,
    FilterStats,
    LastRecord,
    OffsetMap,
    iter_batches,
)
from pykafkad.log.cleaner_swap import (
    CLEANED_SUFFIX,
    discard_cleaned_segment,
    new_cleaned_segment,
    seal_cleaned_segment,
)
from pykafkad.log.config import INDEX_ENTRY_SIZE, TIME_INDEX_ENTRY_SIZE, LogConfig
from pykafkad.log.segment import (
    INDEX_SUFFIX,
    INT32_MAX,
    LOG_SUFFIX,
    TIME_INDEX_SUFFIX,
    TXN_INDEX_SUFFIX,
    LogSegment,
    floor_segment_index,
    segment_file_name,
)
from pykafkad.log.txn_index import AbortedTxn, TransactionIndex
from wire.records.batch import decode_records
from wire.records.control import decode_control_key

#: the cleaned bytes gathered before each append to the cleaned segment
_WRITE_CHUNK = 1 << 20
_MAX_TS = struct.Struct(">q")
_MAX_TS_AT = 35
#: how much lower than the broker's the cleaning process's CPU priority is
CHILD_NICENESS = 10
#: how often a thread waiting for the child process looks at its abort flag
_POLL_S = 0.2
#: the broker's pid, handed to the cleaner's child process
PARENT_ENV = "PYKAFKAD_CLEANER_PARENT"
_PR_SET_PDEATHSIG = 1


class CleaningAborted(Exception):
    """The round gave up: the log changed under it or the broker is stopping."""


@dataclass(frozen=True)
class CleanJob:
    """What a round needs from the live log, taken on the log's thread when it starts."""

    dir: Path
    config: LogConfig
    #: base offsets of the segments below the first uncleanable offset, oldest first
    bases: list[int]
    #: the base offset after the last of them (the first uncleanable segment's)
    next_base: int
    first_dirty_offset: int
    first_uncleanable_offset: int
    now_ms: int
    map_entries: int
    active_producers: dict[int, LastRecord]
    #: aborted transactions overlapping the dirty range
    dirty_aborted: list[AbortedTxn]
    #: aborted transactions overlapping each segment, by base offset
    aborted_by_base: dict[int, list[AbortedTxn]]


class JobResult(NamedTuple):
    #: the new cleaner checkpoint: everything below it is clean
    end_offset: int
    #: per cleaned segment (named by its first base offset), the base offsets it replaces
    groups: list[list[int]]
    stats: FilterStats


def segments_between(segments: list[LogSegment], start: int, end: int) -> list[LogSegment]:
    """The segments overlapping ``[start, end)``: from the one holding ``start`` to the last with
    a base offset below ``end`` (Kafka's ``logSegments(from, to)``)."""
    if start >= end:
        return []
    bases = [s.base_offset for s in segments]
    return [s for s in segments[floor_segment_index(bases, start) :] if s.base_offset < end]


def _no_check() -> None:
    return None


def build_offset_map(
    segments: list[LogSegment],
    start: int,
    end: int,
    offset_map: OffsetMap,
    aborted: list[AbortedTxn],
    check: Callable[[], None] = _no_check,
) -> None:
    """Maps every key of ``[start, end)`` to its newest offset, skipping aborted transactions;
    stops early when the map is full (then ``latest_offset`` says how far it got)."""
    dirty = segments_between(segments, start, end)
    txns = CleanedTransactionMetadata()
    txns.add_aborted_transactions(aborted)
    offsets = offset_map.offsets
    for i, seg in enumerate(dirty):
        next_start = dirty[i + 1].base_offset if i + 1 < len(dirty) else end
        seg.ensure_indexes()
        position = seg.offset_index.lookup(start)
        for header, data in iter_batches(seg.file, seg.size, position):
            check()
            if header.is_control:
                records = decode_records(data)
                kind = decode_control_key(records[0].key) if records else None
                txns.on_control_batch_read(header, kind)
            elif not txns.on_batch_read(header):
                for record in decode_records(data):
                    if record.key is not None and record.offset >= start:
                        if len(offsets) >= offset_map.max_entries:
                            return
                        offsets[record.key] = record.offset
            if header.last_offset >= start:
                offset_map.latest_offset = header.last_offset
        offset_map.latest_offset = next_start - 1


def group_segments_by_size(
    segments: list[LogSegment], max_size: int, max_index_size: int, first_uncleanable: int
) -> list[list[LogSegment]]:
    """Consecutive segments whose data, index and time index each fit the limits together and
    whose offsets stay within int32 of the first one's base (Kafka's groupSegmentsBySize)."""
    for seg in segments:
        seg.ensure_indexes()
    groups: list[list[LogSegment]] = []
    i = 0
    while i < len(segments):
        first = segments[i]
        group = [first]
        log_size = first.size
        index_size = first.offset_index.entries * INDEX_ENTRY_SIZE
        time_index_size = first.time_index.entries * TIME_INDEX_ENTRY_SIZE
        i += 1
        while i < len(segments):
            seg = segments[i]
            seg_index = seg.offset_index.entries * INDEX_ENTRY_SIZE
            seg_time_index = seg.time_index.entries * TIME_INDEX_ENTRY_SIZE
            last_offset = (
                segments[i + 1].base_offset - 1 if i + 1 < len(segments) else first_uncleanable - 1
            )
            if not (
                log_size + seg.size <= max_size
                and index_size + seg_index <= max_index_size
                and time_index_size + seg_time_index <= max_index_size
                and (seg.size == 0 or last_offset - first.base_offset <= INT32_MAX)
            ):
                break
            group.append(seg)
            log_size += seg.size
            index_size += seg_index
            time_index_size += seg_time_index
            i += 1
        groups.append(group)
    return groups


def run_clean_job(job: CleanJob, check: Callable[[], None] = _no_check) -> JobResult:
    """The round's reading and writing (Kafka's ``doClean`` up to the swap): every cleaned
    segment is written and sealed; ``check`` raises to stop between two batches. On failure
    the cleaned files written so far are removed."""
    clock = lambda: job.now_ms  # noqa: E731
    segments = [LogSegment(job.dir, b, job.config, clock, new=False) for b in job.bases]
    offset_map = OffsetMap(job.map_entries)
    upper_bound = job.first_uncleanable_offset
    build_offset_map(
        segments, job.first_dirty_offset, upper_bound, offset_map, job.dirty_aborted, check
    )
    end_offset = offset_map.latest_offset + 1
    groups = group_segments_by_size(
        segments_between(segments, 0, end_offset),
        job.config.segment_bytes,
        job.config.segment_index_bytes,
        upper_bound,
    )
    batch_filter = BatchFilter(
        offset_map,
        CleanedTransactionMetadata(),
        job.active_producers,
        now_ms=job.now_ms,
        delete_retention_ms=job.config.delete_retention_ms,
        upper_bound_offset=upper_bound,
    )
    written: list[LogSegment] = []
    try:
        for group in groups:
            written.append(_write_cleaned_segment(job, group, batch_filter, check))
    except BaseException:
        for cleaned in written:
            discard_cleaned_segment(cleaned)
        raise
    return JobResult(
        end_offset, [[s.base_offset for s in group] for group in groups], batch_filter.stats
    )


def _write_cleaned_segment(
    job: CleanJob, group: list[LogSegment], batch_filter: BatchFilter, check: Callable[[], None]
) -> LogSegment:
    """Writes what ``batch_filter`` keeps of ``group`` into one sealed ``.cleaned`` segment."""
    base = group[0].base_offset
    cleaned = new_cleaned_segment(job.dir, base, job.config, job.now_ms)
    txn_entries: list = []
    batch_filter.txns.cleaned_index = txn_entries
    try:
        for seg in group:
            batch_filter.txns.add_aborted_transactions(job.aborted_by_base.get(seg.base_offset, []))
            _clean_into(seg, cleaned, batch_filter, check)
        if txn_entries:
            index = TransactionIndex(
                job.dir / segment_file_name(base, TXN_INDEX_SUFFIX + cleaned.file_suffix)
            )
            for txn in txn_entries:
                index.append(txn)
        seal_cleaned_segment(cleaned, group[-1])
    except BaseException:
        discard_cleaned_segment(cleaned)
        raise
    finally:
        batch_filter.txns.cleaned_index = None
    return cleaned


def _clean_into(
    source: LogSegment, dest: LogSegment, batch_filter: BatchFilter, check: Callable[[], None]
) -> None:
    out = bytearray()
    batches: list[tuple[int, int, int, int]] = []
    largest = -1
    for header, data in iter_batches(source.file, source.size):
        check()
        kept = batch_filter.filter(header, data)
        if kept is None:
            continue
        max_ts = _MAX_TS.unpack_from(kept, _MAX_TS_AT)[0]
        batches.append((len(out), len(kept), header.last_offset, max_ts))
        largest = max(largest, max_ts)
        out += kept
        if len(out) >= _WRITE_CHUNK:
            dest.append(out, batches, largest)
            out = bytearray()
            batches = []
    if batches:
        dest.append(out, batches, largest)


# -- in a child process -------------------------------------------------------------------------


def run_in_process(job: CleanJob, abort: threading.Event | None = None) -> JobResult:
    """Runs ``job`` in a child interpreter (``python -m pykafkad.log.cleaner_child``: the job
    in on stdin, the result out on stdout, both pickled) and waits for it in the calling
    thread; ``abort`` kills the child and removes the ``.cleaned`` files it wrote."""
    root = str(Path(__file__).resolve().parent.parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    env[PARENT_ENV] = str(os.getpid())
    proc = subprocess.Popen(
        [sys.executable, "-m", "pykafkad.log.cleaner_child"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
    )
    job_bytes: bytes | None = pickle.dumps(job)
    try:
        while True:
            try:
                out, _ = proc.communicate(job_bytes, timeout=_POLL_S)
                break
            except subprocess.TimeoutExpired:
                job_bytes = None  # sent; later calls only wait
                if abort is not None and abort.is_set():
                    raise CleaningAborted("the broker is stopping") from None
    except BaseException:
        proc.kill()
        proc.wait()
        for base in job.bases:
            remove_cleaned_files(job.dir, base)
        raise
    if proc.returncode != 0 or not out:
        raise RuntimeError(f"the cleaner process failed (exit code {proc.returncode})")
    status, value = pickle.loads(out)
    if status == "error":
        raise value
    return value


def _die_with_parent() -> Callable[[], None]:
    """Ties the child's life to the broker's, as Kafka's cleaner thread dies with its JVM: a
    child left running after a kill -9 would write ``.cleaned`` files next to the restarted
    broker's own. On Linux the kernel kills it when the broker goes; elsewhere (and should the
    broker be gone already) the returned check ends it between two batches, leaving its files
    to the next start's clean-up rather than touching paths the new broker may own."""
    parent = int(os.environ.get(PARENT_ENV, "0")) or os.getppid()
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass

    def check() -> None:
        if os.getppid() != parent:
            os._exit(1)

    check()
    return check


def child_main() -> int:
    """The child's side of ``run_in_process``. It runs at a lower CPU priority: on a busy
    machine the broker's request loop comes first, the cleaning can wait."""
    parent_alive = _die_with_parent()
    try:
        os.nice(CHILD_NICENESS)
    except OSError:
        pass
    job = pickle.loads(sys.stdin.buffer.read())
    try:
        result: tuple = ("ok", run_clean_job(job, parent_alive))
    except Exception as e:  # sent back whole: the parent logs it as the round's failure
        result = ("error", e)
    sys.stdout.buffer.write(pickle.dumps(result))
    sys.stdout.buffer.flush()
    return 0


def remove_cleaned_files(dir: Path, base: int) -> None:
    """Removes the ``.cleaned`` files of the segment at ``base`` (a round that did not swap)."""
    for suffix in (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX):
        (dir / segment_file_name(base, suffix + CLEANED_SUFFIX)).unlink(missing_ok=True)

