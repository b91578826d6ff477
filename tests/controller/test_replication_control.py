"""CreateTopics / DeleteTopics / CreatePartitions through the controller: placement, Kafka's
errors and messages, records replayed as the metadata log would."""

from __future__ import annotations

from collections import Counter

from tests.controller.support import MetadataLog
from wire.errors import ErrorCode
from wire.messages.create_partitions_request import (
    CreatePartitionsAssignment,
    CreatePartitionsRequest,
    CreatePartitionsTopic,
)
from wire.messages.create_topics_request import (
    CreatableReplicaAssignment,
    CreatableTopic,
    CreatableTopicConfig,
    CreateTopicsRequest,
)
from wire.messages.delete_topics_request import DeleteTopicsRequest
from wire.metadata import ConfigRecord, PartitionRecord, RemoveTopicRecord, TopicRecord


def create_topic(log, name, partitions=1, rf=1, *, assignments=None, configs=None):
    request = CreateTopicsRequest(topics=[CreatableTopic(
        name=name, num_partitions=partitions, replication_factor=rf,
        assignments=[CreatableReplicaAssignment(partition_index=i, broker_ids=b)
                     for i, b in enumerate(assignments or [])],
        configs=[CreatableTopicConfig(name=k, value=v) for k, v in (configs or {}).items()])])
    response, records = log.handle(request)
    return response.topics[0], records


def test_create_topic_records_and_response():
    log = MetadataLog()
    log.start_brokers(1, 2, 3)
    result, records = create_topic(log, "t", 3, 2, configs={"cleanup.policy": "compact"})
    assert result.error_code == 0 and result.error_message is None
    assert (result.num_partitions, result.replication_factor) == (3, 2)
    assert [type(r) for r in records] == [TopicRecord, ConfigRecord] + [PartitionRecord] * 3
    assert records[0].topic_id == result.topic_id
    for p in range(3):
        part = log.partition("t", p)
        assert len(part.replicas) == 2 and part.isr == part.replicas
        assert part.leader == part.replicas[0] and part.leader_epoch == 0
        assert len(part.directories) == 2
    assert log.controller.configs.get((2, "t")) == {"cleanup.policy": "compact"}


def test_leaders_are_spread_round_robin_over_the_brokers():
    """StripedReplicaPlacer: with 3 brokers and rf 3, each broker leads every third partition
    and every partition has all three brokers."""
    log = MetadataLog()
    log.start_brokers(1, 2, 3)
    create_topic(log, "t", 9, 3)
    leaders = [log.partition("t", p).leader for p in range(9)]
    assert Counter(leaders) == {1: 3, 2: 3, 3: 3}
    assert len(set(leaders[0:3])) == 3
    for p in range(9):
        assert sorted(log.partition("t", p).replicas) == [1, 2, 3]


