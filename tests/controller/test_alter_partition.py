"""AlterPartition (ISR shrink / expand) from a partition leader, and every error Kafka's
controller answers, through real request objects and replayed PartitionChangeRecords."""

from __future__ import annotations

import pytest

from tests.controller.support import MetadataLog
from tests.controller.test_replication_control import create_topic
from wire.errors import ErrorCode
from wire.messages.alter_partition_request import (
    AlterPartitionRequest,
    BrokerState,
    PartitionData,
    TopicData,
)
from wire.metadata import PartitionChangeRecord


@pytest.fixture
def log():
    log = MetadataLog()
    log.start_brokers(1, 2, 3)
    create_topic(log, "t", -1, -1, assignments=[[1, 2, 3]])
    return log


def alter(log, isr, *, broker=1, leader_epoch=None, partition_epoch=None, topic_id=None,
          partition=0, broker_epoch=None, epochs=None, version=3, recovery=0):
    part = log.partition("t", 0)
    if version >= 3:
        states = [BrokerState(broker_id=b, broker_epoch=(epochs or {}).get(b, log.epochs.get(b, -1)))
                  for b in isr]
        data = PartitionData(partition_index=partition, new_isr_with_epochs=states, new_isr=[],
                             leader_recovery_state=recovery,
                             leader_epoch=part.leader_epoch if leader_epoch is None
                             else leader_epoch,
                             partition_epoch=part.partition_epoch if partition_epoch is None
                             else partition_epoch)
    else:
        data = PartitionData(partition_index=partition, new_isr=list(isr),
                             new_isr_with_epochs=[],
                             leader_epoch=part.leader_epoch if leader_epoch is None
                             else leader_epoch,
                             partition_epoch=part.partition_epoch if partition_epoch is None
                             else partition_epoch)
    request = AlterPartitionRequest(
        broker_id=broker, broker_epoch=log.epochs[broker] if broker_epoch is None else broker_epoch,
        topics=[TopicData(topic_id=topic_id or log.topic_id("t"), partitions=[data])])
    return log.handle(request, version=version)


def test_isr_shrink_then_expand(log):
    response, records = alter(log, [1, 2])
    assert len(records) == 1 and isinstance(records[0], PartitionChangeRecord)
    assert records[0].isr == [1, 2] and records[0].leader == -2
    p = response.topics[0].partitions[0]
    assert (p.error_code, p.leader_id, p.isr, p.leader_epoch, p.partition_epoch) == (
        0, 1, [1, 2], 0, 1)
    part = log.partition("t", 0)
    assert part.isr == (1, 2) and part.partition_epoch == 1 and part.leader_epoch == 0
    response, records = alter(log, [1, 2, 3], version=2)
    assert response.topics[0].partitions[0].isr == [1, 2, 3]
    assert log.partition("t", 0).partition_epoch == 2


def test_same_isr_writes_nothing_and_answers_the_current_state(log):
    response, records = alter(log, [1, 2, 3])
    assert records == []
    p = response.topics[0].partitions[0]
    assert (p.error_code, p.isr, p.partition_epoch) == (0, [1, 2, 3], 0)


@pytest.mark.parametrize("kwargs, code", [
    (dict(leader_epoch=-1), ErrorCode.FENCED_LEADER_EPOCH),
    (dict(leader_epoch=5), ErrorCode.NOT_CONTROLLER),
    (dict(partition_epoch=7), ErrorCode.NOT_CONTROLLER),
    (dict(broker=2), ErrorCode.INVALID_REQUEST),              # not the leader
    (dict(isr=[2, 3]), ErrorCode.INVALID_REQUEST),            # leader not in the new ISR
    (dict(isr=[1, 4]), ErrorCode.INVALID_REQUEST),            # not a replica
    (dict(isr=[1, 1]), ErrorCode.INVALID_REQUEST),            # duplicate
    (dict(epochs={2: 99}), ErrorCode.INELIGIBLE_REPLICA),     # broker epoch mismatch
    (dict(recovery=1), ErrorCode.INVALID_REQUEST),            # RECOVERING with 2 in the ISR
    (dict(isr=[1], recovery=1), ErrorCode.INVALID_REQUEST),   # RECOVERED -> RECOVERING
    (dict(partition=5), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
    (dict(topic_id=b"\x01" * 16), ErrorCode.UNKNOWN_TOPIC_ID),
])
def test_partition_errors(log, kwargs, code):
    isr = kwargs.pop("isr", [1, 2])
    response, records = alter(log, isr, **kwargs)
    assert records == []
    assert response.error_code == 0
    assert response.topics[0].partitions[0].error_code == code


def test_stale_partition_epoch_is_invalid_update_version(log):
    alter(log, [1, 2])
    response, records = alter(log, [1, 2, 3], partition_epoch=0)
    assert records == []
    assert response.topics[0].partitions[0].error_code == ErrorCode.INVALID_UPDATE_VERSION


def test_fenced_or_shutting_down_brokers_may_not_join_the_isr(log):
    alter(log, [1])
    for _ in range(3):
        log.now_ms += 4_000
        log.heartbeat(1)
        log.heartbeat(2)
    log.tick(0)
    assert log.controller.cluster.registration(3).fenced
    response, records = alter(log, [1, 3])
    assert records == [] and response.topics[0].partitions[0].error_code == \
        ErrorCode.INELIGIBLE_REPLICA


def test_stale_broker_epoch_fails_the_whole_request(log):
    response, records = alter(log, [1, 2], broker_epoch=12345)
    assert records == [] and response.error_code == ErrorCode.STALE_BROKER_EPOCH


def test_shutting_down_broker_may_not_join_the_isr(log):
    alter(log, [1, 2])
    create_topic(log, "led-by-3", -1, -1, assignments=[[3, 1]])   # so 3 must shut down slowly
    log.heartbeat(3, want_shut_down=True)
    assert log.controller.cluster.in_controlled_shutdown(3)
    response, records = alter(log, [1, 2, 3])
    assert records == [] and response.topics[0].partitions[0].error_code == \
        ErrorCode.INELIGIBLE_REPLICA
