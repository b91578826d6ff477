"""Snapshot files of the metadata log, by name only: ``<offset 20 digits>-<epoch 10 digits>.checkpoint``.

The metadata area owns what is inside a snapshot (its records); the quorum only needs to know
which snapshots exist, to send a lagging replica to one (Fetch's snapshotId) and to serve and
receive their bytes (FetchSnapshot). A snapshot being received is ``.checkpoint.part`` until it
is complete, then renamed, as Kafka does. The bootstrap snapshot (offset 0, epoch 0) is never
offered to a follower.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from pykafkad.log.checkpoint import fsync_dir

SUFFIX = ".checkpoint"
PARTIAL_SUFFIX = ".checkpoint.part"
_NAME = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")
BOOTSTRAP_SNAPSHOT_ID = (0, 0)


def file_name(offset: int, epoch: int, suffix: str = SUFFIX) -> str:
    return f"{offset:020d}-{epoch:010d}{suffix}"


def list_snapshots(log_dir: Path) -> list[tuple[int, int]]:
    """(end offset, epoch) of every complete snapshot except the bootstrap one, oldest first."""
    ids = []
    try:
        names = os.listdir(log_dir)
    except FileNotFoundError:
        return []
    for name in names:
        m = _NAME.match(name)
        if m:
            sid = (int(m.group(1)), int(m.group(2)))
            if sid != BOOTSTRAP_SNAPSHOT_ID:
                ids.append(sid)
    return sorted(ids)


def path_of(log_dir: Path, offset: int, epoch: int) -> Path:
    return log_dir / file_name(offset, epoch)


def read_chunk(log_dir: Path, offset: int, epoch: int, position: int, max_bytes: int) -> tuple[int, bytes]:
    """(size of the snapshot, its bytes from ``position``); FileNotFoundError when absent."""
    path = path_of(log_dir, offset, epoch)
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        f.seek(position)
        return size, f.read(max(0, min(max_bytes, size - position)))


class PartialSnapshot:
    """A snapshot being fetched: appended chunk by chunk, made visible by ``freeze``."""

    def __init__(self, log_dir: Path, offset: int, epoch: int):
        self.offset = offset
        self.epoch = epoch
        self.path = log_dir / file_name(offset, epoch, PARTIAL_SUFFIX)
        self.path.write_bytes(b"")
        self.size = 0

    def append(self, data: bytes) -> None:
        with open(self.path, "ab") as f:
            f.write(data)
        self.size += len(data)

    def freeze(self) -> Path:
        with open(self.path, "rb+") as f:
            os.fsync(f.fileno())
        final = self.path.with_name(file_name(self.offset, self.epoch))
        os.replace(self.path, final)
        fsync_dir(final.parent)
        return final
