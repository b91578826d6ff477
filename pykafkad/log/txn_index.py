"""A segment's ``.txnindex``: the aborted transactions whose abort marker lies in that segment.

Kafka's format (``AbortedTxn``), 34 bytes per entry, big-endian::

    version int16 (0) | producerId int64 | firstOffset int64 | lastOffset int64
    | lastStableOffset int64

``lastOffset`` is the offset of the abort marker; ``lastStableOffset`` the partition's LSO right
after the marker was written (Fetch stops collecting once an entry's LSO passes its upper bound).
A read_committed Fetch answers, per partition, the aborted transactions that overlap the fetched
range so that consumers can drop their records. The file is created with its first entry.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import NamedTuple

from pykafkad.log.checkpoint import fsync_file
from pykafkad.log.segment import TXN_INDEX_SUFFIX, floor_segment_index, segment_file_name

VERSION = 0
_ENTRY = struct.Struct(">hqqqq")
ENTRY_SIZE = _ENTRY.size


class AbortedTxn(NamedTuple):
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


class TransactionIndex:
    """The entries of one ``<base offset>.txnindex``, kept in memory (they are few)."""

    def __init__(self, path: Path):
        self.path = path
        self.entries: list[AbortedTxn] = []
        if path.exists():
            data = path.read_bytes()
            usable = len(data) - len(data) % ENTRY_SIZE
            for pos in range(0, usable, ENTRY_SIZE):
                version, pid, first, last, lso = _ENTRY.unpack_from(data, pos)
                if version != VERSION:
                    break
                self.entries.append(AbortedTxn(pid, first, last, lso))
            if usable != len(data) or len(self.entries) * ENTRY_SIZE != usable:
                self._rewrite()

    @property
    def last_offset(self) -> int:
        """The last indexed abort marker's offset (-1 when empty)."""
        return self.entries[-1].last_offset if self.entries else -1

    def append(self, txn: AbortedTxn) -> None:
        if txn.last_offset <= self.last_offset:
            return  # already indexed (recovery replays markers it may have seen)
        self.entries.append(txn)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, _ENTRY.pack(VERSION, *txn))
        finally:
            os.close(fd)

    def truncate_to(self, offset: int) -> None:
        """Drops the entries whose marker is at or after ``offset`` (the log was cut there)."""
        keep = [e for e in self.entries if e.last_offset < offset]
        if len(keep) != len(self.entries):
            self.entries = keep
            self._rewrite()

    def collect(self, fetch_offset: int, upper_bound: int, out: list[AbortedTxn]) -> bool:
        """Appends the entries overlapping ``[fetch_offset, upper_bound)``; True when done
        (an entry's LSO reached the upper bound, so later segments cannot matter)."""
        for e in self.entries:
            if e.last_offset >= fetch_offset and e.first_offset < upper_bound:
                out.append(e)
            if e.last_stable_offset >= upper_bound:
                return True
        return False

    def flush(self) -> None:
        fsync_file(self.path)

    def _rewrite(self) -> None:
        if not self.entries:
            self.path.unlink(missing_ok=True)
            return
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_bytes(b"".join(_ENTRY.pack(VERSION, *e) for e in self.entries))
        os.replace(tmp, self.path)


class TransactionIndexes:
    """A partition's ``.txnindex`` files by segment base offset. Most segments have none (the
    file appears with a segment's first indexed abort), so a Fetch that finds the map empty
    answers no aborted transactions without touching a file."""

    def __init__(self, dir: Path):
        self.dir = dir
        self._by_base: dict[int, TransactionIndex] = {}

    def _path(self, base: int) -> Path:
        return self.dir / segment_file_name(base, TXN_INDEX_SUFFIX)

    def load(self, bases: list[int], log_end_offset: int) -> None:
        """Reads the files of the segments ``bases``, dropping entries at or after the log end
        (markers cut off by recovery)."""
        self._by_base = {}
        for base in bases:
            path = self._path(base)
            if path.exists():
                index = TransactionIndex(path)
                index.truncate_to(log_end_offset)
                if index.entries:
                    self._by_base[base] = index

    def append(self, base: int, txn: AbortedTxn) -> None:
        """Indexes ``txn`` in the segment ``base`` (the one holding its abort marker)."""
        index = self._by_base.get(base)
        if index is None:
            index = self._by_base[base] = TransactionIndex(self._path(base))
        index.append(txn)

    def collect(self, bases: list[int], fetch_offset: int, upper_bound: int) -> list[AbortedTxn]:
        """The aborted transactions overlapping ``[fetch_offset, upper_bound)`` (Kafka's
        collectAbortedTransactions): from the segment holding ``fetch_offset`` on, until an
        entry's LSO shows that later segments cannot overlap."""
        out: list[AbortedTxn] = []
        if not self._by_base:
            return out
        for base in bases[floor_segment_index(bases, fetch_offset) :]:
            index = self._by_base.get(base)
            if index is not None and index.collect(fetch_offset, upper_bound, out):
                break
        return out

    def flush(self, base: int) -> None:
        index = self._by_base.get(base)
        if index is not None:
            index.flush()

    def truncate_to(self, offset: int) -> None:
        """Drops the entries whose abort marker is at or after ``offset`` (the log was cut
        there); the indexes of deleted segments must be discarded first."""
        for base, index in list(self._by_base.items()):
            index.truncate_to(offset)
            if not index.entries:
                del self._by_base[base]

    def clear(self) -> None:
        """Forgets every index (the log was emptied; the files went with their segments)."""
        self._by_base = {}

    def discard(self, base: int) -> None:
        """Forgets the index of a segment that is gone (its file goes with the segment)."""
        self._by_base.pop(base, None)

    def reopen(self, base: int) -> None:
        """Picks up the file of a segment replaced under the same base offset (the cleaner's)."""
        path = self._path(base)
        if path.exists():
            self._by_base[base] = TransactionIndex(path)
