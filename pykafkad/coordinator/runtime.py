"""The group coordinator as the broker runs it: trio waits and timer wakeups around the
synchronous ``GroupCoordinator``.

A parked JoinGroup/SyncGroup awaits a trio event that the state machine sets when it answers
(never a sleep loop); one background task sleeps until the earliest coordinator deadline and is
woken early when a nearer one is scheduled.  Due timers also run before and after every
request, so a request always sees the state the clock implies (which also lets tests move a
fake clock and observe the effect on the next request).  Everything runs on the broker's trio
thread, so no locks are needed; a waiting JoinGroup blocks only its own connection.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import trio

from pykafkad.coordinator.config import GroupCoordinatorConfig
from pykafkad.coordinator.consumer_group.manager import ConsumerGroupSettings
from pykafkad.coordinator.coordinator import GroupCoordinator
from pykafkad.coordinator.group import JoinResult, Pending, SyncResult
from pykafkad.coordinator.membership import JoinRequest, SyncRequest
from pykafkad.coordinator.storage import OffsetsTopicStorage
from pykafkad.coordinator.streams_group.coordinator import StreamsConfig
from wire.errors import ErrorCode

log = logging.getLogger("pykafkad.coordinator")

#: slack on top of the longest legitimate wait before a parked request is given up on
_GUARD_SLACK_MS = 10_000


class BrokerTopics:
    """The broker's topics as the consumer groups see them (subscriptions, regexes)."""

    def __init__(self, broker: Any):
        self.broker = broker

    def lookup(self, name: str) -> tuple[bytes, int] | None:
        topic = self.broker.topics.get(name)
        return None if topic is None else (topic.topic_id, topic.num_partitions)

    def name_of(self, topic_id: bytes) -> str | None:
        topic = self.broker.topics.by_id.get(topic_id)
        return None if topic is None else topic.name

    def names(self):
        return list(self.broker.topics.topics)

    def _image(self):
        return getattr(getattr(self.broker, "metadata_cache", None), "image", None)

    def partition_racks(self, name: str) -> list[list[str]]:
        topic = self.broker.topics.get(name)
        cache = getattr(self.broker, "metadata_cache", None)
        if topic is None or cache is None:
            return []
        image = self._image()
        if image is not None:
            racks = {node: b.rack for node, b in image.cluster.items()}
        else:  # one node: every replica is this broker
            racks = {None: self.broker.config["broker.rack"]}
        out = []
        for p in range(topic.num_partitions):
            replicas = cache.partition(name, p).replicas
            found = [racks.get(r if image is not None else None) for r in replicas]
            out.append([r for r in found if r])
        return out

    def metadata_offset(self) -> int:
        image = self._image()
        return max(image.offset, 0) if image is not None else 0


