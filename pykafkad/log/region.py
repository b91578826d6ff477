"""Zero-copy slices of segment files, for Fetch responses sent with ``os.sendfile``.

A region holds a reference to the segment's ``SegmentFile``; the descriptor is closed only when
the last reference goes away, so a region stays readable after retention unlinks its segment,
and its descriptor number is never reused under it.
"""

from __future__ import annotations

import os


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
        self.fd = os.open(self.path, flags | getattr(os, "O_CLOEXEC", 0), 0o644)

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
        except OSError:
            pass

    def __repr__(self) -> str:
        return f"SegmentFile({self.path!r}, fd={self.fd})"


class FileRegion:
    """``length`` bytes at ``offset`` of a segment file: whole record batches, ready to send."""

    __slots__ = ("file", "offset", "length")

    def __init__(self, file: SegmentFile, offset: int, length: int):
        self.file = file
        self.offset = offset
        self.length = length

    def fileno(self) -> int:
        return self.file.fileno()

    def __len__(self) -> int:
        return self.length

    def __bytes__(self) -> bytes:
        data = self.file.pread(self.length, self.offset)
        if len(data) != self.length:
            raise OSError(f"short read from {self.file.path}: {len(data)} of {self.length} bytes")
        return data

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FileRegion):
            return NotImplemented
        return (self.file, self.offset, self.length) == (other.file, other.offset, other.length)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"FileRegion({self.file.path!r}, offset={self.offset}, length={self.length})"
