"""Cleaned segments on disk: writing them aside, swapping them in, finishing a broken swap.

The files follow Kafka's protocol (``LocalLog.replaceSegments``, ``LogLoader``):

1. the cleaner writes ``<base>.log.cleaned`` (+ ``.index``/``.timeindex``/``.txnindex``
   ``.cleaned``) and fsyncs them;
2. they are renamed to ``.swap`` (the log first);
3. every replaced segment's files are renamed to ``.deleted``;
4. the ``.swap`` files are renamed to their final names, then the ``.deleted`` files go.

On load (``complete_interrupted_swaps``), as Kafka's LogLoader: ``.deleted`` files are removed;
a ``.cleaned`` file means step 2 did not finish, so it and every ``.swap`` file at or above its
base offset are removed (the old segments are intact); the remaining ``.swap`` logs replaced
every segment whose base offset lies in ``[swap base, swap's next offset)``, so those are
removed and the ``.swap`` files renamed. Any crash thus leaves either the old segments or the
cleaned one, never both, and offsets never change.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

from pykafkad.log.checkpoint import fsync_dir, fsync_file
from pykafkad.log.config import LogConfig
from pykafkad.log.segment import (
    INDEX_SUFFIX,
    LOG_SUFFIX,
    MAGIC_V2,
    MIN_BATCH_LENGTH,
    TIME_INDEX_SUFFIX,
    TXN_INDEX_SUFFIX,
    LogSegment,
    segment_file_name,
)
from wire.records.header import HEADER_SIZE, LOG_OVERHEAD

CLEANED_SUFFIX = ".cleaned"
SWAP_SUFFIX = ".swap"
DELETED_SUFFIX = ".deleted"

_SEGMENT_SUFFIXES = (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX)
_HEAD = struct.Struct(">qiib")  # baseOffset, batchLength, partitionLeaderEpoch, magic
_LOD = struct.Struct(">i")


def _rename(src: Path, dst: Path) -> None:
    """Every rename of the swap goes through here (tests replace it to simulate crashes)."""
    os.replace(src, dst)


def new_cleaned_segment(dir: Path, base_offset: int, config: LogConfig, now_ms: int) -> LogSegment:
    return LogSegment(
        dir, base_offset, config, lambda: now_ms, new=True, file_suffix=CLEANED_SUFFIX
    )


def seal_cleaned_segment(cleaned: LogSegment, last_replaced: LogSegment) -> None:
    """Final time-index entry, everything fsynced, and the mtime of the newest replaced segment
    (Kafka keeps it: time retention falls back to it for segments without timestamps)."""
    cleaned.on_become_inactive()
    cleaned.flush()
    txn_index = cleaned.dir / segment_file_name(
        cleaned.base_offset, TXN_INDEX_SUFFIX + cleaned.file_suffix
    )
    for path in (cleaned.index_path, cleaned.time_index_path, txn_index):
        fsync_file(path)
    try:
        mtime = os.stat(last_replaced.log_path).st_mtime_ns
    except FileNotFoundError:
        return
    os.utime(cleaned.log_path, ns=(mtime, mtime))


def swap_segment_files(dir: Path, cleaned: LogSegment, replaced: list[LogSegment]) -> None:
    """Steps 2-4 above; the in-memory segment list is the caller's."""
    cleaned.change_file_suffix(SWAP_SUFFIX, _rename)
    fsync_dir(dir)
    for seg in replaced:
        seg.change_file_suffix(DELETED_SUFFIX, _rename)
    cleaned.change_file_suffix("", _rename)
    fsync_dir(dir)
    for seg in replaced:
        seg.delete()  # its .deleted files; open FileRegions keep reading them


def discard_cleaned_segment(cleaned: LogSegment) -> None:
    """Removes an unfinished cleaned segment (only while it is still ``.cleaned``)."""
    if cleaned.file_suffix == CLEANED_SUFFIX:
        cleaned.delete()


# -- loading ------------------------------------------------------------------------------------


def _base_offset(name: str) -> int | None:
    if len(name) > 20 and name[20] == "." and name[:20].isdigit():
        return int(name[:20])
    return None


def read_next_offset(path: Path, base_offset: int) -> int:
    """The offset after the last whole batch of a segment file (its base offset when empty)."""
    next_offset = base_offset
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        pos = 0
        while size - pos >= HEADER_SIZE:
            f.seek(pos)
            head = f.read(HEADER_SIZE)
            if len(head) < HEADER_SIZE:
                break
            base, length, _, magic = _HEAD.unpack_from(head)
            if length < MIN_BATCH_LENGTH or magic != MAGIC_V2 or pos + length + LOG_OVERHEAD > size:
                break
            next_offset = base + _LOD.unpack_from(head, 23)[0] + 1
            pos += length + LOG_OVERHEAD
    return next_offset


def complete_interrupted_swaps(dir: Path) -> None:
    """Brings the files of ``dir`` back to whole segments after a crash during cleaning."""
    deleted: list[str] = []
    cleaned: list[tuple[int, str]] = []
    swaps: list[tuple[int, str]] = []
    for entry in os.scandir(dir):
        if not entry.is_file():
            continue
        name = entry.name
        base = _base_offset(name)
        if name.endswith(DELETED_SUFFIX):
            deleted.append(entry.path)
        elif base is None:
            continue
        elif name.endswith(CLEANED_SUFFIX):
            cleaned.append((base, entry.path))
        elif name.endswith(SWAP_SUFFIX):
            swaps.append((base, entry.path))
    if not (deleted or cleaned or swaps):
        return
    for path in deleted:
        _unlink(path)
    min_cleaned = min((b for b, _ in cleaned), default=None)
    valid: list[tuple[int, str]] = []
    for base, path in swaps:
        if min_cleaned is not None and base >= min_cleaned:
            _unlink(path)  # its clean had not finished writing .swap files
        else:
            valid.append((base, path))
    for _, path in cleaned:
        _unlink(path)
    low = high = None
    for base, path in valid:
        if path.endswith(LOG_SUFFIX + SWAP_SUFFIX):
            end = max(read_next_offset(Path(path), base), base + 1)
            low = base if low is None else min(low, base)
            high = end if high is None else max(high, end)
    if low is not None and high is not None:
        for entry in os.scandir(dir):
            name = entry.name
            base = _base_offset(name)
            if (
                base is not None
                and low <= base < high
                and name[20:] in _SEGMENT_SUFFIXES
                and entry.is_file()
            ):
                _unlink(entry.path)
    for _, path in valid:
        os.replace(path, path[: -len(SWAP_SUFFIX)])
    fsync_dir(dir)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
