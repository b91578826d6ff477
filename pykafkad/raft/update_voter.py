"""UpdateRaftVoter (82) on the leader (KIP-853): a voter tells the leader its current
listeners and supported kraft.version range once it follows it, as every Kafka 4.x
controller does, static quorum or not. Kafka's checks and order (KafkaRaftClient and its
UpdateVoterHandler): the cluster id, the leader epoch, a voter key with a directory id and
an endpoint on the quorum's listener; then no voter change pending and a high watermark
in this epoch. With kraft.version 0 the leader only keeps the update in memory (Kafka keeps
it for an upgrade to kraft.version 1) and accepts any voter id of the static set; with 1 the
last VotersRecord must be committed, the voter (id and directory id) must be in it, and the
leader appends the updated VotersRecord. The answer never waits for a commit."""

from __future__ import annotations

import logging
from typing import Any

from pykafkad.raft.inbound import LISTENER_NAME
from pykafkad.raft.machine import NotLeaderError
from pykafkad.raft.quorum import Leader
from pykafkad.raft.voter_records import ZERO_UUID
from wire.errors import ErrorCode
from wire.messages.update_raft_voter_response import CurrentLeader, UpdateRaftVoterResponse
from wire.messages.voters_record import Endpoint, KRaftVersionFeature, Voter, VotersRecord

log = logging.getLogger("pykafkad.raft")


def _answer(raft: Any, error: int) -> UpdateRaftVoterResponse:
    m = raft.machine
    leader, epoch = m.leader_id, m.epoch
    host, port = "", -1
    if leader is not None and leader >= 0:
        try:
            host, port = m.endpoint(leader)
        except KeyError:
            pass
    return UpdateRaftVoterResponse(error_code=error, current_leader=CurrentLeader(
        leader_id=-1 if leader is None else leader, leader_epoch=epoch, host=host, port=port))


def update_voter(raft: Any, req: Any) -> UpdateRaftVoterResponse:
    m = raft.machine
    if req.cluster_id is not None and req.cluster_id != m.cluster_id:
        return _answer(raft, ErrorCode.INCONSISTENT_CLUSTER_ID)
    error = m._validate_leader_only(req.current_leader_epoch)
    if error is not None:
        return _answer(raft, error)
    if req.voter_id < 0 or req.voter_directory_id == ZERO_UUID \
            or not any(lst.name == LISTENER_NAME for lst in req.listeners):
        return _answer(raft, ErrorCode.INVALID_REQUEST)
    s = m.quorum.state
    if raft.voter_change_pending or not isinstance(s, Leader) \
            or s.replicas.high_watermark is None:
        return _answer(raft, ErrorCode.REQUEST_TIMED_OUT)
    hw = s.replicas.high_watermark
    if m.kraft_version >= 1 and (m.voters_record is None or m.voters_offset >= hw):
        return _answer(raft, ErrorCode.REQUEST_TIMED_OUT)
    supported = req.k_raft_version_feature
    if not supported.min_supported_version <= m.kraft_version \
            <= supported.max_supported_version:
        return _answer(raft, ErrorCode.INVALID_REQUEST)
    updated = Voter(req.voter_id, req.voter_directory_id,
                    [Endpoint(lst.name, lst.host, lst.port) for lst in req.listeners],
                    KRaftVersionFeature(supported.min_supported_version,
                                        supported.max_supported_version))
    if m.kraft_version < 1:
        if req.voter_id not in m.voters:
            return _answer(raft, ErrorCode.VOTER_NOT_FOUND)
        epoch, voters = raft.static_voter_updates
        if epoch != s.epoch:
            voters = {}
        voters[req.voter_id] = updated
        raft.static_voter_updates = (s.epoch, voters)
        log.info("leader %d: updated in-memory voter %d (UpdateRaftVoter)", m.node_id,
                 req.voter_id)
        return _answer(raft, ErrorCode.NONE)
    record = m.voters_record
    if not any(v.voter_id == req.voter_id and v.voter_directory_id == req.voter_directory_id
               for v in record.voters):
        return _answer(raft, ErrorCode.VOTER_NOT_FOUND)
    voters = [updated if v.voter_id == req.voter_id else v for v in record.voters]
    try:
        m.append_voters(VotersRecord(0, voters), raft.clock())
    except NotLeaderError:
        return _answer(raft, ErrorCode.NOT_LEADER_OR_FOLLOWER)
    raft._after_change()
    log.info("leader %d: updated voter %d (UpdateRaftVoter)", m.node_id, req.voter_id)
    return _answer(raft, ErrorCode.NONE)
