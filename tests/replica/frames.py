"""Raw requests that no stock client sends: a follower's Fetch (a replica id, v<15, or
ReplicaState, v15+) and the leader-epoch fields of Fetch / ListOffsets / OffsetForLeaderEpoch.
They go through compat/wire_client.py, to pykafkad and to Apache Kafka alike."""

from __future__ import annotations

from compat.wire_client import WireClient
from wire.messages.fetch_request import FetchPartition, FetchRequest, FetchTopic, ReplicaState
from wire.messages.list_offsets_request import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsTopic,
)
from wire.messages.metadata_request import MetadataRequest, MetadataRequestTopic
from wire.messages.offset_for_leader_epoch_request import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
)
from wire.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from wire.records.batch import iter_batch_headers

#: the versions used: topic names (Fetch v12 is the last by name), leader epochs everywhere
FETCH_BY_NAME = 12
FETCH_REPLICA_STATE = 15


def fetch(client: WireClient, topic: str, offset: int, *, partition: int = 0,
          replica_id: int = -1, replica_epoch: int = -1, current_leader_epoch: int = -1,
          last_fetched_epoch: int = -1, log_start_offset: int = -1, max_wait_ms: int = 0,
          min_bytes: int = 0, version: int = FETCH_BY_NAME, topic_id: bytes | None = None,
          isolation_level: int = 0, whole: bool = False):
    """One partition's Fetch; returns its PartitionData (``whole``: and the response)."""
    part = FetchPartition(partition=partition, current_leader_epoch=current_leader_epoch,
                          fetch_offset=offset, last_fetched_epoch=last_fetched_epoch,
                          log_start_offset=log_start_offset, partition_max_bytes=1 << 20)
    kwargs = {}
    if version >= FETCH_REPLICA_STATE:
        kwargs["replica_state"] = ReplicaState(replica_id=replica_id, replica_epoch=replica_epoch)
    else:
        kwargs["replica_id"] = replica_id
    ftopic = (FetchTopic(topic_id=topic_id, partitions=[part]) if version >= 13
              else FetchTopic(topic=topic, partitions=[part]))
    req = FetchRequest(max_wait_ms=max_wait_ms, min_bytes=min_bytes, max_bytes=1 << 20,
                       isolation_level=isolation_level, session_id=0, session_epoch=-1,
                       topics=[ftopic], **kwargs)
    resp = client.send(req, version)
    assert resp.error_code == 0, resp.error_code
    (t,) = resp.responses
    (p,) = t.partitions
    return (p, resp) if whole else p


def list_offsets(client: WireClient, topic: str, timestamp: int = -1, *, partition: int = 0,
                 current_leader_epoch: int = -1, replica_id: int = -1, version: int = 7):
    req = ListOffsetsRequest(replica_id=replica_id, isolation_level=0, topics=[ListOffsetsTopic(
        name=topic, partitions=[ListOffsetsPartition(
            partition_index=partition, current_leader_epoch=current_leader_epoch,
            timestamp=timestamp)])])
    (t,) = client.send(req, version).topics
    (p,) = t.partitions
    return p


def offset_for_leader_epoch(client: WireClient, topic: str, leader_epoch: int, *,
                            partition: int = 0, current_leader_epoch: int = -1,
                            replica_id: int = -1, version: int = 4):
    req = OffsetForLeaderEpochRequest(replica_id=replica_id, topics=[OffsetForLeaderTopic(
        topic=topic, partitions=[OffsetForLeaderPartition(
            partition=partition, current_leader_epoch=current_leader_epoch,
            leader_epoch=leader_epoch)])])
    (t,) = client.send(req, version).topics
    (p,) = t.partitions
    return p


def batches(records) -> list[tuple[int, int, int]]:
    """(base offset, record count, partition leader epoch) of each batch of a Fetch answer."""
    data = bytes(records or b"")
    return [(h.base_offset, h.record_count, h.partition_leader_epoch)
            for _, h in iter_batch_headers(data)]


def record_offsets(records) -> list[int]:
    """The offsets of the records in a Fetch answer."""
    return [o for base, count, _ in batches(records) for o in range(base, base + count)]


def metadata_partition(client: WireClient, topic: str, index: int = 0, version: int = 12):
    """The partition as Metadata answers it (leader, leader epoch, replicas, ISR)."""
    req = MetadataRequest(topics=[MetadataRequestTopic(name=topic)],
                          allow_auto_topic_creation=False)
    (t,) = client.send(req, version).topics
    return next(p for p in t.partitions if p.partition_index == index)


def produce(client: WireClient, topic: str, records: bytes, *, acks: int = 1,
            partition: int = 0, timeout_ms: int = 30000, version: int = 12, whole: bool = False):
    """One partition's Produce; returns its PartitionProduceResponse (``whole``: and the
    response)."""
    req = ProduceRequest(acks=acks, timeout_ms=timeout_ms, topic_data=[TopicProduceData(
        name=topic, partition_data=[PartitionProduceData(index=partition, records=records)])])
    resp = client.send(req, version)
    (t,) = resp.responses
    (p,) = t.partition_responses
    return (p, resp) if whole else p


def topic_id(client: WireClient, topic: str) -> bytes:
    req = MetadataRequest(topics=[MetadataRequestTopic(name=topic)],
                          allow_auto_topic_creation=False)
    (t,) = client.send(req, 12).topics
    return t.topic_id
