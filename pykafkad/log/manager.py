"""All partition logs of a broker's log dirs (Kafka's ``log.dirs``; JBOD with several).

The first dir (the data dir) holds the checkpoints and the clean-shutdown marker; every dir
holds partition directories, a new partition going to the dir with the fewest partitions, as
Kafka's LogManager.nextLogDirs places it (or to the dir the controller assigned it to).

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

Logs open lazily: ``load_all`` only lists the partition directories, and a log is loaded
(recovered first, after an unclean shutdown) when it is first used or when the broker's
background loader gets to it. Until then its checkpointed recovery point and log start offset
are carried over unchanged; the clean-shutdown marker is written only when no log is left that
still needs recovery from an earlier crash.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import shutil
import threading
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
from pykafkad.log.errors import KafkaStorageError
from pykafkad.log.partition import PartitionLog
from pykafkad.log.segment import LogSegment

#: the KRaft metadata log (Kafka's LogManager leaves it to the raft client, as here)
METADATA_PARTITION_DIR = "__cluster_metadata-0"
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


#: what ``load_all``'s ``classify`` may say about a partition directory
ADOPT, STRAY, DELETE = "adopt", "stray", "delete"


def _recorded_broker_epoch(marker: Path) -> int:
    try:
        return int(json.loads(marker.read_bytes()).get("broker_epoch", -1))
    except (OSError, ValueError, AttributeError, TypeError):
        return -1


class LogManager:
    def __init__(self, data_dir: Path, clock: Callable[[], int], extra_dirs=()):
        self.data_dir = Path(data_dir)
        #: every log dir, the data dir first
        self.dirs: list[Path] = [self.data_dir, *(Path(d) for d in extra_dirs)]
        self.clock = clock
        for d in self.dirs:
            d.mkdir(parents=True, exist_ok=True)
        marker = self.data_dir / CLEAN_SHUTDOWN_FILE
        #: whether the previous run shut down cleanly (decides recovery when a log is opened)
        self.had_clean_shutdown = marker.exists()
        #: the broker epoch the last clean shutdown recorded (-1: none), which a KRaft broker
        #: registers with (KIP-966's previous broker epoch); ``broker_epoch`` is the one to
        #: record at this run's clean shutdown
        self.previous_broker_epoch = _recorded_broker_epoch(marker)
        self.broker_epoch = -1
        marker.unlink(missing_ok=True)
        self._logs: dict[tuple[str, int], PartitionLog] = {}
        #: partitions found by load_all whose logs are opened on first use (or by open_some)
        self._unopened: dict[tuple[str, int], str] = {}
        #: unopened partitions of topics created by this run (``prepare``): their directories
        #: hold no segment yet, which the first open creates; nothing to recover there
        self._fresh: set[tuple[str, int]] = set()
        #: fresh partitions whose directories are not made yet (``make_dirs``, or their first
        #: open), with what writes their partition.metadata
        self._dirless: dict[tuple[str, int], Callable[[Path], None]] = {}
        self._open_lock = threading.RLock()
        self._configs_for: Callable[[str, int], LogConfig | None] = lambda t, p: None
        #: called with every log opened (loaded or created), before anyone else sees it
        self.on_open: Callable[[PartitionLog], None] | None = None
        # What the previous run checkpointed, for partitions opened later or by create.
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
        self,
        configs_for: Callable[[str, int], LogConfig | None],
        classify: Callable[[str, int, str], str] | None = None,
    ) -> None:
        """Finds every ``<topic>-<partition>`` dir; their logs open lazily (``get``,
        ``open_some``), so start-up costs one directory entry per partition, not a log load.

        ``classify`` (the broker's topic ids against ``partition.metadata``) says what to do
        with a directory: ADOPT it, set it aside as a STRAY (renamed ``<dir>.<uuid>-stray``,
        never loaded, never deleted, as Kafka), or DELETE it (a deletion that a crash
        interrupted). Without it, a directory for which ``configs_for`` returns None (a
        partition the broker does not know) is left alone. ``-delete`` directories are removed.
        """
        self._configs_for = configs_for
        entries = [e for d in self.dirs for e in sorted(os.scandir(d), key=lambda e: e.name)]
        for entry in entries:
            if not entry.is_dir():
                continue
            if entry.name.endswith("-delete"):
                shutil.rmtree(entry.path, ignore_errors=True)
                log.info("deleted %s, left over from a topic deletion", entry.name)
                continue
            if entry.name.endswith("-future"):  # a move cut short: its replica stays put
                shutil.rmtree(entry.path, ignore_errors=True)
                log.info("removed %s, a log dir move the last shutdown interrupted", entry.path)
                continue
            if entry.name.endswith("-stray"):
                log.warning("Loaded stray log: %s", entry.path)
                continue
            if entry.name == METADATA_PARTITION_DIR:  # the raft client's, never a topic's
                continue
            parsed = parse_partition_dir(entry.name)
            if parsed is None or parsed in self._logs or parsed in self._unopened:
                continue
            path = entry.path
            action = ADOPT if classify is None else classify(*parsed, path)
            if action == DELETE:
                self._delete_dir(Path(path))
                log.info("deleted %s: its topic was deleted before the last shutdown",
                         entry.name)
                continue
            if action == STRAY:
                stray = f"{path}.{uuid.uuid4().hex}-stray"
                os.replace(path, stray)
                log.warning("Log in %s marked stray and renamed to %s", path, stray)
                continue
            if classify is None and configs_for(*parsed) is None:
                log.warning("not loading %s: unknown topic partition", entry.name)
                continue
            self._unopened[parsed] = path
        self._fsync_dirs()
        self.checkpoint()

    def _fsync_dirs(self) -> None:
        for d in self.dirs:
            fsync_dir(d)

    def dir_of(self, topic: str, partition: int) -> Path:
        """The log dir (one of ``dirs``) the partition's log is in, or will be in."""
        return self.partition_dir(topic, partition).parent

    def _existing_dir(self, topic: str, partition: int) -> Path | None:
        name = partition_dir_name(topic, partition)
        for d in self.dirs:
            if os.path.isdir(os.path.join(d, name)):
                return d / name
        return None

    def next_dir(self, preferred: Path | None = None) -> Path:
        """Where a new partition goes: ``preferred`` (the dir the controller assigned) when it
        is one of ours, else the dir with the fewest partitions (ties: ``log.dirs`` order)."""
        if preferred is not None and Path(preferred) in self.dirs:
            return Path(preferred)
        if len(self.dirs) == 1:
            return self.data_dir
        counts = dict.fromkeys(self.dirs, 0)
        for plog in self._logs.values():
            counts[Path(plog.dir).parent] = counts.get(Path(plog.dir).parent, 0) + 1
        for path in self._unopened.values():
            parent = Path(path).parent
            counts[parent] = counts.get(parent, 0) + 1
        return min(self.dirs, key=lambda d: counts[d])

    def _open(self, key: tuple[str, int], dir: Path, config: LogConfig, existed: bool) -> PartitionLog:
        plog = PartitionLog.open(
            dir,
            config,
            self.clock,
            recover=existed and not self.had_clean_shutdown,
            recovery_point=self._recovery_points.get(key, 0),
            log_start_offset=self._log_starts.get(key, 0) if existed else 0,
        )
        self._register(key, plog)
        if self.on_open is not None:
            self.on_open(plog)
        return plog

    def _open_unopened(self, key: tuple[str, int]) -> PartitionLog | None:
        # A lock, although the broker runs on one thread: tests and tools may look at a log
        # from another thread while the background loader opens it, and must see it once.
        with self._open_lock:
            plog = self._logs.get(key)
            if plog is not None or key not in self._unopened:
                return plog
            dir = Path(self._unopened[key])
            config = self._configs_for(*key)
            fresh = key in self._fresh
            try:
                if key in self._dirless:
                    self._make_dir(key, dir)
                plog = None if config is None else self._open(key, dir, config, not fresh)
            except OSError as e:
                if fresh:  # its files cannot be created now (disk full ...): tried again later
                    raise KafkaStorageError(
                        f"cannot create the log in {dir}: {e.strerror or e}") from e
                log.exception("cannot load the log in %s; its partition is not served", dir)
                plog = None
            except Exception:  # a log that cannot load fails alone, never the broker
                log.exception("cannot load the log in %s; its partition is not served", dir)
                plog = None
            del self._unopened[key]
            self._fresh.discard(key)
            return plog

    @property
    def unopened(self) -> int:
        """How many partitions found at start have not been opened yet."""
        return len(self._unopened) - len(self._fresh)

    def found_unopened(self, topic: str, partition: int) -> bool:
        """Whether the partition's log was found at start and has not been opened yet."""
        key = (topic, partition)
        return key in self._unopened and key not in self._fresh

    def open_some(self, n: int) -> int:
        """Opens up to ``n`` not yet opened partitions (the broker does this in the background
        after start, so housekeeping soon covers every log); returns how many remain.
        Partitions created by this run are left to their first use."""
        with self._open_lock:
            keys = list(itertools.islice(
                (k for k in self._unopened if k not in self._fresh), n))
        for key in keys:
            self._open_unopened(key)
        return len(self._unopened) - len(self._fresh)

    def prepare(self, topic: str, partitions, write_metadata: Callable[[Path], None],
                preferred_dir: Path | None = None) -> None:
        """Registers a new topic's partitions without touching the disk: each one's directory,
        with what ``write_metadata`` writes (partition.metadata), is made by ``make_dirs`` (the
        broker runs it in a worker thread soon after) or by the log's first open, which creates
        the log, as Kafka's brokers create logs after the controller answered. (Crash safety
        is the caller's durable record: a directory lost in a crash is prepared again at
        start.) A directory that exists already is opened later like load_all would."""
        for p in partitions:
            key = (topic, p)
            if key in self._logs or key in self._unopened:
                continue
            existing = self._existing_dir(topic, p)
            dir = str(existing or self.next_dir(preferred_dir) / partition_dir_name(topic, p))
            self._unopened[key] = dir
            if existing is None:
                self._fresh.add(key)
                self._dirless[key] = write_metadata

    @property
    def dirless(self) -> int:
        """How many prepared partitions have no directory yet."""
        return len(self._dirless)

    def make_dirs(self) -> int:
        """Makes the directories of prepared partitions, then fsyncs the data dir once; safe
        to run in a worker thread (each directory under the lock that opening and deleting
        take). Stops at the first that cannot be made (disk full ...), left to a later call or
        the log's first open. Returns how many were made."""
        with self._open_lock:
            keys = list(self._dirless)
        made = 0
        try:
            for key in keys:
                with self._open_lock:
                    if key in self._dirless:
                        self._make_dir(key, Path(self._unopened[key]))
                        made += 1
        except OSError as e:
            log.warning("cannot make partition directories in %s yet: %s", self.data_dir, e)
        if made:
            self._fsync_dirs()
        return made

    def _make_dir(self, key: tuple[str, int], dir: Path) -> None:
        try:
            os.mkdir(dir)
        except FileExistsError:
            if not dir.is_dir():
                raise
        try:
            self._dirless[key](dir)
        except OSError:
            shutil.rmtree(dir, ignore_errors=True)
            raise
        del self._dirless[key]

    # -- partitions ----------------------------------------------------------------------------
    def create(self, topic: str, partition: int, config: LogConfig) -> PartitionLog:
        """Opens the partition's log, creating its directory if needed (idempotent).

        A directory left from before (not loaded by load_all) is opened like load_all would.
        """
        key = (topic, partition)
        existing = self.get(topic, partition)
        if existing is not None:
            return existing
        dir = (self._existing_dir(topic, partition)
               or self.next_dir() / partition_dir_name(topic, partition))
        return self._open(key, dir, config, dir.is_dir())

    def get(self, topic: str, partition: int, *, storage_errors: bool = False) -> PartitionLog | None:
        """The partition's log, opened now if it has not been yet (recovered first after an
        unclean shutdown: nothing is served from a log before its recovery). A new
        partition's log that cannot be created yet is None, or with ``storage_errors`` (Produce,
        Fetch, ListOffsets, OffsetForLeaderEpoch: Kafka's offline log dir) raises
        KafkaStorageError."""
        key = (topic, partition)
        plog = self._logs.get(key)
        if plog is None and (key in self._unopened or key in self._logs):
            try:
                plog = self._open_unopened(key)  # (or opened by another thread meanwhile)
            except KafkaStorageError as e:
                if storage_errors:
                    raise
                log.warning("%s", e)
        return plog

    def has(self, topic: str, partition: int) -> bool:
        """Whether the partition has a log (opened or not)."""
        key = (topic, partition)
        return key in self._unopened or key in self._logs  # the order a log moves in

    def logs(self) -> dict[tuple[str, int], PartitionLog]:
        """The opened logs (see ``open_some``)."""
        return dict(self._logs)

    def keys(self) -> set[tuple[str, int]]:
        """Every partition with a log, opened or not yet."""
        return set(self._logs) | set(self._unopened)

    def size_in_bytes(self, topic: str, partition: int) -> int:
        """The log's size (its segment files, as Kafka's ``UnifiedLog.size``), without opening
        a log that is not open yet: its files are summed on disk (0 before they exist)."""
        plog = self._logs.get((topic, partition))
        if plog is not None:
            return plog.size_in_bytes
        dir = self._unopened.get((topic, partition))
        total = 0
        if dir is not None:
            with contextlib.suppress(OSError):
                for entry in os.scandir(dir):
                    if entry.name.endswith(".log"):
                        total += entry.stat().st_size
        return total

    def partitions_of(self, topic: str) -> list[int]:
        return sorted({p for t, p in self._logs if t == topic}
                      | {p for t, p in self._unopened if t == topic})

    def delete_topic(self, topic: str) -> int:
        """Closes and removes every partition of ``topic``; returns how many there were."""
        return self.delete_topics([topic])

    def delete_topics(self, topics) -> int:
        """Closes and removes every partition of ``topics``; returns how many there were.

        Each directory is renamed to ``<dir>.<uuid>-delete`` first (one atomic step each, so a
        crash leaves either the old name, which ``classify`` deletes at the next start, or the
        ``-delete`` name, removed at the next start), then removed. The data dir is fsynced and
        the checkpoints rewritten once for all."""
        names = set(topics)
        with self._open_lock:
            keys = [k for k in self._logs if k[0] in names]
            unopened = [k for k in self._unopened if k[0] in names]
            for key in keys:
                plog = self._logs.pop(key)
                plog.close()
                self._delete_dir(plog.dir)
            for key in unopened:
                self._fresh.discard(key)
                path = self._unopened.pop(key)
                if self._dirless.pop(key, None) is None:
                    self._delete_dir(Path(path))
        for key in keys + unopened:
            self._recovery_points.pop(key, None)
            self._log_starts.pop(key, None)
        if keys or unopened:
            self._fsync_dirs()
            try:
                self.checkpoint()
            except OSError as e:  # (a full disk) the next checkpoint leaves the topics out
                log.warning("cannot write the checkpoints after deleting %s: %s", names, e)
            self.cleaner.forget(keys + unopened)
        return len(keys) + len(unopened)

    def delete_partitions(self, keys) -> int:
        """Closes and removes the logs of single replicas (moved to other brokers by a
        reassignment), as ``delete_topics`` does whole topics; returns how many there were."""
        wanted = set(keys)
        with self._open_lock:
            opened = [k for k in self._logs if k in wanted]
            unopened = [k for k in self._unopened if k in wanted]
            for key in opened:
                plog = self._logs.pop(key)
                plog.close()
                self._delete_dir(plog.dir)
            for key in unopened:
                self._fresh.discard(key)
                path = self._unopened.pop(key)
                if self._dirless.pop(key, None) is None:
                    self._delete_dir(Path(path))
        gone = opened + unopened
        for key in gone:
            self._recovery_points.pop(key, None)
            self._log_starts.pop(key, None)
        if gone:
            self._fsync_dirs()
            self.checkpoint()
            self.cleaner.forget(gone)
        return len(gone)

    def _delete_dir(self, dir: Path) -> None:
        doomed = dir.with_name(f"{dir.name}.{uuid.uuid4().hex}-delete")
        try:
            os.replace(dir, doomed)
        except OSError:
            doomed = dir
        if self.defer_dir_removal and doomed != dir:
            self._doomed_dirs.append(doomed)
        else:
            shutil.rmtree(doomed, ignore_errors=True)

    def partition_dir(self, topic: str, partition: int) -> Path:
        """Where the partition's log is (or will be)."""
        with self._open_lock:
            plog = self._logs.get((topic, partition))
            if plog is not None:
                return plog.dir
            path = self._unopened.get((topic, partition))
        if path is not None:
            return Path(path)
        return (self._existing_dir(topic, partition)
                or self.data_dir / partition_dir_name(topic, partition))

    def swap_in_future(self, topic: str, partition: int, future: Path) -> PartitionLog:
        """Replaces the partition's log by its copy in ``future`` (another log dir's
        ``-future`` directory, filled by pykafkad.log.dir_move.copy_files): the current log is
        closed, the copy caught up, the current directory renamed ``-delete`` and removed, the
        future one renamed to the partition's name and opened.  Runs on the broker's thread,
        so no append happens in between."""
        from pykafkad.log.dir_move import catch_up

        key = (topic, partition)
        with self._open_lock:
            current = self.get(topic, partition)
            if current is None:
                raise KafkaStorageError(f"no log for {topic}-{partition} to move")
            hw = current.high_watermark if current.high_watermark_managed else None
            leo, start = current.log_end_offset, current.log_start_offset
            current.close()
            catch_up(current.dir, future)
            final = future.parent / partition_dir_name(topic, partition)
            self._logs.pop(key, None)
            self._delete_dir(current.dir)
            os.replace(future, final)
            fsync_dir(final.parent)
            plog = PartitionLog.open(final, current.config, self.clock,
                                     recovery_point=leo, log_start_offset=start)
            plog.update_high_watermark(hw)
            self._register(key, plog)
            if self.on_open is not None:
                self.on_open(plog)
        self.checkpoint()
        return plog

    def mark_stray(self, keys) -> list[Path]:
        """Sets aside logs this broker no longer hosts (Kafka's stray replicas, found against
        the first metadata image after a restart): each is closed and its directory renamed
        ``<topic>-<partition>.<uuid>-stray``, never loaded again and never deleted, as
        Kafka 4.4 keeps them. Returns the new directories."""
        keys = list(keys)
        moved = []
        with self._open_lock:
            for key in keys:
                plog = self._logs.pop(key, None)
                if plog is not None:
                    plog.close()
                    path = plog.dir
                elif key in self._unopened:
                    path = Path(self._unopened.pop(key))
                else:
                    continue
                self._fresh.discard(key)
                self._dirless.pop(key, None)
                self._recovery_points.pop(key, None)
                self._log_starts.pop(key, None)
                if not path.is_dir():
                    continue
                stray = path.with_name(f"{path.name}.{uuid.uuid4().hex}-stray")
                os.replace(path, stray)
                log.warning("Log in %s marked stray and renamed to %s", path, stray)
                moved.append(stray)
        if moved:
            self._fsync_dirs()
            self.checkpoint()
            self.cleaner.forget(keys)
        return moved

    def remove_partitions(self, topic: str, partitions) -> None:
        """Closes and forgets the given partitions' logs (a rolled-back creation); their
        directories are the caller's to remove."""
        for p in partitions:
            with self._open_lock:
                self._unopened.pop((topic, p), None)
                self._fresh.discard((topic, p))
                self._dirless.pop((topic, p), None)
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
        write_offsets(self.data_dir / RECOVERY_POINT_CHECKPOINT, self._recovery_point_offsets())
        self._write_log_start_offsets()

    def _recovery_point_offsets(self, *, closing: bool = False) -> dict[tuple[str, int], int]:
        """Opened logs' recovery points (their ends once closed); an unopened log keeps what
        the previous run checkpointed, as nothing was written to it."""
        offsets = {k: self._recovery_points[k] for k in self._unopened if k in self._recovery_points}
        for k, plog in self._logs.items():
            offsets[k] = plog.log_end_offset if closing else plog.recovery_point
        return offsets

    def close(self) -> None:
        """Closes every log, checkpoints, then writes the clean-shutdown marker."""
        if self._closed:
            return
        self.make_dirs()  # a clean shutdown leaves every partition's directory
        for plog in self._logs.values():
            plog.close()
            _fsync_active_segment(plog)
        # Everything is on disk now: each log's recovery point is its end.
        write_offsets(
            self.data_dir / RECOVERY_POINT_CHECKPOINT, self._recovery_point_offsets(closing=True)
        )
        self._write_log_start_offsets()
        self._closed = True
        unrecovered = len(self._unopened) - len(self._fresh)
        if unrecovered and not self.had_clean_shutdown:
            # these logs were never recovered from the crash before this run: no marker, so
            # the next start recovers them (and the others from their recovery points)
            log.info("%d logs were not opened since an unclean shutdown; the next start "
                     "recovers them", unrecovered)
            return
        atomic_write(
            self.data_dir / CLEAN_SHUTDOWN_FILE,
            json.dumps({"version": "0", "broker_epoch": str(self.broker_epoch)}).encode(),
        )

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
        offsets = {k: self._log_starts[k] for k in self._unopened if k in self._log_starts}
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
