"""Kafka's AssignmentsManager: sends AssignReplicasToDirs to the active controller for each
local replica whose log dir differs from the one the metadata names (a new replica on a broker
with several log dirs, which the controller leaves UNASSIGNED; or a replica moved between dirs
by AlterReplicaLogDirs).  Queued assignments go in one request; an unanswered request is sent
again (a newer assignment of the same partition replaces the queued one)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import trio

from wire.errors import ErrorCode
from wire.messages.assign_replicas_to_dirs_request import (
    AssignReplicasToDirsRequest,
    DirectoryData,
    PartitionData,
    TopicData,
)

log = logging.getLogger("pykafkad.kraft.assignments")

RETRY_BACKOFF_S = 0.1
RETRIABLE = {ErrorCode.NOT_CONTROLLER, ErrorCode.UNKNOWN_SERVER_ERROR,
             ErrorCode.REQUEST_TIMED_OUT, ErrorCode.STALE_BROKER_EPOCH}


class AssignmentsManager:
    def __init__(self, channel: Any, broker_id: int, broker_epoch: Callable[[], int], *,
                 request_timeout_s: float = 30.0):
        self.channel = channel
        self.broker_id = broker_id
        self.broker_epoch = broker_epoch
        self.request_timeout_s = request_timeout_s
        #: (topic id, partition) -> directory id
        self._unsent: dict[tuple[bytes, int], bytes] = {}
        self._wake = trio.Event()
        #: requests sent (tests)
        self.requests_sent = 0

    def assign(self, topic_id: bytes, partition: int, directory_id: bytes) -> None:
        self._unsent[(topic_id, partition)] = directory_id
        self._wake.set()

    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        while True:
            if not self._unsent or self.broker_epoch() < 0:
                await self._wake.wait()
                self._wake = trio.Event()
                if self.broker_epoch() < 0:  # not registered yet
                    await trio.sleep(RETRY_BACKOFF_S)
                    self._wake.set()
                continue
            batch, self._unsent = self._unsent, {}
            try:
                answered = await self._send(batch)
            except Exception:  # a bug here must not stop the broker
                log.exception("AssignReplicasToDirs for %d partitions failed", len(batch))
                continue
            if not answered:
                for key, item in batch.items():
                    self._unsent.setdefault(key, item)
                await trio.sleep(RETRY_BACKOFF_S)

    def _request(self, batch: dict) -> AssignReplicasToDirsRequest:
        by_dir: dict[bytes, dict[bytes, list[int]]] = {}
        for (topic_id, index), dir_id in batch.items():
            by_dir.setdefault(dir_id, {}).setdefault(topic_id, []).append(index)
        return AssignReplicasToDirsRequest(
            broker_id=self.broker_id, broker_epoch=self.broker_epoch(),
            directories=[DirectoryData(id=d, topics=[
                TopicData(topic_id=t, partitions=[PartitionData(partition_index=p)
                                                  for p in sorted(ps)])
                for t, ps in topics.items()]) for d, topics in by_dir.items()])

    async def _send(self, batch: dict) -> bool:
        """Whether the request was answered (partitions refused are logged and dropped, as
        Kafka drops them)."""
        self.requests_sent += 1
        try:
            response = await self.channel.send(self._request(batch),
                                               timeout_s=self.request_timeout_s)
        except (trio.TooSlowError, OSError) as e:
            log.info("AssignReplicasToDirs failed: %r; retrying", e)
            return False
        if response.error_code in RETRIABLE:
            log.info("AssignReplicasToDirs answered %s; retrying",
                     ErrorCode(response.error_code).name)
            return False
        if response.error_code:
            log.warning("AssignReplicasToDirs answered %s", ErrorCode(response.error_code).name)
            return True
        for d in response.directories:
            for t in d.topics:
                for p in t.partitions:
                    if p.error_code:
                        log.info("AssignReplicasToDirs of partition %d: %s", p.partition_index,
                                 ErrorCode(p.error_code).name)
        return True
