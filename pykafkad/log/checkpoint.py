"""Kafka's checkpoint files: a version line (0), a count line, then one entry per line.

Used for ``leader-epoch-checkpoint`` (per partition: ``epoch startOffset``) and, at the log-dir
root, ``recovery-point-offset-checkpoint`` / ``log-start-offset-checkpoint``
(``topic partition offset``). Writes go to ``<name>.tmp``, are fsynced, then renamed over the
file, as Kafka's CheckpointFile does, so a crash leaves either the old or the new file.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

CHECKPOINT_VERSION = 0

RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"
LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"


class CheckpointError(Exception):
    """A checkpoint file that does not parse."""


def write_lines(path: Path, entries: Iterable[str], *, sync: bool = True) -> None:
    entries = list(entries)
    text = f"{CHECKPOINT_VERSION}\n{len(entries)}\n" + "".join(e + "\n" for e in entries)
    atomic_write(path, text.encode(), sync=sync)


def read_lines(path: Path) -> list[list[str]] | None:
    """The entries split on whitespace, or None when the file does not exist."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    lines = text.splitlines()
    if len(lines) < 2:
        raise CheckpointError(f"{path}: truncated checkpoint")
    try:
        version = int(lines[0].strip())
        count = int(lines[1].strip())
    except ValueError as e:
        raise CheckpointError(f"{path}: {e}") from None
    if version != CHECKPOINT_VERSION:
        raise CheckpointError(f"{path}: unrecognised version {version}")
    entries = [line.split() for line in lines[2:] if line.strip()]
    if len(entries) != count:
        raise CheckpointError(f"{path}: expected {count} entries, found {len(entries)}")
    return entries


def write_offsets(path: Path, offsets: Mapping[tuple[str, int], int], *, sync: bool = True) -> None:
    write_lines(path, (f"{t} {p} {o}" for (t, p), o in sorted(offsets.items())), sync=sync)


def read_offsets(path: Path) -> dict[tuple[str, int], int]:
    """``{(topic, partition): offset}``; empty when the file is missing or unreadable."""
    try:
        entries = read_lines(path)
    except CheckpointError:
        return {}
    result: dict[tuple[str, int], int] = {}
    for entry in entries or ():
        if len(entry) != 3:
            continue
        try:
            result[(entry[0], int(entry[1]))] = int(entry[2])
        except ValueError:
            continue
    return result


def atomic_write(path: Path, data: bytes, *, sync: bool = True) -> None:
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    if sync:
        fsync_dir(path.parent)


def fsync_file(path: os.PathLike | str) -> None:
    """fsyncs a file by name, if it exists: for files written through descriptors that are
    closed by now (indexes, a .txnindex) before a rename or shutdown relies on them."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
