"""Metadata record batches: the v2 batches of framed metadata records that make up
``__cluster_metadata`` and snapshots. Control batches (raft's LeaderChange, KRaftVersion,
Voters, snapshot header/footer) hold no metadata records and are skipped here."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from pykafkad.metadata.serde import decode_record, encode_record
from wire.records.batch import build_batch, decode_records, iter_batch_headers
from wire.records.record import Record


@dataclass
class Batch:
    """One batch of metadata records, as ``(record, version)`` pairs."""

    base_offset: int
    last_offset: int
    epoch: int
    append_timestamp: int
    records: list[tuple[object, int]] = field(default_factory=list)
    size_in_bytes: int = 0


def framed(item) -> bytes:
    """A record value: framed bytes as they are, a record, or a ``(record, version)`` pair."""
    if isinstance(item, (bytes, bytearray, memoryview)):
        return bytes(item)
    if isinstance(item, tuple):
        return encode_record(*item)
    return encode_record(item)


def build_metadata_batch(records: Iterable[object], *, base_offset: int = 0, epoch: int = -1,
                         now_ms: int | None = None) -> bytes:
    """One uncompressed batch of metadata records (no key, the framed record as value), as the
    raft leader writes it."""
    now = int(time.time() * 1000) if now_ms is None else now_ms
    return build_batch([Record(None, framed(r), None, now) for r in records],
                       base_offset=base_offset, partition_leader_epoch=epoch)


def decode_batches(data: bytes | bytearray | memoryview, *, strict: bool = False) -> Iterator[Batch]:
    """The metadata batches in ``data`` (a segment or fetched records); a partial batch at the
    end ends the walk unless ``strict``. Records that do not parse raise MetadataParseError."""
    for pos, header in iter_batch_headers(data, strict=strict):
        if header.is_control:
            continue
        batch = Batch(header.base_offset, header.last_offset, header.partition_leader_epoch,
                      header.max_timestamp, size_in_bytes=header.size)
        batch.records = [decode_record(r.value) for r in decode_records(data, pos, verify_crc=True)]
        yield batch
