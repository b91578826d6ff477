"""A fault rule's error answer has the shape Kafka's own answer with that error has: asked the
same request naming a topic Apache Kafka 4.4.0 does not have, Kafka answers
UNKNOWN_TOPIC_OR_PARTITION per partition; pykafkad, with a rule answering that error, sends
the same response, field for field.  Likewise for the group and producer-id APIs, with the
error Kafka's coordinators answer (a join or sync by an unknown member, an InitProducerId
naming a producer id Kafka does not know)."""

from __future__ import annotations

import time
import uuid

import pytest

from compat.wire_client import WireClient
from tests.integration.clients import WAIT_S, needs_java
from wire.errors import ErrorCode
from wire.messages.delete_records_request import (
    DeleteRecordsPartition,
    DeleteRecordsRequest,
    DeleteRecordsTopic,
)
from wire.messages.fetch_request import FetchPartition, FetchRequest, FetchTopic
from wire.messages.find_coordinator_request import FindCoordinatorRequest
from wire.messages.init_producer_id_request import InitProducerIdRequest
from wire.messages.join_group_request import JoinGroupRequest, JoinGroupRequestProtocol
from wire.messages.list_offsets_request import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsTopic,
)
from wire.messages.offset_for_leader_epoch_request import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
)
from wire.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from wire.messages.sync_group_request import SyncGroupRequest
from wire.records.batch import build_batch

pytestmark = needs_java


def requests(topic: str) -> dict[str, tuple[int, int, object]]:
    """name -> (api key, version, request), each naming partition 0 of ``topic``."""
    return {
        "Produce": (0, 9, ProduceRequest(acks=1, timeout_ms=5000, topic_data=[
            TopicProduceData(name=topic, partition_data=[
                PartitionProduceData(index=0, records=build_batch([(b"k", b"v")]))])])),
        "Fetch": (1, 12, FetchRequest(
            replica_id=-1, max_wait_ms=10, min_bytes=1, max_bytes=1000, isolation_level=0,
            session_id=0, session_epoch=-1, rack_id="", forgotten_topics_data=[],
            topics=[FetchTopic(topic=topic, partitions=[FetchPartition(
                partition=0, fetch_offset=0, partition_max_bytes=1000,
                current_leader_epoch=-1, log_start_offset=-1)])])),
        "ListOffsets": (2, 7, ListOffsetsRequest(replica_id=-1, isolation_level=0, topics=[
            ListOffsetsTopic(name=topic, partitions=[
                ListOffsetsPartition(partition_index=0, timestamp=-1, current_leader_epoch=-1)])])),
        "OffsetForLeaderEpoch": (23, 4, OffsetForLeaderEpochRequest(replica_id=-1, topics=[
            OffsetForLeaderTopic(topic=topic, partitions=[OffsetForLeaderPartition(
                partition=0, current_leader_epoch=-1, leader_epoch=0)])])),
        "DeleteRecords": (21, 2, DeleteRecordsRequest(timeout_ms=5000, topics=[
            DeleteRecordsTopic(name=topic, partitions=[
                DeleteRecordsPartition(partition_index=0, offset=0)])])),
    }


def answer(bootstrap: str, api_key: int, version: int, request) -> dict:
    with WireClient(bootstrap) as client:
        response = client.request(api_key, version, request).to_dict()
    response.pop("throttle_time_ms", None)
    return _plain(response)


def _plain(value):
    """memoryviews (Fetch records) as bytes, so that answers compare."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, memoryview):
        return bytes(value)
    return value


@pytest.mark.parametrize("api", ["Produce", "Fetch", "ListOffsets", "OffsetForLeaderEpoch",
                                 "DeleteRecords"])
def test_error_answer_is_kafkas(broker, reference_kafka, api):
    topic = f"faults-missing-{uuid.uuid4().hex[:8]}"
    api_key, version, request = requests(topic)[api]
    kafka = answer(reference_kafka.bootstrap_servers, api_key, version, request)
    broker.faults.add(api=api, error=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, topic=topic)
    assert answer(broker.bootstrap_servers, api_key, version, request) == kafka
    assert broker.faults.list()[0]["fired"] == 1


def group_requests(group: str) -> dict[str, tuple[int, int, object]]:
    def join(version: int) -> tuple[int, int, object]:
        return (11, version, JoinGroupRequest(
            group_id=group, session_timeout_ms=10000, rebalance_timeout_ms=10000,
            member_id="nobody", protocol_type="consumer",
            protocols=[JoinGroupRequestProtocol(name="range", metadata=b"")]))

    return {
        "JoinGroup v5": join(5), "JoinGroup v9": join(9),
        "SyncGroup": (14, 5, SyncGroupRequest(group_id=group, generation_id=1,
                                              member_id="nobody", protocol_type="consumer",
                                              protocol_name="range", assignments=[])),
        "InitProducerId": (22, 4, InitProducerIdRequest(
            transactional_id=None, transaction_timeout_ms=-1, producer_id=5, producer_epoch=0)),
    }


#: what Kafka answers a new group's first requests, while its coordinator loads
LOADING = (ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)


@pytest.mark.parametrize("case", ["JoinGroup v5", "JoinGroup v9", "SyncGroup", "InitProducerId"])
def test_group_and_producer_id_error_answers_are_kafkas(broker, reference_kafka, case):
    """Every distinct error Kafka answers until its coordinator has loaded (NOT_COORDINATOR or
    COORDINATOR_LOAD_IN_PROGRESS first, then the member's own error, or success for an
    InitProducerId without a transactional id), compared one by one."""
    group = f"faults-group-{uuid.uuid4().hex[:8]}"
    api_key, version, request = group_requests(group)[case]
    kafka_answers: dict[int, dict] = {}
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        with WireClient(reference_kafka.bootstrap_servers) as client:
            client.request(10, 4, FindCoordinatorRequest(key_type=0, coordinator_keys=[group]))
        kafka = answer(reference_kafka.bootstrap_servers, api_key, version, request)
        if kafka["error_code"] != ErrorCode.NONE:
            kafka_answers.setdefault(kafka["error_code"], kafka)
        if kafka["error_code"] not in LOADING:
            break
        time.sleep(0.1)
    assert kafka_answers
    if case != "InitProducerId":
        assert ErrorCode.UNKNOWN_MEMBER_ID in kafka_answers
    for code, kafka in kafka_answers.items():
        broker.faults.add(api=api_key, error=code)
        assert answer(broker.bootstrap_servers, api_key, version, request) == kafka
