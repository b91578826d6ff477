"""A request's error answer for a fault rule: the request's own response shape with the
error where Kafka's ``getErrorResponse`` puts it (per partition, per topic, per group or key,
or at the top level), so that a client reacts as it would to Kafka's error."""

from __future__ import annotations

from typing import Any

from pykafkad.controller.result import DEFAULT_MESSAGES
from pykafkad.kraft.error_responses import error_response as controller_error_response
from wire.errors import ErrorCode
from wire.messages import fetch_response as fetch
from wire.messages import find_coordinator_response as find_coordinator
from wire.messages import list_offsets_response as list_offsets
from wire.messages import offset_commit_response as offset_commit
from wire.messages import offset_fetch_response as offset_fetch
from wire.messages import offset_for_leader_epoch_response as epoch
from wire.messages import produce_response as produce
from wire.messages.add_partitions_to_txn_response import (
    AddPartitionsToTxnPartitionResult,
    AddPartitionsToTxnResponse,
    AddPartitionsToTxnTopicResult,
)
from wire.messages.delete_records_response import (
    DeleteRecordsPartitionResult,
    DeleteRecordsResponse,
    DeleteRecordsTopicResult,
)
from wire.messages.describe_groups_response import DescribedGroup, DescribeGroupsResponse
from wire.messages.init_producer_id_response import InitProducerIdResponse
from wire.messages.join_group_response import JoinGroupResponse
from wire.messages.sync_group_response import SyncGroupResponse
from wire.messages.txn_offset_commit_response import (
    TxnOffsetCommitResponse,
    TxnOffsetCommitResponsePartition,
    TxnOffsetCommitResponseTopic,
)

#: Fetch errors Kafka answers for the whole request (the fetch session's), not per partition
FETCH_TOP_LEVEL = frozenset({
    ErrorCode.FETCH_SESSION_ID_NOT_FOUND, ErrorCode.INVALID_FETCH_SESSION_EPOCH,
    ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR, ErrorCode.UNKNOWN_SERVER_ERROR})
#: Kafka's Errors.X.message() for the errors FindCoordinator answers
COORDINATOR_MESSAGES = {
    ErrorCode.COORDINATOR_NOT_AVAILABLE: "The coordinator is not available.",
    ErrorCode.NOT_COORDINATOR: "This is not the correct coordinator.",
    ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
        "The coordinator is loading and hence can't process requests.",
}
#: JoinGroup errors of the group's own state, whose answer echoes the member id
MEMBER_ERRORS = frozenset({ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_INSTANCE_ID,
                           ErrorCode.ILLEGAL_GENERATION, ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                           ErrorCode.GROUP_MAX_SIZE_REACHED})
#: JoinGroup v7+ answers a null protocol name on errors (an empty one before)
JOIN_GROUP_NULLABLE_PROTOCOL_VERSION = 7
#: FindCoordinator v4+ answers per key
COORDINATOR_KEYS_VERSION = 4
#: OffsetFetch v8+ answers per group
OFFSET_FETCH_GROUPS_VERSION = 8


def _produce(req: Any, code: int, version: int) -> Any:
    if req.acks == 0:
        return None  # acks=0 gets no answer, error or not
    return produce.ProduceResponse(responses=[
        produce.TopicProduceResponse(name=t.name, topic_id=t.topic_id, partition_responses=[
            produce.PartitionProduceResponse(index=p.index, error_code=code, base_offset=-1,
                                             log_append_time_ms=-1, log_start_offset=-1)
            for p in t.partition_data])
        for t in req.topic_data])


def _fetch(req: Any, code: int, version: int) -> Any:
    if code in FETCH_TOP_LEVEL:
        return fetch.FetchResponse(error_code=code, session_id=0)
    # session 0: a session the client had is closed and its next fetch is a full one
    return fetch.FetchResponse(session_id=0, responses=[
        fetch.FetchableTopicResponse(topic=t.topic, topic_id=t.topic_id, partitions=[
            fetch.PartitionData(partition_index=p.partition, error_code=code, high_watermark=-1,
                                last_stable_offset=-1, log_start_offset=-1, records=b"")
            for p in t.partitions])
        for t in req.topics])


def _list_offsets(req: Any, code: int, version: int) -> Any:
    return list_offsets.ListOffsetsResponse(topics=[
        list_offsets.ListOffsetsTopicResponse(name=t.name, partitions=[
            list_offsets.ListOffsetsPartitionResponse(partition_index=p.partition_index,
                                                      error_code=code)
            for p in t.partitions])
        for t in req.topics])


def _offset_commit(req: Any, code: int, version: int) -> Any:
    return offset_commit.OffsetCommitResponse(topics=[
        offset_commit.OffsetCommitResponseTopic(name=t.name, topic_id=t.topic_id, partitions=[
            offset_commit.OffsetCommitResponsePartition(partition_index=p.partition_index,
                                                        error_code=code)
            for p in t.partitions])
        for t in req.topics])


def _txn_offset_commit(req: Any, code: int, version: int) -> Any:
    return TxnOffsetCommitResponse(topics=[
        TxnOffsetCommitResponseTopic(name=t.name, partitions=[
            TxnOffsetCommitResponsePartition(partition_index=p.partition_index, error_code=code)
            for p in t.partitions])
        for t in req.topics])


