"""Partition reassignment lifecycle: start, list, complete through the leader's AlterPartition,
cancel, and Kafka's errors."""

from __future__ import annotations

from tests.controller.support import MetadataLog
from tests.controller.test_replication_control import create_topic
from wire.errors import ErrorCode
from wire.messages.alter_partition_reassignments_request import (
    AlterPartitionReassignmentsRequest,
    ReassignablePartition,
    ReassignableTopic,
)
from wire.messages.alter_partition_request import (
    AlterPartitionRequest,
    BrokerState,
    PartitionData,
    TopicData,
)
from wire.messages.list_partition_reassignments_request import ListPartitionReassignmentsRequest


def reassign(log, replicas, *, topic="t", partition=0, allow_rf_change=True, version=1):
    request = AlterPartitionReassignmentsRequest(
        allow_replication_factor_change=allow_rf_change,
        topics=[ReassignableTopic(name=topic, partitions=[
            ReassignablePartition(partition_index=partition, replicas=replicas)])])
    response, records = log.handle(request, version=version)
    p = response.responses[0].partitions[0]
    return (p.error_code, p.error_message), records


def listed(log):
    response, _ = log.handle(ListPartitionReassignmentsRequest(topics=None))
    return {(t.name, p.partition_index): (p.replicas, p.adding_replicas, p.removing_replicas)
            for t in response.topics for p in t.partitions}


def isr_change(log, leader, isr):
    part = log.partition("t", 0)
    request = AlterPartitionRequest(broker_id=leader, broker_epoch=log.epochs[leader], topics=[
        TopicData(topic_id=log.topic_id("t"), partitions=[PartitionData(
            partition_index=0, leader_epoch=part.leader_epoch,
            partition_epoch=part.partition_epoch,
            new_isr_with_epochs=[BrokerState(broker_id=b, broker_epoch=log.epochs[b])
                                 for b in isr])])])
    response, records = log.handle(request)
    return response.topics[0].partitions[0], records


def make_log():
    log = MetadataLog()
    log.start_brokers(1, 2, 3, 4)
    create_topic(log, "t", -1, -1, assignments=[[1, 2]])
    return log


def test_reassignment_lifecycle_to_new_brokers():
    log = make_log()
    assert listed(log) == {}
    (code, message), records = reassign(log, [3, 4])
    assert (code, message) == (0, None) and len(records) == 1
    part = log.partition("t", 0)
    assert part.replicas == (3, 4, 1, 2)
    assert (part.adding_replicas, part.removing_replicas) == ((3, 4), (1, 2))
    assert part.leader == 1 and part.leader_epoch == 0
    assert listed(log) == {("t", 0): ([3, 4, 1, 2], [3, 4], [1, 2])}
    # The new replicas catch up: the leader adds them to the ISR, which completes the move
    # and elects a leader among the targets; the old leader hears NEW_LEADER_ELECTED.
    p, records = isr_change(log, 1, [1, 2, 3])
    assert p.error_code == 0 and log.partition("t", 0).replicas == (3, 4, 1, 2)
    p, records = isr_change(log, 1, [1, 2, 3, 4])
    assert p.error_code == ErrorCode.NEW_LEADER_ELECTED
    part = log.partition("t", 0)
    assert part.replicas == (3, 4) and part.isr == (3, 4) and part.leader == 3
    assert part.adding_replicas == () and part.removing_replicas == ()
    assert part.leader_epoch == 1
    assert listed(log) == {}


def test_reordering_replicas_completes_at_once():
    log = make_log()
    (code, _), records = reassign(log, [2, 1])
    assert code == 0
    part = log.partition("t", 0)
    assert part.replicas == (2, 1) and not part.is_reassigning and part.leader == 1


def test_cancel_reverts_to_the_original_replicas():
    log = make_log()
    reassign(log, [1, 3])
    assert log.partition("t", 0).replicas == (1, 3, 2)
    (code, _), records = reassign(log, None)
    assert code == 0
    part = log.partition("t", 0)
    assert part.replicas == (1, 2) and not part.is_reassigning
    assert reassign(log, None)[0] == (ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, None)


def test_reassignment_errors():
    log = make_log()
    assert reassign(log, [1, 9])[0] == (
        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        "The manual partition assignment includes broker 9, but no such broker is registered.")
    assert reassign(log, [3, 4], topic="nope")[0] == (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find a topic named nope.")
    assert reassign(log, [3, 4], partition=3)[0] == (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition t:3.")
    assert reassign(log, [1, 2, 3], allow_rf_change=False)[0] == (
        ErrorCode.INVALID_REPLICATION_FACTOR, "The replication factor is changed from 2 to 3")
    assert reassign(log, [1, 2, 3], allow_rf_change=True)[0] == (0, None)


def test_replication_factor_during_a_reassignment_is_the_targets():
    log = make_log()
    assert reassign(log, [1, 2, 3])[0] == (0, None)       # grows 2 -> 3, in progress
    assert log.partition("t", 0).adding_replicas == (3,)
    assert reassign(log, [1, 2], allow_rf_change=False)[0] == (
        ErrorCode.INVALID_REPLICATION_FACTOR, "The replication factor is changed from 3 to 2")
    assert reassign(log, [4, 2, 1], allow_rf_change=False)[0] == (0, None)


def test_kafkas_reassign_partitions_scenario():
    """ReplicationControlManagerTest.testReassignPartitions: a no-op, a real and an unknown
    partition; list; cancel; the leader's ISR change then completes nothing left."""
    log = MetadataLog()
    log.start_brokers(0, 1, 2, 3)
    create_topic(log, "foo", -1, -1, assignments=[[1, 2, 3], [3, 2, 1]])
    create_topic(log, "bar", -1, -1, assignments=[[1, 2, 3]])
    assert listed(log) == {}
    request = AlterPartitionReassignmentsRequest(topics=[
        ReassignableTopic(name="foo", partitions=[
            ReassignablePartition(partition_index=0, replicas=[3, 2, 1]),
            ReassignablePartition(partition_index=1, replicas=[0, 2, 1]),
            ReassignablePartition(partition_index=2, replicas=[0, 2, 1])]),
        ReassignableTopic(name="bar", partitions=[])])
    response, _ = log.handle(request)
    assert [(t.name, [(p.partition_index, p.error_code, p.error_message) for p in t.partitions])
            for t in response.responses] == [
        ("foo", [(0, 0, None), (1, 0, None),
                 (2, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition foo:2.")]),
        ("bar", [])]
    assert listed(log) == {("foo", 1): ([0, 2, 1, 3], [0], [3])}
    request = AlterPartitionReassignmentsRequest(topics=[
        ReassignableTopic(name="foo", partitions=[
            ReassignablePartition(partition_index=i, replicas=None) for i in range(3)]),
        ReassignableTopic(name="bar", partitions=[
            ReassignablePartition(partition_index=0, replicas=None)])])
    response, records = log.handle(request)
    assert [(t.name, [(p.partition_index, p.error_code, p.error_message) for p in t.partitions])
            for t in response.responses] == [
        ("foo", [(0, ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, None), (1, 0, None),
                 (2, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition foo:2.")]),
        ("bar", [(0, ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, None)])]
    assert len(records) == 1
    r = records[0]
    assert (r.replicas, r.leader, r.removing_replicas, r.adding_replicas) == (
        [2, 1, 3], 3, [], [])
    assert listed(log) == {}
