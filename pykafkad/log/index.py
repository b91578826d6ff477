"""Sparse segment indexes in Kafka's on-disk formats.

``.index`` (OffsetIndex): 8-byte entries, int32 offset relative to the segment's base offset +
int32 file position, both big-endian. As Kafka's appends and recovery do, an entry is the *last*
offset of the batch that starts at the position, so Kafka's DumpLogSegments verifies them.

``.timeindex`` (TimeIndex): 12-byte entries, int64 timestamp + int32 relative offset; an entry is
added only when the segment's max timestamp grows, so timestamps never go down.

Files are never preallocated: they always hold exactly the valid entries. Entries live in memory
(``array``s, loaded lazily from the file on first use) and appends are written through; a torn
trailing entry (file length not a multiple of the entry size) is dropped on load.
"""

from __future__ import annotations

import os
import struct
import sys
from array import array
from bisect import bisect_left, bisect_right
from itertools import pairwise
from pathlib import Path

from pykafkad.log.region import LazyFile, write_all

_APPEND_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT

_LITTLE = sys.byteorder == "little"
_TIME_ENTRY = struct.Struct(">qi")
_INDEX_ENTRY = struct.Struct(">ii")


def _increasing(values: array) -> bool:
    return all(a < b for a, b in pairwise(values))


def _non_decreasing(values: array) -> bool:
    return all(a <= b for a, b in pairwise(values))


class CorruptIndexError(Exception):
    """An index whose entries contradict its segment; the segment rebuilds it."""


class _IndexFile:
    entry_size = 0

    def __init__(self, path: Path, base_offset: int, max_entries: int, *, exists: bool):
        self.path = path
        self.base_offset = base_offset
        self.max_entries = max_entries
        self._loaded = not exists
        self._pending = bytearray()
        #: appends go through a descriptor held only while recently used (see region.OPEN_FILES)
        self._file = LazyFile(path, _APPEND_FLAGS)
        self._unsynced = False
        if not exists:
            path.write_bytes(b"")

    # -- file plumbing -------------------------------------------------------------------------
    def _read_file(self) -> bytes:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            data = b""
        usable = len(data) - len(data) % self.entry_size
        if usable != len(data):
            os.truncate(self.path, usable)
            data = data[:usable]
        return data

    def write_pending(self) -> None:
        if not self._pending:
            return
        if self._file.path != os.fspath(self.path):
            self._file.release(close=True)
            self._file = LazyFile(self.path, _APPEND_FLAGS)
        fd = self._file.get().fd
        size = os.fstat(fd).st_size
        try:
            write_all(fd, bytes(self._pending))
        except OSError:  # disk full: the file keeps whole entries, the rest stays pending
            os.ftruncate(fd, size)
            raise
        self._pending.clear()
        self._unsynced = True

    def flush(self) -> None:
        self.write_pending()
        if self._unsynced:
            os.fsync(self._file.get().fd)
            self._unsynced = False

    def close(self) -> None:
        self.write_pending()
        self._file.release(close=True)

    def _rewrite(self, data: bytes) -> None:
        self.close()
        self._pending.clear()
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, self.path)

    @property
    def loaded(self) -> bool:
        """Whether the entries are in memory (the file is read on first use)."""
        return self._loaded

    @property
    def is_full(self) -> bool:
        return self.entries >= self.max_entries

    @property
    def entries(self) -> int:  # pragma: no cover - overridden
        raise NotImplementedError


class OffsetIndex(_IndexFile):
    entry_size = 8

    def __init__(self, path: Path, base_offset: int, max_entries: int, *, exists: bool):
        super().__init__(path, base_offset, max_entries, exists=exists)
        self._offsets = array("i")  # relative offsets
        self._positions = array("i")

    def load(self, log_size: int) -> None:
        """Reads the file (once); raises CorruptIndexError when it contradicts the log."""
        if self._loaded:
            return
        arr = array("i")
        arr.frombytes(self._read_file())
        if _LITTLE:
            arr.byteswap()
        offsets, positions = arr[0::2], arr[1::2]
        if offsets:
            if offsets[0] < 0:
                raise CorruptIndexError(f"{self.path}: offset before the segment's base offset")
            if positions[0] < 0 or positions[-1] >= log_size:
                raise CorruptIndexError(f"{self.path}: position beyond the end of the log")
            if not (_increasing(offsets) and _increasing(positions)):
                raise CorruptIndexError(f"{self.path}: entries out of order")
        self._offsets, self._positions = offsets, positions
        self._loaded = True

    @property
    def entries(self) -> int:
        return len(self._offsets)

    @property
    def last_position(self) -> int:
        return self._positions[-1] if self._positions else 0

    def append(self, offset: int, position: int) -> None:
        rel = offset - self.base_offset
        self._offsets.append(rel)
        self._positions.append(position)
        self._pending += _INDEX_ENTRY.pack(rel, position)

    def lookup(self, offset: int) -> int:
        """File position of the last indexed batch whose last offset <= ``offset`` (else 0)."""
        i = bisect_right(self._offsets, offset - self.base_offset)
        return self._positions[i - 1] if i else 0

    def entry_for_offset(self, offset: int) -> tuple[int, int] | None:
        """The last entry whose offset <= ``offset``: (absolute offset, position), else None."""
        i = bisect_right(self._offsets, offset - self.base_offset)
        return (self.base_offset + self._offsets[i - 1], self._positions[i - 1]) if i else None

    def entry_for_position(self, position: int) -> tuple[int, int] | None:
        """The last entry whose position <= ``position``: (absolute offset, position)."""
        i = bisect_right(self._positions, position)
        return (self.base_offset + self._offsets[i - 1], self._positions[i - 1]) if i else None

    def floor_position(self, position: int) -> int:
        """The largest indexed batch position <= ``position`` (else 0)."""
        i = bisect_right(self._positions, position)
        return self._positions[i - 1] if i else 0

    def reset(self, entries: list[tuple[int, int]]) -> None:
        """Replaces the whole index with ``[(offset, position), ...]`` (rebuild after recovery)."""
        self._offsets = array("i", (o - self.base_offset for o, _ in entries))
        self._positions = array("i", (p for _, p in entries))
        self._rewrite(
            b"".join(
                _INDEX_ENTRY.pack(o, p) for o, p in zip(self._offsets, self._positions, strict=True)
            )
        )
        self._loaded = True


    def truncate_to(self, offset: int) -> None:
        """Drops the entries for offsets at or above ``offset`` (Kafka's truncateTo: the log is
        being cut at the batch holding ``offset``); the entries must be loaded."""
        i = bisect_left(self._offsets, offset - self.base_offset)
        if i == len(self._offsets):
            return
        self.reset([(self.base_offset + o, p) for o, p in zip(
            self._offsets[:i], self._positions[:i], strict=True)])


