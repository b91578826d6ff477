"""One log segment: ``<base offset, 20 digits>.log`` plus its ``.index`` and ``.timeindex``.

Behaviour follows Kafka's LogSegment: roll conditions, sparse index entries every
``index.interval.bytes`` of batches, a last time-index entry with the segment's largest timestamp
when it stops being active, and recovery that validates batches (framing, magic 2, CRC32C),
rebuilds both indexes and truncates whatever follows the last valid batch.

Only batch headers are ever parsed here; record contents are left alone.
"""

from __future__ import annotations

import logging
import os
import random
import struct
from bisect import bisect_right
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

import crc32c

from pykafkad.log.config import LogConfig
from pykafkad.log.epoch import LeaderEpochCache
from pykafkad.log.index import CorruptIndexError, OffsetIndex, TimeIndex
from pykafkad.log.records import find_record
from pykafkad.log.region import LazyFile, SegmentFile, write_all
from wire.records.header import ATTRIBUTES_OFFSET, HEADER_SIZE, LOG_OVERHEAD

log = logging.getLogger("pykafkad.log")

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
TXN_INDEX_SUFFIX = ".txnindex"

log = logging.getLogger("pykafkad.log")

INT32_MAX = 0x7FFFFFFF
MAGIC_V2 = 2
#: batchLength of the smallest possible batch (a header and no records)
MIN_BATCH_LENGTH = HEADER_SIZE - LOG_OVERHEAD

#: baseOffset, batchLength, partitionLeaderEpoch, magic, crc, attributes, lastOffsetDelta,
#: baseTimestamp, maxTimestamp (the first 43 bytes of a v2 header)
_HDR = struct.Struct(">qiibIhiqq")
_WALK_CHUNK = 8192
_RECOVER_CHUNK = 1 << 20


def segment_file_name(base_offset: int, suffix: str) -> str:
    return f"{base_offset:020d}{suffix}"


def floor_segment_index(bases: list[int], offset: int) -> int:
    """Index of the segment that holds ``offset`` in a log whose sorted segment base offsets are
    ``bases`` (Kafka's ``floorSegment``); the first segment for an offset below them all."""
    return max(0, bisect_right(bases, offset) - 1)


class BatchInfo(NamedTuple):
    """A stored batch's header fields and where it lies in its segment file."""

    position: int
    size: int
    base_offset: int
    leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1


