"""Record-level lookups inside one stored batch, for ListOffsets by timestamp.

The log never decodes records on the produce or fetch paths; only a timestamp lookup needs the
offset of a particular record inside a batch (Kafka: the first record with timestamp >= target,
and for MAX_TIMESTAMP the first record carrying the batch's max timestamp).

- LogAppendTime batches: every record has the batch's max timestamp, so the answer is the first
  record (the base offset), without decoding.
- Uncompressed batches: the record varints are walked here (length, attributes, timestampDelta,
  offsetDelta; the rest is skipped by length).
- Compressed batches: ``wire.records.batch.decode_records`` decodes them when it is available.
  If it is not (or the batch does not decode), the answer falls back to the batch's base offset:
  a consumer seeking by time then starts at the beginning of the batch that holds the target,
  which may hand it a few records older than the target but never skips one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from wire.records.header import COMPRESSION_MASK, HEADER_SIZE, TIMESTAMP_TYPE_FLAG


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    shift = 0
    value = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return (value >> 1) ^ -(value & 1), pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def iter_uncompressed(
    batch: bytes, base_offset: int, base_timestamp: int
) -> Iterator[tuple[int, int]]:
    """(offset, timestamp) of each record in an uncompressed v2 batch."""
    pos = HEADER_SIZE
    end = len(batch)
    while pos < end:
        length, pos = _varint(batch, pos)
        if length <= 0:
            raise ValueError("bad record length")
        next_pos = pos + length
        if next_pos > end:
            raise ValueError("record beyond batch")
        p = pos + 1  # attributes
        ts_delta, p = _varint(batch, p)
        off_delta, p = _varint(batch, p)
        yield base_offset + off_delta, base_timestamp + ts_delta
        pos = next_pos


def _iter_records(batch: bytes, base_offset: int, base_timestamp: int, attributes: int):
    if attributes & COMPRESSION_MASK == 0:
        return iter_uncompressed(batch, base_offset, base_timestamp)
    from wire.records.batch import decode_records  # noqa: PLC0415 - optional, written in parallel

    return ((r.offset, r.timestamp) for r in decode_records(batch))


def find_record(
    batch: bytes,
    base_offset: int,
    base_timestamp: int,
    max_timestamp: int,
    attributes: int,
    predicate: Callable[[int, int], bool],
) -> tuple[int, int] | None:
    """(offset, timestamp) of the first record matching ``predicate(offset, timestamp)``.

    None when no record matches. Falls back to (base offset, max timestamp) when the batch's
    records cannot be read (the caller only asks about batches whose max timestamp matches).
    """
    if attributes & TIMESTAMP_TYPE_FLAG:
        return base_offset, max_timestamp
    try:
        for offset, timestamp in _iter_records(batch, base_offset, base_timestamp, attributes):
            if predicate(offset, timestamp):
                return offset, timestamp
    except Exception:  # noqa: BLE001 - any decoding problem -> batch-level answer
        return base_offset, max_timestamp
    return None
