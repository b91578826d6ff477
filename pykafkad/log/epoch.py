"""The leader epoch cache: which epoch wrote which offsets (KIP-101/KIP-320).

Backed by ``<partition dir>/leader-epoch-checkpoint`` in Kafka's format::

    0
    2
    0 0
    3 120

Semantics follow Kafka's LeaderEpochFileCache: entries only move forward, a new entry drops
conflicting later ones, and OffsetForLeaderEpoch answers with the largest epoch <= the requested
one and the start offset of the next epoch (or the log end offset for the latest epoch).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from pathlib import Path

from pykafkad.log.checkpoint import (
    LEADER_EPOCH_CHECKPOINT,
    CheckpointError,
    read_lines,
    write_lines,
)

UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1


class LeaderEpochCache:
    def __init__(self, dir: Path, *, sync: bool = True):
        self.path = dir / LEADER_EPOCH_CHECKPOINT
        self._sync = sync
        self._epochs: list[int] = []
        self._starts: list[int] = []
        try:
            entries = read_lines(self.path) or []
        except CheckpointError:
            entries = []
        for entry in entries:
            if len(entry) == 2:
                self._assign(int(entry[0]), int(entry[1]))

    # -- queries -------------------------------------------------------------------------------
    @property
    def entries(self) -> list[tuple[int, int]]:
        """``[(epoch, start_offset), ...]`` in epoch order."""
        return list(zip(self._epochs, self._starts, strict=True))

    @property
    def latest_epoch(self) -> int | None:
        return self._epochs[-1] if self._epochs else None

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> tuple[int, int]:
        """(epoch, end offset) as Kafka's ``endOffsetFor``; (-1, -1) when nothing is known."""
        if requested_epoch == UNDEFINED_EPOCH or not self._epochs:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        if self._epochs[-1] == requested_epoch:
            return requested_epoch, log_end_offset
        higher = bisect_right(self._epochs, requested_epoch)
        if higher == len(self._epochs):
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        if higher == 0:
            # Below every known epoch: Kafka answers with the requested epoch and the first
            # known start offset (the data before it is gone).
            return requested_epoch, self._starts[0]
        return self._epochs[higher - 1], self._starts[higher]

    def epoch_for_offset(self, offset: int) -> int | None:
        """The epoch that wrote ``offset`` (Kafka's ``epochForOffset``), or None."""
        i = bisect_right(self._starts, offset)
        return self._epochs[i - 1] if i else None

    # -- updates -------------------------------------------------------------------------------
    def assign(self, epoch: int, start_offset: int) -> bool:
        """Records that ``epoch`` starts at ``start_offset``; writes the file when it changed."""
        if self._assign(epoch, start_offset):
            self.write()
            return True
        return False

    def truncate_from_end(self, end_offset: int) -> None:
        """Drops entries starting at or after ``end_offset`` (after recovery truncated the log)."""
        if end_offset < 0 or not self._starts or self._starts[-1] < end_offset:
            return
        keep = bisect_left(self._starts, end_offset)
        del self._epochs[keep:]
        del self._starts[keep:]
        self.write()

    def truncate_from_start(self, start_offset: int) -> None:
        """Drops entries wholly below the new log start; the one covering it starts there."""
        n = bisect_right(self._starts, start_offset)
        if n == 0:
            return
        epoch = self._epochs[n - 1]
        if n == 1 and self._starts[0] == start_offset:
            return
        del self._epochs[:n]
        del self._starts[:n]
        self._epochs.insert(0, epoch)
        self._starts.insert(0, start_offset)
        self.write()

    def clear(self) -> None:
        self._epochs.clear()
        self._starts.clear()
        self.write()

    def write(self) -> None:
        if self.path.parent.exists():
            write_lines(self.path, (f"{e} {s}" for e, s in self.entries), sync=self._sync)

    def _assign(self, epoch: int, start_offset: int) -> bool:
        if epoch < 0 or start_offset < 0:
            raise ValueError(f"invalid leader epoch entry ({epoch}, {start_offset})")
        if self._epochs and epoch == self._epochs[-1] and start_offset >= self._starts[-1]:
            return False
        # Remove entries that would break monotonicity (same/higher epoch or offset).
        while self._epochs and (self._epochs[-1] >= epoch or self._starts[-1] >= start_offset):
            self._epochs.pop()
            self._starts.pop()
        self._epochs.append(epoch)
        self._starts.append(start_offset)
        return True
