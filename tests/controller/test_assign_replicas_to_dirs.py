"""AssignReplicasToDirs (key 73) on the controller: a broker's replica recorded in the dir it
names (a PartitionChangeRecord with ``directories``), nothing written when it is there
already, and each error Kafka's controller answers, through real request objects."""

from __future__ import annotations

import uuid

import pytest

from tests.controller.support import MetadataLog
from tests.controller.test_replication_control import create_topic
from wire.errors import ErrorCode
from wire.messages.assign_replicas_to_dirs_request import (
    AssignReplicasToDirsRequest,
    DirectoryData,
    PartitionData,
    TopicData,
)
from wire.metadata import PartitionChangeRecord

OTHER_DIR = uuid.UUID(int=99 << 64 | 5).bytes


@pytest.fixture
def log():
    log = MetadataLog()
    log.start_brokers(1, 2, 3)
    create_topic(log, "t", -1, -1, assignments=[[1, 2]])
    return log


def assign(log, *, broker=1, dir_id=OTHER_DIR, topic_id=None, partition=0, epoch=None):
    request = AssignReplicasToDirsRequest(
        broker_id=broker, broker_epoch=log.epochs[broker] if epoch is None else epoch,
        directories=[DirectoryData(id=dir_id, topics=[TopicData(
            topic_id=topic_id or log.topic_id("t"),
            partitions=[PartitionData(partition_index=partition)])])])
    response, records = log.handle(request)
    codes = [p.error_code for d in response.directories for t in d.topics for p in t.partitions]
    return response.error_code, codes, records


def test_the_replica_is_recorded_in_the_named_dir(log):
    own = uuid.UUID(int=2 << 64 | 7).bytes  # broker 1's one registered dir (support.py)
    assert log.partition("t", 0).directories[0] == own
    assert assign(log, dir_id=own) == (ErrorCode.NONE, [ErrorCode.NONE], [])  # there already
    top, codes, records = assign(log)
    assert (top, codes) == (ErrorCode.NONE, [ErrorCode.NONE])
    [record] = records
    assert isinstance(record, PartitionChangeRecord)
    assert record.directories[0] == OTHER_DIR
    assert log.partition("t", 0).directories[0] == OTHER_DIR


def test_errors(log):
    assert assign(log, broker=3)[:2] == (ErrorCode.NONE, [ErrorCode.NOT_LEADER_OR_FOLLOWER])
    assert assign(log, partition=7)[:2] == (ErrorCode.NONE,
                                            [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION])
    assert assign(log, topic_id=uuid.uuid4().bytes)[:2] == (ErrorCode.NONE,
                                                            [ErrorCode.UNKNOWN_TOPIC_ID])
    top, codes, records = assign(log, epoch=12345)
    assert (top, codes, records) == (ErrorCode.STALE_BROKER_EPOCH, [], [])