class LogSegment:
    """A segment's files and the in-memory facts about them (size, next offset, max timestamp)."""

    def __init__(
        self,
        dir: Path,
        base_offset: int,
        config: LogConfig,
        clock: Callable[[], int],
        *,
        new: bool,
        file_suffix: str = "",
    ):
        self.dir = dir
        self.base_offset = base_offset
        self.config = config
        #: appended to every file name ("" for a live segment; the cleaner writes ".cleaned"
        #: segments and swaps them in through ".swap", as Kafka does)
        self.file_suffix = file_suffix
        self.log_path = dir / segment_file_name(base_offset, LOG_SUFFIX + file_suffix)
        self.index_path = dir / segment_file_name(base_offset, INDEX_SUFFIX + file_suffix)
        self.time_index_path = dir / segment_file_name(base_offset, TIME_INDEX_SUFFIX + file_suffix)
        flags = os.O_RDWR | os.O_APPEND
        if new:
            created = SegmentFile(self.log_path, flags | os.O_CREAT | os.O_TRUNC)
            self._log_file: LazyFile | None = LazyFile(self.log_path, flags, created)
            self.size = 0
        else:
            # opened on first read (a sealed segment may never be read in this run)
            self._log_file = LazyFile(self.log_path, flags)
            self.size = os.stat(self.log_path).st_size
        #: whether the index files had to be created (then they must be rebuilt from the log)
        self.indexes_missing = not new and not (
            self.index_path.exists() and self.time_index_path.exists()
        )
        index_exists = not new and not self.indexes_missing
        self.offset_index = OffsetIndex(
            self.index_path, base_offset, config.max_index_entries, exists=index_exists
        )
        self.time_index = TimeIndex(
            self.time_index_path, base_offset, config.max_time_index_entries, exists=index_exists
        )
        self.max_timestamp = -1
        self.offset_of_max_timestamp = base_offset
        if index_exists:
            last = self.time_index.last_entry_on_disk()
            if last is not None:
                self.max_timestamp, self.offset_of_max_timestamp = last
        #: the offset after the segment's last batch; known for the active segment
        self.next_offset: int | None = base_offset if new else None
        self.rolling_based_timestamp: int | None = None
        self.created_ms = clock()
        self.bytes_since_last_index_entry = 0
        jitter = config.segment_jitter_ms
        self.roll_jitter_ms = random.randrange(min(jitter, config.segment_ms)) if jitter > 0 else 0

    @property
    def file(self) -> SegmentFile:
        """The open ``.log`` file (opened again if it was let go); hold it only for one use."""
        lazy = self._log_file
        return lazy.get() if lazy is not None else _CLOSED  # type: ignore[return-value]

    # -- reading headers -----------------------------------------------------------------------
    def iter_headers(
        self,
        header: struct.Struct,
        start: int = 0,
        end: int | None = None,
        chunk: int = _WALK_CHUNK,
    ) -> Iterator[tuple[int, tuple]]:
        """(position, ``header`` fields) of each batch from file position ``start`` (a batch
        boundary) up to ``end``, reading ``chunk`` bytes at a time.

        ``header`` unpacks a prefix of the v2 header that reaches the magic byte (baseOffset,
        batchLength, partitionLeaderEpoch, magic first), so callers choose how much of it to
        parse. Stops quietly at anything that does not frame as a whole v2 batch.
        """
        end = self.size if end is None else end
        pread = self.file.pread
        unpack = header.unpack_from
        pos = start
        buf = b""
        buf_start = 0
        while end - pos >= HEADER_SIZE:
            rel = pos - buf_start
            if rel < 0 or rel + HEADER_SIZE > len(buf):
                buf = pread(min(chunk, end - pos), pos)
                buf_start = pos
                rel = 0
                if len(buf) < HEADER_SIZE:
                    return
            fields = unpack(buf, rel)
            length = fields[1]
            size = length + LOG_OVERHEAD
            if length < MIN_BATCH_LENGTH or fields[3] != MAGIC_V2 or pos + size > end:
                return
            yield pos, fields
            pos += size

    def iter_batches(self, start: int = 0, end: int | None = None) -> Iterator[BatchInfo]:
        """Batch headers from file position ``start`` (a batch boundary) up to ``end``."""
        # indexing, not star-unpacking: this runs per batch on every read's offset lookup
        for pos, h in self.iter_headers(_HDR, start, end):
            yield BatchInfo(
                pos, h[1] + LOG_OVERHEAD, h[0], h[2], h[3], h[4], h[5], h[6], h[7], h[8]
            )

    def first_batch(self) -> BatchInfo | None:
        return next(self.iter_batches(0), None)

    def read_batch(self, info: BatchInfo) -> bytes:
        return self.file.pread(info.size, info.position)

    # -- indexes -------------------------------------------------------------------------------
    def ensure_indexes(self) -> None:
        """Loads the index files on first use; rebuilds them from the log if they are corrupt."""
        if self.offset_index.loaded and self.time_index.loaded:
            return
        try:
            self.offset_index.load(self.size)
            self.time_index.load()
        except CorruptIndexError as e:
            log.warning("Found a corrupted index file corresponding to log file %s due to %s; "
                        "rebuilding the index files", self.log_path, e)
            self.rebuild_indexes()

    def rebuild_indexes(self) -> None:
        """Rebuilds both indexes from the batches' framing (no CRC check, no truncation)."""
        self.recover(validate=False, truncate=False)

    def _checked(self, entry: tuple[int, int] | None) -> int | None:
        """The entry's position when the batch there ends at the entry's offset (as every entry
        written says), else None: the index is corrupt, and has been rebuilt."""
        if entry is None:
            return 0
        offset, position = entry
        head = self.file.pread(_HDR.size, position)
        if len(head) == _HDR.size:
            base, length, _, magic, _, _, lod, _, _ = _HDR.unpack(head)
            if magic == MAGIC_V2 and length >= MIN_BATCH_LENGTH and base + lod == offset:
                return position
        log.warning(
            "Found a corrupted index file %s: its entry for offset %d points at position %d, "
            "where no batch ends at that offset; rebuilding the index files",
            self.index_path, offset, position)
        self.rebuild_indexes()
        return None

    def index_lookup(self, offset: int) -> int:
        """File position of a batch boundary at or below ``offset`` (from the offset index,
        checked against the log: a corrupt index is rebuilt, never followed)."""
        self.ensure_indexes()
        position = self._checked(self.offset_index.entry_for_offset(offset))
        if position is None:
            position = self.offset_index.lookup(offset)
        return position

    def translate_offset(self, offset: int) -> BatchInfo | None:
        """The first batch whose last offset is >= ``offset``, or None past the segment's end."""
        for batch in self.iter_batches(self.index_lookup(offset)):
            if batch.base_offset + batch.last_offset_delta >= offset:
                return batch
        return None

    def boundary_at_or_below(self, start: int, limit: int) -> int:
        """The largest batch boundary in ``[start, limit]``, ``start`` being a batch boundary."""
        self.ensure_indexes()
        floor = self._checked(self.offset_index.entry_for_position(limit))
        if floor is None:
            floor = self.offset_index.floor_position(limit)
        pos = max(start, floor)
        for batch in self.iter_batches(pos):
            if batch.position + batch.size > limit:
                return batch.position
            pos = batch.position + batch.size
        return pos

    # -- appending -----------------------------------------------------------------------------
    def should_roll(
        self, messages_size: int, max_timestamp: int, max_offset: int, now: int
    ) -> bool:
        config = self.config
        reached_roll_ms = (
            self.time_waited_for_roll(now, max_timestamp) > config.segment_ms - self.roll_jitter_ms
        )
        return (
            self.size > config.segment_bytes - messages_size
            or (self.size > 0 and reached_roll_ms)
            or self.offset_index.is_full
            or self.time_index.is_full
            or not 0 <= max_offset - self.base_offset <= INT32_MAX
        )

    def time_waited_for_roll(self, now: int, message_timestamp: int) -> int:
        """Kafka's rule: by the first batch's timestamp when it has one, else since creation."""
        if self.rolling_based_timestamp is None and self.size > 0:
            first = self.first_batch()
            if first is not None:
                self.rolling_based_timestamp = first.max_timestamp
        ts = self.rolling_based_timestamp
        if ts is not None and ts >= 0:
            return message_timestamp - ts
        return now - self.created_ms

    def append(
        self, data: bytes | bytearray, batches: list[tuple[int, int, int, int]], largest_ts: int
    ) -> None:
        """Appends whole batches; ``batches`` = [(position in data, size, last offset, max ts)]."""
        self.ensure_indexes()
        position = self.size
        if position == 0:
            self.rolling_based_timestamp = largest_ts
        file = self.file
        try:
            write_all(file.fd, data)
        except BaseException:
            os.ftruncate(file.fd, position)
            raise
        self.size = position + len(data)
        interval = self.config.index_interval_bytes
        offset_index = self.offset_index
        time_index = self.time_index
        for rel, size, last_offset, max_ts in batches:
            if max_ts > self.max_timestamp:
                self.max_timestamp = max_ts
                self.offset_of_max_timestamp = last_offset
            if self.bytes_since_last_index_entry > interval:
                offset_index.append(last_offset, position + rel)
                time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp)
                self.bytes_since_last_index_entry = 0
            self.bytes_since_last_index_entry += size
        self.next_offset = batches[-1][2] + 1
        try:
            offset_index.write_pending()
            time_index.write_pending()
        except OSError as e:
            # The batches are in the log: the sparse index entries are written with a later
            # append (or rebuilt on recovery), so the append stands whole.
            log.warning("%s: index entries stay pending: %s", self.log_path.name, e)

    # -- loading and recovery ------------------------------------------------------------------
    def load_tail(self) -> bool:
        """Finds the next offset and max timestamp of the active segment after a clean shutdown.

        Walks the batches after the last index entry; False when they do not end exactly at the
        end of the file (a torn tail), in which case the segment needs ``recover``.
        """
        self.ensure_indexes()
        pos = self.offset_index.last_position
        next_offset = self.base_offset
        for batch in self.iter_batches(pos):
            pos = batch.position + batch.size
            next_offset = batch.next_offset
            if batch.max_timestamp > self.max_timestamp:
                self.max_timestamp = batch.max_timestamp
                self.offset_of_max_timestamp = batch.last_offset
        if pos != self.size:
            return False
        self.next_offset = next_offset
        return True

    def recover(
        self,
        *,
        epochs: LeaderEpochCache | None = None,
        validate: bool = True,
        truncate: bool = True,
    ) -> int:
        """Revalidates every batch, rebuilds the indexes, cuts off what follows the last good one.

        Returns the number of bytes truncated (with ``truncate=False``: that would have been).
        """
        interval = self.config.index_interval_bytes
        file = self.file
        size = os.fstat(file.fd).st_size
        pread = file.pread
        index_entries: list[tuple[int, int]] = []
        time_entries: list[tuple[int, int]] = []
        last_time_entry = -1
        max_ts = -1
        offset_of_max = self.base_offset
        expected = self.base_offset
        valid = 0
        last_index_position = 0
        buf = b""
        buf_start = 0
        while size - valid >= HEADER_SIZE:
            rel = valid - buf_start
            if rel < 0 or rel + HEADER_SIZE > len(buf):
                buf = pread(min(_RECOVER_CHUNK, size - valid), valid)
                buf_start = valid
                rel = 0
            base, length, epoch, magic, crc, _, lod, _, batch_max_ts = _HDR.unpack_from(buf, rel)
            batch_size = length + LOG_OVERHEAD
            last_offset = base + lod
            if (
                length < MIN_BATCH_LENGTH
                or magic != MAGIC_V2
                or valid + batch_size > size
                or lod < 0
                or base < expected
                or last_offset - self.base_offset > INT32_MAX
            ):
                break
            if validate:
                if rel + batch_size > len(buf):
                    buf = pread(max(_RECOVER_CHUNK, batch_size), valid)
                    buf_start = valid
                    rel = 0
                body = memoryview(buf)[rel + ATTRIBUTES_OFFSET : rel + batch_size]
                if crc32c.crc32c(body) != crc:
                    break
            if batch_max_ts > max_ts:
                max_ts = batch_max_ts
                offset_of_max = last_offset
            if valid - last_index_position > interval:
                index_entries.append((last_offset, valid))
                if max_ts > last_time_entry:
                    time_entries.append((max_ts, offset_of_max))
                    last_time_entry = max_ts
                last_index_position = valid
            if epochs is not None and epoch >= 0:
                latest = epochs.latest_epoch
                if latest is None or epoch > latest:
                    epochs.assign(epoch, base)
            valid += batch_size
            expected = last_offset + 1
        truncated = size - valid
        if truncated and truncate:
            os.ftruncate(file.fd, valid)
            size = valid
        self.size = size
        if max_ts > last_time_entry:
            time_entries.append((max_ts, offset_of_max))
        self.offset_index.reset(index_entries)
        self.time_index.reset(time_entries)
        self.max_timestamp = max_ts
        self.offset_of_max_timestamp = offset_of_max
        self.next_offset = expected
        self.rolling_based_timestamp = None
        self.bytes_since_last_index_entry = 0
        self.indexes_missing = False
        return truncated

    # -- truncation ----------------------------------------------------------------------------
    def truncate_to(self, offset: int, now_ms: int) -> int:
        """Cuts the segment at the batch holding ``offset`` (or the first after it), as Kafka's
        LogSegment.truncateTo: index entries at or above ``offset`` go, the max timestamp is
        found again from the time index and the batches after its entry. Returns the bytes cut.
        The caller sets ``next_offset`` (Kafka's log end offset becomes ``offset``)."""
        self.ensure_indexes()
        mapping = self.translate_offset(offset)
        self.offset_index.truncate_to(offset)
        self.time_index.truncate_to(offset)
        cut = 0
        if mapping is not None:
            cut = self.size - mapping.position
            os.ftruncate(self.file.fd, mapping.position)
            self.size = mapping.position
        if self.size == 0:
            self.created_ms = now_ms
        self.rolling_based_timestamp = None
        self.bytes_since_last_index_entry = 0
        self._reload_largest_timestamp()
        return cut

    def _reload_largest_timestamp(self) -> None:
        last = self.time_index.last_entry()
        max_ts, offset_of_max = last if last is not None else (-1, self.base_offset)
        for batch in self.iter_batches(self.index_lookup(offset_of_max)):
            if batch.max_timestamp > max_ts:
                max_ts, offset_of_max = batch.max_timestamp, batch.last_offset
        self.max_timestamp = max_ts
        self.offset_of_max_timestamp = offset_of_max

    # -- timestamps ----------------------------------------------------------------------------
    def largest_timestamp(self) -> int:
        """The largest record timestamp, or the file's mtime when no batch has one (as Kafka)."""
        if self.max_timestamp >= 0:
            return self.max_timestamp
        try:
            return int(os.stat(self.log_path).st_mtime * 1000)
        except FileNotFoundError:
            return -1

    def find_offset_by_timestamp(
        self, timestamp: int, starting_offset: int
    ) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record with timestamp >= ``timestamp`` and
        offset >= ``starting_offset`` (Kafka's findOffsetByTimestamp)."""
        self.ensure_indexes()
        _, indexed_offset = self.time_index.lookup(timestamp)
        position = self.index_lookup(max(indexed_offset, starting_offset))
        for batch in self.iter_batches(position):
            if batch.max_timestamp < timestamp or batch.last_offset < starting_offset:
                continue
            found = find_record(
                self.read_batch(batch),
                batch.base_offset,
                batch.base_timestamp,
                batch.max_timestamp,
                batch.attributes,
                lambda o, t: t >= timestamp and o >= starting_offset,
            )
            if found is not None:
                return max(found[0], starting_offset), found[1]
        return None

    def find_max_timestamp(self) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record carrying the segment's max timestamp."""
        self.ensure_indexes()
        target = self.max_timestamp
        for batch in self.iter_batches(self.index_lookup(self.offset_of_max_timestamp)):
            if batch.max_timestamp != target:
                continue
            found = find_record(
                self.read_batch(batch),
                batch.base_offset,
                batch.base_timestamp,
                batch.max_timestamp,
                batch.attributes,
                lambda o, t: t == target,
            )
            return found if found is not None else (batch.base_offset, target)
        return None

    # -- lifecycle -----------------------------------------------------------------------------
    def on_become_inactive(self) -> None:
        """Adds the final time-index entry (used by time retention) and writes the indexes."""
        self.ensure_indexes()
        self.time_index.maybe_append(
            self.max_timestamp, self.offset_of_max_timestamp, skip_full_check=True
        )
        self.offset_index.close()
        self.time_index.close()

    def flush(self) -> None:
        os.fsync(self.file.fd)  # reopened if let go: fsync covers writes through any descriptor
        self.offset_index.flush()
        self.time_index.flush()

    def close(self) -> None:
        if self.time_index.loaded:
            self.time_index.maybe_append(
                self.max_timestamp, self.offset_of_max_timestamp, skip_full_check=True
            )
        self.offset_index.close()
        self.time_index.close()
        # The descriptor closes when the last FileRegion that uses it is gone.
        self._release_log_file()

    def _release_log_file(self) -> None:
        if self._log_file is not None:
            self._log_file.release()
            self._log_file = None

    def delete(self) -> None:
        """Unlinks the segment's files; outstanding FileRegions keep reading the old data."""
        self.offset_index.close()
        self.time_index.close()
        suffixes = (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX)
        for suffix in suffixes:
            try:
                os.unlink(self.dir / segment_file_name(self.base_offset, suffix + self.file_suffix))
            except FileNotFoundError:
                pass
        self._release_log_file()

    def change_file_suffix(
        self, new_suffix: str, rename: Callable[[Path, Path], None] = os.replace
    ) -> None:
        """Renames the segment's files from the current suffix to ``new_suffix`` (the log first,
        then the indexes, as Kafka's changeFileSuffixes). Open descriptors stay valid."""
        self.offset_index.close()
        self.time_index.close()
        old_suffix = self.file_suffix
        for suffix in (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX):
            src = self.dir / segment_file_name(self.base_offset, suffix + old_suffix)
            dst = self.dir / segment_file_name(self.base_offset, suffix + new_suffix)
            if suffix == TXN_INDEX_SUFFIX and not src.exists():
                continue  # most segments have no aborted transaction to index
            rename(src, dst)
        self.file_suffix = new_suffix
        self.log_path = self.dir / segment_file_name(self.base_offset, LOG_SUFFIX + new_suffix)
        self.index_path = self.dir / segment_file_name(self.base_offset, INDEX_SUFFIX + new_suffix)
        self.time_index_path = self.dir / segment_file_name(
            self.base_offset, TIME_INDEX_SUFFIX + new_suffix
        )
        self.offset_index.path = self.index_path
        self.time_index.path = self.time_index_path
        if self._log_file is not None:
            self._log_file.rename(self.log_path)

    def __repr__(self) -> str:
        return f"LogSegment(base_offset={self.base_offset}, size={self.size})"


class _ClosedFile:
    fd = -1
    path = "<closed>"

    def fileno(self) -> int:
        raise ValueError("segment is closed")

    def pread(self, length: int, offset: int) -> bytes:
        raise ValueError("segment is closed")


_CLOSED = _ClosedFile()
