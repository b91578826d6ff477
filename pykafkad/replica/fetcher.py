"""Kafka's ReplicaFetcherThread (AbstractFetcherThread): a follower's trio task that copies its
partitions' logs from one leader broker.

Each partition is Truncating or Fetching, as in Kafka. A Fetching partition is fetched from its
log end offset with its current leader epoch and, with truncation on fetch (Kafka since 2.7,
KIP-320), the epoch of its last batch: the leader answers a ``diverging_epoch`` when this log went
past the end of that epoch on the leader, and the log is cut back to where they agree. A
Truncating partition (no truncation on fetch, or a log without epochs) first asks the leader with
OffsetForLeaderEpoch, or falls back to its high watermark. The leader's batches are appended as
they are (``PartitionLog.append_as_follower``); the follower's high watermark becomes
min(leader HW, log end) and its log start follows the leader's. A fetch offset below the
leader's log start (OFFSET_OUT_OF_RANGE) starts the log afresh there.

Errors follow Kafka's: NOT_LEADER_OR_FOLLOWER, UNKNOWN_LEADER_EPOCH, unknown topics and a leader
that cannot be reached back the partition off (replica.fetch.backoff.ms) and retry; a
FENCED_LEADER_EPOCH for the epoch this replica has, a storage error or a log that does not line
up marks the partition failed: it leaves the fetcher until metadata gives it a new leader epoch
(``failed`` / ``on_partition_failed`` tell the replica manager).

The fetcher reaches a partition only through ``FollowerPartition`` (its log, its leader epoch,
and where its high watermark goes).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import trio

from pykafkad.log.errors import (
    CorruptRecordError,
    OffsetOutOfRangeError,
    UnexpectedAppendOffsetError,
)
from pykafkad.log.partition import AppendInfo, PartitionLog
from pykafkad.network.client import NodeUnavailableError, UnsupportedVersionError
from pykafkad.replica.leader_endpoint import (
    FetchPartitionData,
    RemoteLeaderEndPoint,
    TopicPartition,
    error_code,
)
from wire.errors import ErrorCode, KafkaError
from wire.primitives import ZERO_UUID

log = logging.getLogger("pykafkad.replica")

FETCHING = "Fetching"
TRUNCATING = "Truncating"
UNDEFINED_EPOCH = -1
UNDEFINED_OFFSET = -1

#: what a failed request to the leader looks like (the partitions back off and retry)
LEADER_UNAVAILABLE = (NodeUnavailableError, trio.TooSlowError, UnsupportedVersionError, KafkaError)


class FollowerPartition(Protocol):
    """What the fetcher needs of a partition this broker follows."""

    #: the topic's id (ZERO_UUID when unknown: the fetch then names topics, Fetch v12)
    topic_id: bytes

    @property
    def log(self) -> PartitionLog: ...

    @property
    def leader_epoch(self) -> int: ...

    def set_high_watermark(self, hw: int) -> None:
        """The follower's high watermark: min(leader's, local log end)."""


@dataclass
class LogFollower:
    """A FollowerPartition over a bare PartitionLog (its high watermark lives in the log)."""

    log: PartitionLog
    leader_epoch: int = 0
    topic_id: bytes = ZERO_UUID

    def set_high_watermark(self, hw: int) -> None:
        self.log.update_high_watermark(hw)


class InitialFetchState(NamedTuple):
    """Where a partition starts: its leader epoch and fetch offset (None: Kafka's choice, the log
    end offset when the log has leader epochs, else the high watermark)."""

    leader_epoch: int
    fetch_offset: int | None = None


@dataclass(slots=True)
class PartitionFetchState:
    topic_id: bytes
    fetch_offset: int
    current_leader_epoch: int
    state: str
    #: the epoch of the last batch in the log (None: unknown, or not sent)
    last_fetched_epoch: int | None
    #: trio time before which the partition is not fetched (after an error)
    delay_until: float = 0.0
    lag: int | None = None
    #: the last error the leader answered for this partition
    last_error: ErrorCode = ErrorCode.NONE

    def ready_for_fetch(self, now: float) -> bool:
        return self.state == FETCHING and self.delay_until <= now


class FetcherStateError(Exception):
    """The follower's log does not line up with its fetch state (Kafka's IllegalStateException)."""


def append_records_to_follower(plog: PartitionLog, records: Any) -> AppendInfo:
    """Kafka's Partition.appendRecordsToFollowerOrFutureReplica: an empty log whose start lies
    inside the leader's first batch (DeleteRecords moved the leader's log start there) starts
    again at that batch's base offset, then the append goes through."""
    try:
        return plog.append_as_follower(records)
    except UnexpectedAppendOffsetError as e:
        leo = plog.log_end_offset
        if leo == plog.log_start_offset and e.first_offset < leo <= e.last_offset:
            log.info("Unexpected offset in append to %s. First offset %d is less than log start "
                     "offset %d. Since this is the first record to be appended to the "
                     "follower's log, will start the log from offset %d.",
                     plog.dir.name, e.first_offset, leo, e.first_offset)
            plog.truncate_fully_and_start_at(e.first_offset)
            return plog.append_as_follower(records)
        raise