def test_placement_is_rack_aware():
    log = MetadataLog()
    racks = {1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"}
    log.start_brokers(*racks, racks=racks)
    create_topic(log, "t", 12, 3)
    for p in range(12):
        replicas = log.partition("t", p).replicas
        assert len({racks[b] for b in replicas}) == 3, replicas
    assert Counter(log.partition("t", p).leader for p in range(12)) == {b: 2 for b in racks}


def test_placement_is_deterministic_given_the_seed():
    def place(seed):
        log = MetadataLog(seed=seed)
        log.start_brokers(1, 2, 3, 4)
        create_topic(log, "t", 8, 2)
        return [log.partition("t", p).replicas for p in range(8)]

    assert place(11) == place(11)


def test_replication_factor_larger_than_the_brokers_is_refused_with_kafkas_message():
    log = MetadataLog()
    log.start_brokers(1)
    result, records = create_topic(log, "t", 1, 3)
    assert result.error_code == ErrorCode.INVALID_REPLICATION_FACTOR and records == []
    assert result.error_message == ("Unable to replicate the partition 3 time(s): The target "
                                    "replication factor of 3 cannot be reached because only 1 "
                                    "broker(s) are registered or some brokers have all their log directories "
                                    "cordoned.")


def test_create_topic_errors():
    log = MetadataLog()
    log.start_brokers(1, 2)
    create_topic(log, "t")
    cases = [
        (dict(name="t"), ErrorCode.TOPIC_ALREADY_EXISTS, "Topic 't' already exists."),
        (dict(name="u", partitions=0), ErrorCode.INVALID_PARTITIONS,
         "Number of partitions was set to an invalid non-positive value."),
        (dict(name="u", rf=0), ErrorCode.INVALID_REPLICATION_FACTOR,
         "Replication factor must be larger than 0, or -1 to use the default value."),
        (dict(name="u", partitions=-1, rf=-1, assignments=[[1, 9]]),
         ErrorCode.INVALID_REPLICA_ASSIGNMENT,
         "The manual partition assignment includes broker 9, but no such broker is "
         "registered."),
        (dict(name="u", partitions=-1, rf=-1, assignments=[[1, 1]]),
         ErrorCode.INVALID_REPLICA_ASSIGNMENT,
         "The manual partition assignment includes the broker 1 more than once."),
        (dict(name="u", partitions=-1, rf=-1, assignments=[[1, 2], [1]]),
         ErrorCode.INVALID_REPLICA_ASSIGNMENT,
         "The manual partition assignment includes a partition with 1 replica(s), but this is "
         "not consistent with previous partitions, which have 2 replica(s)."),
        (dict(name="u", partitions=-1, rf=-1, assignments=[[]]),
         ErrorCode.INVALID_REPLICA_ASSIGNMENT,
         "The manual partition assignment includes an empty replica list."),
        (dict(name="u", partitions=2, rf=-1, assignments=[[1]]), ErrorCode.INVALID_REQUEST,
         "A manual partition assignment was specified, but numPartitions was not set to -1."),
        (dict(name="u", partitions=-1, rf=1, assignments=[[1]]), ErrorCode.INVALID_REQUEST,
         "A manual partition assignment was specified, but replication factor was not set "
         "to -1."),
        (dict(name="bad name"), ErrorCode.INVALID_TOPIC_EXCEPTION,
         "Topic name is invalid: 'bad name' contains one or more characters other than ASCII "
         "alphanumerics, '.', '_' and '-'"),
        (dict(name="t" * 250), ErrorCode.INVALID_TOPIC_EXCEPTION,
         f"Topic name is invalid: the length of '{'t' * 250}' is longer than the max allowed "
         "length 249"),
        (dict(name="u", configs={"cleanup.policy": "nope"}), ErrorCode.INVALID_CONFIG, None),
    ]
    for kwargs, code, message in cases:
        name = kwargs.pop("name")
        result, records = create_topic(log, name, kwargs.pop("partitions", 1),
                                       kwargs.pop("rf", 1), **kwargs)
        assert (result.error_code, records) == (code, []), (name, result)
        if message is not None:
            assert result.error_message == message


def test_manual_assignment_is_used_as_given():
    log = MetadataLog()
    log.start_brokers(1, 2, 3)
    result, _ = create_topic(log, "t", -1, -1, assignments=[[3, 1], [2, 3]])
    assert result.error_code == 0
    assert log.partition("t", 0).replicas == (3, 1) and log.partition("t", 0).leader == 3
    assert log.partition("t", 1).replicas == (2, 3) and log.partition("t", 1).leader == 2


def test_duplicate_names_in_one_request_are_refused():
    log = MetadataLog()
    log.start_brokers(1)
    request = CreateTopicsRequest(topics=[CreatableTopic(name="d", num_partitions=1,
                                                         replication_factor=1)] * 2)
    response, records = log.handle(request)
    assert records == []
    assert [(t.name, t.error_code, t.error_message) for t in response.topics] == [
        ("d", ErrorCode.INVALID_REQUEST, "Duplicate topic name.")]


def test_validate_only_writes_nothing():
    log = MetadataLog()
    log.start_brokers(1)
    request = CreateTopicsRequest(validate_only=True, topics=[CreatableTopic(
        name="v", num_partitions=2, replication_factor=1)])
    response, records = log.handle(request)
    assert response.topics[0].error_code == 0 and records == []
    assert "v" not in log.controller.replication.topics_by_name


def test_delete_topics_by_name_and_id():
    log = MetadataLog()
    log.start_brokers(1)
    create_topic(log, "a", configs={"retention.ms": "1000"})
    create_topic(log, "b")
    b_id = log.topic_id("b")
    from wire.messages.delete_topics_request import DeleteTopicState
    request = DeleteTopicsRequest(topic_names=[], topics=[
        DeleteTopicState(name="a"), DeleteTopicState(name=None, topic_id=b_id),
        DeleteTopicState(name="missing")])
    response, records = log.handle(request)
    assert all(isinstance(r, RemoveTopicRecord) for r in records) and len(records) == 2
    by_name = {(r.name, r.error_code) for r in response.responses}
    assert by_name == {("a", 0), ("b", 0), ("missing", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)}
    assert log.controller.replication.topics_by_name == {}
    assert log.controller.configs.get((2, "a")) == {}


def test_create_partitions():
    log = MetadataLog()
    log.start_brokers(1, 2, 3)
    create_topic(log, "t", 2, 2)

    def grow(count, assignments=None, name="t"):
        request = CreatePartitionsRequest(topics=[CreatePartitionsTopic(
            name=name, count=count,
            assignments=None if assignments is None else
            [CreatePartitionsAssignment(broker_ids=a) for a in assignments])])
        response, records = log.handle(request)
        return response.results[0], records

    result, records = grow(5)
    assert result.error_code == 0 and len(records) == 3
    assert [r.partition_id for r in records] == [2, 3, 4]
    assert all(len(log.partition("t", p).replicas) == 2 for p in range(5))
    result, _ = grow(5)
    assert (result.error_code, result.error_message) == (
        ErrorCode.INVALID_PARTITIONS, "Topic already has 5 partition(s).")
    result, _ = grow(3)
    assert (result.error_code, result.error_message) == (
        ErrorCode.INVALID_PARTITIONS,
        "The topic t currently has 5 partition(s); 3 would not be an increase.")
    result, _ = grow(7, [[1, 2]])
    assert (result.error_code, result.error_message) == (
        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        "Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified.")
    result, records = grow(6, [[3, 1]])
    assert result.error_code == 0 and log.partition("t", 5).replicas == (3, 1)
    result, _ = grow(2, name="nope")
    assert result.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_more_than_10000_partitions_in_one_request_is_a_policy_violation():
    log = MetadataLog()
    log.start_brokers(1)
    request = CreateTopicsRequest(topics=[
        CreatableTopic(name=f"big{i}", num_partitions=5_000, replication_factor=1)
        for i in range(3)])
    response, records = log.handle(request)
    assert records == []
    assert {(t.error_code, t.error_message) for t in response.topics} == {
        (ErrorCode.POLICY_VIOLATION, "Excessively large number of partitions per request.")}
    create_topic(log, "t")
    response, records = log.handle(CreatePartitionsRequest(topics=[
        CreatePartitionsTopic(name="t", count=10_002)]))
    assert records == [] and (response.results[0].error_code, response.results[0].error_message) \
        == (ErrorCode.POLICY_VIOLATION,
            "Excessively large number of additional partitions per request.")


def test_names_colliding_on_dot_and_underscore_are_refused():
    log = MetadataLog()
    log.start_brokers(1)
    create_topic(log, "a.b")
    result, records = create_topic(log, "a_b")
    assert (result.error_code, result.error_message, records) == (
        ErrorCode.INVALID_TOPIC_EXCEPTION, "Topic 'a_b' collides with existing topic: a.b", [])
