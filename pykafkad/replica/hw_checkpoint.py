"""Kafka's ``replication-offset-checkpoint``: the high watermark of every hosted partition,
one file per log dir, in Kafka's OffsetCheckpointFile format (``0``, the count, then
``topic partition offset`` lines).

Kafka's ReplicaManager writes it every ``replica.high.watermark.checkpoint.interval.ms`` and
at a clean shutdown, and a partition's log starts its high watermark from it (0 when the file
has no entry), clamped to the log: so a restarted leader does not serve records its followers
may not have, and a restarted follower does not start from nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pykafkad.log.checkpoint import read_offsets, write_offsets

REPLICATION_OFFSET_CHECKPOINT = "replication-offset-checkpoint"

TopicPartition = tuple[str, int]


class HighWatermarkCheckpoint:
    """The file of one log dir, and what the previous run wrote into it."""

    def __init__(self, log_dir: Path):
        self.path = Path(log_dir) / REPLICATION_OFFSET_CHECKPOINT
        #: what the file held at start (an unreadable file counts as empty), then what was
        #: written last
        self.checkpointed: dict[TopicPartition, int] = read_offsets(self.path)

    def fetch(self, tp: TopicPartition) -> int | None:
        """The checkpointed high watermark of a partition, or None."""
        return self.checkpointed.get(tp)

    def write(self, high_watermarks: Mapping[TopicPartition, int]) -> None:
        """Replaces the file (tmp file, fsync, rename, as Kafka's CheckpointFile)."""
        write_offsets(self.path, high_watermarks)
        self.checkpointed = dict(high_watermarks)
