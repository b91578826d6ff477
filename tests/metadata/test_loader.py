"""MetadataLoader: commits publish images; a metadata transaction is published whole or not
at all (Kafka's MetadataBatchLoader)."""

from __future__ import annotations

import pytest

from pykafkad.metadata.batches import Batch
from pykafkad.metadata.delta import MetadataReplayError
from pykafkad.metadata.loader import MetadataLoader
from pykafkad.metadata.snapshot import Snapshot
from wire.metadata import (
    AbortTransactionRecord,
    BeginTransactionRecord,
    ConfigRecord,
    EndTransactionRecord,
    FeatureLevelRecord,
    PartitionRecord,
    TopicRecord,
)

T1 = bytes(range(1, 17))


def batch(base_offset: int, *records, epoch: int = 1) -> Batch:
    return Batch(base_offset, base_offset + len(records) - 1, epoch, 0, [(r, 0) for r in records])


def topic(name: str = "t", tid: bytes = T1) -> list:
    return [TopicRecord(name, tid),
            PartitionRecord(partition_id=0, topic_id=tid, replicas=[1], isr=[1],
                            removing_replicas=[], adding_replicas=[], leader=1, leader_epoch=0,
                            partition_epoch=0, directories=[])]


def loader():
    published = []
    return MetadataLoader(publish=lambda delta, image: published.append((delta, image))), published


def test_each_commit_publishes_an_image() -> None:
    ml, published = loader()
    ml.handle_commit(batch(0, FeatureLevelRecord("metadata.version", 33)))
    ml.handle_commit([batch(1, *topic())])
    assert len(published) == 2
    delta, image = published[-1]
    assert (image.offset, image.epoch) == (2, 1) and image.topics.get("t")
    assert set(delta.local_changes(1).leaders) == {("t", 0)}
    assert ml.image is image


def test_a_transaction_is_published_whole() -> None:
    ml, published = loader()
    ml.handle_commit(batch(0, FeatureLevelRecord("metadata.version", 33), BeginTransactionRecord("x")))
    assert [i.offset for _, i in published] == [0]  # the record before the transaction only
    ml.handle_commit(batch(2, topic()[0]))
    assert ml.in_transaction and len(published) == 1 and ml.image.topics.get("t") is None
    ml.handle_commit(batch(3, topic()[1], EndTransactionRecord()))
    assert not ml.in_transaction
    assert published[-1][1].topics.get("t").partitions[0].leader == 1
    assert published[-1][1].offset == 4


def test_an_aborted_transaction_leaves_no_trace() -> None:
    ml, published = loader()
    ml.handle_commit(batch(0, FeatureLevelRecord("metadata.version", 33)))
    ml.handle_commit(batch(1, BeginTransactionRecord("x"), *topic()))
    ml.handle_commit(batch(4, AbortTransactionRecord(), ConfigRecord(2, "u", "k", "v")))
    image = published[-1][1]
    assert image.topics.get("t") is None and image.configs == {(2, "u"): {"k": "v"}}
    assert image.offset == 5


def test_transaction_markers_out_of_place_are_refused() -> None:
    ml, _ = loader()
    with pytest.raises(MetadataReplayError, match="without having seen a BeginTransactionRecord"):
        ml.handle_commit(batch(0, EndTransactionRecord()))
    ml, _ = loader()
    with pytest.raises(MetadataReplayError, match="already in a transaction"):
        ml.handle_commit(batch(0, BeginTransactionRecord("a"), BeginTransactionRecord("b")))


def test_a_snapshot_replaces_the_image() -> None:
    ml, published = loader()
    ml.handle_commit(batch(0, *topic("old", bytes(range(2, 18)))))
    snap = Snapshot(10, 3, 0, batches=[batch(0, FeatureLevelRecord("metadata.version", 33),
                                             *topic())])
    image = ml.load_snapshot(snap)
    assert list(image.topics.by_name) == ["t"] and (image.offset, image.epoch) == (9, 3)
    assert published[-1][0].local_changes(1).deletes == {("old", 0)}
