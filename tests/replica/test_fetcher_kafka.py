"""The replica fetcher following Apache Kafka 4.4.0 as its leader: Kafka's own segment files
are the oracle, and Kafka answers the diverging epochs (KIP-320) that pykafkad's single-node
Fetch does not compute.

Kafka refuses a follower fetch from a replica id it has not assigned (UNKNOWN_LEADER_EPOCH when
the fetch carries the current leader epoch, as a follower's does; NOT_LEADER_OR_FOLLOWER without
one), so the replication runs with replica id -1: a fetch Kafka serves up to its high
watermark, which on one node is its log end offset, and for which it still checks the last
fetched epoch.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import trio
from confluent_kafka import Producer

from pykafkad.log.config import LogConfig
from pykafkad.log.partition import PartitionLog
from pykafkad.network.client import NodeClient
from pykafkad.replica.fetcher import LogFollower
from pykafkad.replica.fetcher_manager import ReplicaFetcherManager
from pykafkad.replica.leader_endpoint import BrokerEndpoint, FetcherConfig
from tests.integration.clients import WAIT_S, confluent_produce, create_topic, needs_java
from tests.log.batches import make_batch
from tests.replica.test_fetcher import segment_files, wait_until
from wire.errors import ErrorCode
from wire.messages.list_offsets_request import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsTopic,
)
from wire.messages.metadata_request import MetadataRequest, MetadataRequestTopic

pytestmark = needs_java

FAST = FetcherConfig(max_wait_ms=100, backoff_ms=50)


def produce_all_kinds(bootstrap: str, topic: str, tag: str) -> None:
    confluent_produce(bootstrap, topic, [{"value": b"%s-plain-%d" % (tag.encode(), i)}
                                         for i in range(10)])
    confluent_produce(bootstrap, topic, [{"value": b"%s-idem-%d" % (tag.encode(), i)}
                                         for i in range(10)], **{"enable.idempotence": True})
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"{topic}-{tag}",
                  "linger.ms": 5})
    p.init_transactions(WAIT_S)
    for outcome in ("abort", "commit"):
        p.begin_transaction()
        for i in range(6):
            p.produce(topic, b"%s-%s-%d" % (tag.encode(), outcome.encode(), i))
        p.flush(WAIT_S)
        (p.abort_transaction if outcome == "abort" else p.commit_transaction)(WAIT_S)


class KafkaLeader:
    def __init__(self, kafka, topic: str):
        self.kafka = kafka
        self.topic = topic
        self.endpoint = BrokerEndpoint(1, "127.0.0.1", kafka.port)
        self.dir: Path = kafka.data_dir / "logs" / f"{topic}-0"

    async def topic_id(self) -> bytes:
        client = NodeClient("127.0.0.1", self.kafka.port)
        try:
            md = await client.request(MetadataRequest(topics=[MetadataRequestTopic(name=self.topic)]))
        finally:
            await client.aclose()
        return md.topics[0].topic_id

    async def log_end_offset(self) -> int:
        client = NodeClient("127.0.0.1", self.kafka.port)
        try:
            r = await client.request(ListOffsetsRequest(replica_id=-1, topics=[ListOffsetsTopic(
                name=self.topic, partitions=[ListOffsetsPartition(partition_index=0,
                                                                  timestamp=-1)])]))
        finally:
            await client.aclose()
        return r.topics[0].partitions[0].offset


async def replicate(leader: KafkaLeader, follower: PartitionLog, tid: bytes, until, *,
                    broker_id: int = -1):
    part = LogFollower(follower, 0, tid)
    async with trio.open_nursery() as nursery:
        manager = ReplicaFetcherManager(broker_id=broker_id, get_partition={
            (leader.topic, 0): part}.get, config=FAST)
        await nursery.start(manager.run)
        manager.add_partitions({(leader.topic, 0): (leader.endpoint, 0, None)})
        await until(manager)
        nursery.cancel_scope.cancel()


def test_follower_of_apache_kafka(reference_kafka, tmp_path):
    topic = f"h-follower-{uuid.uuid4().hex[:8]}"
    create_topic(reference_kafka.bootstrap_servers, topic)
    leader = KafkaLeader(reference_kafka, topic)
    produce_all_kinds(reference_kafka.bootstrap_servers, topic, "a")
    follower = PartitionLog.open(tmp_path / f"{topic}-0", LogConfig(), lambda: 1_000_000)

    async def caught_up() -> bool:
        leo = await leader.log_end_offset()
        return follower.log_end_offset == leo == follower.last_stable_offset

    async def main():
        tid = await leader.topic_id()

        # a replica id Kafka does not know: refused with UNKNOWN_LEADER_EPOCH ("the tuple
        # (replica id, leader epoch) is not yet recognized"); the partition backs off and stays
        async def refused(manager):
            await wait_until(lambda: manager.fetcher_for((topic, 0)).fetch_count >= 2,
                             "two refused fetches")
            state = manager.fetch_state((topic, 0))
            assert state.last_error == ErrorCode.UNKNOWN_LEADER_EPOCH
            assert manager.failed_partitions == {}
        await replicate(leader, follower, tid, refused, broker_id=99)
        assert follower.log_end_offset == 0

        async def synced(manager):
            await wait_until(caught_up, "the follower")
        await replicate(leader, follower, tid, synced)
        # Kafka's own segment and aborted-transaction index, byte for byte
        assert segment_files(follower.dir, (".log", ".txnindex")) == segment_files(
            leader.dir, (".log", ".txnindex"))
        assert follower.aborted_transactions(0, follower.log_end_offset)
        assert ((follower.dir / "leader-epoch-checkpoint").read_text()
                == (leader.dir / "leader-epoch-checkpoint").read_text())

        # batches of epoch 0 past the leader's end (uncommitted ones it never got): Kafka
        # answers diverging_epoch (0, its log end) and the follower cuts there
        leo = follower.log_end_offset
        extra = copy_with_epoch_3(tmp_path, topic, follower)
        follower.append_as_follower(make_batch(3, base_offset=leo, leader_epoch=0))
        await replicate(leader, follower, tid, synced)
        assert follower.log_end_offset == leo
        # ... and of an epoch Kafka never had: Kafka answers OFFSET_OUT_OF_RANGE for the last
        # fetched epoch 3, and the follower cuts back to Kafka's log end (ListOffsets)
        await replicate(leader, extra, tid, lambda m: wait_until(
            lambda: caught_up_log(leader, extra), "the follower with epoch 3"))
        assert extra.log_end_offset == leo
        # (divergence inside one epoch is invisible once the leader's log grows past it, on
        # Kafka too: so both run before the leader gets more)
        produce_all_kinds(reference_kafka.bootstrap_servers, topic, "b")
        await replicate(leader, follower, tid, synced)
        await replicate(leader, extra, tid, lambda m: wait_until(
            lambda: caught_up_log(leader, extra), "the other follower"))
        assert segment_files(follower.dir, (".log", ".txnindex")) == segment_files(
            leader.dir, (".log", ".txnindex"))
        assert segment_files(extra.dir, (".log",)) == segment_files(leader.dir, (".log",))

    trio.run(main)
    follower.close()


def copy_with_epoch_3(tmp_path: Path, topic: str, source: PartitionLog) -> PartitionLog:
    """Another follower with ``source``'s batches and then batches of epoch 3."""
    log = PartitionLog.open(tmp_path / "other" / f"{topic}-0", LogConfig(), lambda: 1_000_000)
    log.append_as_follower(source.read(0, 1 << 30).to_bytes())
    log.append_as_follower(make_batch(2, base_offset=source.log_end_offset, leader_epoch=3))
    return log


async def caught_up_log(leader: KafkaLeader, log: PartitionLog) -> bool:
    return log.log_end_offset == await leader.log_end_offset() == log.last_stable_offset
