"""RaftClient: the KRaft replica on trio (Kafka's KafkaRaftClient + its driver thread).

It owns the metadata log and the ``quorum-state`` file, runs the timers and sends the quorum's
requests to the other voters through ``NodeClient`` connections, answers theirs (through
``pykafkad.raft.handlers``), and tells listeners what was committed, in order: every batch up to
the high watermark, replayed from the start of the log when the node starts.
The decisions are ``RaftMachine``'s; this module only moves messages and time.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import trio

from pykafkad.log.config import LogConfig
from pykafkad.network.client import NodeClient, NodeUnavailableError
from pykafkad.raft import snapshots
from pykafkad.raft.config import QuorumConfig
from pykafkad.raft.log import DIR_NAME, MetadataLog, MetadataLogRetention
from pykafkad.raft.machine import NotLeaderError, RaftMachine
from pykafkad.raft.quorum import Leader
from pykafkad.raft.quorum_state import FILE_NAME, FileQuorumStateStore
from wire.records.batch import decode_records, iter_batch_headers

__all__ = ["Batch", "LeaderAndEpoch", "NotLeaderError", "RaftClient", "SnapshotReader"]

log = logging.getLogger("pykafkad.raft")


class LeaderAndEpoch(NamedTuple):
    leader_id: int  # -1: none known
    epoch: int


@dataclass(frozen=True)
class Batch:
    """A committed batch of the metadata log: its records' values, opaque bytes. A control
    batch (LeaderChange, ...) comes with no records and ``control`` set, so that a listener
    sees every offset, as Kafka's Batch.control does."""

    base_offset: int
    last_offset: int
    epoch: int
    append_timestamp: int
    size_in_bytes: int
    records: list[bytes]
    control: bool = False


@dataclass(frozen=True)
class SnapshotReader:
    """Where a snapshot is: the metadata area reads its records."""

    path: Path
    end_offset: int
    epoch: int


class Listener(Protocol):
    def handle_commit(self, batch: Batch) -> None: ...
    def handle_load_snapshot(self, reader: SnapshotReader) -> None: ...
    def handle_leader_change(self, leader: LeaderAndEpoch) -> None: ...


@dataclass
class _ListenerState:
    listener: Any
    next_offset: int = 0
    last_leader: LeaderAndEpoch | None = None


def _wall_clock_ms() -> int:
    return int(time.time() * 1000)


