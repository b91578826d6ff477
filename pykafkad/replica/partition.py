"""One partition as this broker hosts it (Kafka's ``kafka.cluster.Partition``): who leads it
in which epoch, its replicas and ISR, the high watermark, the leader-only checks and appends,
and the leader's view of its followers (their fetch positions, ISR expand / shrink).

The log (``PartitionLog``) stores; this object decides.  Every ISR change goes out through
the injected ``alter_partition`` callback (Kafka's AlterPartitionManager): it returns the
committed state, or None while the change is in flight (then ``complete_alter_partition``
brings the answer).  Single-threaded: the broker calls it from its trio thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import trio

from pykafkad.log.errors import OffsetOutOfRangeError
from pykafkad.log.partition import AppendInfo, PartitionLog, ReadResult
from pykafkad.log.record_validation import RecordPolicy, validate_records
from pykafkad.metadata.partition import PartitionRegistration
from wire.errors import ErrorCode, KafkaError
from wire.records.batch import validate_produce_records

#: Kafka's UnifiedLog.UnknownOffset: a follower that has not fetched since this leadership
UNKNOWN_OFFSET = -1
#: FetchIsolation: what a read may reach
LOG_END, HIGH_WATERMARK, TXN_COMMITTED = 0, 1, 2


@dataclass(frozen=True)
class AlterPartitionResult:
    """What the controller committed for an AlterPartition (Kafka's LeaderAndIsr)."""

    isr: list[int]
    leader_epoch: int
    partition_epoch: int


#: ``alter_partition(partition, new_isr, leader_epoch, partition_epoch)``
AlterPartition = Callable[["Partition", list[int], int, int], "AlterPartitionResult | None"]


def apply_locally(partition: Partition, new_isr: list[int], leader_epoch: int,
                  partition_epoch: int) -> AlterPartitionResult:
    """Single-node mode's AlterPartition: the change is committed as asked (the controller
    would bump the partition epoch)."""
    return AlterPartitionResult(list(new_isr), leader_epoch, partition_epoch + 1)


class Wakeup:
    """Wakes whoever waits for a change; costs nothing while no one waits (an append must not
    pay for a trio.Event when no fetch or produce is parked)."""

    __slots__ = ("_event",)

    def __init__(self) -> None:
        self._event: trio.Event | None = None

    def fire(self) -> None:
        event, self._event = self._event, None
        if event is not None:
            event.set()

    async def wait(self, deadline: float) -> bool:
        """Until the next ``fire`` (True) or ``deadline`` in trio time (False)."""
        if self._event is None:
            self._event = trio.Event()
        event = self._event
        with trio.move_on_at(deadline):
            await event.wait()
        return event.is_set()


class FollowerState:
    """The leader's view of one follower (Kafka's Replica / ReplicaState)."""

    __slots__ = ("broker_id", "log_end_offset", "log_start_offset", "last_fetch_leader_log_end_offset",
                 "last_fetch_time_ms", "last_caught_up_time_ms", "broker_epoch")

    def __init__(self, broker_id: int):
        self.broker_id = broker_id
        self.reset(0, in_sync=False)

    def reset(self, now_ms: int, *, in_sync: bool) -> None:
        """A new leadership: nothing is known of the follower; one in the ISR counts as caught
        up now, any other as never (so it does not hold the HW back)."""
        self.log_end_offset = UNKNOWN_OFFSET
        self.log_start_offset = UNKNOWN_OFFSET
        self.last_fetch_leader_log_end_offset = UNKNOWN_OFFSET
        self.last_fetch_time_ms = 0
        self.last_caught_up_time_ms = now_ms if in_sync else 0
        self.broker_epoch = -1

    def update_fetch_state(self, fetch_offset: int, log_start_offset: int, fetch_time_ms: int,
                           leader_end_offset: int, broker_epoch: int) -> None:
        """Kafka's Replica.updateFetchStateOrThrow: the follower caught up at this fetch when it
        reached the leader's end, or at its previous fetch when it reached the end the leader
        had then."""
        if fetch_offset >= leader_end_offset:
            self.last_caught_up_time_ms = max(self.last_caught_up_time_ms, fetch_time_ms)
        elif fetch_offset >= self.last_fetch_leader_log_end_offset:
            self.last_caught_up_time_ms = max(self.last_caught_up_time_ms, self.last_fetch_time_ms)
        self.last_fetch_leader_log_end_offset = leader_end_offset
        self.last_fetch_time_ms = fetch_time_ms
        self.log_end_offset = fetch_offset
        self.log_start_offset = log_start_offset
        self.broker_epoch = broker_epoch

    def is_caught_up(self, leader_end_offset: int, now_ms: int, max_lag_ms: int) -> bool:
        return (leader_end_offset == self.log_end_offset
                or now_ms - self.last_caught_up_time_ms <= max_lag_ms)


class Partition:
    """One hosted partition; ``log`` is its local log."""

    def __init__(
        self,
        topic: str,
        index: int,
        topic_id: bytes,
        local_broker_id: int,
        log: PartitionLog,
        *,
        clock: Callable[[], int],
        replica_lag_time_max_ms: Callable[[], int] | int = 30000,
        topic_config: Callable[[], Any] | None = None,
        alter_partition: AlterPartition = apply_locally,
    ):
        self.topic = topic
        self.index = index
        self.topic_id = topic_id
        self.local_broker_id = local_broker_id
        self.log = log
        self.clock = clock
        self._lag_ms = replica_lag_time_max_ms
        #: the topic's effective configs (min.insync.replicas, max.message.bytes, policies)
        self.topic_config = topic_config
        self.alter_partition = alter_partition
        self.leader_id: int | None = None
        self.leader_epoch = -1
        self.partition_epoch = -1
        self.replicas: list[int] = []
        self.isr: list[int] = []
        self.adding_replicas: list[int] = []
        self.removing_replicas: list[int] = []
        #: the ISR asked for and not yet committed (Kafka's PendingPartitionChange)
        self.pending_isr: list[int] | None = None
        #: the offset this leader epoch began at
        self.leader_epoch_start_offset: int | None = None
        self.followers: dict[int, FollowerState] = {}
        #: fired whenever the HW, ISR or leadership changes: acks=all produces wait on it
        self.changed = Wakeup()
        #: called after the HW moved (the manager wakes consumers' long polls)
        self.on_high_watermark: Callable[[Partition], None] | None = None
        #: called after an append as leader (the manager wakes followers' long polls)
        self.on_append: Callable[[], None] | None = None
        #: Kafka's isReplicaIsrEligible (KIP-841): a fenced broker, or one in controlled
        #: shutdown, is not added to the ISR (the metadata layer says; single node: all are)
        self.is_replica_isr_eligible: Callable[[int], bool] = lambda _replica_id: True

    def __repr__(self) -> str:
        return (f"Partition({self.topic}-{self.index}, leader={self.leader_id}, "
                f"epoch={self.leader_epoch}, isr={self.isr}, hw={self.high_watermark})")

    # -- state ---------------------------------------------------------------------------------
    @property
    def is_leader(self) -> bool:
        return self.leader_id == self.local_broker_id

    @property
    def high_watermark(self) -> int:
        return self.log.high_watermark

    @property
    def log_start_offset(self) -> int:
        return self.log.log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self.log.log_end_offset

    @property
    def last_stable_offset(self) -> int:
        return self.log.last_stable_offset

    @property
    def maximal_isr(self) -> list[int]:
        """The committed ISR widened by an expansion in flight (KIP-497: waiting for more
        replicas is always safe); a shrink in flight still counts the old members."""
        if self.pending_isr is None:
            return self.isr
        return self.isr + [r for r in self.pending_isr if r not in self.isr]

    @property
    def replica_lag_time_max_ms(self) -> int:
        lag = self._lag_ms
        return lag() if callable(lag) else lag

    def min_insync_replicas(self) -> int:
        """Kafka's effectiveMinIsr: min.insync.replicas capped at the replication factor."""
        configured = self.topic_config()["min.insync.replicas"] if self.topic_config else 1
        return min(configured, len(self.followers) + 1)

    def _changed(self) -> None:
        self.changed.fire()

    # -- leadership ----------------------------------------------------------------------------
    def make_leader(self, registration: PartitionRegistration) -> bool:
        """Becomes leader as Kafka's Partition.makeLeader does; a registration older than the
        partition epoch already known is skipped (False).  A new leader epoch starts an entry
        in the leader epoch cache at the log end, and resets the followers' state."""
        if registration.partition_epoch < self.partition_epoch:
            return False
        now = self.clock()
        is_new_epoch = registration.leader_epoch > self.leader_epoch
        self._update_assignment(registration, is_leader=True)
        if is_new_epoch:
            start = self.log.log_end_offset
            latest = self.log.latest_epoch
            if latest is None or registration.leader_epoch > latest:
                self.log.assign_epoch(registration.leader_epoch, start)
            self.leader_epoch_start_offset = start
            for replica_id, state in self.followers.items():
                state.reset(now, in_sync=replica_id in self.isr)
        self.leader_id = registration.leader
        self.leader_epoch = registration.leader_epoch
        self.partition_epoch = registration.partition_epoch
        if not self.log.high_watermark_managed:  # no HW checkpoint: keep what was served
            self.log.update_high_watermark(self.log.high_watermark)
        self.maybe_increment_leader_hw(now)
        self._changed()
        return True

    def make_follower(self, registration: PartitionRegistration) -> bool:
        """Becomes a follower of ``registration.leader`` (Kafka's makeFollower); the fetcher
        (another component) does the fetching.  False for a stale registration."""
        if registration.partition_epoch < self.partition_epoch:
            return False
        self._update_assignment(registration, is_leader=False)
        self.leader_id = registration.leader if registration.leader >= 0 else None
        self.leader_epoch = registration.leader_epoch
        self.partition_epoch = registration.partition_epoch
        self.leader_epoch_start_offset = None
        if not self.log.high_watermark_managed:
            self.log.update_high_watermark(self.log.high_watermark)
        self._changed()
        return True

    def _update_assignment(self, registration: PartitionRegistration, *, is_leader: bool) -> None:
        self.replicas = list(registration.replicas)
        self.isr = list(registration.isr)
        self.adding_replicas = list(registration.adding_replicas)
        self.removing_replicas = list(registration.removing_replicas)
        self.pending_isr = None
        if is_leader:
            wanted = [r for r in self.replicas if r != self.local_broker_id]
            self.followers = {r: self.followers.get(r) or FollowerState(r) for r in wanted}
        else:
            self.followers = {}

    # -- leader-only checks --------------------------------------------------------------------
    def check_current_leader_epoch(self, current_leader_epoch: int) -> int:
        """Kafka's checkCurrentLeaderEpoch: -1 skips; older than ours is fenced, newer unknown."""
        if current_leader_epoch < 0 or current_leader_epoch == self.leader_epoch:
            return ErrorCode.NONE
        if current_leader_epoch < self.leader_epoch:
            return ErrorCode.FENCED_LEADER_EPOCH
        return ErrorCode.UNKNOWN_LEADER_EPOCH

    def local_log_with_epoch(self, current_leader_epoch: int = -1, *,
                             require_leader: bool = True) -> PartitionLog:
        """The log, after the epoch check and (``require_leader``) the leader check, in Kafka's
        order; raises KafkaError."""
        error = self.check_current_leader_epoch(current_leader_epoch)
        if error:
            raise KafkaError(error)
        if require_leader and not self.is_leader:
            raise KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        return self.log

    def _leader_log(self) -> PartitionLog:
        if not self.is_leader:
            raise KafkaError(
                ErrorCode.NOT_LEADER_OR_FOLLOWER,
                f"Leader not local for partition {self.topic}-{self.index} on broker "
                f"{self.local_broker_id}")
        return self.log

    # -- appends -------------------------------------------------------------------------------
    def append_records_to_leader(
        self,
        records: bytes | memoryview,
        required_acks: int,
        *,
        allow_zstd: bool = True,
        now_ms: int | None = None,
        verify_transaction: Callable[[Any], int] | None = None,
        before_append: Callable[[Any], None] | None = None,
    ) -> AppendInfo:
        """A Produce's batch for this partition, as Kafka's leader takes it: the leader check,
        min.insync.replicas for acks=all (NOT_ENOUGH_REPLICAS before anything is written), the
        batch checks and LogValidator's record rules, the producer's sequence and epoch, the
        transaction verification (``verify_transaction(header)`` returns an error code), the
        append in this leader epoch, then the high watermark.  Raises KafkaError."""
        plog = self._leader_log()
        config = self.topic_config() if self.topic_config else None
        min_isr = self.min_insync_replicas() if required_acks == -1 else 1
        if len(self.isr) < min_isr:
            raise KafkaError(
                ErrorCode.NOT_ENOUGH_REPLICAS,
                f"The size of the current ISR {set(self.isr)} is insufficient to satisfy the "
                f"min.isr requirement of {min_isr} for partition {self.topic}-{self.index}")
        if not records:
            raise KafkaError(ErrorCode.INVALID_RECORD, None)  # Kafka: no message
        header = validate_produce_records(
            records, max_size=config["max.message.bytes"] if config else None,
            allow_zstd=allow_zstd)
        if len(records) > header.size:  # a trailing partial batch: dropped, as Kafka
            records = records[:header.size]
        now = self.clock() if now_ms is None else now_ms
        if config is not None:
            records, header = validate_records(
                records, header, RecordPolicy.from_topic_config(config), now,
                f"{self.topic}-{self.index}")
        if before_append is not None:
            before_append(header)
        if (header.producer_id >= 0 and header.is_transactional
                and verify_transaction is not None
                and not plog.producer_state.has_ongoing_txn(
                    header.producer_id, header.producer_epoch)):
            error = verify_transaction(header)
            if error:
                raise KafkaError(
                    error, f"the partition {self.topic}-{self.index} is not part of an ongoing "
                           "transaction of this producer")
        info = plog.append_produced(records, header, self.leader_epoch, now_ms=now)
        if not info.duplicate:
            self._appended(now)
        return info

    def _appended(self, now_ms: int | None = None) -> None:
        if self.on_append is not None:
            self.on_append()
        self.maybe_increment_leader_hw(now_ms)

    def _check_min_isr(self, required_acks: int) -> None:
        """Kafka's appendRecordsToLeader check for acks=all, before anything is written."""
        min_isr = self.min_insync_replicas()
        if required_acks == -1 and len(self.isr) < min_isr:
            raise KafkaError(
                ErrorCode.NOT_ENOUGH_REPLICAS,
                f"The size of the current ISR {set(self.isr)} is insufficient to satisfy the "
                f"min.isr requirement of {min_isr} for partition {self.topic}-{self.index}")

    def append_as_leader(self, batch: bytes, *, now_ms: int | None = None,
                         required_acks: int = 1) -> AppendInfo:
        """A coordinator's own batch (already built and valid) for an internal topic;
        ``required_acks`` -1: the ISR must satisfy min.insync.replicas (the caller then waits
        for the HW with ``ReplicaManager.wait_for_acks``)."""
        plog = self._leader_log()
        self._check_min_isr(required_acks)
        info = plog.append(batch, self.leader_epoch, now_ms=now_ms)
        self._appended()
        return info

    def append_marker(self, batch: bytes, kind: int, producer_id: int, producer_epoch: int,
                      coordinator_epoch: int, *, now_ms: int | None = None,
                      required_acks: int = 1) -> AppendInfo:
        """A transaction marker (WriteTxnMarkers) in this leader epoch."""
        plog = self._leader_log()
        self._check_min_isr(required_acks)
        info = plog.append_marker(
            batch, kind, producer_id, producer_epoch, coordinator_epoch, self.leader_epoch,
            now_ms=now_ms)
        self._appended()
        return info

    def check_enough_replicas_reach_offset(self, required_offset: int) -> tuple[bool, int]:
        """Kafka's checkEnoughReplicasReachOffset, for an acks=all produce: done once the HW
        reached ``required_offset``; NOT_ENOUGH_REPLICAS_AFTER_APPEND if by then the ISR is
        below min.insync.replicas."""
        if not self.is_leader:
            return False, ErrorCode.NOT_LEADER_OR_FOLLOWER
        if self.log.high_watermark >= required_offset:
            if self.min_insync_replicas() <= len(self.maximal_isr):
                return True, ErrorCode.NONE
            return True, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND
        return False, ErrorCode.NONE

    # -- high watermark ------------------------------------------------------------------------
    def is_under_min_isr(self) -> bool:
        return self.is_leader and len(self.isr) < self.min_insync_replicas()

    def maybe_increment_leader_hw(self, now_ms: int | None = None) -> bool:
        """Kafka's maybeIncrementLeaderHW: the HW is the least log end offset over the
        (maximal) ISR and the followers caught up within replica.lag.time.max.ms that may join
        it (KIP-841: not a fenced broker, nor one in controlled shutdown); it does not move
        while the ISR is below min.insync.replicas.  Whether it moved."""
        if not self.is_leader or (self.followers and self.is_under_min_isr()):
            return False  # (no followers: the leader alone is always enough)
        now = self.clock() if now_ms is None else now_ms
        leo = self.log.log_end_offset
        new_hw = leo
        maximal = self.maximal_isr
        lag = self.replica_lag_time_max_ms
        for replica_id, state in self.followers.items():
            # a fenced follower (dead, its session over) is waited for no longer, even within
            # replica.lag.time.max.ms of its last fetch, as Kafka's isReplicaIsrEligible says
            if state.log_end_offset < new_hw and (replica_id in maximal or (
                    state.is_caught_up(leo, now, lag)
                    and self.is_replica_isr_eligible(replica_id))):
                new_hw = state.log_end_offset
        if new_hw < 0 or not self.log.maybe_increment_high_watermark(new_hw):
            return False
        self._changed()
        if self.on_high_watermark is not None:
            self.on_high_watermark(self)
        return True

    # -- reads ---------------------------------------------------------------------------------
    def read_records(self, fetch_offset: int, max_bytes: int, isolation: int,
                     *, min_one_batch: bool = True) -> ReadResult:
        """Whole batches from ``fetch_offset``: a consumer up to the HW (read_uncommitted) or
        the LSO (read_committed), a follower up to the log end."""
        plog = self.log
        if isolation == LOG_END:
            max_offset = None
        elif isolation == TXN_COMMITTED:
            max_offset = plog.last_stable_offset
        else:
            max_offset = plog.high_watermark
        return plog.read(fetch_offset, max_bytes, max_offset=max_offset, min_one_batch=min_one_batch)

    def diverging_epoch(self, last_fetched_epoch: int, fetch_offset: int) -> tuple[int, int] | None:
        """For a follower's fetch naming the epoch of its last fetched batch (KIP-320): the
        (epoch, end offset) it diverges at, or None.  OFFSET_OUT_OF_RANGE when the epoch is
        older than anything known, as Kafka's readRecords."""
        epoch, end = self.log.end_offset_for_epoch(last_fetched_epoch)
        if epoch < 0 or end < 0:
            raise OffsetOutOfRangeError(
                "Could not determine the end offset of the last fetched epoch "
                f"{last_fetched_epoch} from the request")
        if fetch_offset < self.log.log_start_offset:
            raise OffsetOutOfRangeError(
                f"Received request for offset {fetch_offset} for partition "
                f"{self.topic}-{self.index}, but we only have log segments in the range "
                f"{self.log.log_start_offset} to {self.log.log_end_offset}.")
        if epoch < last_fetched_epoch or end < fetch_offset:
            return epoch, end
        return None

    # -- the leader's view of followers ---------------------------------------------------------
    def follower_or_error(self, replica_id: int, current_leader_epoch: int) -> FollowerState:
        """Kafka's followerReplicaOrThrow: a replica id outside the assignment is
        UNKNOWN_LEADER_EPOCH when the fetch named an epoch, else NOT_LEADER_OR_FOLLOWER."""
        state = self.followers.get(replica_id)
        if state is None:
            code = (ErrorCode.UNKNOWN_LEADER_EPOCH if current_leader_epoch >= 0
                    else ErrorCode.NOT_LEADER_OR_FOLLOWER)
            raise KafkaError(
                code, f"Replica {replica_id} is not recognized as a valid replica of "
                      f"{self.topic}-{self.index} in leader epoch {self.leader_epoch} with "
                      f"partition epoch {self.partition_epoch}")
        return state

    def update_follower_fetch_state(self, replica_id: int, fetch_offset: int,
                                    log_start_offset: int, now_ms: int,
                                    leader_end_offset: int | None = None,
                                    broker_epoch: int = -1) -> bool:
        """Records a follower's fetch (Kafka's updateFollowerFetchState), then maybe expands
        the ISR and advances the HW; whether the HW moved."""
        state = self.follower_or_error(replica_id, -1)
        previous, previous_start = state.log_end_offset, state.log_start_offset
        leo = self.log.log_end_offset if leader_end_offset is None else leader_end_offset
        state.update_fetch_state(fetch_offset, log_start_offset, now_ms, leo, broker_epoch)
        self.maybe_expand_isr(state)
        moved = False
        if previous != state.log_end_offset:
            moved = self.maybe_increment_leader_hw(now_ms)
        if previous_start != state.log_start_offset:
            self._changed()  # a DeleteRecords may be waiting for the low watermark
        return moved

    def low_watermark(self) -> int:
        """Kafka's lowWatermarkIfLeader: the least log start offset over the leader and its
        followers (every follower counts as alive here); what DeleteRecords waits for."""
        low = self._leader_log().log_start_offset
        for state in self.followers.values():
            low = min(low, state.log_start_offset)
        return low

    def is_follower_in_sync(self, state: FollowerState) -> bool:
        """Kafka's isFollowerInSync: caught up to the HW and into this leader epoch."""
        start = self.leader_epoch_start_offset
        return (state.log_end_offset >= self.log.high_watermark
                and start is not None and state.log_end_offset >= start)

    def maybe_expand_isr(self, state: FollowerState) -> None:
        if (self.pending_isr is None and self.is_leader and state.broker_id not in self.isr
                and self.is_follower_in_sync(state)
                and self.is_replica_isr_eligible(state.broker_id)):
            self._submit_isr(self.isr + [state.broker_id])

    def out_of_sync_replicas(self, now_ms: int) -> list[int]:
        """Kafka's getOutOfSyncReplicas: ISR followers not caught up within the lag time."""
        if self.pending_isr is not None:
            return []
        leo = self.log.log_end_offset
        lag = self.replica_lag_time_max_ms
        out = []
        for replica_id in self.isr:
            if replica_id == self.local_broker_id:
                continue
            state = self.followers.get(replica_id)
            if state is None or not state.is_caught_up(leo, now_ms, lag):
                out.append(replica_id)
        return out

    def maybe_shrink_isr(self, now_ms: int | None = None) -> bool:
        """Drops the ISR followers that did not catch up within replica.lag.time.max.ms;
        whether an ISR change was submitted."""
        if not self.is_leader:
            return False
        now = self.clock() if now_ms is None else now_ms
        out = self.out_of_sync_replicas(now)
        if not out:
            return False
        self._submit_isr([r for r in self.isr if r not in out])
        return True

    def _submit_isr(self, new_isr: list[int]) -> None:
        self.pending_isr = new_isr
        result = self.alter_partition(self, new_isr, self.leader_epoch, self.partition_epoch)
        if result is not None:
            self.complete_alter_partition(result)

    def complete_alter_partition(self, result: AlterPartitionResult | KafkaError | None) -> None:
        """The controller's answer to the ISR change in flight: a committed state (applied
        when it is for this leader epoch) or an error / None (the change is dropped; the next
        fetch or shrink check tries again)."""
        self.pending_isr = None
        if isinstance(result, AlterPartitionResult) and result.leader_epoch == self.leader_epoch \
                and result.partition_epoch >= self.partition_epoch:
            self.isr = list(result.isr)
            self.partition_epoch = result.partition_epoch
            self.maybe_increment_leader_hw()
        self._changed()
