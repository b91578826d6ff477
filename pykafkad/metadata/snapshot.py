"""KRaft snapshots as Kafka writes them (RecordsSnapshotWriter / FileRawSnapshotWriter).

A snapshot of the metadata log up to (not including) ``end offset``, taken in ``epoch``, is the
file ``<end offset, 20 digits>-<epoch, 10 digits>.checkpoint`` in ``__cluster_metadata-0``: v2
record batches with offsets counting from 0 and the epoch as partition leader epoch. The first
batch is a control batch holding a SnapshotHeaderRecord (then, from kraft.version 1, the
KRaftVersionRecord and VotersRecord); then batches of framed metadata records; the last batch is
a control batch holding a SnapshotFooterRecord. The writer fills ``<name>.checkpoint.part`` and
renames it when complete, so a crash never leaves a partial ``.checkpoint``; the finished file is
read-only, as Kafka leaves it.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pykafkad.log.checkpoint import fsync_dir
from pykafkad.metadata.batches import Batch, framed
from pykafkad.metadata.serde import decode_record
from wire.messages.k_raft_version_record import KRaftVersionRecord
from wire.messages.snapshot_footer_record import SnapshotFooterRecord
from wire.messages.snapshot_header_record import SnapshotHeaderRecord
from wire.messages.voters_record import VotersRecord
from wire.records.batch import build_batch, decode_records, iter_batch_headers
from wire.records.control import decode_control_key
from wire.records.record import Record

SUFFIX = ".checkpoint"
PARTIAL_SUFFIX = ".checkpoint.part"
DELETE_SUFFIX = ".checkpoint.deleted"
#: KafkaRaftClient.MAX_BATCH_SIZE_BYTES: records are cut into batches of at most this size
MAX_BATCH_SIZE_BYTES = 8 * 1024 * 1024
#: the snapshot a cluster is formatted with (Snapshots.BOOTSTRAP_SNAPSHOT_ID)
BOOTSTRAP_SNAPSHOT_ID = (0, 0)

# ControlRecordType ids of the raft control records
SNAPSHOT_HEADER = 3
SNAPSHOT_FOOTER = 4
KRAFT_VERSION = 5
KRAFT_VOTERS = 6
LEADER_CHANGE = 2
_CONTROL_MESSAGES = {
    SNAPSHOT_HEADER: SnapshotHeaderRecord,
    SNAPSHOT_FOOTER: SnapshotFooterRecord,
    KRAFT_VERSION: KRaftVersionRecord,
    KRAFT_VOTERS: VotersRecord,
}

_NAME = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")


class SnapshotError(ValueError):
    """A snapshot file that is not a complete snapshot."""


def snapshot_file_name(end_offset: int, epoch: int) -> str:
    return f"{end_offset:020d}-{epoch:010d}{SUFFIX}"


def parse_snapshot_file_name(name: str) -> tuple[int, int] | None:
    """``(end offset, epoch)`` of a finished snapshot's file name, else None."""
    m = _NAME.match(name)
    return (int(m.group(1)), int(m.group(2))) if m else None


def list_snapshots(log_dir: Path) -> list[tuple[int, int]]:
    """The snapshot ids in ``log_dir``, oldest first."""
    try:
        names = os.listdir(log_dir)
    except FileNotFoundError:
        return []
    return sorted(i for i in map(parse_snapshot_file_name, names) if i is not None)


def encode_control_value(message, version: int = 0) -> bytes:
    """A raft control record's value: the message itself, whose first field (int16 ``version``)
    is its own version (Kafka's ControlRecordUtils)."""
    return message.encode(version)


def decode_control_value(kind: int, value: bytes):
    cls = _CONTROL_MESSAGES.get(kind)
    if cls is None:
        raise SnapshotError(f"control record type {kind} is not a snapshot control record")
    if value is None:
        raise SnapshotError(f"control record of type {kind} has no value")
    try:
        return cls.decode(value, cls.HIGHEST_VERSION)
    except Exception as e:
        raise SnapshotError(f"control record of type {kind} does not parse: {e}") from e


def _control_record(kind: int, message, timestamp: int) -> Record:
    return Record(kind.to_bytes(4, "big"), encode_control_value(message), None, timestamp)


