"""The KRaft replica as a deterministic state machine (the logic of Kafka's KafkaRaftClient).

No sockets and no trio: inbound requests are answered by ``handle_*``, timers advance in
``poll(now)`` which also returns the requests to send, and the outcome of a sent request comes
back through ``on_response`` / ``on_failure``. ``client.RaftClient`` drives it over the network;
tests drive several of them with a fake clock and route the messages between them.

Requests and answers (``inbound``) are Kafka's, field for field and error for error, so a Kafka
controller can be a peer: Vote (pre-vote and vote), BeginQuorumEpoch, EndQuorumEpoch, Fetch of
``__cluster_metadata`` (by topic id), FetchSnapshot and DescribeQuorum.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pykafkad.raft import records as raft_records
from pykafkad.raft import snapshots, voter_records, voter_set
from pykafkad.raft.config import QuorumConfig
from pykafkad.raft.inbound import LISTENER_NAME, ZERO_UUID, InboundRequests
from pykafkad.raft.log import TOPIC, TOPIC_ID, MetadataLog, OffsetAndEpoch
from pykafkad.raft.quorum import (
    Candidate,
    Follower,
    Leader,
    Prospective,
    QuorumState,
    Resigned,
    Unattached,
    majority,
)
from pykafkad.raft.quorum_state import NO_LEADER, FileQuorumStateStore
from wire.errors import ErrorCode
from wire.messages import begin_quorum_epoch_request as bqe_req
from wire.messages import begin_quorum_epoch_response as bqe_resp
from wire.messages import end_quorum_epoch_request as eqe_req
from wire.messages import end_quorum_epoch_response as eqe_resp
from wire.messages import fetch_request as f_req
from wire.messages import fetch_response as f_resp
from wire.messages import fetch_snapshot_request as fs_req
from wire.messages import fetch_snapshot_response as fs_resp
from wire.messages import vote_request as v_req
from wire.messages import vote_response as v_resp
from wire.records.batch import iter_batch_headers

log = logging.getLogger("pykafkad.raft")



class NotLeaderError(Exception):
    """schedule_append on a replica that is not the leader of that epoch."""


@dataclass
class Outbound:
    destination: int
    request: Any


@dataclass
class _Destination:
    in_flight: bool = False
    backoff_until: float = 0.0


class RaftMachine(InboundRequests):
    def __init__(
        self,
        node_id: int,
        directory_id: bytes,
        voters: dict[int, tuple[str, int]],
        log: MetadataLog,
        store: FileQuorumStateStore,
        cluster_id: str,
        config: QuorumConfig,
        rng: random.Random,
        clock: Callable[[], int],
        *,
        quorum_state_version: int = 0,
        bootstrap: dict[int, tuple[str, int]] | None = None,
        voter_directory_ids: dict[int, bytes] | None = None,
        kraft_version: int = 0,
        voters_record: Any = None,
    ):
        self.node_id = node_id
        self.directory_id = directory_id
        #: the voters' endpoints, and (an observer of a dynamic quorum) the leader's once a
        #: Fetch answer names it; shared with whoever passed the dict in (the node's channel
        #: to the active controller follows it)
        self.voter_endpoints = voters
        #: controller.quorum.bootstrap.servers under Kafka's negative ids
        self.bootstrap_endpoints = dict(bootstrap or {})
        self.voter_directory_ids = dict(voter_directory_ids or {})
        #: kraft.version (1: a dynamic quorum) and its newest voter set: the VotersRecord and
        #: its offset (-1: the snapshot's), taken as soon as it is in the log (KIP-853)
        self.kraft_version = kraft_version
        self.voters_record = voters_record
        self.voters_offset = -1
        #: the voter set the node started from (its snapshot's), for a truncation to go back to
        self._start_voters = voters_record
        self.log = log
        self.cluster_id = cluster_id
        self.config = config
        self.rng = rng
        self.clock = clock
        self.quorum = QuorumState(node_id, list(voters), store, config, rng,
                                  voter_directory_ids=self.voter_directory_ids,
                                  directory_id=directory_id,
                                  quorum_state_version=quorum_state_version)
        self._destinations: dict[int, _Destination] = {}
        #: candidacies since a leader was last known (the exponent of the election backoff)
        self._election_retries = 0
        #: the leader appended since its last fsync
        self._unflushed = False
        self.shutting_down = False
        #: the snapshot being fetched from the leader, if any
        self.fetching_snapshot: snapshots.PartialSnapshot | None = None
        #: bumped whenever the log end, the high watermark or the leader changes (wakes
        #: long-polling fetches and listeners)
        self.version = 0

    # -- state ---------------------------------------------------------------------------------
    @property
    def voters(self) -> list[int]:
        return self.quorum.voters

    @property
    def epoch(self) -> int:
        return self.quorum.epoch

    @property
    def leader_id(self) -> int:
        return self.quorum.leader_id

    @property
    def high_watermark(self) -> int | None:
        s = self.quorum.state
        if isinstance(s, Leader):
            return s.replicas.high_watermark
        if isinstance(s, Follower):
            return s.high_watermark
        return None

    def start(self, now: int) -> None:
        if self.kraft_version > 0:
            self._read_voters_from_log(now)
        self.quorum.initialize(self.log.last_fetched_epoch(), now)
        if isinstance(self.quorum.state, Candidate) and self.quorum.is_only_voter:
            self._become_leader(now)
        elif self.quorum.is_only_voter:  # Kafka's initialize: a lone voter elects itself at once
            self._to_candidate(now)
        log.info("node %d starts as %s in epoch %d", self.node_id, self.quorum.state.name,
                 self.epoch)

    def _changed(self) -> None:
        self.version += 1

    # -- the voter set of a dynamic quorum (KIP-853) ------------------------------------------
    def _read_voters_from_log(self, now: int) -> None:
        """The newest VotersRecord of the log (after the snapshot the node started from)."""
        offset = self.log.start_offset
        while offset < self.log.end_offset:
            data = self.log.read(offset, 8 * 1024 * 1024)
            if not data:
                break
            last = offset
            for pos, header in iter_batch_headers(data):
                if pos + header.size <= len(data):
                    last = header.last_offset
            self._take_voters_records(data, now)
            offset = last + 1

    def _revert_voters(self, now: int) -> None:
        """A truncation removed the newest VotersRecord: the set is the newest one left (Kafka's
        KRaftControlRecordStateMachine truncates its history alike)."""
        if self._start_voters is not None:
            self.apply_voters(self._start_voters, -1, now)
        else:  # formatted without voters: an observer again until a VotersRecord names it
            self.voters_record, self.voters_offset = None, -1
            self.voter_directory_ids.clear()
            self.quorum.voters = []
        self._read_voters_from_log(now)

    def _take_voters_records(self, data: bytes, now: int) -> None:
        for offset, record in voter_records.find_voters_records(data):
            self.apply_voters(record, offset, now)

    def apply_voters(self, record: Any, offset: int, now: int) -> None:
        """Takes ``record`` (at ``offset``) as the voter set: the quorum's voters, their
        endpoints and directory ids, and a leader's replica states."""
        vs = voter_set.from_record(record, LISTENER_NAME)
        self.voters_record = record
        self.voters_offset = offset
        self.voter_endpoints.update(vs.endpoints)
        self.voter_directory_ids.clear()
        self.voter_directory_ids.update(vs.directory_ids)
        self.quorum.voters = sorted(vs.directory_ids)
        s = self.quorum.state
        if isinstance(s, Leader):
            s.replicas.set_voters(self.quorum.voters, vs.directory_ids)
            s.acknowledged &= set(self.quorum.voters) | {self.node_id}
            # a lone voter never ran its check-quorum timer: it starts with the new set
            s.fetched_since_check.clear()
            s.check_quorum_deadline = now + self.config.check_quorum_timeout_ms
        log.info("node %d: voters %s from the VotersRecord at offset %d", self.node_id,
                 self.quorum.voters, offset)
        self._changed()

    def append_voters(self, record: Any, now: int) -> int:
        """A leader's VotersRecord append (AddRaftVoter / RemoveRaftVoter): its offset; the
        new set counts at once."""
        s = self.quorum.state
        if not isinstance(s, Leader) or self.shutting_down:
            raise NotLeaderError("Append failed because the replica is not the current leader")
        info = self.log.append_as_leader(voter_records.voters_batch(record, s.epoch, now),
                                         s.epoch)
        self._unflushed = True
        self.apply_voters(record, info.last_offset, now)
        return info.last_offset

    # -- helpers -------------------------------------------------------------------------------
    def endpoint(self, node: int) -> tuple[str, int]:
        """Where requests to ``node`` go: a voter, a learned leader or a bootstrap server."""
        if node in self.voter_endpoints:
            return self.voter_endpoints[node]
        return self.bootstrap_endpoints[node]

    def _dest(self, node: int) -> _Destination:
        return self._destinations.setdefault(node, _Destination())

    def _can_send(self, node: int, now: int) -> bool:
        d = self._dest(node)
        return not d.in_flight and now >= d.backoff_until

    def _reset_destinations(self) -> None:
        for d in self._destinations.values():
            d.backoff_until = 0.0

    def _valid_cluster_id(self, cluster_id: str | None) -> bool:
        return cluster_id is None or cluster_id == self.cluster_id

    def _is_log_up_to_date(self, last_epoch: int, last_offset: int) -> bool:
        ours = self.log.end_offset_and_epoch()
        return (last_epoch, last_offset) >= (ours.epoch, ours.offset)

    def _leader_endpoint(self, leader_id: int) -> list[tuple[int, str, int]]:
        if leader_id >= 0 and leader_id in self.voter_endpoints:
            host, port = self.voter_endpoints[leader_id]
            return [(leader_id, host, port)]
        return []

    # -- transitions ---------------------------------------------------------------------------
    def _become_leader(self, now: int) -> None:
        self._election_retries = 0
        leader = self.quorum.to_leader(self.log.end_offset, now)
        batch = raft_records.leader_change_batch(
            self.node_id, leader.epoch, self.voters, list(leader.granting), now)
        self.log.append_as_leader(batch, leader.epoch)
        self.log.flush()
        leader.replicas.update_local(self.log.end_offset, now)
        self._reset_destinations()
        self._changed()
        log.info("node %d is the leader of epoch %d (start offset %d)", self.node_id,
                 leader.epoch, leader.epoch_start_offset)

    def _to_follower(self, epoch: int, leader_id: int, now: int) -> None:
        self._election_retries = 0
        self.quorum.to_follower(epoch, leader_id, now)
        self.fetching_snapshot = None
        self._reset_destinations()
        self._changed()
        log.info("node %d follows %d in epoch %d", self.node_id, leader_id, epoch)

    def _to_unattached(self, epoch: int, now: int) -> None:
        self.quorum.to_unattached(epoch, now)
        self.fetching_snapshot = None
        self._changed()

    def _to_prospective(self, now: int) -> None:
        self.quorum.to_prospective(now)
        self._reset_destinations()
        self._changed()
        if self.quorum.is_only_voter:
            self._to_candidate(now)

    def _to_candidate(self, now: int) -> None:
        self._election_retries += 1
        self.quorum.to_candidate(now)
        self._reset_destinations()
        self._changed()
        if self.quorum.is_only_voter:
            self._become_leader(now)

    def _maybe_transition(self, leader_id: int, epoch: int, now: int) -> bool:
        """Kafka's maybeTransition for a leader or epoch learned from a peer: True when it
        moved this replica (to follower of that leader, or unattached in a higher epoch)."""
        if epoch < self.epoch:
            return False
        if leader_id == self.node_id:
            return False
        if epoch > self.epoch:
            if leader_id >= 0:
                self._to_follower(epoch, leader_id, now)
            else:
                self._to_unattached(epoch, now)
            return True
        s = self.quorum.state
        knows_leader = isinstance(s, Follower | Leader) or (
            isinstance(s, Prospective) and s.retained_leader_id >= 0)
        if leader_id >= 0 and not knows_leader:
            self._to_follower(epoch, leader_id, now)
            return True
        return False

    def _lose_pre_vote(self, s: Prospective, now: int) -> None:
        """A pre-vote round lost: back to the leader it had, if any, else retry after a
        randomized backoff."""
        if s.retained_leader_id >= 0:
            self._to_follower(s.epoch, s.retained_leader_id, now)
        else:
            s.backoff_until = self.quorum.election_backoff(now, max(1, self._election_retries))

    # -- timers and outbound requests ----------------------------------------------------------
    def poll(self, now: int) -> list[Outbound]:
        """Advances the timers of the current state and returns the requests due now."""
        q = self.quorum
        s = q.state
        out: list[Outbound] = []
        if isinstance(s, Leader):
            self._maybe_flush_leader(s, now)
            hw = s.replicas.high_watermark
            if not q.is_voter and hw is not None and hw > self.voters_offset:
                log.info("leader %d is not in the committed voter set %s: resigning from "
                         "epoch %d", self.node_id, self.voters, s.epoch)
                q.to_resigned([], now)
                self._changed()
                return self.poll(now)
            if not q.is_only_voter and now >= s.check_quorum_deadline:
                log.info("leader %d of epoch %d has not heard from a majority for %d ms: resigning",
                         self.node_id, s.epoch, self.config.check_quorum_timeout_ms)
                q.to_resigned([], now)
                self._changed()
                return self.poll(now)
            for v in self.voters:
                if v != self.node_id and v not in s.acknowledged and self._can_send(v, now):
                    out.append(Outbound(v, self._begin_quorum_epoch_request(v)))
        elif isinstance(s, Resigned):
            if now >= s.election_deadline:
                self._to_prospective(now)
                return self.poll(now)
            for v in sorted(s.unacknowledged):
                if self._can_send(v, now):
                    out.append(Outbound(v, self._end_quorum_epoch_request(s)))
        elif isinstance(s, Candidate):
            if s.backoff_until is not None:
                if now >= s.backoff_until:
                    self._to_prospective(now)
                    return self.poll(now)
            elif now >= s.election_deadline:
                s.backoff_until = q.election_backoff(now, self._election_retries)
            else:
                out += self._vote_requests(s, pre_vote=False, now=now)
        elif isinstance(s, Prospective):
            if s.backoff_until is not None:
                if now >= s.backoff_until:
                    s.granted, s.rejected, s.backoff_until = {self.node_id}, set(), None
                    s.election_deadline = q.election_timeout(now)
                    self._reset_destinations()
            elif now >= s.election_deadline:
                self._lose_pre_vote(s, now)
                return self.poll(now)
            if s.backoff_until is None:
                out += self._vote_requests(s, pre_vote=True, now=now)
        elif isinstance(s, Follower):
            if now >= s.fetch_deadline:
                if q.is_voter:
                    self._to_prospective(now)
                else:
                    self._to_unattached(s.epoch, now)
                return self.poll(now)
            out += self._fetch_requests(s.leader_id, now)
        elif isinstance(s, Unattached):
            if q.is_voter:
                if now >= s.election_deadline:
                    self._to_prospective(now)
                    return self.poll(now)
            else:
                # an observer asks the voters (else the bootstrap servers) until one names
                # the leader
                pool = self.voters or sorted(self.bootstrap_endpoints)
                targets = [v for v in pool if self._can_send(v, now)]
                if targets and not any(d.in_flight for d in self._destinations.values()):
                    out += self._fetch_requests(self.rng.choice(targets), now)
        for o in out:
            self._dest(o.destination).in_flight = True
        return out

    def next_deadline(self, now: int) -> float:
        """When ``poll`` has something to do next at the latest (ms): the state's timer or the
        end of a retry backoff (past ones are over, not due)."""
        s = self.quorum.state
        times = [d.backoff_until for d in self._destinations.values() if d.backoff_until > now]
        if isinstance(s, Leader):
            if not self.quorum.is_only_voter:  # a lone leader has no quorum to check
                times.append(s.check_quorum_deadline)
        elif isinstance(s, Resigned | Unattached):
            times.append(s.election_deadline)
        elif isinstance(s, Candidate | Prospective):
            times.append(s.backoff_until if s.backoff_until is not None else s.election_deadline)
        elif isinstance(s, Follower):
            times.append(s.fetch_deadline)
        return min(times) if times else float("inf")

    def _vote_requests(self, s: Candidate | Prospective, *, pre_vote: bool, now: int) -> list[Outbound]:
        end = self.log.end_offset_and_epoch()
        # a prospective asks in its current epoch (it has not bumped it), a candidate in its new
        epoch = s.epoch
        out = []
        for v in self.voters:
            if v == self.node_id or v in s.granted or v in s.rejected or not self._can_send(v, now):
                continue
            part = v_req.PartitionData(
                partition_index=0, replica_epoch=epoch, replica_id=self.node_id,
                replica_directory_id=self.directory_id, voter_directory_id=ZERO_UUID,
                last_offset_epoch=end.epoch, last_offset=end.offset, pre_vote=pre_vote)
            out.append(Outbound(v, v_req.VoteRequest(
                cluster_id=self.cluster_id, voter_id=v,
                topics=[v_req.TopicData(topic_name=TOPIC, partitions=[part])])))
        return out

    def _begin_quorum_epoch_request(self, voter: int) -> Any:
        host, port = self.voter_endpoints[self.node_id]
        return bqe_req.BeginQuorumEpochRequest(
            cluster_id=self.cluster_id, voter_id=voter,
            topics=[bqe_req.TopicData(topic_name=TOPIC, partitions=[bqe_req.PartitionData(
                partition_index=0, voter_directory_id=ZERO_UUID, leader_id=self.node_id,
                leader_epoch=self.epoch)])],
            leader_endpoints=[bqe_req.LeaderEndpoint(name=LISTENER_NAME, host=host, port=port)])

    def _end_quorum_epoch_request(self, s: Resigned) -> Any:
        host, port = self.voter_endpoints[self.node_id]
        return eqe_req.EndQuorumEpochRequest(
            cluster_id=self.cluster_id,
            topics=[eqe_req.TopicData(topic_name=TOPIC, partitions=[eqe_req.PartitionData(
                partition_index=0, leader_id=self.node_id, leader_epoch=s.epoch,
                preferred_successors=list(s.preferred_successors),
                preferred_candidates=[eqe_req.ReplicaInfo(candidate_id=c,
                                                          candidate_directory_id=ZERO_UUID)
                                      for c in s.preferred_successors])])],
            leader_endpoints=[eqe_req.LeaderEndpoint(name=LISTENER_NAME, host=host, port=port)])

    def _fetch_requests(self, target: int, now: int) -> list[Outbound]:
        if target == NO_LEADER or not self._can_send(target, now):
            return []
        if self.fetching_snapshot is not None:
            snap = self.fetching_snapshot
            return [Outbound(target, fs_req.FetchSnapshotRequest(
                cluster_id=self.cluster_id, replica_id=self.node_id,
                max_bytes=self.config.fetch_snapshot_max_bytes,
                topics=[fs_req.TopicSnapshot(name=TOPIC, partitions=[fs_req.PartitionSnapshot(
                    partition=0, current_leader_epoch=self.epoch,
                    snapshot_id=fs_req.SnapshotId(end_offset=snap.offset, epoch=snap.epoch),
                    position=snap.size, replica_directory_id=self.directory_id)])]))]
        end = self.log.end_offset_and_epoch()
        return [Outbound(target, f_req.FetchRequest(
            cluster_id=self.cluster_id, replica_id=self.node_id,
            replica_state=f_req.ReplicaState(replica_id=self.node_id, replica_epoch=-1),
            max_wait_ms=self.config.fetch_max_wait_ms, min_bytes=0,
            max_bytes=self.config.fetch_max_bytes, isolation_level=0, session_id=0,
            session_epoch=-1,
            topics=[f_req.FetchTopic(topic=TOPIC, topic_id=TOPIC_ID, partitions=[
                f_req.FetchPartition(
                    partition=0, current_leader_epoch=self.epoch, fetch_offset=end.offset,
                    last_fetched_epoch=end.epoch, log_start_offset=-1,
                    partition_max_bytes=self.config.fetch_max_bytes,
                    replica_directory_id=self.directory_id,
                    high_watermark=-1 if self.high_watermark is None else self.high_watermark)])],
            rack_id=""))]

    # -- outcomes of sent requests -------------------------------------------------------------
    def on_failure(self, destination: int, request: Any, now: int) -> None:
        """The request failed (unreachable, timed out): retry after the backoff."""
        d = self._dest(destination)
        d.in_flight = False
        d.backoff_until = now + self.config.retry_backoff_ms

    def on_response(self, destination: int, request: Any, response: Any, now: int) -> None:
        d = self._dest(destination)
        d.in_flight = False
        handled = self._handle_response(destination, request, response, now)
        if not handled:
            d.backoff_until = now + self.config.retry_backoff_ms

    def _handle_response(self, source: int, request: Any, response: Any, now: int) -> bool:
        if isinstance(response, v_resp.VoteResponse):
            return self._on_vote_response(source, request, response, now)
        if isinstance(response, bqe_resp.BeginQuorumEpochResponse):
            return self._on_begin_quorum_epoch_response(source, response, now)
        if isinstance(response, eqe_resp.EndQuorumEpochResponse):
            return self._on_end_quorum_epoch_response(source, response, now)
        if isinstance(response, f_resp.FetchResponse):
            return self._on_fetch_response(source, response, now)
        if isinstance(response, fs_resp.FetchSnapshotResponse):
            return self._on_fetch_snapshot_response(source, response, now)
        return False

    def _common_response(self, error: int, leader_id: int, epoch: int, now: int) -> bool | None:
        """Kafka's maybeHandleCommonResponse: None when the caller should look further."""
        if epoch < self.epoch:
            return True  # stale
        if self._maybe_transition(leader_id, epoch, now):
            return True
        if error in (ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.NOT_LEADER_OR_FOLLOWER,
                     ErrorCode.UNKNOWN_LEADER_EPOCH, ErrorCode.BROKER_NOT_AVAILABLE):
            return False
        return None

    def _on_vote_response(self, source: int, request: Any, response: Any, now: int) -> bool:
        if response.error_code == ErrorCode.UNSUPPORTED_VERSION and isinstance(
                self.quorum.state, Prospective):
            # a voter that cannot pre-vote (Vote < v2): stand at once, as Kafka does
            self._to_candidate(now)
            return True
        if response.error_code != ErrorCode.NONE or not response.topics:
            return False
        p = response.topics[0].partitions[0]
        handled = self._common_response(p.error_code, p.leader_id, p.leader_epoch, now)
        if handled is not None:
            return handled
        if p.error_code != ErrorCode.NONE:
            return False
        pre_vote = request.topics[0].partitions[0].pre_vote
        s = self.quorum.state
        if pre_vote and isinstance(s, Prospective) and p.leader_epoch == s.epoch:
            (s.granted if p.vote_granted else s.rejected).add(source)
            n = len(self.voters)
            if len(s.granted) >= majority(n):
                self._to_candidate(now)
            elif len(s.rejected) > n - majority(n) and s.backoff_until is None:
                self._lose_pre_vote(s, now)
        elif not pre_vote and isinstance(s, Candidate) and p.leader_epoch == s.epoch:
            (s.granted if p.vote_granted else s.rejected).add(source)
            n = len(self.voters)
            if len(s.granted) >= majority(n):
                self._become_leader(now)
            elif len(s.rejected) > n - majority(n) and s.backoff_until is None:
                s.backoff_until = self.quorum.election_backoff(now, self._election_retries)
        return True

    def _on_begin_quorum_epoch_response(self, source: int, response: Any, now: int) -> bool:
        if response.error_code != ErrorCode.NONE or not response.topics:
            return False
        p = response.topics[0].partitions[0]
        handled = self._common_response(p.error_code, p.leader_id, p.leader_epoch, now)
        if handled is not None:
            return handled
        s = self.quorum.state
        if p.error_code == ErrorCode.NONE and isinstance(s, Leader) and p.leader_epoch == s.epoch:
            s.acknowledged.add(source)
            return True
        return False

    def _on_end_quorum_epoch_response(self, source: int, response: Any, now: int) -> bool:
        if response.error_code != ErrorCode.NONE or not response.topics:
            return False
        p = response.topics[0].partitions[0]
        handled = self._common_response(p.error_code, p.leader_id, p.leader_epoch, now)
        if handled is not None:
            return handled
        s = self.quorum.state
        if isinstance(s, Resigned) and p.error_code == ErrorCode.NONE:
            s.unacknowledged.discard(source)
            return True
        return False

    def _leader_answer(self, error_code: int, topics: list, now: int) -> tuple[Any, bool | None]:
        """The one partition of a Fetch or FetchSnapshot answer and what the checks both share
        decided: False for a top-level error or an empty answer, the result of a leader or
        epoch change (``_common_response``), or None when the caller goes on."""
        if error_code != ErrorCode.NONE or not topics:
            return None, False
        p = topics[0].partitions[0]
        leader = p.current_leader
        return p, self._common_response(p.error_code, leader.leader_id, leader.leader_epoch, now)

    def _on_fetch_response(self, source: int, response: Any, now: int) -> bool:
        for ep in response.node_endpoints:
            # the leader's endpoint: how an observer of a dynamic quorum reaches it
            if ep.node_id not in self.voters:
                self.voter_endpoints[ep.node_id] = (ep.host, ep.port)
        p, handled = self._leader_answer(response.error_code, response.responses, now)
        if handled is not None:
            return handled
        s = self.quorum.state
        if not isinstance(s, Follower) or p.error_code != ErrorCode.NONE:
            return False
        if p.diverging_epoch.epoch >= 0:
            end = OffsetAndEpoch(p.diverging_epoch.end_offset, p.diverging_epoch.epoch)
            if s.high_watermark is not None and end.offset < s.high_watermark:
                raise RuntimeError(
                    f"The leader requested truncation to offset {end.offset}, which is below "
                    f"the current high watermark {s.high_watermark}")
            offset = self.log.truncate_to_end_offset(end)
            log.info("node %d truncated to offset %d from Fetch response from leader %d",
                     self.node_id, offset, s.leader_id)
            if self.kraft_version > 0 and self.voters_offset >= offset:
                self._revert_voters(now)
            self._changed()
        elif p.snapshot_id.epoch >= 0 or p.snapshot_id.end_offset >= 0:
            if p.snapshot_id.epoch < 0 or p.snapshot_id.end_offset < 0:
                return False
            sid = (p.snapshot_id.end_offset, p.snapshot_id.epoch)
            if sid not in snapshots.list_snapshots(self.log.dir):
                self.fetching_snapshot = snapshots.PartialSnapshot(self.log.dir, *sid)
        else:
            records = p.records
            if records is not None and len(records) > 0:
                self.log.append_as_follower(bytes(records))
                if self.kraft_version > 0:
                    self._take_voters_records(bytes(records), now)
                if self.quorum.is_voter:
                    self.log.flush()
            if p.high_watermark >= 0:
                hw = min(p.high_watermark, self.log.end_offset)
                if s.high_watermark is None or hw > s.high_watermark:
                    s.high_watermark = hw
            self._changed()
        s.has_fetched = True
        s.fetch_deadline = now + self.config.fetch_timeout_ms
        return True

    def _on_fetch_snapshot_response(self, source: int, response: Any, now: int) -> bool:
        p, handled = self._leader_answer(response.error_code, response.topics, now)
        if handled is not None:
            return handled
        s = self.quorum.state
        snap = self.fetching_snapshot
        if not isinstance(s, Follower) or snap is None:
            return False
        if p.error_code == ErrorCode.SNAPSHOT_NOT_FOUND:
            self.fetching_snapshot = None
            return True
        if p.error_code != ErrorCode.NONE or p.position != snap.size:
            return False
        data = bytes(p.unaligned_records or b"")
        snap.append(data)
        if snap.size >= p.size:
            snap.freeze()
            self.fetching_snapshot = None
            # the log restarts after the snapshot; its epoch stands for the last fetched one
            self.log.log.truncate_fully_and_start_at(snap.offset)
            if s.high_watermark is None or s.high_watermark < snap.offset:
                s.high_watermark = snap.offset
            self._changed()
        s.fetch_deadline = now + self.config.fetch_timeout_ms
        return True

    # -- appends and resignation ---------------------------------------------------------------
    def append(self, epoch: int, values: list[bytes], now: int) -> int:
        """Appends one batch as leader of ``epoch``; the offset of its last record."""
        s = self.quorum.state
        if not isinstance(s, Leader) or s.epoch != epoch or self.shutting_down:
            raise NotLeaderError(
                f"Append failed because the replica is not the current leader (epoch {self.epoch}"
                f", leader {self.leader_id}, requested epoch {epoch})")
        if not values:
            raise ValueError("an append needs at least one record")
        info = self.log.append_as_leader(raft_records.data_batch(values, epoch, now), epoch)
        # fsynced by the next poll, once for every append since: the leader counts towards
        # the high watermark only what it has flushed (Kafka's flushed end offset)
        self._unflushed = True
        self._changed()
        return info.last_offset

    def _maybe_flush_leader(self, s: Leader, now: int) -> None:
        if self._unflushed:
            self._unflushed = False
            self.log.flush()
            if s.replicas.update_local(self.log.end_offset, now):
                self._changed()

    def resign(self, now: int) -> None:
        """Graceful shutdown of a leader: Resigned, EndQuorumEpoch to the voters with the
        others as preferred successors, the most caught-up first (Kafka's resign order)."""
        s = self.quorum.state
        self.shutting_down = True
        if isinstance(s, Leader):
            self._maybe_flush_leader(s, now)
            others = sorted((r for r in s.replicas.voters.values() if r.replica_id != self.node_id),
                            key=lambda r: (-r.end_offset, r.replica_id))
            self.quorum.to_resigned([r.replica_id for r in others], now)
            self._reset_destinations()
            self._changed()

