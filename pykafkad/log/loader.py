"""Kafka's LogLoader: what opening a partition's directory does before the log serves anything.

Leftovers of a crash are cleaned first (unfinished cleaner swaps, temp files, orphan indexes);
then the segments are loaded, revalidated from the recovery point when the last shutdown was
not clean, and a torn tail is cut; last, the producer state is rebuilt from its newest snapshot
plus the batches after it. Each step is a function over the segments, so PartitionLog.open
reads as the sequence Kafka runs.
"""

from __future__ import annotations

import logging
import os
import struct
from collections.abc import Callable
from pathlib import Path

from pykafkad.log.cleaner_swap import complete_interrupted_swaps
from pykafkad.log.config import LogConfig
from pykafkad.log.epoch import LeaderEpochCache
from pykafkad.log.producer_state import CompletedTxn, ProducerStateManager
from pykafkad.log.segment import (
    INDEX_SUFFIX,
    LOG_SUFFIX,
    TIME_INDEX_SUFFIX,
    TXN_INDEX_SUFFIX,
    LogSegment,
    floor_segment_index,
)
from wire.errors import KafkaError
from wire.records.control import COMMIT, read_end_txn_marker
from wire.records.header import CONTROL_FLAG, LOG_OVERHEAD, TRANSACTIONAL_FLAG

log = logging.getLogger("pykafkad.log")

#: the whole v2 batch header (baseOffset .. recordCount): replay needs the producer fields
_FULL_HEADER = struct.Struct(">qiibIhiqqqhii")
#: a replay reads the log sequentially: large reads, few system calls
_REPLAY_CHUNK = 1 << 20


def scan_dir(dir: Path) -> list[int]:
    """Base offsets of the segments in ``dir``; removes leftovers (temp files, orphan indexes)."""
    complete_interrupted_swaps(dir)
    bases: set[int] = set()
    indexes: list[tuple[int, Path]] = []
    for entry in os.scandir(dir):
        name = entry.name
        if not entry.is_file():
            continue
        if name.endswith((".tmp", ".deleted", ".cleaned")):
            os.unlink(entry.path)
            continue
        stem, dot, suffix = name.partition(".")
        if not dot or len(stem) != 20 or not stem.isdigit():
            continue
        suffix = "." + suffix
        if suffix == LOG_SUFFIX:
            bases.add(int(stem))
        elif suffix in (INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX):
            indexes.append((int(stem), Path(entry.path)))
    for base, path in indexes:
        if base not in bases:
            path.unlink(missing_ok=True)
    return sorted(bases)


def load_segments(
    dir: Path,
    config: LogConfig,
    clock: Callable[[], int],
    epochs: LeaderEpochCache,
    *,
    recover: bool,
    recovery_point: int,
    log_start_offset: int,
) -> list[LogSegment]:
    """The segments of ``dir``, oldest first, never none (see ``PartitionLog.open``).

    With ``recover``, every segment from the one holding ``recovery_point`` is revalidated and
    the first one that had to be cut ends the log (later segments are deleted). Segments with
    missing indexes are rebuilt either way, and an active segment whose batches do not end at
    the end of its file is recovered. A log that ends before ``log_start_offset`` is deleted and
    starts afresh there, as Kafka does. Leader epochs seen while recovering go to ``epochs``.
    """
    bases = scan_dir(dir)
    segments = [LogSegment(dir, b, config, clock, new=False) for b in bases]
    recovered: set[int] = set()
    if recover and segments:
        for i in range(floor_segment_index(bases, recovery_point), len(segments)):
            truncated = _recover(segments[i], epochs)
            recovered.add(i)
            if truncated:
                for seg in segments[i + 1 :]:
                    log.warning("Deleting segment %s after the corruption in %s",
                                seg.log_path, segments[i].log_path)
                    seg.delete()
                del segments[i + 1 :]
                break
    for i, seg in enumerate(segments):
        if i not in recovered and seg.indexes_missing:
            _recover(seg, epochs)
            recovered.add(i)
    if segments and len(segments) - 1 not in recovered and not segments[-1].load_tail():
        _recover(segments[-1], epochs)
    if segments and segments[-1].next_offset < log_start_offset:
        for seg in segments:
            seg.delete()
        segments = []
    if not segments:
        segments = [LogSegment(dir, max(log_start_offset, 0), config, clock, new=True)]
    return segments


def _recover(segment: LogSegment, epochs: LeaderEpochCache) -> int:
    """Recovers one segment; a cut is logged with the segment and the bytes cut."""
    truncated = segment.recover(epochs=epochs)
    if truncated:
        log.warning(
            "Corruption found in segment %s, truncating to offset %d: %d bytes cut at byte "
            "offset %d", segment.log_path, segment.next_offset, truncated, segment.size)
    return truncated


def rebuild_producer_state(
    state: ProducerStateManager,
    segments: list[LogSegment],
    on_aborted: Callable[[CompletedTxn], None],
) -> None:
    """Loads the newest snapshot at or below the log end, then replays the batches after it
    (headers only; a control batch's one record is decoded for its marker type). Each aborted
    transaction the replay completes goes to ``on_aborted`` (to be indexed)."""
    leo = segments[-1].next_offset
    assert leo is not None
    first_base = segments[0].base_offset
    start = state.load_snapshot(leo)
    if start < first_base:
        if start >= 0:
            state.truncate_and_reload()
        start = first_base
    if start >= leo:
        return
    i = floor_segment_index([s.base_offset for s in segments], start)
    first = segments[i].translate_offset(start)
    pos = first.position if first is not None else None
    for seg in segments[i:]:
        if pos is None:
            pos = 0
        for at, hdr in seg.iter_headers(_FULL_HEADER, pos, chunk=_REPLAY_CHUNK):
            if hdr[0] + hdr[6] < start or hdr[9] < 0:
                continue
            apply_batch(state, hdr, lambda s=seg, a=at, n=hdr[1]: s.file.pread(n + LOG_OVERHEAD, a),
                        on_aborted)
        pos = None


def apply_batch(
    state: ProducerStateManager,
    hdr: tuple,
    read_batch: Callable[[], bytes | bytearray | memoryview],
    on_aborted: Callable[[CompletedTxn], None],
) -> None:
    """Updates ``state`` with one appended batch of a producer, from its full header fields
    ``hdr`` (replay, and a follower's append; no checks: the leader made them). A control
    batch's one record, read by ``read_batch``, is decoded for its marker; an abort it completes
    goes to ``on_aborted`` (to be indexed)."""
    (base, length, _, _, _, attrs, lod, _, max_ts, pid, epoch, base_seq, _) = hdr
    if attrs & CONTROL_FLAG:
        try:
            marker = read_end_txn_marker(read_batch())
        except (KafkaError, ValueError):
            return  # a control batch without a marker (cleaned)
        completed = state.update_marker(
            pid, epoch, marker.coordinator_epoch, base, max_ts, marker.kind == COMMIT)
        if completed is not None and completed.is_aborted:
            on_aborted(completed)
    else:
        last_seq = -1 if base_seq < 0 else (base_seq + lod) & 0x7FFFFFFF
        state.update_data_batch(
            pid, epoch, last_seq, base, base + lod, max_ts, bool(attrs & TRANSACTIONAL_FLAG))
