"""The broker's log directories (Kafka's ``log.dirs``), each with its ``directory.id``.

A KRaft broker registers every online log dir's id with the controller (BrokerRegistration's
``log_dirs``) and DescribeLogDirs lists each dir.  The node's data dir (where its partition logs
live) is the first; the others are formatted and checked at start like it, as Kafka's
KafkaRaftServer.initializeLogDirs does for all of ``log.dirs``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pykafkad.metadata.properties import MetaProperties, uuid_from_string


@dataclass(frozen=True)
class LogDir:
    path: Path
    directory_id: bytes | None = None


def configured_log_dirs(config, data_dir: Path) -> list[Path]:
    """``data_dir`` first, then the rest of ``log.dirs`` when ``data_dir`` is one of them (a
    ``--data-dir`` outside ``log.dirs`` stands alone, as before)."""
    data_dir = Path(data_dir)
    try:
        listed = [Path(d) for d in config.log_dirs]
    except (KeyError, AttributeError):
        listed = []
    resolved = [p.resolve() for p in listed]
    if data_dir.resolve() not in resolved:
        return [data_dir]
    out = [data_dir]
    for path, real in zip(listed, resolved, strict=True):
        if real != data_dir.resolve() and real not in {p.resolve() for p in out}:
            out.append(path)
    return out


def load_log_dirs(paths: list[Path]) -> list[LogDir]:
    """Each dir with the ``directory.id`` its meta.properties holds (None when it has none)."""
    out = []
    for path in paths:
        try:
            meta = MetaProperties.read(path)
        except FileNotFoundError:
            out.append(LogDir(Path(path)))
            continue
        ident = uuid_from_string(meta.directory_id) if meta.directory_id else None
        out.append(LogDir(Path(path), ident))
    return out


def online_log_dir_ids(log_dirs: list[LogDir], fallback: bytes) -> list[bytes]:
    """The ids a broker registers (Kafka's LogManager.directoryIdsSet); ``fallback`` (the
    metadata dir's id) only when no log dir has one."""
    ids = [d.directory_id for d in log_dirs if d.directory_id is not None]
    return ids or [fallback]


def log_dirs_of(broker) -> list[LogDir]:
    """The broker's log dirs: those the KRaft node loaded (with their ids), else its log
    manager's."""
    return getattr(broker, "log_dirs", None) or [LogDir(d) for d in broker.logs.dirs]
