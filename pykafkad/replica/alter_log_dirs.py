"""Moves of replicas between a broker's log dirs (AlterReplicaLogDirs), as Kafka's
ReplicaAlterLogDirsManager does them: the future log is filled in the target dir while the
current one keeps serving, then swapped in, and the controller is told the replica's new dir
(AssignReplicasToDirs).  While a move runs, DescribeLogDirs shows the future replica
(``is_future_key``) in the target dir."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

import trio

from pykafkad.log.dir_move import copy_files, future_dir

log = logging.getLogger("pykafkad.replica.alter_log_dirs")


class ReplicaAlterLogDirsManager:
    def __init__(self, broker: Any):
        self.broker = broker
        #: (topic, partition) -> its future directory while a move is under way
        self.futures: dict[tuple[str, int], Path] = {}
        #: the offset each future log holds records up to (its log end offset)
        self.future_ends: dict[tuple[str, int], int] = {}
        #: moves finished (tests)
        self.moves_done = 0

    @classmethod
    def of(cls, broker: Any) -> ReplicaAlterLogDirsManager:
        mover = getattr(broker, "log_dir_mover", None)
        if mover is None:
            mover = broker.log_dir_mover = cls(broker)
        return mover

    def start(self, topic: str, partition: int, target: Path) -> None:
        """Starts moving the replica's log to ``target`` (one of the broker's log dirs); a
        move of it under way already goes on."""
        key = (topic, partition)
        if key in self.futures:
            return
        future = future_dir(target, topic, partition)
        self.futures[key] = future
        trio.lowlevel.spawn_system_task(self._move, topic, partition, future)

    async def _move(self, topic: str, partition: int, future: Path) -> None:
        logs = self.broker.logs
        try:
            current = logs.get(topic, partition)
            if current is None:
                raise FileNotFoundError(f"no log for {topic}-{partition}")
            key = (topic, partition)
            self.future_ends[key] = current.log_start_offset  # empty yet
            copied_to = current.log_end_offset
            await trio.to_thread.run_sync(copy_files, current.dir, future)
            self.future_ends[key] = copied_to
            plog = logs.swap_in_future(topic, partition, future)
            hosted = self.broker.replicas.hosted(topic, partition)
            if hosted is not None:
                hosted.log = plog
            self.moves_done += 1
            log.info("moved %s-%d to %s", topic, partition, plog.dir.parent)
            self._report(topic, partition, plog.dir.parent)
        except BaseException as e:  # a system task must not raise: the move is given up
            if isinstance(e, trio.Cancelled):
                raise
            log.exception("moving %s-%d to %s failed", topic, partition, future.parent)
            shutil.rmtree(future, ignore_errors=True)
        finally:
            self.futures.pop((topic, partition), None)
            self.future_ends.pop((topic, partition), None)

    def offset_lag(self, topic: str, partition: int) -> int:
        """How far the future log trails the current one (Kafka's offsetLag of a future
        replica: the current log end offset minus the future's)."""
        current = self.broker.logs.get(topic, partition)
        end = self.future_ends.get((topic, partition), 0)
        return max(0, current.log_end_offset - end) if current is not None else 0

    def _report(self, topic: str, partition: int, new_dir: Path) -> None:
        assignments = getattr(self.broker, "assignments", None)
        t = self.broker.topics.get(topic)
        ids = {Path(d.path): d.directory_id for d in getattr(self.broker, "log_dirs", ())}
        dir_id = ids.get(Path(new_dir))
        if assignments is not None and t is not None and dir_id is not None:
            assignments.assign(t.topic_id, partition, dir_id)