class RaftClient:
    def __init__(
        self,
        node_id: int,
        directory_id: bytes,
        voters: dict[int, tuple[str, int]],
        log_dir: Path,
        cluster_id: str,
        clock: Callable[[], int] | None = None,
        rng: random.Random | None = None,
        network: Callable[[str, int], Any] | None = None,
        *,
        config: QuorumConfig | None = None,
        quorum_state_version: int = 0,
        log_config: LogConfig | None = None,
        retention: MetadataLogRetention | None = None,
        bootstrap: dict[int, tuple[str, int]] | None = None,
        voter_directory_ids: dict[int, bytes] | None = None,
        security: Any = None,
        kraft_version: int = 0,
        voters_record: Any = None,
    ):
        self.node_id = node_id
        #: an AddRaftVoter / RemoveRaftVoter is under way (Kafka: one at a time)
        self.voter_change_pending = False
        #: (leader epoch, {voter id: Voter}): UpdateRaftVoter's updates under kraft.version 0,
        #: kept in memory only, as Kafka's leader keeps them for a kraft.version upgrade
        self.static_voter_updates: tuple[int, dict] = (-1, {})
        #: the voters' endpoints (and, on an observer of a dynamic quorum, the leader's once
        #: learned): the caller's dict itself, kept up to date
        self.voters = voters
        self.clock = clock or _wall_clock_ms
        self.config = config or QuorumConfig()
        self._network = network or (
            lambda host, port: NodeClient(host, port, client_id=f"raft-client-{node_id}",
                                          security=security))
        metadata_log = MetadataLog.open(Path(log_dir), self.clock, log_config, retention)
        store = FileQuorumStateStore(Path(log_dir) / DIR_NAME / FILE_NAME)
        self.machine = RaftMachine(
            node_id, directory_id, self.voters, metadata_log, store, cluster_id, self.config,
            rng or random.Random(), self.clock, quorum_state_version=quorum_state_version,
            bootstrap=bootstrap, voter_directory_ids=voter_directory_ids,
            kraft_version=kraft_version, voters_record=voters_record)
        self.log = metadata_log
        self.cluster_id = cluster_id
        self._clients: dict[int, Any] = {}
        self._closing = False
        self._listeners: list[_ListenerState] = []
        self._wake = trio.Event()
        self._changed = trio.Event()
        self._seen_version = -1
        self._stopping = False
        self._deadline_stop = float("inf")
        self._nursery: trio.Nursery | None = None
        self.machine.start(self.clock())

    # -- public API ----------------------------------------------------------------------------
    @property
    def leader_and_epoch(self) -> LeaderAndEpoch:
        return LeaderAndEpoch(self.machine.leader_id, self.machine.epoch)

    @property
    def high_watermark(self) -> int | None:
        return self.machine.high_watermark

    @property
    def is_leader(self) -> bool:
        return isinstance(self.machine.quorum.state, Leader)

    def register_listener(self, listener: Any) -> None:
        self._listeners.append(_ListenerState(listener))
        self._after_change()
        self._deliver()  # what was committed (or who leads) before it registered

    def schedule_append(self, epoch: int, records: list[bytes]) -> int:
        """Appends ``records`` as one batch if this node leads ``epoch`` (NotLeaderError
        otherwise); returns the offset of the last one. Committed once the HW passes it."""
        offset = self.machine.append(epoch, records, self.clock())
        self._after_change()
        return offset

    async def wait_committed(self, offset: int) -> None:
        """Until the high watermark is past ``offset``."""
        while (self.high_watermark or 0) <= offset:
            await self._changed.wait()

    async def run(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Timers and outbound requests until ``shutdown`` completes (or cancellation)."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            task_status.started()
            try:
                while True:
                    now = self.clock()
                    for out in self.machine.poll(now):
                        nursery.start_soon(self._send, out.destination, out.request)
                    self._after_change(wake=False)
                    if self._stopping and self._resignation_done():
                        break
                    deadline = self.machine.next_deadline(self.clock())
                    wait_s = max(0.0, (deadline - self.clock()) / 1000) if deadline != float(
                        "inf") else 3600.0
                    with trio.move_on_after(min(wait_s, 3600.0)):
                        await self._wake.wait()
                    self._wake = trio.Event()
            finally:
                # sends already spawned still start (and open a client) while the clients
                # close: they find _closing set and stop, so none is left open
                self._closing = True
                nursery.cancel_scope.cancel()
                while self._clients:
                    _, c = self._clients.popitem()
                    with trio.CancelScope(shield=True):
                        await c.aclose()
                self.log.close()

    async def shutdown(self, timeout_s: float = 5.0) -> None:
        """Graceful stop: a leader resigns (EndQuorumEpoch to the voters, naming successors)
        so the next leader is elected at once instead of after a fetch timeout."""
        self.machine.resign(self.clock())
        self._stopping = True
        self._deadline_stop = trio.current_time() + timeout_s
        self._wake.set()

    def _resignation_done(self) -> bool:
        from pykafkad.raft.quorum import Resigned

        s = self.machine.quorum.state
        if isinstance(s, Resigned) and s.unacknowledged and \
                trio.current_time() < self._deadline_stop:
            return False
        return True

    # -- inbound requests (called by pykafkad.raft.handlers) ----------------------------------
    def handle_vote(self, request: Any, version: int) -> Any:
        return self._inbound(self.machine.handle_vote, request, version)

    def handle_begin_quorum_epoch(self, request: Any, version: int) -> Any:
        return self._inbound(self.machine.handle_begin_quorum_epoch, request, version)

    def handle_end_quorum_epoch(self, request: Any, version: int) -> Any:
        return self._inbound(self.machine.handle_end_quorum_epoch, request, version)

    def handle_fetch_snapshot(self, request: Any, version: int) -> Any:
        return self._inbound(self.machine.handle_fetch_snapshot, request, version)

    def handle_describe_quorum(self, request: Any, version: int) -> Any:
        return self._inbound(self.machine.handle_describe_quorum, request, version)

    async def handle_add_raft_voter(self, request: Any, version: int) -> Any:
        from pykafkad.raft.reconfig import add_voter

        return await add_voter(self, request, version)

    def handle_update_raft_voter(self, request: Any, version: int) -> Any:
        from pykafkad.raft.update_voter import update_voter

        return update_voter(self, request)

    async def handle_remove_raft_voter(self, request: Any, version: int) -> Any:
        from pykafkad.raft.reconfig import remove_voter

        return await remove_voter(self, request, version)

    async def handle_fetch(self, request: Any, version: int) -> Any:
        """A follower's or observer's Fetch; with nothing new it waits up to max_wait_ms for an
        append or a high-watermark move (Kafka's fetch purgatory), then answers again."""
        response, may_wait = self._inbound(self.machine.handle_fetch, request, version)
        if not may_wait:
            return response
        with trio.move_on_after(request.max_wait_ms / 1000):
            await self._changed.wait()
            response, _ = self._inbound(self.machine.handle_fetch, request, version)
        return response

    def _inbound(self, fn: Callable[..., Any], request: Any, version: int) -> Any:
        result = fn(request, version, self.clock())
        self._after_change()
        return result

    # -- outbound ------------------------------------------------------------------------------
    async def _send(self, destination: int, request: Any) -> None:
        if self._closing:
            return
        client = self._clients.get(destination)
        if client is None:
            host, port = self.machine.endpoint(destination)
            client = self._clients[destination] = self._network(host, port)
        try:
            response = await client.request(
                request, timeout_s=self.config.request_timeout_ms / 1000)
        except (NodeUnavailableError, trio.TooSlowError, OSError) as e:
            log.debug("node %d: %s to %d failed: %s", self.node_id, type(request).__name__,
                      destination, e)
            self.machine.on_failure(destination, request, self.clock())
        else:
            self.machine.on_response(destination, request, response, self.clock())
        self._after_change()

    # -- change propagation --------------------------------------------------------------------
    def _after_change(self, *, wake: bool = True) -> None:
        """Wakes the timer loop (unless it is the caller), long-polling fetches and waiters,
        and feeds the listeners."""
        if wake:
            self._wake.set()
        if self.machine.version != self._seen_version:
            self._seen_version = self.machine.version
            self._deliver()
            changed, self._changed = self._changed, trio.Event()
            changed.set()

    def _deliver(self) -> None:
        hw = self.high_watermark
        leader = self.leader_and_epoch
        for ls in self._listeners:
            if hw is not None:
                self._deliver_committed(ls, hw)
            s = self.machine.quorum.state
            caught_up = not isinstance(s, Leader) or (hw is not None and ls.next_offset >= hw)
            if caught_up and ls.last_leader != leader:
                ls.last_leader = leader
                ls.listener.handle_leader_change(leader)

    def _deliver_committed(self, ls: _ListenerState, hw: int) -> None:
        if ls.next_offset < self.log.start_offset:
            snap = self.log.latest_snapshot_id()
            if snap is not None:
                ls.listener.handle_load_snapshot(SnapshotReader(
                    snapshots.path_of(self.log.dir, snap.offset, snap.epoch), snap.offset,
                    snap.epoch))
                ls.next_offset = snap.offset
        while ls.next_offset < hw:
            data = self.log.read(ls.next_offset, 1 << 20)
            if not data:
                return
            for pos, header in iter_batch_headers(data):
                if header.last_offset >= hw:
                    return
                if header.last_offset < ls.next_offset:
                    continue
                control = header.is_control
                values = [] if control else [r.value for r in decode_records(data, pos)]
                ls.listener.handle_commit(Batch(
                    header.base_offset, header.last_offset, header.partition_leader_epoch,
                    header.max_timestamp, header.size, values, control))
                ls.next_offset = header.last_offset + 1