class TimeIndex(_IndexFile):
    entry_size = 12

    def __init__(self, path: Path, base_offset: int, max_entries: int, *, exists: bool):
        super().__init__(path, base_offset, max_entries, exists=exists)
        self._timestamps = array("q")
        self._offsets = array("i")  # relative offsets

    def load(self) -> None:
        if self._loaded:
            return
        timestamps = array("q")
        offsets = array("i")
        for ts, rel in _TIME_ENTRY.iter_unpack(self._read_file()):
            timestamps.append(ts)
            offsets.append(rel)
        if timestamps and (
            offsets[0] < 0
            or not _non_decreasing(timestamps)
            or not _non_decreasing(offsets)
        ):
            raise CorruptIndexError(f"{self.path}: time index entries out of order")
        self._timestamps, self._offsets = timestamps, offsets
        self._loaded = True

    @property
    def entries(self) -> int:
        return len(self._timestamps)

    def last_entry_on_disk(self) -> tuple[int, int] | None:
        """The file's last entry without loading it all: (timestamp, absolute offset)."""
        if self._loaded:
            return self.last_entry()
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return None
        size -= size % self.entry_size
        if size == 0:
            return None
        with open(self.path, "rb") as f:
            f.seek(size - self.entry_size)
            ts, rel = _TIME_ENTRY.unpack(f.read(self.entry_size))
        return ts, self.base_offset + rel

    def last_entry(self) -> tuple[int, int] | None:
        if not self._timestamps:
            return None
        return self._timestamps[-1], self.base_offset + self._offsets[-1]

    def maybe_append(self, timestamp: int, offset: int, *, skip_full_check: bool = False) -> bool:
        """Adds an entry when ``timestamp`` is larger than the last one (as Kafka's maybeAppend)."""
        if not skip_full_check and self.is_full:
            return False
        if self._timestamps and timestamp <= self._timestamps[-1]:
            return False
        if not self._timestamps and timestamp < 0:
            return False
        rel = offset - self.base_offset
        if self._offsets and rel < self._offsets[-1]:
            return False
        self._timestamps.append(timestamp)
        self._offsets.append(rel)
        self._pending += _TIME_ENTRY.pack(timestamp, rel)
        return True

    def lookup(self, timestamp: int) -> tuple[int, int]:
        """The last entry with timestamp <= ``timestamp``, else (-1, base offset)."""
        i = bisect_right(self._timestamps, timestamp)
        if i == 0:
            return -1, self.base_offset
        return self._timestamps[i - 1], self.base_offset + self._offsets[i - 1]

    def reset(self, entries: list[tuple[int, int]]) -> None:
        """Replaces the whole index with ``[(timestamp, offset), ...]``."""
        self._timestamps = array("q", (t for t, _ in entries))
        self._offsets = array("i", (o - self.base_offset for _, o in entries))
        self._rewrite(
            b"".join(
                _TIME_ENTRY.pack(t, o) for t, o in zip(self._timestamps, self._offsets, strict=True)
            )
        )
        self._loaded = True

    def truncate_to(self, offset: int) -> None:
        """Drops the entries whose offset is at or above ``offset`` (Kafka's truncateTo); the
        entries must be loaded."""
        i = bisect_left(self._offsets, offset - self.base_offset)
        if i == len(self._offsets):
            return
        self.reset([(t, self.base_offset + o) for t, o in zip(
            self._timestamps[:i], self._offsets[:i], strict=True)])
