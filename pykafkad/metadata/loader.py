"""MetadataLoader: committed metadata batches and snapshots in, published images out (Kafka's
MetadataLoader with its MetadataBatchLoader).

It is what a raft listener's ``handle_commit(batch)`` / ``handle_load_snapshot(snapshot)`` feed:
records are replayed into a MetadataDelta and, after each commit, the delta and the new image
are published (``publish(delta, image)``) so that the broker can act on
``delta.local_changes(node_id)``. Records between a BeginTransactionRecord and its
EndTransactionRecord (KIP-868) are published together or, after an AbortTransactionRecord, not
at all: no image ever shows half a transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from pykafkad.metadata.batches import Batch
from pykafkad.metadata.delta import MetadataDelta, MetadataReplayError
from pykafkad.metadata.image import EMPTY_IMAGE, MetadataImage
from pykafkad.metadata.snapshot import Snapshot
from wire.metadata import AbortTransactionRecord, BeginTransactionRecord, EndTransactionRecord

Publisher = Callable[[MetadataDelta, MetadataImage], None]

_NONE, _STARTED, _CONTINUED, _ENDED, _ABORTED = range(5)


class MetadataLoader:
    def __init__(self, image: MetadataImage = EMPTY_IMAGE, publish: Publisher | None = None):
        self.image = image
        self._publish = publish
        self._delta = MetadataDelta(image)
        self._state = _NONE
        self._last_offset = image.offset
        self._last_epoch = image.epoch
        self._pending = False

    @property
    def in_transaction(self) -> bool:
        return self._state in (_STARTED, _CONTINUED)

    def load_snapshot(self, snapshot: Snapshot) -> MetadataImage:
        """Replaces the image with the snapshot's (anything not in it is gone)."""
        delta = MetadataDelta(self.image)
        for record in snapshot.records():
            delta.replay(record)
        delta.finish_snapshot()
        self._state = _NONE
        self._last_offset, self._last_epoch = snapshot.end_offset - 1, snapshot.epoch
        self._update(delta)
        return self.image

    def handle_commit(self, batches: Batch | Iterable[Batch]) -> MetadataImage:
        """Replays committed batches, then publishes unless a transaction is still open."""
        for batch in [batches] if isinstance(batches, Batch) else batches:
            self._load_batch(batch)
        if self._state in (_STARTED, _CONTINUED):
            return self.image
        if self._pending or self._state == _ABORTED:  # an abort still moves the offset on
            self._update(self._delta)
        return self.image

    def _load_batch(self, batch: Batch) -> None:
        self._last_epoch = batch.epoch
        for i, (record, _version) in enumerate(batch.records):
            offset = batch.base_offset + i
            if isinstance(record, BeginTransactionRecord):
                if self.in_transaction:
                    raise MetadataReplayError(
                        "Encountered BeginTransactionRecord while already in a transaction")
                if self._pending:  # what came before the transaction is published on its own
                    self._update(self._delta)
                self._state = _STARTED
            elif isinstance(record, EndTransactionRecord):
                if not self.in_transaction:
                    raise MetadataReplayError("Encountered EndTransactionRecord without having "
                                              "seen a BeginTransactionRecord")
                self._state = _ENDED
            elif isinstance(record, AbortTransactionRecord):
                if not self.in_transaction:
                    raise MetadataReplayError("Encountered AbortTransactionRecord without having "
                                              "seen a BeginTransactionRecord")
                self._state = _ABORTED
                self._delta = MetadataDelta(self.image)  # the transaction's records are dropped
                self._pending = False
            else:
                if self._state == _STARTED:
                    self._state = _CONTINUED
                elif self._state in (_ENDED, _ABORTED):
                    self._state = _NONE
                self._delta.replay(record)
                self._pending = True
            self._last_offset = offset

    def _update(self, delta: MetadataDelta) -> None:
        self.image = delta.apply(offset=self._last_offset, epoch=self._last_epoch)
        if self._publish is not None:
            self._publish(delta, self.image)
        self._delta = MetadataDelta(self.image)
        self._pending = False
        if not self.in_transaction:
            self._state = _NONE