class GroupCoordinatorService:
    def __init__(self, broker: Any, leader_epoch: int):
        self.broker = broker
        self.clock = broker.clock
        self.config = GroupCoordinatorConfig.from_broker(broker.config)
        self.storage = OffsetsTopicStorage(broker, self.config, leader_epoch)
        self.coordinator = GroupCoordinator(self.config, self.storage, self.clock)
        self.coordinator.streams.config = StreamsConfig.from_broker(broker.config)
        self.coordinator.streams.partitions_of = self._partitions_of
        group_configs = getattr(broker, "group_configs", None)
        if group_configs is not None:
            self.coordinator.streams.group_config = group_configs.get
            self.coordinator.consumer_groups.group_config = group_configs.get
        consumer_groups = self.coordinator.consumer_groups
        consumer_groups.settings = ConsumerGroupSettings.from_broker(broker.config)
        consumer_groups.topics = BrokerTopics(broker)
        self.coordinator.load()
        self._wake = trio.Event()
        self._sleep_until = math.inf
        self.coordinator.timer.on_schedule = self._on_schedule
        self.closed = False
        txn = getattr(broker, "txn_coordinator", None)
        if txn is not None:
            txn.offsets_marker_listeners.append(self.on_transaction_marker)

    # -- the topic -----------------------------------------------------------------------------
    def ensure_ready(self) -> None:
        """FindCoordinator for a group: creates __consumer_offsets on first use, as Kafka."""
        self.storage.ensure_topic()

    def _partitions_of(self, topic: str) -> int | None:
        t = self.broker.topics.get(topic)
        return None if t is None else t.num_partitions

    def partition_for(self, group_id: str) -> int:
        return self.storage.partition_for(group_id)

    # -- timers --------------------------------------------------------------------------------
    def _on_schedule(self, deadline: int) -> None:
        if deadline < self._sleep_until:
            self._wake.set()

    def poll(self) -> None:
        """Runs every due timer (a bug in one is logged, never fatal to the broker)."""
        try:
            self.coordinator.timer.run_due()
        except Exception:
            log.exception("group coordinator timer failed")

    async def run_timers(self) -> None:
        """The background task: sleeps until the next deadline, or until woken for an earlier
        one."""
        while not self.closed:
            self.poll()
            deadline = self.coordinator.timer.next_deadline()
            self._wake = trio.Event()
            if deadline is None:
                self._sleep_until = math.inf
                await self._wake.wait()
                continue
            self._sleep_until = deadline
            with trio.move_on_after(max(0, deadline - self.clock()) / 1000):
                await self._wake.wait()

    def shutdown(self) -> None:
        """Answers every parked JoinGroup/SyncGroup with NOT_COORDINATOR (the members find the
        coordinator again after the restart) and stops the timers."""
        self.closed = True
        self.coordinator.unload()
        self._wake.set()

    async def _wait(self, pending: Pending, guard_ms: int, timed_out):
        if not pending.done:
            event = trio.Event()
            pending.add_done_callback(lambda _: event.set())
            with trio.move_on_after(guard_ms / 1000):
                await event.wait()
        if pending.done:
            return pending.value
        log.warning("a parked group request outlived every coordinator timer; answering %s",
                    timed_out.error)
        return timed_out

    # -- membership ----------------------------------------------------------------------------
    async def join_group(self, req: JoinRequest) -> JoinResult:
        self.poll()
        code = ErrorCode.NOT_COORDINATOR if self.closed else \
            self.coordinator.unavailable_error(req.group_id)
        if code:
            return JoinResult(code, member_id=req.member_id)
        pending = self.coordinator.join_group(req)
        self.poll()
        guard = (2 * max(req.rebalance_timeout_ms, req.session_timeout_ms)
                 + self.config.new_member_join_timeout_ms + _GUARD_SLACK_MS)
        return await self._wait(pending, guard, JoinResult(
            ErrorCode.REBALANCE_IN_PROGRESS, member_id=req.member_id))

    async def sync_group(self, req: SyncRequest) -> SyncResult:
        self.poll()
        code = ErrorCode.NOT_COORDINATOR if self.closed else \
            self.coordinator.unavailable_error(req.group_id)
        if code:
            return SyncResult(code)
        pending = self.coordinator.sync_group(req)
        self.poll()
        group = self.coordinator.groups.get(req.group_id)
        rebalance_ms = group.rebalance_timeout_ms() if group is not None else 0
        return await self._wait(pending, 2 * rebalance_ms + _GUARD_SLACK_MS,
                                SyncResult(ErrorCode.REBALANCE_IN_PROGRESS))

    def call(self, op, *args, **kwargs):
        """Runs a synchronous coordinator operation with due timers run before and after."""
        self.poll()
        try:
            return op(*args, **kwargs)
        finally:
            self.poll()

    # -- transactions (hooks for the transaction coordinator) ---------------------------------
    def on_transaction_marker(self, producer_id: int, producer_epoch: int, committed: bool,
                              partitions: list[int]) -> None:
        """Markers reached __consumer_offsets: the producer's pending offsets become committed
        offsets, or are dropped."""
        self.coordinator.offsets.replay_end_transaction(producer_id, committed)

    def on_topic_deleted(self, topic: str) -> None:
        self.call(self.coordinator.on_topic_deleted, topic)
