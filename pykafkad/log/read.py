"""The read side of a partition log: Fetch's record sets and ListOffsets' timestamp lookups.

Fetch never copies records: the answer is a list of regions of segment files that go out with
``os.sendfile``. Only the offset and time indexes and batch headers are read to find the region
bounds; a lookup by timestamp decodes the records of the one batch that holds the answer.
"""

from __future__ import annotations

from typing import NamedTuple

from pykafkad.log.region import FileRegion
from pykafkad.log.segment import LogSegment, floor_segment_index


class ReadResult(NamedTuple):
    """Whole batches for a Fetch, as zero-copy regions of segment files."""

    regions: list[FileRegion]
    size: int

    def to_bytes(self) -> bytes:
        return b"".join(bytes(r) for r in self.regions)


class TimestampAndOffset(NamedTuple):
    offset: int
    timestamp: int


def read_batches(
    segments: list[LogSegment],
    bases: list[int],
    log_end_offset: int,
    fetch_offset: int,
    max_bytes: int,
    limit: int,
    min_one_batch: bool,
) -> ReadResult:
    """Whole batches from the one holding ``fetch_offset`` (within the log), up to
    ``max_bytes``, none holding ``limit`` or beyond (Kafka bounds a read by that offset's
    position); ``min_one_batch`` (KIP-74) returns a first batch larger than ``max_bytes``.
    One region per segment the read spans."""
    regions: list[FileRegion] = []
    total = 0
    if fetch_offset >= limit:
        return ReadResult(regions, 0)
    i = floor_segment_index(bases, fetch_offset)
    start = segments[i].translate_offset(fetch_offset)
    remaining = max_bytes
    while i < len(segments):
        seg = segments[i]
        if start is None:
            i += 1
            if i < len(segments):
                start = segments[i].first_batch()
            continue
        if start.base_offset >= limit:
            break
        seg_next = bases[i + 1] if i + 1 < len(segments) else log_end_offset
        end = seg.size
        limit_inside = limit < seg_next
        if limit_inside:
            bound = seg.translate_offset(limit)
            if bound is not None:
                end = bound.position
        pos = start.position
        if end <= pos:
            break
        if end - pos <= remaining:
            regions.append(FileRegion(seg.file, pos, end - pos))
            total += end - pos
            remaining -= end - pos
            if limit_inside or remaining == 0:
                break
            start = None
            continue
        cut = seg.boundary_at_or_below(pos, pos + remaining)
        if cut == pos:
            if not regions and min_one_batch:
                cut = pos + start.size
            else:
                break
        regions.append(FileRegion(seg.file, pos, cut - pos))
        total += cut - pos
        break
    return ReadResult(regions, total)


def offset_by_timestamp(
    segments: list[LogSegment], timestamp: int, log_start_offset: int
) -> TimestampAndOffset | None:
    """The first record with timestamp >= ``timestamp`` at or after ``log_start_offset``,
    skipping segments whose largest timestamp is older (Kafka's fetchOffsetByTimestamp)."""
    for seg in segments:
        if seg.max_timestamp < timestamp:
            continue
        found = seg.find_offset_by_timestamp(timestamp, log_start_offset)
        if found is not None:
            return TimestampAndOffset(*found)
    return None


def offset_of_max_timestamp(segments: list[LogSegment]) -> TimestampAndOffset | None:
    """The first record with the largest timestamp: the oldest segment holding that timestamp
    is the only one searched."""
    best = segments[0]
    for seg in segments[1:]:
        if seg.max_timestamp > best.max_timestamp:
            best = seg
    found = best.find_max_timestamp()
    return TimestampAndOffset(*found) if found is not None else None
