"""Kafka's ControllerServer and the QuorumController's event loop around the synchronous
``pykafkad.controller.QuorumController``.

Every committed record of the metadata log is replayed into the controller (its own raft
listener, so standbys stay warm). The controller is active once this node leads the quorum and
has replayed its log up to its own epoch's start (the raft client tells a leader's listener
only then, as Kafka's does once the LeaderChange is committed). Writes are serialized, as on
Kafka's single event queue: one operation is handled, its records appended, committed and
replayed before the next is handled. The timers (fencing expired sessions, preferred-leader
elections) are operations like any other.
"""

from __future__ import annotations

import logging
import random
from pathlib import Path
from typing import Any

import trio

from pykafkad.config.describe import describe_topic_configs
from pykafkad.controller import QuorumController
from pykafkad.controller.record_versions import record_version
from pykafkad.features import FEATURES
from pykafkad.kraft.error_responses import error_response, not_controller_message
from pykafkad.kraft.shared_server import setting
from pykafkad.log.errors import KafkaStorageError
from pykafkad.metadata.bootstrap import read_bootstrap
from pykafkad.metadata.serde import decode_record, encode_record
from pykafkad.metadata.snapshot import read_snapshot
from pykafkad.quotas.controller_mutation import ControllerMutationQuotaManager
from pykafkad.raft.machine import NotLeaderError
from wire.errors import ErrorCode
from wire.metadata import NoOpRecord

log = logging.getLogger("pykafkad.controller")

#: Kafka's QuorumController.MAX_RECORDS_PER_USER_OP (non-atomic results are cut into batches)
MAX_RECORDS_PER_BATCH = 10_000


def default_feature_levels() -> dict[str, int]:
    """A log dir formatted without bootstrap metadata gets the levels pykafkad's brokers
    finalize (pykafkad.features), as Kafka's would get its own software's defaults: Kafka
    4.4's defaults (transaction.version 2, group.version 1 ...) are ones these brokers
    cannot register under."""
    return {f.name: f.finalized for f in FEATURES if f.finalized > 0}


