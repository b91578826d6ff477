"""NOT_CONTROLLER from an inactive controller: every controller API's answer carries Kafka's
error and message on each item the request named (or at the top level), encodes at every
version the API is served in, and is what ControllerChannel recognizes as "try another
controller"."""

from __future__ import annotations

import pytest

from pykafkad.dispatch import CONTROLLER_HANDLERS, load_handlers
from pykafkad.kraft.error_responses import error_response, has_error, not_controller_message
from wire.errors import ErrorCode
from wire.messages import API_KEYS
from wire.messages.alter_configs_request import AlterConfigsRequest, AlterConfigsResource
from wire.messages.create_partitions_request import CreatePartitionsRequest, CreatePartitionsTopic
from wire.messages.create_topics_request import CreatableTopic, CreateTopicsRequest
from wire.messages.delete_topics_request import DeleteTopicsRequest
from wire.messages.elect_leaders_request import ElectLeadersRequest, TopicPartitions
from wire.messages.incremental_alter_configs_request import (
    AlterConfigsResource as IncrementalResource,
)
from wire.messages.incremental_alter_configs_request import IncrementalAlterConfigsRequest
from wire.primitives import Reader, Writer

#: the controller APIs the ControllerServer answers (the quorum's own are the raft client's)
CONTROLLER_APIS = (19, 20, 33, 37, 43, 44, 45, 46, 56, 62, 63, 64, 67)

REQUESTS = {
    19: CreateTopicsRequest(topics=[CreatableTopic(name="t", num_partitions=1,
                                                   replication_factor=1, assignments=[],
                                                   configs=[])]),
    20: DeleteTopicsRequest(topic_names=["t"], topics=[]),
    33: AlterConfigsRequest(resources=[AlterConfigsResource(resource_type=2,
                                                            resource_name="t", configs=[])]),
    37: CreatePartitionsRequest(topics=[CreatePartitionsTopic(name="t", count=2,
                                                              assignments=None)]),
    43: ElectLeadersRequest(election_type=0,
                            topic_partitions=[TopicPartitions(topic="t", partitions=[0, 1])]),
    44: IncrementalAlterConfigsRequest(resources=[IncrementalResource(
        resource_type=2, resource_name="t", configs=[])]),
}


def test_kafkas_messages():
    assert not_controller_message(2) == "The active controller appears to be node 2."
    assert not_controller_message(-1) == "No controller appears to be active."


@pytest.mark.parametrize("api_key", CONTROLLER_APIS)
def test_not_controller_on_every_item_at_every_version(api_key):
    load_handlers()
    handler = CONTROLLER_HANDLERS[api_key]
    request = REQUESTS.get(api_key) or API_KEYS[api_key].request_type()()
    response = error_response(request, ErrorCode.NOT_CONTROLLER, not_controller_message(3))
    assert isinstance(response, API_KEYS[api_key].response_type())
    for version in range(handler.min_version, handler.max_version + 1):
        w = Writer()
        response.write(w, version)
        decoded = type(response).read(Reader(memoryview(w.getvalue())), version)
        assert has_error(decoded, ErrorCode.NOT_CONTROLLER), (api_key, version)
    if api_key == 19:
        (topic,) = response.topics
        assert (topic.name, topic.error_message) == (
            "t", "The active controller appears to be node 3.")
    if api_key == 43:
        assert [p.partition_id for p in response.replica_election_results[0].partition_result
                ] == [0, 1]


def test_an_answer_without_the_error_is_not_retried():
    response = error_response(REQUESTS[19], ErrorCode.TOPIC_ALREADY_EXISTS, "exists")
    assert not has_error(response, ErrorCode.NOT_CONTROLLER)
