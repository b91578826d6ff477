"""Zero-copy slices of segment files, for Fetch responses sent with ``os.sendfile``.

A region holds a reference to the segment's ``SegmentFile``; the descriptor is closed only when
the last reference goes away, so a region stays readable after retention unlinks its segment,
and its descriptor number is never reused under it.

Segments do not hold their descriptors: a ``LazyFile`` opens its file on use and the process-wide
``OPEN_FILES`` keeps only the most recently used ones open (an LRU of strong references; a file
that falls out of it is closed once no region needs it any more). So 10,000 idle partitions
need no descriptors at all, and a busy broker at most ``OPEN_FILES.capacity`` plus the regions
in flight.  An open that finds no descriptor left (EMFILE, ENFILE: the connections took them)
closes the idle files of the LRU and tries once more before it fails.
"""

from __future__ import annotations

import errno
import os
import resource
import sys
import weakref
from collections import OrderedDict

#: the process (EMFILE) or the system (ENFILE) has no descriptor left
OUT_OF_DESCRIPTORS = (errno.EMFILE, errno.ENFILE)


def write_all(fd: int, data: bytes | bytearray) -> None:
    """os.write until everything is written (a regular file rarely needs a second call)."""
    written = os.write(fd, data)
    while written < len(data):
        with memoryview(data) as view:
            written += os.write(fd, view[written:])


class SegmentFile:
    """An open ``.log`` file descriptor, closed when no segment or region refers to it any more."""

    __slots__ = ("fd", "path", "__weakref__")

    def __init__(self, path: os.PathLike | str, flags: int = os.O_RDWR | os.O_CREAT | os.O_APPEND):
        self.path = os.fspath(path)
        self.fd = open_fd(self.path, flags | getattr(os, "O_CLOEXEC", 0))

    def fileno(self) -> int:
        if self.fd < 0:
            raise ValueError(f"{self.path} is closed")
        return self.fd

    def pread(self, length: int, offset: int) -> bytes:
        """Reads exactly ``length`` bytes unless the file ends first."""
        data = os.pread(self.fd, length, offset)
        if len(data) == length or not data:
            return data
        parts = [data]
        got = len(data)
        while got < length:
            more = os.pread(self.fd, length - got, offset + got)
            if not more:
                break
            parts.append(more)
            got += len(more)
        return b"".join(parts)

    def close(self) -> None:
        fd, self.fd = self.fd, -1
        if fd >= 0:
            os.close(fd)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # OSError, or os already torn down at interpreter exit
            pass

    def __repr__(self) -> str:
        return f"SegmentFile({self.path!r}, fd={self.fd})"


class FileRegion:
    """``length`` bytes at ``offset`` of a segment file: whole record batches, ready to send.

    Out of descriptors, a region waiting to be sent may be read into memory (``data``) so that
    its file can close: a Fetch over hundreds of partitions then still fits the limit."""

    __slots__ = ("file", "offset", "length", "data", "__weakref__")

    def __init__(self, file: SegmentFile, offset: int, length: int):
        self.file: SegmentFile | None = file
        self.offset = offset
        self.length = length
        #: the bytes, once read into memory; then ``file`` is None
        self.data: bytes | None = None
        _IN_FLIGHT[id(self)] = self

    def fileno(self) -> int:
        if self.file is None:
            raise ValueError("region was read into memory: send its data")
        return self.file.fileno()

    def __len__(self) -> int:
        return self.length

    def __bytes__(self) -> bytes:
        if self.data is not None:
            return self.data
        data = self.file.pread(self.length, self.offset)
        if len(data) != self.length:
            raise OSError(f"short read from {self.file.path}: {len(data)} of {self.length} bytes")
        return data

    def read_into_memory(self) -> bool:
        """Keeps the bytes instead of the file; False if already done (or the read failed)."""
        if self.data is not None or self.file is None:
            return False
        try:
            self.data = bytes(self)
        except (OSError, ValueError):
            return False
        self.file = None
        return True

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FileRegion):
            return NotImplemented
        if self.data is not None or other.data is not None:
            return bytes(self) == bytes(other)
        return (self.file, self.offset, self.length) == (other.file, other.offset, other.length)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        where = "memory" if self.file is None else repr(self.file.path)
        return f"FileRegion({where}, offset={self.offset}, length={self.length})"


