"""AddRaftVoter (80) and RemoveRaftVoter (81) on the leader of a dynamic quorum (KIP-853), with
Kafka's checks, order and messages (its AddVoterHandler / RemoveVoterHandler):

one change at a time; the leader must have a high watermark in its epoch; kraft.version must be
1; the previous VotersRecord must be committed; an added id must not be a voter already and
must answer ApiVersions with a kraft.version range holding the finalized one and be caught up
with the leader's log; a removed voter must be in the set (id and directory id). The leader
then appends the new VotersRecord (which counts at once) and answers once it is committed.
"""

from __future__ import annotations

import logging
from typing import Any

import trio

from pykafkad.network.client import NodeClient, NodeUnavailableError
from pykafkad.raft.inbound import LISTENER_NAME
from pykafkad.raft.machine import NotLeaderError
from pykafkad.raft.quorum import Leader
from pykafkad.raft.voter_records import ZERO_UUID, replica_key, voter_keys
from wire.errors import ErrorCode
from wire.messages.add_raft_voter_response import AddRaftVoterResponse
from wire.messages.api_versions_request import ApiVersionsRequest
from wire.messages.remove_raft_voter_response import RemoveRaftVoterResponse
from wire.messages.voters_record import Endpoint, KRaftVersionFeature, Voter, VotersRecord

log = logging.getLogger("pykafkad.raft")


class VoterChangeRefused(Exception):
    def __init__(self, code: int, message: str | None):
        super().__init__(message)
        self.code = code
        self.message = message


def _check_request(raft: Any, cluster_id: str | None, voter_id: int, directory_id: bytes,
                   what: str) -> None:
    """What Kafka checks before the leader's state: the cluster id, then the voter key."""
    if cluster_id is not None and cluster_id != raft.machine.cluster_id:
        raise VoterChangeRefused(
            ErrorCode.INCONSISTENT_CLUSTER_ID,
            f'The given id "{cluster_id}" doesn\'t match the cluster id '
            f'"{raft.machine.cluster_id}"')
    if voter_id < 0 or directory_id == ZERO_UUID:
        raise VoterChangeRefused(ErrorCode.INVALID_REQUEST,
                                 f"{what} voter request didn't include a valid voter")


def _common_checks(raft: Any, what: str) -> Leader:
    m = raft.machine
    s = m.quorum.state
    if not isinstance(s, Leader) or m.shutting_down:
        raise VoterChangeRefused(ErrorCode.NOT_LEADER_OR_FOLLOWER, None)
    if raft.voter_change_pending:
        raise VoterChangeRefused(
            ErrorCode.REQUEST_TIMED_OUT,
            "Request timed out waiting for leader to handle previous add voter request"
            if what == "adding" else
            "Request timed out waiting for leader to handle previous add or remove voter request")
    hw = s.replicas.high_watermark
    if hw is None:
        raise VoterChangeRefused(
            ErrorCode.REQUEST_TIMED_OUT,
            "Request timed out waiting for leader to establish HWM and fence previous voter "
            "changes")
    if m.kraft_version < 1:
        raise VoterChangeRefused(
            ErrorCode.UNSUPPORTED_VERSION,
            f"Cluster doesn't support {what} voter because the kraft.version feature is "
            f"{m.kraft_version}")
    if m.voters_record is None or m.voters_offset >= hw:
        at = "Optional.empty" if m.voters_record is None else f"Optional[{m.voters_offset}]"
        raise VoterChangeRefused(
            ErrorCode.REQUEST_TIMED_OUT,
            f"Request timed out waiting for voters to commit the latest voter change at {at} "
            f"with HWM {hw}")
    return s


async def _kraft_version_range(host: str, port: int, timeout_s: float) -> tuple[int, int] | None:
    """The new voter's supported kraft.version (ApiVersions), None when it does not list it."""
    client = NodeClient(host, port, client_id="raft-client-add-voter")
    try:
        resp = await client.request(
            ApiVersionsRequest(client_software_name="apache-kafka-java",
                               client_software_version="4.4.0"), timeout_s=timeout_s)
    finally:
        await client.aclose()
    if resp.error_code != ErrorCode.NONE:
        raise VoterChangeRefused(
            ErrorCode.REQUEST_TIMED_OUT,
            "Aborted add voter operation for since API_VERSIONS returned an error "
            f"{ErrorCode(resp.error_code).name}")
    f = next((f for f in resp.supported_features if f.name == "kraft.version"), None)
    return None if f is None else (f.min_version, f.max_version)


