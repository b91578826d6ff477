"""Kafka's MetadataLoader: a raft listener that replays committed batches (and snapshots)
into a MetadataDelta and publishes each new MetadataImage to the registered publishers, and
Kafka's SnapshotGenerator policy (a snapshot every so many bytes or so much time)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pykafkad.metadata.delta import MetadataDelta, MetadataReplayError
from pykafkad.metadata.image import EMPTY_IMAGE, MetadataImage
from pykafkad.metadata.serde import MetadataParseError, decode_record
from pykafkad.metadata.snapshot import read_snapshot, snapshot_file_name, write_snapshot

log = logging.getLogger("pykafkad.kraft.loader")


@dataclass(frozen=True)
class MetadataManifest:
    """Where an image comes from (Kafka's LogDeltaManifest / SnapshotManifest): the offset and
    epoch of its last record, and whether it was loaded from a snapshot."""

    offset: int
    epoch: int
    from_snapshot: bool
    num_bytes: int = 0
    last_contained_log_time_ms: int = -1


class MetadataPublisher(Protocol):
    def on_metadata_update(self, delta: MetadataDelta, image: MetadataImage,
                           manifest: MetadataManifest) -> None: ...


class MetadataLoader:
    """Publishes every committed change; a publisher added late first gets the whole current
    image as one delta from the empty image, as Kafka installs publishers."""

    def __init__(self, *, clock: Callable[[], int] | None = None,
                 snapshot_dir: Path | None = None,
                 max_bytes_between_snapshots: int = 20 * 1024 * 1024,
                 max_snapshot_interval_ms: int = 3_600_000,
                 spawn: Callable[[Callable[[], Any]], None] | None = None):
        self.image: MetadataImage = EMPTY_IMAGE
        self.manifest: MetadataManifest | None = None
        self.publishers: list[MetadataPublisher] = []
        self.leader_listeners: list[Callable[[Any], None]] = []
        self.clock = clock or (lambda: int(time.time() * 1000))
        self.snapshot_dir = snapshot_dir
        self.max_bytes_between_snapshots = max_bytes_between_snapshots
        self.max_snapshot_interval_ms = max_snapshot_interval_ms
        #: runs a snapshot write off the event loop (a worker thread); None: inline
        self.spawn = spawn
        self._bytes_since_snapshot = 0
        #: a dynamic quorum's KRaftVersionRecord / VotersRecord fields for snapshot headers
        self.snapshot_control: dict = {}
        self._last_snapshot_ms = self.clock()
        self._snapshot_in_progress = False

    # -- publishers ------------------------------------------------------------------------
    def add_publisher(self, publisher: MetadataPublisher) -> None:
        self.publishers.append(publisher)
        if self.manifest is not None:
            delta = MetadataDelta(EMPTY_IMAGE)
            delta.replay_all(self.image.records())
            self._call(publisher, delta, self.image, self.manifest)

    def remove_publisher(self, publisher: MetadataPublisher) -> None:
        if publisher in self.publishers:
            self.publishers.remove(publisher)

    @property
    def last_offset(self) -> int:
        """The offset of the last record published (-1: none yet): what a broker heartbeats."""
        return self.image.offset

    # -- raft listener ---------------------------------------------------------------------
    def handle_commit(self, batch) -> None:
        delta = MetadataDelta(self.image)
        try:
            for value in batch.records:
                record, _ = decode_record(value)
                delta.replay(record)
        except (MetadataParseError, MetadataReplayError) as e:
            # Kafka's loader fault handler on a broker: logged, the loading goes on
            log.error("Error replaying the metadata batch at offset %d: %s", batch.base_offset, e)
        image = delta.apply(batch.last_offset, batch.epoch)
        self._publish(delta, image, MetadataManifest(
            batch.last_offset, batch.epoch, False, batch.size_in_bytes, batch.append_timestamp))
        self._bytes_since_snapshot += batch.size_in_bytes
        self._maybe_snapshot()

    def handle_load_snapshot(self, reader) -> None:
        snapshot = read_snapshot(Path(reader.path))
        delta = MetadataDelta(self.image)
        delta.replay_all(snapshot.records())
        delta.finish_snapshot()
        image = delta.apply(reader.end_offset - 1, reader.epoch)
        self._publish(delta, image, MetadataManifest(reader.end_offset - 1, reader.epoch, True))
        self._bytes_since_snapshot = 0
        self._last_snapshot_ms = self.clock()

    def handle_leader_change(self, leader) -> None:
        for listener in list(self.leader_listeners):
            try:
                listener(leader)
            except Exception:
                log.exception("a leader-change listener failed")

    def _publish(self, delta: MetadataDelta, image: MetadataImage,
                 manifest: MetadataManifest) -> None:
        self.image, self.manifest = image, manifest
        for publisher in list(self.publishers):
            self._call(publisher, delta, image, manifest)

    @staticmethod
    def _call(publisher, delta, image, manifest) -> None:
        try:
            publisher.on_metadata_update(delta, image, manifest)
        except Exception:  # Kafka's fault handler: log, keep loading
            log.exception("metadata publisher %s failed at offset %d",
                          type(publisher).__name__, manifest.offset)

    # -- snapshots (Kafka's SnapshotGenerator) -----------------------------------------------
    def _maybe_snapshot(self) -> None:
        if self.snapshot_dir is None or self._snapshot_in_progress or self.image.offset < 0:
            return
        now = self.clock()
        by_bytes = self._bytes_since_snapshot >= self.max_bytes_between_snapshots
        by_time = self._bytes_since_snapshot > 0 and \
            now - self._last_snapshot_ms >= self.max_snapshot_interval_ms
        if not (by_bytes or by_time):
            return
        image = self.image
        end_offset = image.offset + 1
        if (self.snapshot_dir / snapshot_file_name(end_offset, image.epoch)).exists():
            return
        self._bytes_since_snapshot = 0
        self._last_snapshot_ms = now
        self._snapshot_in_progress = True
        reason = "bytes" if by_bytes else "time"
        timestamp = self.manifest.last_contained_log_time_ms if self.manifest else now

        def write() -> None:
            try:
                path = write_snapshot(self.snapshot_dir, end_offset, image.epoch,
                                      image.records(), last_contained_log_timestamp=timestamp,
                                      **self.snapshot_control)
                log.info("Creating new KRaft snapshot file %s because of %s", path.name, reason)
            except Exception:
                log.exception("writing the metadata snapshot at %d failed", end_offset)
            finally:
                self._snapshot_in_progress = False

        if self.spawn is None:
            write()
        else:
            self.spawn(write)