class ReplicaFetcher:
    """Fetches a set of partitions from one leader; ``run`` is its task."""

    def __init__(
        self,
        name: str,
        leader: RemoteLeaderEndPoint,
        get_partition: Callable[[TopicPartition], FollowerPartition | None],
        *,
        truncate_on_fetch: bool = True,
        on_partition_failed: Callable[[TopicPartition, str], None] | None = None,
    ):
        self.name = name
        self.leader = leader
        self._get_partition = get_partition
        #: Kafka's isTruncationOnFetchSupported: divergence comes back in the Fetch response
        self.truncate_on_fetch = truncate_on_fetch
        self.on_partition_failed = on_partition_failed
        self.states: dict[TopicPartition, PartitionFetchState] = {}
        #: partitions that left the fetcher until their leader epoch changes: tp -> reason
        self.failed: dict[TopicPartition, str] = {}
        self.cancel_scope = trio.CancelScope()
        self.fetch_count = 0
        self._wakeup = trio.Event()
        self._backoff_s = leader.config.backoff_ms / 1000

    def __repr__(self) -> str:
        return f"ReplicaFetcher({self.name}, {len(self.states)} partitions)"

    # -- partitions ----------------------------------------------------------------------------
    def add_partitions(self, initial: dict[TopicPartition, InitialFetchState]) -> set[TopicPartition]:
        """Starts fetching ``initial``; a partition already here with the same leader epoch
        keeps its state (Kafka's addPartitions)."""
        added = set()
        for tp, init in initial.items():
            self.failed.pop(tp, None)
            current = self.states.get(tp)
            if current is not None and current.current_leader_epoch == init.leader_epoch:
                added.add(tp)
                continue
            partition = self._get_partition(tp)
            if partition is None:
                self._mark_failed(tp, "no local replica")
                continue
            plog = partition.log
            latest = plog.latest_epoch
            offset = init.fetch_offset
            if offset is None:
                offset = plog.log_end_offset if latest is not None else plog.high_watermark
            state = FETCHING if self.truncate_on_fetch and latest is not None else TRUNCATING
            self.states[tp] = PartitionFetchState(
                partition.topic_id, offset, init.leader_epoch, state, latest)
            added.add(tp)
        self._wakeup.set()
        return added

    def remove_partitions(self, tps) -> dict[TopicPartition, PartitionFetchState]:
        removed = {}
        for tp in tps:
            self.failed.pop(tp, None)
            state = self.states.pop(tp, None)
            if state is not None:
                removed[tp] = state
        return removed

    def fetch_state(self, tp: TopicPartition) -> PartitionFetchState | None:
        return self.states.get(tp)

    # -- the task ------------------------------------------------------------------------------
    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        """Truncates and fetches until cancelled (``shutdown``); closes the connection after."""
        task_status.started()
        try:
            with self.cancel_scope:
                while True:
                    await self._maybe_truncate()
                    await self._maybe_fetch()
        finally:
            with trio.CancelScope(shield=True):
                await self.leader.aclose()

    def shutdown(self) -> None:
        self.cancel_scope.cancel()

    async def _idle(self, now: float) -> None:
        """Waits for new partitions or the end of the earliest backoff."""
        if any(s.state == TRUNCATING and s.delay_until <= now for s in self.states.values()):
            return
        wake = min((s.delay_until for s in self.states.values() if s.delay_until > now),
                   default=math.inf)
        with trio.move_on_at(wake):
            await self._wakeup.wait()
        self._wakeup = trio.Event()

    # -- truncation ----------------------------------------------------------------------------
    async def _maybe_truncate(self) -> None:
        """Kafka's maybeTruncate: Truncating partitions with epochs ask the leader where their
        epoch ends (OffsetForLeaderEpoch); those without go back to their high watermark."""
        now = trio.current_time()
        with_epochs: dict[TopicPartition, tuple[int, int]] = {}
        for tp, s in list(self.states.items()):
            if s.state != TRUNCATING or s.delay_until > now:
                continue
            partition = self._get_partition(tp)
            if partition is None:
                self._mark_failed(tp, "no local replica")
                continue
            epoch = partition.log.latest_epoch
            if epoch is not None:
                with_epochs[tp] = (s.current_leader_epoch, epoch)
            elif self._truncate(tp, s.fetch_offset):
                self._truncation_done(tp, s, s.fetch_offset, completed=True)
        if not with_epochs:
            return
        try:
            answers = await self.leader.fetch_epoch_end_offsets(with_epochs)
        except LEADER_UNAVAILABLE as e:
            log.info("%s: OffsetForLeaderEpoch to %s failed: %r", self.name, self.leader, e)
            self._delay(with_epochs)
            return
        for tp, (code, leader_epoch, end_offset) in answers.items():
            s = self.states.get(tp)
            asked = with_epochs.get(tp)
            if s is None or asked is None or s.current_leader_epoch != asked[0]:
                continue  # removed or given a new epoch meanwhile
            if code == ErrorCode.NONE:
                offset, completed = self._offset_truncation_state(tp, s, leader_epoch, end_offset)
                if self._truncate(tp, offset):
                    self._truncation_done(tp, s, offset, completed)
            elif code == ErrorCode.FENCED_LEADER_EPOCH:
                self._on_fenced(tp, asked[0])
            else:
                s.last_error = error_code(code)
                self._delay([tp])

    def _offset_truncation_state(
        self, tp: TopicPartition, s: PartitionFetchState, leader_epoch: int, leader_end: int,
    ) -> tuple[int, bool]:
        """Kafka's getOffsetTruncationState: where to cut, and whether that is final."""
        plog = self._partition(tp).log
        replica_end = plog.log_end_offset
        if leader_end == UNDEFINED_OFFSET:
            return s.fetch_offset, True  # the leader knows no such epoch: the high watermark
        if leader_epoch == UNDEFINED_EPOCH:
            return min(leader_end, replica_end), True
        follower_epoch, follower_end = plog.end_offset_for_epoch(leader_epoch)
        if follower_end == UNDEFINED_OFFSET:
            return min(leader_end, replica_end), True
        if follower_epoch != leader_epoch:
            # the leader's epoch is unknown here: cut to the end of our largest epoch below it
            # and ask again (Truncating) unless the leader already said where divergence is
            return min(follower_end, replica_end), False
        return min(follower_end, leader_end, replica_end), True

    def _truncation_done(
        self, tp: TopicPartition, s: PartitionFetchState, offset: int, completed: bool,
    ) -> None:
        s.fetch_offset = offset
        s.state = FETCHING if self.truncate_on_fetch or completed else TRUNCATING
        s.last_fetched_epoch = self._partition(tp).log.latest_epoch

    def _truncate(self, tp: TopicPartition, offset: int) -> bool:
        partition = self._get_partition(tp)
        if partition is None:
            self._mark_failed(tp, "no local replica")
            return False
        try:
            if partition.log.truncate_to(offset):
                log.info("%s: truncated %s-%d to offset %d", self.name, tp[0], tp[1], offset)
        except Exception as e:  # a storage error: the partition stops here, as in Kafka
            log.error("%s: truncating %s-%d to %d failed: %r", self.name, tp[0], tp[1], offset, e)
            self._mark_failed(tp, f"truncation failed: {e!r}")
            return False
        return True

    # -- fetch ---------------------------------------------------------------------------------
    async def _maybe_fetch(self) -> None:
        now = trio.current_time()
        max_bytes = self.leader.config.max_bytes_per_partition
        sent: dict[TopicPartition, FetchPartitionData] = {}
        for tp, s in list(self.states.items()):
            if not s.ready_for_fetch(now):
                continue
            partition = self._get_partition(tp)
            if partition is None:
                self._mark_failed(tp, "no local replica")
                continue
            last_epoch = s.last_fetched_epoch if self.truncate_on_fetch else None
            plog = partition.log
            sent[tp] = FetchPartitionData(
                s.topic_id, s.fetch_offset, plog.log_start_offset, s.current_leader_epoch,
                UNDEFINED_EPOCH if last_epoch is None else last_epoch,
                # never more than one append may hold (segment.bytes): Kafka asks for
                # replica.fetch.max.bytes and a follower of a topic with a smaller
                # internal.segment.bytes fails; the first batch still always comes (KIP-74)
                min(max_bytes, plog.config.segment_bytes))
        if not sent and not self.leader.session_holds_partitions():
            await self._idle(now)
            return
        # (with nothing ready but a session that still holds partitions, the fetch goes out to
        # forget them, as Kafka's does: back in the session later, they are sent in full again)
        request, version = self.leader.build_fetch(sent)
        try:
            response = await self.leader.fetch(request, version)
        except LEADER_UNAVAILABLE as e:
            log.info("%s: fetch from %s failed: %r", self.name, self.leader, e)
            self._delay(sent)
            return
        self.fetch_count += 1
        if response is None:
            return  # the leader lost our fetch session: the next fetch opens a new one
        names = {data.topic_id: tp[0] for tp, data in sent.items()}
        diverging: dict[TopicPartition, tuple[int, int]] = {}
        out_of_range: list[TopicPartition] = []
        for t in response.responses:
            topic = t.topic or names.get(t.topic_id, "")
            for pd in t.partitions:
                tp = (topic, pd.partition_index)
                asked = sent.get(tp)
                s = self.states.get(tp)
                if (asked is None or s is None or s.state != FETCHING
                        or s.fetch_offset != asked.fetch_offset):
                    continue  # removed, truncated or re-added while the fetch was out
                s.last_error = error_code(pd.error_code)
                if pd.error_code == ErrorCode.NONE:
                    div = pd.diverging_epoch
                    if self.truncate_on_fetch and (div.epoch >= 0 or div.end_offset >= 0):
                        diverging[tp] = (div.epoch, div.end_offset)
                    else:
                        self._process_partition_data(tp, s, pd)
                elif pd.error_code == ErrorCode.OFFSET_OUT_OF_RANGE:
                    out_of_range.append(tp)
                elif pd.error_code == ErrorCode.FENCED_LEADER_EPOCH:
                    self._on_fenced(tp, asked.current_leader_epoch)
                else:
                    # NOT_LEADER_OR_FOLLOWER, UNKNOWN_LEADER_EPOCH, UNKNOWN_TOPIC_*: the leader
                    # or this broker is behind on metadata; back off and retry
                    log.debug("%s: %s-%d: %s", self.name, tp[0], tp[1], s.last_error.name)
                    self._delay([tp])
        for tp, (epoch, end_offset) in diverging.items():
            s = self.states.get(tp)
            if s is None:
                continue
            offset, _ = self._offset_truncation_state(tp, s, epoch, end_offset)
            if self._truncate(tp, offset):
                self._truncation_done(tp, s, offset, completed=True)
        for tp in out_of_range:
            await self._handle_out_of_range(tp)

    def _process_partition_data(self, tp: TopicPartition, s: PartitionFetchState, pd: Any) -> None:
        """Kafka's processPartitionData: append, then high watermark and log start."""
        partition = self._get_partition(tp)
        if partition is None:
            self._mark_failed(tp, "no local replica")
            return
        plog = partition.log
        try:
            if s.fetch_offset != plog.log_end_offset:
                raise FetcherStateError(
                    f"Offset mismatch for partition {tp[0]}-{tp[1]}: fetched offset = "
                    f"{s.fetch_offset}, log end offset = {plog.log_end_offset}.")
            records = pd.records
            info = append_records_to_follower(plog, records) if records else None
            partition.set_high_watermark(min(pd.high_watermark, plog.log_end_offset))
            leader_start = pd.log_start_offset
            if leader_start > plog.log_start_offset:
                plog.delete_records(min(leader_start, plog.high_watermark))
        except CorruptRecordError as e:
            # Kafka logs it and retries: a corrupt fetch may be a transient state of the leader
            log.error("%s: invalid records for %s-%d at offset %d: %s",
                      self.name, tp[0], tp[1], s.fetch_offset, e)
            self._delay([tp])
            return
        except (OffsetOutOfRangeError, KafkaError, FetcherStateError, OSError) as e:
            log.error("%s: processing data for %s-%d at offset %d failed: %r",
                      self.name, tp[0], tp[1], s.fetch_offset, e)
            self._mark_failed(tp, f"processing fetched data failed: {e!r}")
            return
        if info is not None and info.size > 0:
            s.fetch_offset = info.last_offset + 1
            s.last_fetched_epoch = plog.latest_epoch
        s.lag = max(0, pd.high_watermark - s.fetch_offset)

    async def _handle_out_of_range(self, tp: TopicPartition) -> None:
        """Kafka's fetchOffsetAndTruncate: a leader behind this log (unclean election) cuts it
        to the leader's end; a leader whose log starts after this log's end starts it afresh."""
        s = self.states.get(tp)
        if s is None:
            return
        epoch = s.current_leader_epoch
        try:
            leader_end = await self.leader.fetch_latest_offset(tp, epoch)
            leader_start = None
            replica_end = self._partition(tp).log.log_end_offset
            if leader_end >= replica_end:
                leader_start = await self.leader.fetch_earliest_offset(tp, epoch)
        except KafkaError as e:
            if e.code == ErrorCode.FENCED_LEADER_EPOCH:
                self._on_fenced(tp, epoch)
            else:
                self._delay([tp])
            return
        except LEADER_UNAVAILABLE:
            self._delay([tp])
            return
        if self.states.get(tp) is not s or s.current_leader_epoch != epoch:
            return  # re-added or removed meanwhile
        partition = self._partition(tp)
        plog = partition.log
        replica_end = plog.log_end_offset
        if leader_start is None or leader_end < replica_end:
            log.warning("%s: reset fetch offset for %s-%d from %d to the leader's latest offset "
                        "%d", self.name, tp[0], tp[1], replica_end, leader_end)
            if not self._truncate(tp, leader_end):
                return
            s.fetch_offset = leader_end
        else:
            if leader_start > replica_end:
                log.warning("%s: truncate fully and reset fetch offset for %s-%d from %d to the "
                            "leader's start offset %d", self.name, tp[0], tp[1], replica_end,
                            leader_start)
                try:
                    plog.truncate_fully_and_start_at(leader_start)
                except Exception as e:
                    self._mark_failed(tp, f"truncation failed: {e!r}")
                    return
            s.fetch_offset = max(leader_start, replica_end)
        s.state = FETCHING
        s.last_fetched_epoch = plog.latest_epoch

    # -- errors --------------------------------------------------------------------------------
    def _on_fenced(self, tp: TopicPartition, request_epoch: int) -> None:
        """FENCED_LEADER_EPOCH: for the epoch we still have, wait for new metadata (failed);
        the epoch changed meanwhile: retry after the backoff."""
        s = self.states.get(tp)
        if s is None:
            return
        s.last_error = ErrorCode.FENCED_LEADER_EPOCH
        if request_epoch == s.current_leader_epoch:
            log.info("%s: %s-%d has an older epoch (%d) than the leader; awaiting new metadata",
                     self.name, tp[0], tp[1], request_epoch)
            self._mark_failed(tp, "FENCED_LEADER_EPOCH")
        else:
            self._delay([tp])

    def _mark_failed(self, tp: TopicPartition, reason: str) -> None:
        self.states.pop(tp, None)
        self.failed[tp] = reason
        log.warning("%s: partition %s-%d marked as failed: %s", self.name, tp[0], tp[1], reason)
        if self.on_partition_failed is not None:
            self.on_partition_failed(tp, reason)

    def _delay(self, tps) -> None:
        until = trio.current_time() + self._backoff_s
        for tp in tps:
            s = self.states.get(tp)
            if s is not None and s.delay_until <= trio.current_time():
                s.delay_until = until

    def _partition(self, tp: TopicPartition) -> FollowerPartition:
        partition = self._get_partition(tp)
        if partition is None:
            raise FetcherStateError(f"no local replica of {tp[0]}-{tp[1]}")
        return partition