async def _commit(raft: Any, record: VotersRecord, timeout_s: float, wait: bool) -> None:
    m = raft.machine
    try:
        offset = m.append_voters(record, raft.clock())
    except NotLeaderError as e:
        raise VoterChangeRefused(ErrorCode.NOT_LEADER_OR_FOLLOWER, None) from e
    raft._after_change()
    if not wait:
        return
    with trio.move_on_after(timeout_s) as scope:
        await raft.wait_committed(offset)
    if scope.cancelled_caught:
        raise VoterChangeRefused(ErrorCode.REQUEST_TIMED_OUT, None)


async def add_voter(raft: Any, req: Any, version: int) -> AddRaftVoterResponse:
    try:
        await _add_voter(raft, req, version)
    except VoterChangeRefused as e:
        return AddRaftVoterResponse(error_code=e.code, error_message=e.message)
    return AddRaftVoterResponse(error_code=ErrorCode.NONE, error_message=None)


async def _add_voter(raft: Any, req: Any, version: int) -> None:
    m = raft.machine
    key = replica_key(req.voter_id, req.voter_directory_id)
    _check_request(raft, req.cluster_id, req.voter_id, req.voter_directory_id, "Add")
    listener = next((lst for lst in req.listeners if lst.name == LISTENER_NAME), None)
    if listener is None:
        endpoints = ", ".join(f"ListenerName({lst.name})={lst.host}/<unresolved>:{lst.port}"
                              for lst in req.listeners)
        raise VoterChangeRefused(
            ErrorCode.INVALID_REQUEST,
            f"Add voter request didn't include the endpoint (Endpoints(endpoints={{{endpoints}}}"
            f")) for the default listener ListenerName({LISTENER_NAME})")
    s = _common_checks(raft, "adding")
    if req.voter_id in m.voters:
        raise VoterChangeRefused(
            ErrorCode.DUPLICATE_VOTER,
            f"The voter id for {key} is already part of the set of voters "
            f"{voter_keys(m.voters_record)}.")
    timeout_s = max(0, req.timeout_ms) / 1000
    raft.voter_change_pending = True
    try:
        try:
            supported = await _kraft_version_range(listener.host, listener.port,
                                                   raft.config.request_timeout_ms / 1000)
        except (NodeUnavailableError, trio.TooSlowError, OSError) as e:
            raise VoterChangeRefused(ErrorCode.REQUEST_TIMED_OUT,
                                     f"New voter {key} is not ready to receive requests") from e
        if supported is None or not supported[0] <= m.kraft_version <= supported[1]:
            shown = "(min: 0, max: 0)" if supported is None else \
                f"(min: {supported[0]}, max: {supported[1]}"
            raise VoterChangeRefused(
                ErrorCode.INVALID_REQUEST,
                f"Aborted add voter operation for {key} since the kraft.version range {shown} "
                f"doesn't support the finalized version {m.kraft_version}")
        state = s.replicas.replica(req.voter_id)
        now = raft.clock()
        if not isinstance(m.quorum.state, Leader) or state is None or \
                state.last_caught_up_ms < now - m.config.fetch_timeout_ms:
            raise VoterChangeRefused(
                ErrorCode.REQUEST_TIMED_OUT,
                f"Aborted add voter operation for {key} since it is lagging behind")
        voters = list(m.voters_record.voters) + [Voter(
            req.voter_id, req.voter_directory_id,
            [Endpoint(lst.name, lst.host, lst.port) for lst in req.listeners],
            KRaftVersionFeature(supported[0], supported[1]))]
        log.info("leader %d adds voter %s", m.node_id, key)
        await _commit(raft, VotersRecord(0, voters), timeout_s,
                      wait=getattr(req, "ack_when_committed", True) or version < 1)
    finally:
        raft.voter_change_pending = False


async def remove_voter(raft: Any, req: Any, version: int) -> RemoveRaftVoterResponse:
    m = raft.machine
    try:
        _check_request(raft, req.cluster_id, req.voter_id, req.voter_directory_id, "Remove")
        _common_checks(raft, "removing")
        record = m.voters_record
        kept = [v for v in record.voters if not (
            v.voter_id == req.voter_id and v.voter_directory_id == req.voter_directory_id)]
        if len(kept) == len(record.voters) or not kept:
            raise VoterChangeRefused(
                ErrorCode.VOTER_NOT_FOUND,
                f"Cannot remove voter {replica_key(req.voter_id, req.voter_directory_id)} "
                f"from the set of voters {voter_keys(record)}")
        raft.voter_change_pending = True
        try:
            log.info("leader %d removes voter %s", m.node_id,
                     replica_key(req.voter_id, req.voter_directory_id))
            await _commit(raft, VotersRecord(0, kept), raft.config.request_timeout_ms / 1000,
                          wait=True)
        finally:
            raft.voter_change_pending = False
    except VoterChangeRefused as e:
        return RemoveRaftVoterResponse(error_code=e.code, error_message=e.message)
    return RemoveRaftVoterResponse(error_code=ErrorCode.NONE, error_message=None)
