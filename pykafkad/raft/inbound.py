"""The quorum's inbound requests, answered as Kafka's KafkaRaftClient answers them: Vote
(pre-vote and vote), BeginQuorumEpoch, EndQuorumEpoch, Fetch (with its divergence and snapshot
answers), FetchSnapshot and DescribeQuorum. Part of ``RaftMachine`` (a mixin over its state),
kept apart because these are the validation rules and error codes a Kafka peer relies on.
"""

from __future__ import annotations

import logging
from typing import Any

from pykafkad.raft import snapshots
from pykafkad.raft.log import DIVERGING, SNAPSHOT, TOPIC, TOPIC_ID, OffsetAndEpoch
from pykafkad.raft.quorum import Follower, Leader, Prospective, Unattached, majority
from pykafkad.raft.quorum_state import NO_LEADER
from wire.errors import ErrorCode
from wire.messages import begin_quorum_epoch_response as bqe_resp
from wire.messages import describe_quorum_response as dq_resp
from wire.messages import end_quorum_epoch_response as eqe_resp
from wire.messages import fetch_response as f_resp
from wire.messages import fetch_snapshot_response as fs_resp
from wire.messages import vote_response as v_resp

log = logging.getLogger("pykafkad.raft")

ZERO_UUID = bytes(16)
LISTENER_NAME = "CONTROLLER"


