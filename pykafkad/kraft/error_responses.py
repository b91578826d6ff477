"""A controller API's answer when the request cannot be handled here (Kafka's
``request.getErrorResponse(e)``): the error on every item the request named, or at the top
level for APIs that have one. NOT_CONTROLLER on an inactive controller is the common case."""

from __future__ import annotations

from typing import Any

from wire.messages import API_KEYS
from wire.messages import delete_share_group_state_response as delete_state
from wire.messages import initialize_share_group_state_response as initialize_state
from wire.messages import read_share_group_state_response as read_state
from wire.messages import read_share_group_state_summary_response as read_summary
from wire.messages import write_share_group_state_response as write_state
from wire.messages.alter_client_quotas_response import (
    AlterClientQuotasResponse,
    EntityData,
    EntryData,
)
from wire.messages.alter_configs_response import AlterConfigsResourceResponse as LegacyResult
from wire.messages.alter_configs_response import AlterConfigsResponse
from wire.messages.alter_partition_reassignments_response import (
    AlterPartitionReassignmentsResponse,
)
from wire.messages.alter_replica_log_dirs_response import (
    AlterReplicaLogDirPartitionResult,
    AlterReplicaLogDirsResponse,
    AlterReplicaLogDirTopicResult,
)
from wire.messages.alter_user_scram_credentials_response import (
    AlterUserScramCredentialsResponse,
    AlterUserScramCredentialsResult,
)
from wire.messages.create_acls_response import AclCreationResult, CreateAclsResponse
from wire.messages.create_partitions_response import (
    CreatePartitionsResponse,
    CreatePartitionsTopicResult,
)
from wire.messages.create_topics_response import CreatableTopicResult, CreateTopicsResponse
from wire.messages.delete_acls_response import DeleteAclsFilterResult, DeleteAclsResponse
from wire.messages.delete_topics_response import DeletableTopicResult, DeleteTopicsResponse
from wire.messages.elect_leaders_response import (
    ElectLeadersResponse,
    PartitionResult,
    ReplicaElectionResult,
)
from wire.messages.incremental_alter_configs_response import (
    AlterConfigsResourceResponse,
    IncrementalAlterConfigsResponse,
)
from wire.messages.write_txn_markers_response import (
    WritableTxnMarkerPartitionResult,
    WritableTxnMarkerResult,
    WritableTxnMarkerTopicResult,
    WriteTxnMarkersResponse,
)
from wire.primitives import ZERO_UUID

#: Kafka's QuorumController.ACTIVE_CONTROLLER_EXCEPTION_TEXT_PREFIX
ACTIVE_CONTROLLER_PREFIX = "The active controller appears to be node "


def not_controller_message(leader_id: int) -> str:
    """Kafka's NotControllerException text: who leads the quorum, when known."""
    if leader_id >= 0:
        return f"{ACTIVE_CONTROLLER_PREFIX}{leader_id}."
    return "No controller appears to be active."


#: the share-state APIs (83-87): their per-topic result and per-partition result types
SHARE_STATE_REQUESTS = {
    "InitializeShareGroupStateRequest": (initialize_state.InitializeStateResult,
                                         initialize_state.PartitionResult),
    "ReadShareGroupStateRequest": (read_state.ReadStateResult, read_state.PartitionResult),
    "WriteShareGroupStateRequest": (write_state.WriteStateResult, write_state.PartitionResult),
    "DeleteShareGroupStateRequest": (delete_state.DeleteStateResult,
                                     delete_state.PartitionResult),
    "ReadShareGroupStateSummaryRequest": (read_summary.ReadStateSummaryResult,
                                          read_summary.PartitionResult),
}