def _offset_fetch(req: Any, code: int, version: int) -> Any:
    if version >= OFFSET_FETCH_GROUPS_VERSION:
        return offset_fetch.OffsetFetchResponse(groups=[
            offset_fetch.OffsetFetchResponseGroup(group_id=g.group_id, error_code=code)
            for g in req.groups])
    return offset_fetch.OffsetFetchResponse(error_code=code)


def _offset_for_leader_epoch(req: Any, code: int, version: int) -> Any:
    return epoch.OffsetForLeaderEpochResponse(topics=[
        epoch.OffsetForLeaderTopicResult(topic=t.topic, partitions=[
            epoch.EpochEndOffset(error_code=code, partition=p.partition)
            for p in t.partitions])
        for t in req.topics])


def _add_partitions_to_txn(req: Any, code: int, version: int) -> Any:
    if req.transactions:  # v4+ (brokers' verification): top level, as Kafka
        return AddPartitionsToTxnResponse(error_code=code)
    return AddPartitionsToTxnResponse(results_by_topic_v3_and_below=[
        AddPartitionsToTxnTopicResult(name=t.name, results_by_partition=[
            AddPartitionsToTxnPartitionResult(partition_index=p, partition_error_code=code)
            for p in t.partitions])
        for t in req.v3_and_below_topics])


def _delete_records(req: Any, code: int, version: int) -> Any:
    return DeleteRecordsResponse(topics=[
        DeleteRecordsTopicResult(name=t.name, partitions=[
            DeleteRecordsPartitionResult(partition_index=p.partition_index, low_watermark=-1,
                                         error_code=code)
            for p in t.partitions])
        for t in req.topics])


def _describe_groups(req: Any, code: int, version: int) -> Any:
    return DescribeGroupsResponse(groups=[
        DescribedGroup(group_id=g, error_code=code, group_state="", protocol_type="",
                       protocol_data="") for g in req.groups])


def _join_group(req: Any, code: int, version: int) -> Any:
    """As Kafka answers a failed join: no generation, no protocol; the member id echoed for
    the errors of the group's own state (UNKNOWN_MEMBER_ID ...), empty for those found before
    (NOT_COORDINATOR ...)."""
    nullable = version >= JOIN_GROUP_NULLABLE_PROTOCOL_VERSION
    member_id = req.member_id if code in MEMBER_ERRORS else ""
    return JoinGroupResponse(error_code=code, generation_id=-1, member_id=member_id,
                             protocol_type=None, protocol_name=None if nullable else "",
                             leader="", members=[])


def _sync_group(req: Any, code: int, version: int) -> Any:
    return SyncGroupResponse(error_code=code, protocol_type=None, protocol_name=None,
                             assignment=b"")


def _init_producer_id(req: Any, code: int, version: int) -> Any:
    return InitProducerIdResponse(error_code=code, producer_id=-1, producer_epoch=-1)


def _find_coordinator(req: Any, code: int, version: int) -> Any:
    message = COORDINATOR_MESSAGES.get(code, DEFAULT_MESSAGES.get(code)) if code else None
    if version >= COORDINATOR_KEYS_VERSION:
        return find_coordinator.FindCoordinatorResponse(coordinators=[
            find_coordinator.Coordinator(key=k, node_id=-1, host="", port=-1, error_code=code,
                                         error_message=message)
            for k in req.coordinator_keys])
    return find_coordinator.FindCoordinatorResponse(error_code=code, error_message=message,
                                                    node_id=-1, host="", port=-1)


ERROR_ANSWERS = {
    "ProduceRequest": _produce,
    "FetchRequest": _fetch,
    "ListOffsetsRequest": _list_offsets,
    "OffsetCommitRequest": _offset_commit,
    "TxnOffsetCommitRequest": _txn_offset_commit,
    "OffsetFetchRequest": _offset_fetch,
    "OffsetForLeaderEpochRequest": _offset_for_leader_epoch,
    "AddPartitionsToTxnRequest": _add_partitions_to_txn,
    "DeleteRecordsRequest": _delete_records,
    "DescribeGroupsRequest": _describe_groups,
    "FindCoordinatorRequest": _find_coordinator,
    "JoinGroupRequest": _join_group,
    "SyncGroupRequest": _sync_group,
    "InitProducerIdRequest": _init_producer_id,
}


def error_answer(request: Any, code: int, version: int) -> Any:
    """The response to send instead of handling ``request``; None for acks=0 Produce."""
    build = ERROR_ANSWERS.get(type(request).__name__)
    if build is not None:
        return build(request, code, version)
    # the controller APIs' per-item shapes, else the top-level error_code (JoinGroup,
    # Heartbeat, InitProducerId, EndTxn ...)
    return controller_error_response(request, code, None)


def set_topic_errors(response: Any, code: int, topic: str | None) -> Any:
    """A Metadata answer with ``code`` on its topics (``topic`` only, when given): Kafka's
    Metadata errors are per topic; the brokers and controller stay, so clients keep a
    cluster to talk to.  REBOOTSTRAP_REQUIRED is v13's top-level error."""
    if code == ErrorCode.REBOOTSTRAP_REQUIRED:
        response.error_code = code
        return response
    for t in response.topics:
        if topic is None or t.name == topic:
            t.error_code = code
            t.partitions = []
    return response
