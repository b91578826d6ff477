"""Moving a partition's log to another log dir (AlterReplicaLogDirs), as Kafka moves it: a
``<topic>-<partition>.<id>-future`` directory in the target dir is filled from the current
log, caught up, then swapped in (the current directory renamed ``-delete`` and removed, the
future one renamed to the partition's name).

The bulk copy runs in a worker thread while the current log goes on taking appends; the
catch-up runs with the log closed, on the broker's thread, so nothing is appended between the
last copied byte and the swap: segment files only grow at their end (a ``.log`` file copied
before is completed with its new tail), every other file is small and copied again whole.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

FUTURE_SUFFIX = "-future"


def future_dir(target: Path, topic: str, partition: int) -> Path:
    return Path(target) / f"{topic}-{partition}.{uuid.uuid4().hex}{FUTURE_SUFFIX}"


def copy_files(src: Path, dst: Path) -> None:
    """Copies every file of ``src`` into ``dst`` (made if needed); for a worker thread."""
    dst.mkdir(parents=True, exist_ok=True)
    for entry in os.scandir(src):
        if entry.is_file():
            try:
                shutil.copyfile(entry.path, dst / entry.name)
            except FileNotFoundError:  # a segment deleted meanwhile (retention)
                continue


def catch_up(src: Path, dst: Path) -> None:
    """Makes ``dst`` hold exactly ``src``'s files, copying only what changed in segment files
    that grew (``src``'s log must be closed)."""
    names = set()
    for entry in os.scandir(src):
        if not entry.is_file():
            continue
        names.add(entry.name)
        target = dst / entry.name
        size = entry.stat().st_size
        have = target.stat().st_size if target.exists() else -1
        if entry.name.endswith(".log") and 0 <= have <= size:
            if have < size:
                with open(entry.path, "rb") as fin, open(target, "ab") as fout:
                    fin.seek(have)
                    shutil.copyfileobj(fin, fout)
        else:
            shutil.copyfile(entry.path, target)
    for entry in os.scandir(dst):
        if entry.is_file() and entry.name not in names:
            os.unlink(entry.path)
    for name in names:
        with open(dst / name, "rb") as f:
            os.fsync(f.fileno())


def dir_size(path: Path) -> int:
    """The bytes of the ``.log`` files in ``path`` (a future log's size)."""
    total = 0
    try:
        for entry in os.scandir(path):
            if entry.name.endswith(".log"):
                total += entry.stat().st_size
    except OSError:
        pass
    return total
