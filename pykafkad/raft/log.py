"""The replicated metadata log ``__cluster_metadata-0`` (Kafka's KafkaMetadataLog).

A ``PartitionLog`` in Kafka's on-disk format, so ``kafka-dump-log`` reads it. The leader appends
batches it builds with its epoch; followers append the leader's batches byte for byte and cut
their log back where it diverges from the leader's (Fetch's divergingEpoch). Nothing here knows
what a record means: values are opaque bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from pykafkad.log.checkpoint import atomic_write
from pykafkad.log.config import LogConfig
from pykafkad.log.partition import AppendInfo, PartitionLog
from pykafkad.raft import snapshots

TOPIC = "__cluster_metadata"
PARTITION = 0
#: Kafka's fixed topic id of the metadata topic (Uuid.METADATA_TOPIC_ID), AAAAAAAAAAAAAAAAAAAAAQ
TOPIC_ID = bytes(15) + b"\x01"
DIR_NAME = f"{TOPIC}-{PARTITION}"


class OffsetAndEpoch(NamedTuple):
    offset: int
    epoch: int


class ValidOffsetAndEpoch(NamedTuple):
    """Kafka's answer to "may a replica fetch from here": VALID, DIVERGING (truncate to
    ``offset_and_epoch`` first) or SNAPSHOT (fetch that snapshot first)."""

    kind: str
    offset_and_epoch: OffsetAndEpoch = OffsetAndEpoch(-1, -1)


VALID = "VALID"
DIVERGING = "DIVERGING"
SNAPSHOT = "SNAPSHOT"


class MetadataLogRetention(NamedTuple):
    """metadata.max.retention.bytes / .ms (-1: no limit) and how to read a snapshot's last
    contained log timestamp (from its header; None when unknown)."""

    max_bytes: int = 100 * 1024 * 1024
    max_ms: int = 7 * 24 * 3600 * 1000
    snapshot_timestamp: Callable[[Path], int | None] | None = None


def metadata_log_config(segment_bytes: int = 1073741824,
                        segment_ms: int = 604800000) -> LogConfig:
    """The metadata partition's LogConfig, as KafkaMetadataLog builds it: segments by
    metadata.log.segment.bytes / .ms, no time or size retention of its own (segments go only
    once a snapshot covers them)."""
    return LogConfig(segment_bytes=segment_bytes, segment_ms=segment_ms, retention_ms=-1,
                     retention_bytes=-1)


class MetadataLog:
    def __init__(self, log: PartitionLog, retention: MetadataLogRetention | None = None):
        self.log = log
        self.retention = retention or MetadataLogRetention()

    @classmethod
    def open(cls, metadata_log_dir: Path, clock: Callable[[], int],
             config: LogConfig | None = None,
             retention: MetadataLogRetention | None = None) -> MetadataLog:
        """Opens (or creates) ``<metadata_log_dir>/__cluster_metadata-0``, revalidating the tail:
        a voter that crashed mid-append must not serve a torn batch."""
        part = PartitionLog.open(metadata_log_dir / DIR_NAME, config or metadata_log_config(),
                                 clock, recover=True)
        meta = part.dir / "partition.metadata"
        if not meta.exists():
            # as Kafka writes it for this partition: no newline after the topic id
            atomic_write(meta, b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ")
        return cls(part, retention)

    @property
    def dir(self) -> Path:
        return self.log.dir

    @property
    def start_offset(self) -> int:
        return self.log.log_start_offset

    @property
    def end_offset(self) -> int:
        return self.log.log_end_offset

    def last_fetched_epoch(self) -> int:
        """The epoch of the last batch (or of the latest snapshot when the log is empty), else 0."""
        epoch = self.log.latest_epoch
        if epoch is not None:
            return epoch
        snap = self.latest_snapshot_id()
        return snap.epoch if snap is not None else 0

    def end_offset_and_epoch(self) -> OffsetAndEpoch:
        return OffsetAndEpoch(self.end_offset, self.last_fetched_epoch())

    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch:
        """(largest epoch <= ``epoch``, the offset where it ends); the snapshot's id when the log
        holds nothing of that epoch any more."""
        found_epoch, end = self.log.end_offset_for_epoch(epoch)
        snap = self.earliest_snapshot_id()
        if found_epoch < 0:
            if snap is not None and snap.epoch <= epoch:
                return snap
            if self.end_offset == 0:
                return OffsetAndEpoch(0, 0)
            return OffsetAndEpoch(-1, -1)
        return OffsetAndEpoch(end, found_epoch)

    def validate_offset_and_epoch(self, offset: int, epoch: int) -> ValidOffsetAndEpoch:
        """Whether a fetch at ``offset`` whose previous batch had ``epoch`` continues this log."""
        latest = self.latest_snapshot_id()
        earliest = self.earliest_snapshot_id()
        start = self.start_offset
        if latest is not None and (
            (offset < start and offset < latest.offset)
            or (earliest is not None and offset == start and epoch != earliest.epoch)
            or (earliest is not None and epoch < earliest.epoch)
        ):
            return ValidOffsetAndEpoch(SNAPSHOT, latest)
        if offset == 0 and epoch == 0 and start == 0:
            return ValidOffsetAndEpoch(VALID)
        end = self.end_offset_for_epoch(epoch)
        if end.epoch < 0:
            return ValidOffsetAndEpoch(DIVERGING, OffsetAndEpoch(start, 0))
        if end.epoch != epoch or end.offset < offset:
            return ValidOffsetAndEpoch(DIVERGING, end)
        return ValidOffsetAndEpoch(VALID)

    # -- appends -------------------------------------------------------------------------------
    def append_as_leader(self, batch: bytes, epoch: int) -> AppendInfo:
        return self.log.append(batch, epoch)

    def append_as_follower(self, records: bytes) -> AppendInfo:
        """The leader's batches as they are (offsets and epochs included)."""
        return self.log.append_as_follower(records)

    def truncate_to_end_offset(self, end: OffsetAndEpoch) -> int:
        """Cuts the log where it stops agreeing with the leader's ``end`` (its divergingEpoch)."""
        leo = self.end_offset
        if end.offset >= leo:
            return leo
        local = self.end_offset_for_epoch(end.epoch)
        if local.epoch == end.epoch:
            offset = min(local.offset, end.offset)
        else:
            offset = max(local.offset, self.start_offset)
        self.log.truncate_to(offset)
        return offset

    def read(self, offset: int, max_bytes: int) -> bytes:
        """Whole batches from ``offset`` (at least one), uncommitted ones included."""
        if offset >= self.end_offset:
            return b""
        return self.log.read(offset, max_bytes).to_bytes()

    def flush(self) -> None:
        self.log.flush()

    def close(self) -> None:
        self.log.close()

    # -- snapshots -----------------------------------------------------------------------------
    def latest_snapshot_id(self) -> OffsetAndEpoch | None:
        ids = snapshots.list_snapshots(self.dir)
        return OffsetAndEpoch(*ids[-1]) if ids else None

    def earliest_snapshot_id(self) -> OffsetAndEpoch | None:
        ids = snapshots.list_snapshots(self.dir)
        return OffsetAndEpoch(*ids[0]) if ids else None

    # -- cleaning (Kafka's KafkaMetadataLog.maybeClean) ---------------------------------------
    def maybe_clean(self, now_ms: int) -> bool:
        """Deletes the oldest snapshots, and the log segments before the next one, while the
        log and its snapshots exceed metadata.max.retention.bytes, then while the oldest
        snapshot is older than metadata.max.retention.ms. The latest snapshot always stays."""
        cleaned = False
        if self.retention.max_bytes >= 0:
            sizes = {sid: snapshots.path_of(self.dir, *sid).stat().st_size
                     for sid in snapshots.list_snapshots(self.dir)}
            total = sum(sizes.values())

            def over_size(sid: tuple[int, int]) -> bool:
                nonlocal total
                if self.log.size_in_bytes + total > self.retention.max_bytes:
                    total -= sizes.get(sid, 0)
                    return True
                return False

            cleaned |= self._clean_snapshots(over_size)
        if self.retention.max_ms >= 0 and self.retention.snapshot_timestamp is not None:
            def too_old(sid: tuple[int, int]) -> bool:
                ts = self.retention.snapshot_timestamp(snapshots.path_of(self.dir, *sid))
                return ts is not None and now_ms - ts > self.retention.max_ms

            cleaned |= self._clean_snapshots(too_old)
        return cleaned

    def _clean_snapshots(self, should_clean: Callable[[tuple[int, int]], bool]) -> bool:
        ids = snapshots.list_snapshots(self.dir)
        cleaned = False
        for sid, nxt in zip(ids, ids[1:], strict=False):
            if not should_clean(sid) or not self.delete_before_snapshot(OffsetAndEpoch(*nxt)):
                break
            cleaned = True
        return cleaned

    def delete_before_snapshot(self, snapshot_id: OffsetAndEpoch) -> bool:
        """Moves the log start offset to ``snapshot_id`` (at most the latest snapshot), deletes
        the segments wholly before it and the snapshots older than it."""
        latest = self.latest_snapshot_id()
        ids = snapshots.list_snapshots(self.dir)
        if latest is None or tuple(snapshot_id) not in ids or \
                not self.start_offset < snapshot_id.offset <= min(latest.offset, self.end_offset):
            return False
        self.log.delete_records(snapshot_id.offset)
        for sid in ids:
            if sid < tuple(snapshot_id):
                snapshots.path_of(self.dir, *sid).unlink(missing_ok=True)
        return True
