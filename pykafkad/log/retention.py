"""Which of a log's oldest segments may go: Kafka's deleteOldSegments rules as predicates.

Kafka deletes segments oldest first while a rule holds for each, and stops at the first that
it does not hold for; the rules are tested here apart from the deleting, which moves the log
start offset and belongs to ``PartitionLog``.
"""

from __future__ import annotations

from collections.abc import Callable

from pykafkad.log.segment import LogSegment

#: (segment, the segment after it or None for the active one) -> whether it may be deleted
SegmentPredicate = Callable[[LogSegment, LogSegment | None], bool]


def deletable_segments(segments: list[LogSegment], predicate: SegmentPredicate,
                       high_watermark: int | None = None) -> int:
    """How many of the oldest ``segments`` ``predicate`` holds for in a row; an empty active
    segment is never counted (deleting it would only roll an identical one), nor one holding
    offsets at or above ``high_watermark`` (Kafka's deletableSegments: uncommitted records
    stay)."""
    n = 0
    for i, seg in enumerate(segments):
        nxt = segments[i + 1] if i + 1 < len(segments) else None
        if nxt is None and seg.size == 0:
            break
        upper = nxt.base_offset if nxt is not None else seg.next_offset
        if high_watermark is not None and upper > high_watermark:
            break
        if not predicate(seg, nxt):
            break
        n += 1
    return n


def log_start_breached(log_start_offset: int) -> SegmentPredicate:
    """Segments wholly below the log start offset (after DeleteRecords or a checkpoint)."""
    return lambda seg, nxt: nxt is not None and nxt.base_offset <= log_start_offset


def retention_size_breached(retention_bytes: int, log_size: int) -> SegmentPredicate | None:
    """Oldest segments whose removal keeps the log at or above ``retention.bytes``; None when
    the rule is off (-1) or the log is below the limit."""
    if retention_bytes < 0 or log_size < retention_bytes:
        return None
    diff = log_size - retention_bytes

    def breached(seg: LogSegment, nxt: LogSegment | None) -> bool:
        nonlocal diff
        if diff - seg.size >= 0:
            diff -= seg.size
            return True
        return False

    return breached


def retention_ms_breached(retention_ms: int, now: int) -> SegmentPredicate | None:
    """Segments whose largest timestamp is more than ``retention.ms`` old; None when off."""
    if retention_ms < 0:
        return None
    return lambda seg, nxt: now - seg.largest_timestamp() > retention_ms