class ControllerServer:
    def __init__(self, shared, config, *, migration=None, rnd: random.Random | None = None):
        self.shared = shared
        self.raft = shared.raft
        self.config = config
        self.node_id = config.node_id
        self.clock = self.raft.clock
        self.rnd = rnd or random.Random()
        #: callable returning the records that carry a single-node data dir into the log
        self.migration = migration
        self.controller = self._new_controller()
        #: the raft epoch this controller is active in; -1 while standby
        self.active_epoch = -1
        self._write_lock = trio.Lock()
        self._wake = trio.Event()
        #: set (and replaced) each time committed records were replayed
        self._replayed = trio.Event()
        # auto.leader.rebalance.enable: Kafka's controller schedules its balance task after a
        # write leaves some partition off its preferred leader, leader.imbalance.check
        # .interval.seconds later (10 ms when the last run stopped at its election cap).
        # leader.imbalance.per.broker.percentage is not read: KRaft's controller ignores it.
        self.auto_rebalance = config["auto.leader.rebalance.enable"]
        self.rebalance_interval_ms = config["leader.imbalance.check.interval.seconds"] * 1000
        #: when the scheduled balance task runs; None: not scheduled
        self._next_rebalance_ms: int | None = None
        self._rebalance_immediately = False
        #: metadata.max.idle.interval.ms: an idle active controller appends a NoOpRecord
        #: this often, as Kafka's does, so that every replica's metadata offset keeps moving
        self.idle_interval_ms = setting(config, "metadata.max.idle.interval.ms", 500)
        self._last_write_ms = 0
        #: Kafka's maybeElectUncleanLeaders schedule: while some partition has no leader, an
        #: unclean election pass runs unclean.leader.election.interval.ms after the last one
        #: that elected nothing, or at once (10 ms) after one that hit its limit
        self.unclean_interval_ms = setting(config, "unclean.leader.election.interval.ms",
                                           300000)
        self._unclean_due_ms: int | None = None
        self._unclean_deferred = True
        #: controller_mutation_rate's token buckets (controller.quota.window.* size them)
        self.mutation_quotas = ControllerMutationQuotaManager(
            samples=setting(config, "controller.quota.window.num", 11),
            window_s=setting(config, "controller.quota.window.size.seconds", 1),
            clock=self.clock)
        self.raft.register_listener(self)

    #: a combined node's broker (node id, incarnation id), set by KafkaRaftServer
    local_broker: tuple[int, bytes] | None = None

    def _new_controller(self) -> QuorumController:
        c = self.config
        defaults = {}
        for key in ("min.insync.replicas", "unclean.leader.election.enable"):
            try:
                value = c[key]
            except KeyError:
                continue
            defaults[key] = str(value).lower() if isinstance(value, bool) else str(value)
        controller = QuorumController(
            self.shared.cluster_id, node_id=self.node_id, rnd=self.rnd,
            session_timeout_ms=c["broker.session.timeout.ms"],
            default_num_partitions=c["num.partitions"],
            default_replication_factor=c["default.replication.factor"],
            broker_defaults=defaults, delete_topic_enable=c["delete.topic.enable"],
            kraft_version=self.shared.kraft_version,
            quorum_node_ids=list(self.shared.voter_ids), broker_config=c,
            describe_configs=lambda overrides: describe_topic_configs(
                c, overrides, None, False, False))
        controller.cluster.local_broker = self.local_broker
        return controller

    @property
    def is_active(self) -> bool:
        return self.active_epoch >= 0

    # -- raft listener: replay ---------------------------------------------------------------
    def handle_commit(self, batch) -> None:
        self.controller.cluster.now_ms = self.clock()
        for i, value in enumerate(batch.records):
            record, _ = decode_record(value)
            self.controller.replay(record, batch.base_offset + i)
        self._replay_progressed()

    def handle_load_snapshot(self, reader) -> None:
        self.controller = self._new_controller()
        self.controller.cluster.now_ms = self.clock()
        for record in read_snapshot(Path(reader.path)).records():
            self.controller.replay(record, reader.end_offset - 1)
        self._replay_progressed()

    def _replay_progressed(self) -> None:
        """Wakes the writers waiting in ``_append`` for their records to be replayed."""
        self._replayed.set()
        self._replayed = trio.Event()

    def handle_leader_change(self, leader) -> None:
        if leader.leader_id == self.node_id:
            self._activate(leader.epoch)
        elif self.is_active:
            log.info("Renouncing the leadership due to a metadata log event. We were the "
                     "leader at epoch %d; the new leader is %d at epoch %d.",
                     self.active_epoch, leader.leader_id, leader.epoch)
            self.active_epoch = -1
        self._wake.set()

    def _activate(self, epoch: int) -> None:
        now = self.clock()
        # Kafka's ClusterControlManager.activate: the heartbeat state is rebuilt from the
        # registrations (what a write lost with an earlier leadership never happened) and
        # every registered broker's session starts now
        cluster = self.controller.cluster
        for broker_id, b in list(cluster.heartbeats.brokers.items()):
            reg = cluster.registration(broker_id)
            if reg is None:
                cluster.heartbeats.remove(broker_id)
                continue
            b.last_contact_ms = now
            b.fenced = reg.fenced
            if reg.fenced:
                b.controlled_shutdown_offset = -1
        self.active_epoch = epoch
        self._next_rebalance_ms = None
        self._rebalance_immediately = False
        log.info("Becoming the active controller at epoch %d, next write offset %d.",
                 epoch, self.raft.log.end_offset)

    # -- operations ----------------------------------------------------------------------------
    def not_controller(self, request: Any) -> Any:
        return error_response(request, ErrorCode.NOT_CONTROLLER,
                              not_controller_message(self.raft.leader_and_epoch.leader_id))

    async def submit(self, request: Any, version: int | None = None,
                     authorize: Any = None, mutator: tuple[str, str, int] | None = None) -> Any:
        """One controller API: NOT_CONTROLLER unless active, else handled on the replayed
        state, its records committed and replayed, then answered.  ``mutator``: the (user,
        client id, API key) of a CreateTopics, DeleteTopics or CreatePartitions, whose
        controller_mutation_rate applies; its throttle time is in the answer."""
        if not self.is_active:
            return self.not_controller(request)
        if "metadata.version" not in self.controller.features.finalized:
            await self._bootstrap()  # as Kafka's activation event: before any request
        async with self._write_lock:
            if not self.is_active:
                return self.not_controller(request)
            quota = None
            if mutator is not None and version is not None:
                user, client_id, api_key = mutator
                quota = self.mutation_quotas.quota_for(self.controller.client_quotas, user,
                                                       client_id, api_key, version)
            result = self.controller.handle(request, self.clock(), version=version,
                                            next_write_offset=self.raft.log.end_offset,
                                            authorize=authorize, mutation_quota=quota)
            try:
                if result.records and not await self._append(result.records, result.atomic):
                    return self.not_controller(request)
            except KafkaStorageError as e:  # the metadata log's disk is full: nothing written
                log.warning("Cannot append the records of %s: %s", type(request).__name__, e)
                return error_response(request, ErrorCode.KAFKA_STORAGE_ERROR, str(e))
            self._wake.set()  # a registration or heartbeat moves the next fencing deadline
            if quota is not None:
                result.response.throttle_time_ms = max(result.response.throttle_time_ms or 0,
                                                       quota.throttle_time_ms)
            return result.response

    async def _append(self, records: list, atomic: bool = True) -> bool:
        """Appends and waits until committed (and so replayed); False when leadership was
        lost on the way (the records may be truncated: nothing was promised)."""
        epoch = self.active_epoch
        chunks = [records] if atomic else [records[i:i + MAX_RECORDS_PER_BATCH]
                                           for i in range(0, len(records), MAX_RECORDS_PER_BATCH)]
        last = -1
        self._last_write_ms = self.clock()
        for chunk in chunks:
            try:
                last = self.raft.schedule_append(epoch, [encode_record(r, record_version(r)) for r in chunk])
            except NotLeaderError:
                self.active_epoch = -1
                return False
        while self.controller.last_replayed_offset < last:
            if self.active_epoch != epoch:
                return False
            with trio.move_on_after(0.5):
                await self.raft.wait_committed(last)
                # committed is not yet replayed: the raft client hands the batch to
                # handle_commit from its own task, which must get to run (a loop on
                # wait_committed alone, which returns without yielding, starved it)
                while self.controller.last_replayed_offset < last:
                    await self._replayed.wait()
        return True

    # -- timers ------------------------------------------------------------------------------
    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        while True:
            next_ms = None
            if self.is_active:
                try:
                    next_ms = await self._periodic()
                except Exception:
                    log.exception("a controller timer failed")
                    next_ms = self.clock() + 1000
            wait_s = 3600.0 if next_ms is None else max(0.0, (next_ms - self.clock()) / 1000)
            with trio.move_on_after(min(wait_s, 3600.0)):
                await self._wake.wait()
            self._wake = trio.Event()

    async def _periodic(self) -> int | None:
        c = self.controller
        if "metadata.version" not in c.features.finalized:
            await self._bootstrap()
        async with self._write_lock:
            while self.is_active:
                result = c.fence_stale_brokers(self.clock())
                if not result.records:
                    break
                if not await self._append(result.records):
                    return None
        if not await self._maybe_elect_unclean_leaders():
            return None
        if self.auto_rebalance and self.is_active:
            await self._maybe_balance_partition_leaders()
        if self.idle_interval_ms > 0 and self.is_active and \
                self.clock() - self._last_write_ms >= self.idle_interval_ms:
            async with self._write_lock:
                if self.is_active:
                    await self._append([NoOpRecord()])
        deadlines = [d for d in (c.next_fence_check_ms(), self._unclean_due_ms,
                                 self._next_rebalance_ms,
                                 self._last_write_ms + self.idle_interval_ms
                                 if self.idle_interval_ms > 0 else None) if d is not None]
        return min(deadlines) if deadlines else None

    async def _maybe_elect_unclean_leaders(self) -> bool:
        """Unclean elections for leaderless partitions whose topic (or the broker default)
        allows them, on Kafka's schedule; False when the controller lost its leadership."""
        if not self.is_active:
            self._unclean_due_ms, self._unclean_deferred = None, True  # renounced: cancelled
            return True
        now = self.clock()
        if self._unclean_due_ms is None:
            if self.controller.replication.leaderless_partitions():
                self._unclean_due_ms = now + (self.unclean_interval_ms if self._unclean_deferred
                                              else 10)
            return True
        if now < self._unclean_due_ms:
            return True
        self._unclean_due_ms = None
        async with self._write_lock:
            if not self.is_active:
                return True
            result = self.controller.elect_unclean_leaders()
            if result.records and not await self._append(result.records):
                return False
        self._unclean_deferred = not result.response
        if self.controller.replication.leaderless_partitions():
            self._unclean_due_ms = self.clock() + (self.unclean_interval_ms
                                                   if self._unclean_deferred else 10)
        return True

    async def _bootstrap(self) -> None:
        """The first active controller of an empty log writes the bootstrap records (the
        format's feature levels) and, once, a single-node data dir's topics."""
        async with self._write_lock:
            if not self.is_active or "metadata.version" in self.controller.features.finalized:
                return
            bootstrap = read_bootstrap(self.shared.metadata_log_dir)
            if bootstrap is not None:
                levels = bootstrap.feature_levels()
                log.info("Writing the bootstrap records from %s", bootstrap.source)
            else:
                levels = default_feature_levels()
                log.info("Writing the default bootstrap records (no bootstrap metadata found)")
            records = self.controller.bootstrap_records(levels)
            if self.migration is not None:
                records += self.migration()
            await self._append(records)

    async def _maybe_balance_partition_leaders(self) -> None:
        """Kafka's maybeScheduleNextBalancePartitionLeaders and its event: run the task when
        due, then schedule the next run while some partition is still imbalanced."""
        c = self.controller
        if self._next_rebalance_ms is not None and self.clock() >= self._next_rebalance_ms:
            self._next_rebalance_ms = None
            async with self._write_lock:
                if not self.is_active:
                    return
                result = c.balance_partition_leaders()
                log.info("maybeBalancePartitionLeaders: generated %d records.%s",
                         len(result.records),
                         " Rescheduling immediately." if result.response else "")
                self._rebalance_immediately = bool(result.response)
                if result.records and not await self._append(result.records):
                    return
        if self._next_rebalance_ms is None and c.replication.imbalanced:
            delay = 10 if self._rebalance_immediately else self.rebalance_interval_ms
            self._next_rebalance_ms = self.clock() + delay