#: the regions not yet sent (or dropped), by id
_IN_FLIGHT: weakref.WeakValueDictionary[int, FileRegion] = weakref.WeakValueDictionary()


def read_regions_into_memory() -> int:
    """Reads every region in flight into memory, letting go of its file (a file a sender is
    writing from stays open: the sender holds it).  Returns how many were read."""
    return sum(region.read_into_memory() for region in list(_IN_FLIGHT.values()))


class OpenFiles:
    """The most recently used ``SegmentFile``s, held open; the least recently used one is let go
    when there are more than ``capacity``."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self._lru: OrderedDict[int, SegmentFile] = OrderedDict()

    def touch(self, file: SegmentFile) -> None:
        lru = self._lru
        key = id(file)
        if key in lru:
            lru.move_to_end(key)
            return
        lru[key] = file
        while len(lru) > self.capacity:
            lru.popitem(last=False)

    def discard(self, file: SegmentFile) -> None:
        self._lru.pop(id(file), None)

    def evict_idle(self) -> int:
        """Lets go of every file only this LRU holds, closing it (a file a region or segment
        write still uses stays): what an open that ran out of descriptors does before its retry.
        Returns how many were let go."""
        lru = self._lru
        # a file referenced by the list's item tuple, the loop variable and getrefcount's
        # argument, and by nothing else but the LRU, is idle
        idle = [key for key, file in list(lru.items()) if sys.getrefcount(file) <= _IDLE_REFS]
        for key in idle:
            lru.pop(key, None)
        return len(idle)

    def __len__(self) -> int:
        return len(self._lru)


#: the fewest segment and index files kept open, whatever the descriptor limit
MIN_OPEN_FILES = 16
MAX_OPEN_FILES = 1024


def _default_capacity() -> int:
    """A quarter of the descriptor limit (sockets need the rest), between 16 and 1024."""
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (OSError, ValueError):
        soft = 1024
    if soft == resource.RLIM_INFINITY:
        soft = 4096
    return max(MIN_OPEN_FILES, min(MAX_OPEN_FILES, soft // 4))


def _idle_refs() -> int:
    """References to a file that only the LRU holds, as ``evict_idle`` counts them."""
    probe = OrderedDict([(0, object())])
    return max(sys.getrefcount(file) for _, file in list(probe.items()))


_IDLE_REFS = _idle_refs()

#: the segment and index files this process keeps open
OPEN_FILES = OpenFiles(_default_capacity())


def open_fd(path: str, flags: int, mode: int = 0o644) -> int:
    """``os.open``; out of descriptors, it first closes the idle files of ``OPEN_FILES`` (or,
    none idle, reads the regions in flight into memory so that their files are idle) and tries
    once more, so a broker short of descriptors gets slower rather than failing."""
    try:
        return os.open(path, flags, mode)
    except OSError as e:
        if e.errno not in OUT_OF_DESCRIPTORS:
            raise
        if not OPEN_FILES.evict_idle():
            # a file only regions held closes as they let go; one the LRU holds is idle now
            if not read_regions_into_memory():
                raise
            OPEN_FILES.evict_idle()
    return os.open(path, flags, mode)


class LazyFile:
    """A file opened on first use and kept open only while it is among the recently used."""

    __slots__ = ("path", "flags", "_ref")

    def __init__(self, path: os.PathLike | str, flags: int, file: SegmentFile | None = None):
        self.path = os.fspath(path)
        self.flags = flags
        self._ref: weakref.ref[SegmentFile] | None = None
        if file is not None:
            self._ref = weakref.ref(file)
            OPEN_FILES.touch(file)

    def get(self) -> SegmentFile:
        file = self._ref() if self._ref is not None else None
        if file is None or file.fd < 0:
            file = SegmentFile(self.path, self.flags)
            self._ref = weakref.ref(file)
        OPEN_FILES.touch(file)
        return file

    @property
    def is_open(self) -> bool:
        file = self._ref() if self._ref is not None else None
        return file is not None and file.fd >= 0

    def rename(self, path: os.PathLike | str) -> None:
        self.path = os.fspath(path)
        file = self._ref() if self._ref is not None else None
        if file is not None:
            file.path = self.path

    def release(self, *, close: bool = False) -> None:
        """Stops holding the file: it closes when no region uses it (at once with ``close``)."""
        file = self._ref() if self._ref is not None else None
        self._ref = None
        if file is not None:
            OPEN_FILES.discard(file)
            if close:
                file.close()