def error_response(request: Any, code: int, message: str | None) -> Any:
    name = type(request).__name__
    if name == "CreateTopicsRequest":
        return CreateTopicsResponse(topics=[
            CreatableTopicResult(name=t.name, topic_id=ZERO_UUID, error_code=code,
                                 error_message=message) for t in request.topics])
    if name == "DeleteTopicsRequest":
        results = [DeletableTopicResult(name=n, topic_id=ZERO_UUID, error_code=code,
                                        error_message=message)
                   for n in request.topic_names or []]
        results += [DeletableTopicResult(name=t.name, topic_id=t.topic_id, error_code=code,
                                         error_message=message) for t in request.topics or []]
        return DeleteTopicsResponse(responses=results)
    if name == "CreatePartitionsRequest":
        return CreatePartitionsResponse(results=[
            CreatePartitionsTopicResult(name=t.name, error_code=code, error_message=message)
            for t in request.topics])
    if name == "IncrementalAlterConfigsRequest":
        return IncrementalAlterConfigsResponse(responses=[
            AlterConfigsResourceResponse(error_code=code, error_message=message,
                                         resource_type=r.resource_type,
                                         resource_name=r.resource_name)
            for r in request.resources])
    if name == "AlterConfigsRequest":
        return AlterConfigsResponse(responses=[
            LegacyResult(error_code=code, error_message=message,
                         resource_type=r.resource_type, resource_name=r.resource_name)
            for r in request.resources])
    if name == "ElectLeadersRequest":
        return ElectLeadersResponse(error_code=code, replica_election_results=[
            ReplicaElectionResult(topic=tp.topic, partition_result=[
                PartitionResult(partition_id=p, error_code=code, error_message=message)
                for p in tp.partitions])
            for tp in request.topic_partitions or []])
    if name == "AlterPartitionReassignmentsRequest":
        return AlterPartitionReassignmentsResponse(error_code=code, error_message=message,
                                                   responses=[])
    if name == "CreateAclsRequest":
        return CreateAclsResponse(throttle_time_ms=0, results=[
            AclCreationResult(error_code=code, error_message=message) for _ in request.creations])
    if name == "DeleteAclsRequest":
        return DeleteAclsResponse(throttle_time_ms=0, filter_results=[
            DeleteAclsFilterResult(error_code=code, error_message=message, matching_acls=[])
            for _ in request.filters])
    if name == "AlterUserScramCredentialsRequest":
        users = dict.fromkeys([*(d.name for d in request.deletions),
                               *(u.name for u in request.upsertions)])
        return AlterUserScramCredentialsResponse(throttle_time_ms=0, results=[
            AlterUserScramCredentialsResult(user=u, error_code=code, error_message=message)
            for u in users])
    if name == "AlterClientQuotasRequest":
        return AlterClientQuotasResponse(throttle_time_ms=0, entries=[
            EntryData(error_code=code, error_message=message, entity=[
                EntityData(entity_type=e.entity_type, entity_name=e.entity_name)
                for e in entry.entity]) for entry in request.entries])
    if name == "WriteTxnMarkersRequest":
        return WriteTxnMarkersResponse(markers=[
            WritableTxnMarkerResult(producer_id=m.producer_id, topics=[
                WritableTxnMarkerTopicResult(name=t.name, partitions=[
                    WritableTxnMarkerPartitionResult(partition_index=p, error_code=code)
                    for p in t.partition_indexes]) for t in m.topics])
            for m in request.markers])
    if name == "AlterReplicaLogDirsRequest":
        return AlterReplicaLogDirsResponse(throttle_time_ms=0, results=[
            AlterReplicaLogDirTopicResult(topic_name=t.name, partitions=[
                AlterReplicaLogDirPartitionResult(partition_index=p, error_code=code)
                for p in t.partitions]) for d in request.dirs for t in d.topics])
    if name == "DescribeClientQuotasRequest":  # Kafka answers no entries at all (null)
        response = API_KEYS[request.API_KEY].response_type()()
        response.error_code, response.error_message, response.entries = code, message, None
        return response
    if name in SHARE_STATE_REQUESTS:
        response = API_KEYS[request.API_KEY].response_type()()
        result, partition = SHARE_STATE_REQUESTS[name]
        response.results = [result(topic_id=t.topic_id, partitions=[
            partition(partition=p.partition, error_code=code, error_message=message)
            for p in t.partitions]) for t in request.topics]
        return response
    response = API_KEYS[request.API_KEY].response_type()()
    if "error_code" in response.__slots__:
        response.error_code = code
    if "error_message" in response.__slots__:
        response.error_message = message
    return response


def has_error(response: Any, code: int) -> bool:
    """Whether ``code`` is anywhere in the response (Kafka's ``errorCounts().containsKey``)."""
    stack = [response]
    while stack:
        obj = stack.pop()
        for slot in getattr(obj, "__slots__", ()):
            value = getattr(obj, slot, None)
            if slot == "error_code" and value == code:
                return True
            if isinstance(value, list) and value and hasattr(value[0], "__slots__"):
                stack.extend(value)
    return False