class InboundRequests:
    """Needs RaftMachine's state: quorum, log, config, node_id, cluster_id, voter_endpoints."""

    def handle_vote(self, req: Any, version: int, now: int) -> Any:
        def answer(error: int, granted: bool) -> Any:
            return v_resp.VoteResponse(
                error_code=ErrorCode.NONE,
                topics=[v_resp.TopicData(topic_name=TOPIC, partitions=[v_resp.PartitionData(
                    partition_index=0, error_code=error, leader_id=self.leader_id,
                    leader_epoch=self.epoch, vote_granted=granted)])],
                node_endpoints=[v_resp.NodeEndpoint(node_id=i, host=h, port=p)
                                for i, h, p in self._leader_endpoint(self.leader_id)])

        if not self._valid_cluster_id(req.cluster_id):
            return v_resp.VoteResponse(error_code=ErrorCode.INCONSISTENT_CLUSTER_ID)
        if not _single_partition(req.topics, "topic_name"):
            return v_resp.VoteResponse(error_code=ErrorCode.INVALID_REQUEST)
        p = req.topics[0].partitions[0]
        pre_vote = version >= 2 and p.pre_vote
        # a candidate has bumped its epoch past its log's; a prospective has not
        illegal_epoch = (p.last_offset_epoch > p.replica_epoch if pre_vote
                         else p.last_offset_epoch >= p.replica_epoch)
        if p.last_offset < 0 or p.last_offset_epoch < 0 or illegal_epoch:
            return answer(ErrorCode.INVALID_REQUEST, False)
        if p.replica_epoch < self.epoch:
            return answer(ErrorCode.FENCED_LEADER_EPOCH, False)
        if p.replica_id < 0:
            return answer(ErrorCode.INVALID_REQUEST, False)
        if p.replica_epoch > self.epoch:
            self._to_unattached(p.replica_epoch, now)
        if version >= 1 and req.voter_id >= 0 and req.voter_id != self.node_id:
            return answer(ErrorCode.INVALID_VOTER_KEY, False)
        up_to_date = self._is_log_up_to_date(p.last_offset_epoch, p.last_offset)
        granted = self.quorum.can_grant_vote(p.replica_id, up_to_date, pre_vote)
        s = self.quorum.state
        if granted and not pre_vote and isinstance(s, Unattached) and s.voted_id < 0:
            self.quorum.to_unattached_voted(p.replica_id, p.replica_epoch, now)
        elif granted and not pre_vote and isinstance(s, Prospective) and s.voted_id < 0:
            s.voted_id = p.replica_id
            self.quorum._persist(s)
        log.info("node %d: %s from %d for epoch %d %s", self.node_id,
                 "pre-vote" if pre_vote else "vote", p.replica_id, p.replica_epoch,
                 "granted" if granted else "rejected")
        return answer(ErrorCode.NONE, granted)

    def handle_begin_quorum_epoch(self, req: Any, version: int, now: int) -> Any:
        def answer(error: int) -> Any:
            return bqe_resp.BeginQuorumEpochResponse(
                error_code=ErrorCode.NONE,
                topics=[bqe_resp.TopicData(topic_name=TOPIC, partitions=[bqe_resp.PartitionData(
                    partition_index=0, error_code=error, leader_id=self.leader_id,
                    leader_epoch=self.epoch)])],
                node_endpoints=[bqe_resp.NodeEndpoint(node_id=i, host=h, port=p)
                                for i, h, p in self._leader_endpoint(self.leader_id)])

        if not self._valid_cluster_id(req.cluster_id):
            return bqe_resp.BeginQuorumEpochResponse(error_code=ErrorCode.INCONSISTENT_CLUSTER_ID)
        if not _single_partition(req.topics, "topic_name"):
            return bqe_resp.BeginQuorumEpochResponse(error_code=ErrorCode.INVALID_REQUEST)
        p = req.topics[0].partitions[0]
        if p.leader_epoch < self.epoch:
            return answer(ErrorCode.FENCED_LEADER_EPOCH)
        if p.leader_id < 0:
            return answer(ErrorCode.INVALID_REQUEST)
        if version >= 1 and req.voter_id >= 0 and req.voter_id != self.node_id:
            return answer(ErrorCode.INVALID_VOTER_KEY)
        if p.leader_id != self.node_id:
            s = self.quorum.state
            if not (isinstance(s, Follower) and s.epoch == p.leader_epoch
                    and s.leader_id == p.leader_id):
                self._to_follower(p.leader_epoch, p.leader_id, now)
        return answer(ErrorCode.NONE)

    def handle_end_quorum_epoch(self, req: Any, version: int, now: int) -> Any:
        def answer(error: int) -> Any:
            return eqe_resp.EndQuorumEpochResponse(
                error_code=ErrorCode.NONE,
                topics=[eqe_resp.TopicData(topic_name=TOPIC, partitions=[eqe_resp.PartitionData(
                    partition_index=0, error_code=error, leader_id=self.leader_id,
                    leader_epoch=self.epoch)])],
                node_endpoints=[eqe_resp.NodeEndpoint(node_id=i, host=h, port=p)
                                for i, h, p in self._leader_endpoint(self.leader_id)])

        if not self._valid_cluster_id(req.cluster_id):
            return eqe_resp.EndQuorumEpochResponse(error_code=ErrorCode.INCONSISTENT_CLUSTER_ID)
        if not _single_partition(req.topics, "topic_name"):
            return eqe_resp.EndQuorumEpochResponse(error_code=ErrorCode.INVALID_REQUEST)
        p = req.topics[0].partitions[0]
        if p.leader_epoch < self.epoch:
            return answer(ErrorCode.FENCED_LEADER_EPOCH)
        if p.leader_id < 0:
            return answer(ErrorCode.INVALID_REQUEST)
        self._maybe_transition(p.leader_id, p.leader_epoch, now)
        s = self.quorum.state
        if isinstance(s, Follower) and s.leader_id == p.leader_id and self.quorum.is_voter:
            # a v1 candidate is this node only with its directory (or none): Kafka counts an
            # entry naming another directory of this id as someone else's place in the list
            successors = (p.preferred_successors if version == 0
                          else [c.candidate_id if c.candidate_directory_id in (ZERO_UUID,
                                                                               self.directory_id)
                                else -1 for c in p.preferred_candidates])
            # the leader is going: look for the next one once this (short) backoff is over
            s.fetch_deadline = now + self._end_epoch_backoff(successors)
            self._changed()
        return answer(ErrorCode.NONE)

    def _end_epoch_backoff(self, successors: list[int]) -> int:
        """Kafka's strict exponential backoff by position in the preferred successors: the
        first stands at once, the last waits half the maximum, one not listed all of it."""
        most = self.config.election_backoff_max_ms
        position = successors.index(self.node_id) if self.node_id in successors else -1
        if position == 0:
            return 0
        if position < 0:
            return most
        base = most >> (len(successors) - 1)
        return min(most, base << (position - 1))

    def handle_fetch(self, req: Any, version: int, now: int) -> tuple[Any, bool]:
        """The response now, and whether it may wait for more (a long poll with nothing yet)."""
        if not self._valid_cluster_id(req.cluster_id):
            return f_resp.FetchResponse(error_code=ErrorCode.INCONSISTENT_CLUSTER_ID), False
        topics = req.topics
        if len(topics) != 1 or len(topics[0].partitions) != 1 or topics[0].partitions[0].partition != 0 \
                or (version >= 13 and topics[0].topic_id != TOPIC_ID) \
                or (version < 13 and topics[0].topic != TOPIC):
            return f_resp.FetchResponse(error_code=ErrorCode.INVALID_REQUEST), False
        fp = topics[0].partitions[0]
        if req.max_wait_ms < 0 or fp.fetch_offset < 0 or fp.last_fetched_epoch < 0 \
                or fp.last_fetched_epoch > fp.current_leader_epoch:
            return self._fetch_response(ErrorCode.INVALID_REQUEST, None), False
        error = self._validate_leader_only(fp.current_leader_epoch)
        if error is not None:
            return self._fetch_response(error, None), False
        s = self.quorum.state
        assert isinstance(s, Leader)
        replica_id = req.replica_state.replica_id if version >= 15 else req.replica_id
        latest = self.log.latest_snapshot_id()
        if fp.fetch_offset == 0 and latest is not None:
            return self._fetch_response(ErrorCode.NONE, None, snapshot=latest), False
        valid = self.log.validate_offset_and_epoch(fp.fetch_offset, fp.last_fetched_epoch)
        if valid.kind == DIVERGING:
            return self._fetch_response(ErrorCode.NONE, None, diverging=valid.offset_and_epoch), False
        if valid.kind == SNAPSHOT:
            return self._fetch_response(ErrorCode.NONE, None, snapshot=valid.offset_and_epoch), False
        records = self.log.read(fp.fetch_offset, max(fp.partition_max_bytes, 1))
        if replica_id >= 0:
            if s.replicas.update_replica(replica_id, getattr(fp, "replica_directory_id", ZERO_UUID),
                                         fp.fetch_offset, self.log.end_offset, now):
                self._changed()
            if replica_id in self.voters:
                s.acknowledged.add(replica_id)
                s.fetched_since_check.add(replica_id)
                if len(s.fetched_since_check | {self.node_id}) >= majority(len(self.voters)):
                    s.fetched_since_check.clear()
                    s.check_quorum_deadline = now + self.config.check_quorum_timeout_ms
        resp = self._fetch_response(ErrorCode.NONE, records)
        # KIP-1166 (v18): a replica whose known high watermark is behind the leader's is
        # answered at once, so that a commit reaches the followers and observers without
        # waiting out their long poll
        hw = self.high_watermark
        behind = version >= 18 and hw is not None and fp.high_watermark < hw
        return resp, not records and not behind and req.max_wait_ms > 0

    def _validate_leader_only(self, request_epoch: int) -> int | None:
        if request_epoch < self.epoch:
            return ErrorCode.FENCED_LEADER_EPOCH
        if request_epoch > self.epoch:
            return ErrorCode.UNKNOWN_LEADER_EPOCH
        if not isinstance(self.quorum.state, Leader):
            return ErrorCode.NOT_LEADER_OR_FOLLOWER
        if self.shutting_down:
            return ErrorCode.BROKER_NOT_AVAILABLE
        return None

    def _fetch_response(self, error: int, records: bytes | None, *,
                        diverging: OffsetAndEpoch | None = None,
                        snapshot: OffsetAndEpoch | None = None) -> Any:
        hw = self.high_watermark if error == ErrorCode.NONE else None
        part = f_resp.PartitionData(
            partition_index=0, error_code=error,
            high_watermark=-1 if hw is None else hw,
            log_start_offset=self.log.start_offset,
            records=records if records is not None else b"",
            current_leader=f_resp.LeaderIdAndEpoch(leader_id=self.leader_id,
                                                   leader_epoch=self.epoch))
        if diverging is not None:
            part.diverging_epoch = f_resp.EpochEndOffset(epoch=diverging.epoch,
                                                         end_offset=diverging.offset)
        if snapshot is not None:
            part.snapshot_id = f_resp.SnapshotId(end_offset=snapshot.offset, epoch=snapshot.epoch)
        return f_resp.FetchResponse(
            error_code=ErrorCode.NONE,
            responses=[f_resp.FetchableTopicResponse(topic=TOPIC, topic_id=TOPIC_ID,
                                                     partitions=[part])],
            node_endpoints=[f_resp.NodeEndpoint(node_id=i, host=h, port=p, rack=None)
                            for i, h, p in self._leader_endpoint(self.leader_id)])

    def handle_fetch_snapshot(self, req: Any, version: int, now: int) -> Any:
        if not self._valid_cluster_id(req.cluster_id):
            return fs_resp.FetchSnapshotResponse(error_code=ErrorCode.INCONSISTENT_CLUSTER_ID)
        if not _single_partition(req.topics, "name"):
            return fs_resp.FetchSnapshotResponse(error_code=ErrorCode.INVALID_REQUEST)
        p = req.topics[0].partitions[0]

        def answer(error: int, **kw: Any) -> Any:
            part = fs_resp.PartitionSnapshot(
                index=0, error_code=error,
                current_leader=fs_resp.LeaderIdAndEpoch(leader_id=self.leader_id,
                                                        leader_epoch=self.epoch), **kw)
            return fs_resp.FetchSnapshotResponse(
                error_code=ErrorCode.NONE,
                topics=[fs_resp.TopicSnapshot(name=TOPIC, partitions=[part])],
                node_endpoints=[fs_resp.NodeEndpoint(node_id=i, host=h, port=pt)
                                for i, h, pt in self._leader_endpoint(self.leader_id)])

        error = self._validate_leader_only(p.current_leader_epoch)
        if error is not None:
            return answer(error)
        sid = p.snapshot_id
        try:
            size, data = snapshots.read_chunk(self.log.dir, sid.end_offset, sid.epoch, p.position,
                                              max(req.max_bytes, 1))
        except FileNotFoundError:
            return answer(ErrorCode.SNAPSHOT_NOT_FOUND)
        if p.position < 0 or p.position >= size:
            return answer(ErrorCode.POSITION_OUT_OF_RANGE)
        return answer(ErrorCode.NONE, snapshot_id=fs_resp.SnapshotId(end_offset=sid.end_offset,
                                                                     epoch=sid.epoch),
                      size=size, position=p.position, unaligned_records=data)

    def handle_describe_quorum(self, req: Any, version: int, now: int) -> Any:
        topics = req.topics
        if len(topics) != 1 or topics[0].topic_name != TOPIC or len(topics[0].partitions) != 1 \
                or topics[0].partitions[0].partition_index != 0:
            return dq_resp.DescribeQuorumResponse(
                error_code=ErrorCode.NONE,
                topics=[dq_resp.TopicData(topic_name=t.topic_name, partitions=[
                    dq_resp.PartitionData(partition_index=p.partition_index,
                                          error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
                    for p in t.partitions]) for t in topics])
        s = self.quorum.state
        if not isinstance(s, Leader):
            return dq_resp.DescribeQuorumResponse(
                error_code=ErrorCode.NONE,
                topics=[dq_resp.TopicData(topic_name=TOPIC, partitions=[dq_resp.PartitionData(
                    partition_index=0, error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER,
                    leader_id=NO_LEADER, leader_epoch=-1, high_watermark=-1)])])

        def replica(r: Any, local: bool) -> Any:
            return dq_resp.ReplicaState(
                replica_id=r.replica_id, replica_directory_id=r.directory_id,
                log_end_offset=r.end_offset,
                last_fetch_timestamp=now if local else r.last_fetch_ms,
                last_caught_up_timestamp=now if local else r.last_caught_up_ms)

        voters = [replica(r, r.replica_id == self.node_id) for r in s.replicas.voters.values()]
        observers = [replica(r, False) for r in s.replicas.observer_states(now)]
        hw = s.replicas.high_watermark
        return dq_resp.DescribeQuorumResponse(
            error_code=ErrorCode.NONE,
            topics=[dq_resp.TopicData(topic_name=TOPIC, partitions=[dq_resp.PartitionData(
                partition_index=0, error_code=ErrorCode.NONE, leader_id=self.node_id,
                leader_epoch=s.epoch, high_watermark=-1 if hw is None else hw,
                current_voters=voters, observers=observers)])],
            nodes=[dq_resp.Node(node_id=v, listeners=[dq_resp.Listener(
                name=LISTENER_NAME, host=h, port=p)])
                for v, (h, p) in sorted(self.voter_endpoints.items()) if v in self.voters])


def _single_partition(topics: list[Any], name_attr: str) -> bool:
    return (len(topics) == 1 and getattr(topics[0], name_attr) == TOPIC
            and len(topics[0].partitions) == 1
            and getattr(topics[0].partitions[0], "partition_index",
                        getattr(topics[0].partitions[0], "partition", 0)) == 0)