def build_snapshot(
    records: Iterable[object],
    epoch: int,
    *,
    last_contained_log_timestamp: int,
    kraft_version: int = 0,
    voters: VotersRecord | None = None,
    now_ms: int | None = None,
    max_batch_size: int = MAX_BATCH_SIZE_BYTES,
) -> bytes:
    """The bytes of a snapshot holding ``records`` (metadata record objects, or
    ``(record, version)`` pairs, or already framed values)."""
    now = int(time.time() * 1000) if now_ms is None else now_ms
    control = [_control_record(
        SNAPSHOT_HEADER, SnapshotHeaderRecord(0, last_contained_log_timestamp), now)]
    if kraft_version > 0:
        control.append(_control_record(KRAFT_VERSION, KRaftVersionRecord(0, kraft_version), now))
        if voters is not None:
            control.append(_control_record(KRAFT_VOTERS, voters, now))
    out = bytearray()
    offset = 0

    def emit(batch_records: list[Record], is_control: bool) -> None:
        nonlocal offset
        out.extend(build_batch(batch_records, base_offset=offset, partition_leader_epoch=epoch,
                               is_control=is_control))
        offset += len(batch_records)

    emit(control, True)
    pending: list[Record] = []
    size = 0
    for item in records:
        value = framed(item)
        if pending and size + len(value) + 24 > max_batch_size:
            emit(pending, False)
            pending, size = [], 0
        pending.append(Record(None, value, None, now))
        size += len(value) + 24  # a record's own framing, at most
    if pending:
        emit(pending, False)
    emit([_control_record(SNAPSHOT_FOOTER, SnapshotFooterRecord(0), now)], True)
    return bytes(out)


def write_snapshot(
    log_dir: Path,
    end_offset: int,
    epoch: int,
    records: Iterable[object],
    **kwargs,
) -> Path:
    """Writes the snapshot ``end_offset``/``epoch`` into ``log_dir`` (via ``.checkpoint.part``,
    fsynced, renamed, made read-only) and returns its path. See build_snapshot for ``kwargs``."""
    data = build_snapshot(records, epoch, **kwargs)
    log_dir.mkdir(parents=True, exist_ok=True)
    final = log_dir / snapshot_file_name(end_offset, epoch)
    part = log_dir / (final.name.removesuffix(SUFFIX) + PARTIAL_SUFFIX)
    fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(part, final)
    os.chmod(final, 0o400)
    fsync_dir(log_dir)
    return final


@dataclass
class Snapshot:
    """A snapshot read back: its id, header fields, quorum records and metadata batches."""

    end_offset: int
    epoch: int
    last_contained_log_timestamp: int
    kraft_version: int = 0
    voters: VotersRecord | None = None
    batches: list[Batch] = field(default_factory=list)

    def records(self) -> Iterator[object]:
        for batch in self.batches:
            for record, _version in batch.records:
                yield record


def parse_snapshot(data: bytes, end_offset: int = -1, epoch: int = -1) -> Snapshot:
    """Reads a snapshot's bytes; SnapshotError when the header or footer is missing."""
    header = None
    footer_seen = False
    snap = Snapshot(end_offset, epoch, -1)
    first = True
    for pos, bh in iter_batch_headers(data, strict=True):
        if footer_seen:
            raise SnapshotError("snapshot has batches after its footer")
        if bh.is_control:
            for rec in decode_records(data, pos, verify_crc=True):
                kind = decode_control_key(rec.key)
                message = decode_control_value(kind, rec.value)
                if kind == SNAPSHOT_HEADER:
                    if not first:
                        raise SnapshotError("snapshot header is not the first record")
                    header = message
                elif kind == SNAPSHOT_FOOTER:
                    footer_seen = True
                elif kind == KRAFT_VERSION:
                    snap.kraft_version = message.k_raft_version
                elif kind == KRAFT_VOTERS:
                    snap.voters = message
                first = False
        else:
            if header is None:
                raise SnapshotError("snapshot does not start with a snapshot header")
            batch = Batch(bh.base_offset, bh.last_offset, bh.partition_leader_epoch,
                          bh.max_timestamp, size_in_bytes=bh.size)
            for rec in decode_records(data, pos, verify_crc=True):
                batch.records.append(decode_record(rec.value))
            snap.batches.append(batch)
            first = False
    if header is None:
        raise SnapshotError("snapshot does not start with a snapshot header")
    if not footer_seen:
        raise SnapshotError("snapshot has no footer: it is incomplete")
    snap.last_contained_log_timestamp = header.last_contained_log_timestamp
    return snap


def read_snapshot(path: Path) -> Snapshot:
    """Reads the snapshot file ``path`` (its id comes from the file name)."""
    snapshot_id = parse_snapshot_file_name(path.name) or (-1, -1)
    return parse_snapshot(path.read_bytes(), *snapshot_id)
