"""All partition logs of one data dir (Kafka's log.dirs with a single directory).

Layout, as Kafka's LogManager keeps it::

    <data dir>/.kafka_cleanshutdown               written by close(); absent = recover on load
    <data dir>/recovery-point-offset-checkpoint   "topic partition offset" per partition
    <data dir>/log-start-offset-checkpoint        partitions whose log start is past their first
                                                  segment's base offset (DeleteRecords)
    <data dir>/<topic>-<partition>/               one PartitionLog each

The marker is removed as soon as the manager starts, so a crash at any later point is detected
on the next start. The log start offset checkpoint is rewritten whenever a log start offset
moves (Kafka does it periodically), so DeleteRecords survives a crash; recovery points are
checkpointed by ``flush_all``/``checkpoint``/``close``. Deleted topics' directories are renamed
to ``<topic>-<partition>.<id>-delete`` and removed at once, or, in the broker, soon after by
a worker thread (Kafka waits file.delete.delay.ms); leftovers of an interrupted deletion are
removed on load.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path

from pykafkad.log.checkpoint import (
    CLEAN_SHUTDOWN_FILE,
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    atomic_write,
    fsync_dir,
    fsync_file,
    read_offsets,
    write_offsets,
)
from pykafkad.log.cleaner import CleanResult, LogCleaner
from pykafkad.log.cleaner_swap import DELETED_SUFFIX
from pykafkad.log.config import LogConfig
from pykafkad.log.partition import PartitionLog
from pykafkad.log.segment import LogSegment

log = logging.getLogger("pykafkad.log")

_SKIPPED_DIR_SUFFIXES = ("-delete", "-stray", "-future")


def partition_dir_name(topic: str, partition: int) -> str:
    return f"{topic}-{partition}"


def parse_partition_dir(name: str) -> tuple[str, int] | None:
    """``"my-topic.v2-3"`` -> ``("my-topic.v2", 3)``; None for anything else."""
    if name.endswith(_SKIPPED_DIR_SUFFIXES):
        return None
    topic, dash, partition = name.rpartition("-")
    if not dash or not topic or not partition.isdigit():
        return None
    return topic, int(partition)


class LogManager:
    def __init__(self, data_dir: Path, clock: Callable[[], int]):
        self.data_dir = Path(data_dir)
        self.clock = clock
        self.data_dir.mkdir(parents=True, exist_ok=True)
        marker = self.data_dir / CLEAN_SHUTDOWN_FILE
        #: whether the previous run shut down cleanly (decides recovery in load_all)
        self.had_clean_shutdown = marker.exists()
        marker.unlink(missing_ok=True)
        self._logs: dict[tuple[str, int], PartitionLog] = {}
        # What the previous run checkpointed, for partitions opened by load_all or create.
        self._recovery_points = read_offsets(self.data_dir / RECOVERY_POINT_CHECKPOINT)
        self._log_starts = read_offsets(self.data_dir / LOG_START_OFFSET_CHECKPOINT)
        #: compaction of cleanup.policy=compact logs (cleaner-offset-checkpoint lives here too)
        self.cleaner = LogCleaner(self.data_dir)
        self._batching = False
        self._log_start_dirty = False
        self._closed = False
        #: leave deleted partitions' ``-delete`` directories for ``take_doomed_dirs`` (the
        #: broker removes them in a worker thread, as Kafka's kafka-delete-logs task does)
        self.defer_dir_removal = False
        self._doomed_dirs: list[Path] = []

    # -- loading -------------------------------------------------------------------------------
    def load_all(
        self, configs_for: Callable[[str, int], LogConfig | None]
    ) -> dict[tuple[str, int], PartitionLog]:
        """Opens every ``<topic>-<partition>`` dir, recovering them after an unclean shutdown.

        ``configs_for`` returns None for a partition the broker does not know: its directory is
        left alone and not loaded.
        """
        recovery_points = self._recovery_points
        log_starts = self._log_starts
        recover = not self.had_clean_shutdown
        for entry in sorted(os.scandir(self.data_dir), key=lambda e: e.name):
            if not entry.is_dir():
                continue
            if entry.name.endswith("-delete"):
                shutil.rmtree(entry.path, ignore_errors=True)
                continue
            parsed = parse_partition_dir(entry.name)
            if parsed is None or parsed in self._logs:
                continue
            config = configs_for(*parsed)
            if config is None:
                log.warning("not loading %s: unknown topic partition", entry.name)
                continue
            plog = PartitionLog.open(
                Path(entry.path),
                config,
                self.clock,
                recover=recover,
                recovery_point=recovery_points.get(parsed, 0),
                log_start_offset=log_starts.get(parsed, 0),
            )
            self._register(parsed, plog)
        self.checkpoint()
        return dict(self._logs)

    # -- partitions ----------------------------------------------------------------------------
    def create(self, topic: str, partition: int, config: LogConfig) -> PartitionLog:
        """Opens the partition's log, creating its directory if needed (idempotent).

        A directory left from before (not loaded by load_all) is opened like load_all would.
        """
        key = (topic, partition)
        existing = self._logs.get(key)
        if existing is not None:
            return existing
        dir = self.data_dir / partition_dir_name(topic, partition)
        existed = dir.is_dir()
        plog = PartitionLog.open(
            dir,
            config,
            self.clock,
            recover=existed and not self.had_clean_shutdown,
            recovery_point=self._recovery_points.get(key, 0),
            log_start_offset=self._log_starts.get(key, 0) if existed else 0,
        )
        self._register(key, plog)
        return plog

    def get(self, topic: str, partition: int) -> PartitionLog | None:
        return self._logs.get((topic, partition))

    def logs(self) -> dict[tuple[str, int], PartitionLog]:
        return dict(self._logs)

    def partitions_of(self, topic: str) -> list[int]:
        return sorted(p for t, p in self._logs if t == topic)

    def delete_topic(self, topic: str) -> int:
        """Closes and removes every partition of ``topic``; returns how many there were."""
        keys = [k for k in self._logs if k[0] == topic]
        for key in keys:
            plog = self._logs.pop(key)
            self._recovery_points.pop(key, None)
            self._log_starts.pop(key, None)
            plog.close()
            doomed = plog.dir.with_name(f"{plog.dir.name}.{uuid.uuid4().hex}-delete")
            try:
                os.replace(plog.dir, doomed)
            except OSError:
                doomed = plog.dir
            if self.defer_dir_removal and doomed != plog.dir:
                self._doomed_dirs.append(doomed)
            else:
                shutil.rmtree(doomed, ignore_errors=True)
        if keys:
            fsync_dir(self.data_dir)
            self.checkpoint()
            self.cleaner.forget(keys)
        return len(keys)

    def remove_partitions(self, topic: str, partitions) -> None:
        """Closes and forgets the given partitions' logs (a rolled-back creation); their
        directories are the caller's to remove."""
        for p in partitions:
            plog = self._logs.pop((topic, p), None)
            if plog is not None:
                self._recovery_points.pop((topic, p), None)
                self._log_starts.pop((topic, p), None)
                try:
                    plog.close()
                except OSError:  # its directory goes anyway
                    pass

    def take_doomed_dirs(self) -> list[Path]:
        """The ``-delete`` directories left to remove since the last call."""
        doomed, self._doomed_dirs = self._doomed_dirs, []
        return doomed

    def update_config(self, topic: str, config: LogConfig) -> None:
        for (t, _), plog in self._logs.items():
            if t == topic:
                plog.update_config(config)

    # -- housekeeping --------------------------------------------------------------------------
    def apply_retention(
        self, now_ms: int | None = None, *, retired: list[LogSegment] | None = None
    ) -> int:
        """Runs retention on every partition; returns the number of segments deleted. With
        ``retired``, the deleted segments leave their logs, their files are renamed to
        ``.deleted`` (Kafka's asyncDeleteSegment; a start removes such leftovers) and they are
        appended there for the caller to ``delete()`` off the request loop."""
        now = self.clock() if now_ms is None else now_ms
        deleted = 0
        self._batching = True
        try:
            for key, plog in list(self._logs.items()):
                if key in self.cleaner.in_progress:
                    continue  # Kafka's retention skips a log while it is being cleaned
                plog.retired_segments = retired
                try:
                    deleted += plog.apply_retention(now)
                finally:
                    plog.retired_segments = None
            for seg in retired or ():
                if seg.file_suffix != DELETED_SUFFIX:
                    seg.change_file_suffix(DELETED_SUFFIX)
        finally:
            self._batching = False
            if self._log_start_dirty:
                self._write_log_start_offsets()
        return deleted

    def clean_all(
        self, now_ms: int | None = None, *, force: bool = False
    ) -> dict[tuple[str, int], CleanResult]:
        """Runs the log cleaner over the compacted logs (Kafka's cleaner thread, one pass):
        each log whose dirty ratio exceeds min.cleanable.dirty.ratio, or that holds records
        older than max.compaction.lag.ms, is compacted. ``force`` ignores the ratio. Returns
        what was cleaned, by (topic, partition)."""
        now = self.clock() if now_ms is None else now_ms
        return self.cleaner.clean_all(self._logs, now, force=force)  # type: ignore[return-value]

    def flush_all(self) -> None:
        """fsyncs every log and checkpoints the recovery points."""
        for plog in self._logs.values():
            plog.flush()
        self.checkpoint()

    def checkpoint(self) -> None:
        """Writes recovery-point-offset-checkpoint and log-start-offset-checkpoint."""
        write_offsets(
            self.data_dir / RECOVERY_POINT_CHECKPOINT,
            {k: plog.recovery_point for k, plog in self._logs.items()},
        )
        self._write_log_start_offsets()

    def close(self) -> None:
        """Closes every log, checkpoints, then writes the clean-shutdown marker."""
        if self._closed:
            return
        for plog in self._logs.values():
            plog.close()
            _fsync_active_segment(plog)
        # Everything is on disk now: each log's recovery point is its end.
        write_offsets(
            self.data_dir / RECOVERY_POINT_CHECKPOINT,
            {k: plog.log_end_offset for k, plog in self._logs.items()},
        )
        self._write_log_start_offsets()
        atomic_write(
            self.data_dir / CLEAN_SHUTDOWN_FILE,
            json.dumps({"version": "0", "broker_epoch": "-1"}).encode(),
        )
        self._closed = True

    # -- internals -----------------------------------------------------------------------------
    def _register(self, key: tuple[str, int], plog: PartitionLog) -> None:
        plog.on_log_start_offset_change = self._on_log_start_offset_change
        self._logs[key] = plog

    def _on_log_start_offset_change(self, plog: PartitionLog) -> None:
        if self._batching:
            self._log_start_dirty = True
        else:
            self._write_log_start_offsets()

    def _write_log_start_offsets(self) -> None:
        self._log_start_dirty = False
        offsets = {}
        for key, plog in self._logs.items():
            segments = plog.segments
            if segments and plog.log_start_offset > segments[0].base_offset:
                offsets[key] = plog.log_start_offset
        write_offsets(self.data_dir / LOG_START_OFFSET_CHECKPOINT, offsets)


def _fsync_active_segment(plog: PartitionLog) -> None:
    """After close: fsync the files that may hold unsynced data (older ones were at roll)."""
    for seg in plog.segments[-1:]:
        for path in (seg.log_path, seg.index_path, seg.time_index_path):
            fsync_file(path)
