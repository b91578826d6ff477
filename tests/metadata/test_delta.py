"""MetadataDelta replay onto MetadataImage, as Kafka's image package replays records."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pykafkad.metadata.delta import MetadataDelta, MetadataReplayError
from pykafkad.metadata.image import EMPTY_IMAGE, MetadataImage
from pykafkad.metadata.partition import MIGRATING_DIRECTORY, InvalidPartitionChange
from wire.metadata import (
    BrokerRegistrationChangeRecord,
    ClearElrRecord,
    ClientQuotaRecord,
    ConfigRecord,
    FeatureLevelRecord,
    FenceBrokerRecord,
    PartitionChangeRecord,
    PartitionRecord,
    ProducerIdsRecord,
    RegisterBrokerRecord,
    RegisterControllerRecord,
    RemoveTopicRecord,
    TopicRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
)
from wire.metadata.client_quota_record import EntityData
from wire.metadata.register_broker_record import BrokerEndpoint, BrokerFeature

T1 = bytes(range(1, 17))
T2 = bytes(range(2, 18))
DIR_A = bytes(15) + b"\xaa"
TOPIC = 2  # ConfigResource.Type.TOPIC


def broker(broker_id: int, epoch: int = 10, fenced: bool = True) -> RegisterBrokerRecord:
    return RegisterBrokerRecord(
        broker_id=broker_id, incarnation_id=bytes([broker_id]) * 16, broker_epoch=epoch,
        end_points=[BrokerEndpoint("PLAINTEXT", "localhost", 9090 + broker_id, 0)],
        features=[BrokerFeature("metadata.version", 7, 33)], rack=None, fenced=fenced,
        in_controlled_shutdown=False, log_dirs=[DIR_A])


def partition(pid: int, replicas, leader: int, topic_id: bytes = T1, **kw) -> PartitionRecord:
    return PartitionRecord(partition_id=pid, topic_id=topic_id, replicas=list(replicas),
                           isr=list(kw.pop("isr", replicas)), removing_replicas=[],
                           adding_replicas=[], leader=leader, leader_epoch=0,
                           partition_epoch=0, directories=kw.pop("directories", []), **kw)


def image_of(*records) -> MetadataImage:
    return MetadataDelta().replay_all(records).apply()


def three_partitions() -> MetadataImage:
    return image_of(
        FeatureLevelRecord("metadata.version", 33),
        broker(1), broker(2), broker(3),
        TopicRecord("orders", T1),
        partition(0, [1, 2, 3], 1), partition(1, [2, 3, 1], 2), partition(2, [3, 1, 2], 3),
    )


def test_topic_creation_is_found_by_name_and_id() -> None:
    image = three_partitions()
    topic = image.topics.get("orders")
    assert topic is image.topics.get(T1)
    assert sorted(topic.partitions) == [0, 1, 2]
    p1 = topic.partitions[1]
    assert (p1.replicas, p1.isr, p1.leader, p1.leader_epoch, p1.partition_epoch) == \
        ((2, 3, 1), (2, 3, 1), 2, 0, 0)
    # written before KIP-858: every replica is in a MIGRATING directory, as Kafka reads it
    assert p1.directories == (MIGRATING_DIRECTORY,) * 3
    assert image.metadata_version == 33


def test_image_is_immutable() -> None:
    image = three_partitions()
    with pytest.raises(TypeError):
        image.topics.by_name["x"] = None
    with pytest.raises(AttributeError):
        image.producer_ids = 5


def change(pid: int = 0, **kw) -> PartitionChangeRecord:
    return PartitionChangeRecord(partition_id=pid, topic_id=T1, **kw)


def test_isr_change_keeps_the_leader_epoch_and_bumps_the_partition_epoch() -> None:
    image = three_partitions()
    after = MetadataDelta(image).replay_all([change(isr=[1, 2])]).apply()
    p = after.topics.get("orders").partitions[0]
    assert (p.isr, p.leader, p.leader_epoch, p.partition_epoch) == ((1, 2), 1, 0, 1)
    assert p.replicas == (1, 2, 3)  # a null field is unchanged
    assert image.topics.get("orders").partitions[0].isr == (1, 2, 3)  # the old image is intact


@pytest.mark.parametrize("leader", [2, -1, 1])
def test_any_leader_but_no_change_bumps_the_leader_epoch(leader: int) -> None:
    # -1 (NO_LEADER) and even the same leader bump it; only -2 (NO_LEADER_CHANGE) does not
    after = MetadataDelta(three_partitions()).replay_all([change(leader=leader)]).apply()
    p = after.topics.get("orders").partitions[0]
    assert (p.leader, p.leader_epoch, p.partition_epoch) == (leader, 1, 1)


def test_changes_in_one_delta_compose() -> None:
    delta = MetadataDelta(three_partitions())
    delta.replay_all([change(isr=[1]), change(leader=-1, isr=[]), change(leader=3, isr=[3])])
    p = delta.apply().topics.get("orders").partitions[0]
    assert (p.leader, p.leader_epoch, p.partition_epoch, p.isr) == (3, 2, 3, (3,))


def test_reassignment_and_elr_fields() -> None:
    after = MetadataDelta(three_partitions()).replay_all([
        change(replicas=[1, 2, 3, 4], adding_replicas=[4], directories=[DIR_A] * 4,
               eligible_leader_replicas=[2], last_known_elr=[3]),
    ]).apply()
    p = after.topics.get("orders").partitions[0]
    assert (p.replicas, p.adding_replicas, p.elr, p.last_known_elr) == \
        ((1, 2, 3, 4), (4,), (2,), (3,))
    assert p.directory(4) == DIR_A


def test_directories_must_match_the_replicas() -> None:
    # Kafka's checkDirectories: only a record that sets both is checked against itself
    with pytest.raises(InvalidPartitionChange, match="do not match"):
        MetadataDelta(three_partitions()).replay(change(replicas=[1, 2, 3], directories=[DIR_A]))


def test_a_replica_change_without_directories_keeps_them_as_kafka_does() -> None:
    """Kafka's merge/defaultToMigrating: directories that are all MIGRATING stand for every
    new replica; real ones are kept as they were (the controller always writes directories
    with the replicas, so nothing reads the stale list)."""
    migrating = MetadataDelta(three_partitions()).replay_all(
        [change(replicas=[1, 2, 3, 4])]).apply().topics.get("orders").partitions[0]
    assert migrating.directories == (MIGRATING_DIRECTORY,) * 4
    assigned = MetadataDelta(three_partitions()).replay_all(
        [change(directories=[DIR_A] * 3), change(replicas=[1, 2, 3, 4])]).apply()
    assert assigned.topics.get("orders").partitions[0].directories == (DIR_A,) * 3


def test_directory_of_a_broker_that_is_not_a_replica_is_a_callers_error() -> None:
    p = three_partitions().topics.get("orders").partitions[0]
    assert p.directory(1) == MIGRATING_DIRECTORY
    with pytest.raises(ValueError, match="Replica 9 is not assigned to this partition."):
        p.directory(9)
    assert p.has_leader()


def test_clear_elr_clears_every_partition_that_has_one() -> None:
    image = MetadataDelta(three_partitions()).replay_all(
        [change(eligible_leader_replicas=[2], last_known_elr=[3])]).apply()
    after = MetadataDelta(image).replay_all([ClearElrRecord("")]).apply()
    p = after.topics.get("orders").partitions[0]
    assert (p.elr, p.last_known_elr, p.partition_epoch) == ((), (), 2)
    assert after.topics.get("orders").partitions[1].partition_epoch == 0


def test_change_of_unknown_partition_or_topic_is_refused() -> None:
    with pytest.raises(MetadataReplayError, match="no such partition found"):
        MetadataDelta(three_partitions()).replay(change(pid=9, isr=[1]))
    with pytest.raises(MetadataReplayError, match="no topic with that ID was found"):
        MetadataDelta(three_partitions()).replay(partition(0, [1], 1, topic_id=T2))


def test_remove_topic() -> None:
    image = three_partitions()
    delta = MetadataDelta(image)
    delta.replay(RemoveTopicRecord(T1))
    after = delta.apply()
    assert after.topics.get("orders") is None and after.topics.get(T1) is None
    assert delta.local_changes(1).deletes == {("orders", 0), ("orders", 1), ("orders", 2)}
    with pytest.raises(MetadataReplayError, match="no such topic found"):
        MetadataDelta(after).replay(RemoveTopicRecord(T1))


def test_topic_created_and_removed_in_one_delta_leaves_nothing() -> None:
    delta = MetadataDelta(EMPTY_IMAGE)
    delta.replay_all([TopicRecord("t", T2), partition(0, [1], 1, topic_id=T2), RemoveTopicRecord(T2)])
    assert delta.apply().topics.by_id == {}
    assert delta.local_changes(1).deletes == set()


def test_fence_and_unfence_follow_the_broker_epoch() -> None:
    image = three_partitions()
    assert image.cluster[1].fenced
    after = MetadataDelta(image).replay_all([UnfenceBrokerRecord(id=1, epoch=10)]).apply()
    assert not after.cluster[1].fenced
    after = MetadataDelta(after).replay_all([
        BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=10, fenced=0,
                                       in_controlled_shutdown=1, log_dirs=[]),
    ]).apply()
    assert (after.cluster[1].fenced, after.cluster[1].in_controlled_shutdown) == (False, True)
    after = MetadataDelta(after).replay_all([FenceBrokerRecord(id=1, epoch=10)]).apply()
    assert after.cluster[1].fenced
    with pytest.raises(MetadataReplayError, match=r"the given epoch, 9, did not match the current "
                                                  r"broker epoch, 10"):
        MetadataDelta(after).replay(UnfenceBrokerRecord(id=1, epoch=9))
    with pytest.raises(MetadataReplayError, match="Tried to fence broker 7, but that broker was "
                                                  "not registered."):
        MetadataDelta(after).replay(FenceBrokerRecord(id=7, epoch=1))
    with pytest.raises(MetadataReplayError, match="unknown value for fenced field: 5"):
        MetadataDelta(after).replay(BrokerRegistrationChangeRecord(
            broker_id=1, broker_epoch=10, fenced=5, log_dirs=[]))
    gone = MetadataDelta(after).replay_all([UnregisterBrokerRecord(1, 10)]).apply()
    assert 1 not in gone.cluster and 2 in gone.cluster


def test_broker_registration_fields() -> None:
    b = three_partitions().cluster[2]
    assert (b.id, b.epoch, b.incarnation_id, b.rack) == (2, 10, bytes([2]) * 16, None)
    assert b.listener("PLAINTEXT").port == 9092
    assert b.supported_features == {"metadata.version": (7, 33)}
    assert b.directories == (DIR_A,)


def test_configs_set_and_delete() -> None:
    image = image_of(ConfigRecord(TOPIC, "orders", "retention.ms", "1000"),
                     ConfigRecord(TOPIC, "orders", "cleanup.policy", "compact"),
                     ConfigRecord(4, "", "log.retention.ms", "5"))
    assert image.configs[(TOPIC, "orders")] == {"retention.ms": "1000", "cleanup.policy": "compact"}
    after = MetadataDelta(image).replay_all([
        ConfigRecord(TOPIC, "orders", "retention.ms", None),
        ConfigRecord(TOPIC, "orders", "cleanup.policy", "delete"),
        ConfigRecord(4, "", "log.retention.ms", None),
    ]).apply()
    assert after.configs == {(TOPIC, "orders"): {"cleanup.policy": "delete"}}


def test_producer_ids_client_quotas_and_features() -> None:
    image = image_of(FeatureLevelRecord("metadata.version", 33),
                     FeatureLevelRecord("group.version", 1),
                     ProducerIdsRecord(broker_id=1, broker_epoch=10, next_producer_id=1000),
                     ClientQuotaRecord([EntityData("client-id", "c")], "producer_byte_rate", 5.0))
    assert image.producer_ids == 1000
    assert image.client_quotas == {(("client-id", "c"),): {"producer_byte_rate": 5.0}}
    assert image.features.level("group.version") == 1
    after = MetadataDelta(image).replay_all([
        ProducerIdsRecord(broker_id=2, broker_epoch=3, next_producer_id=2000),
        FeatureLevelRecord("group.version", 0),  # level 0 removes a feature
        ClientQuotaRecord([EntityData("client-id", "c")], "producer_byte_rate", 0.0, True),
    ]).apply()
    assert (after.producer_ids, after.features.finalized_versions, after.client_quotas) == \
        (2000, {}, {})
    assert after.metadata_version == 33


def test_local_changes_of_a_new_topic() -> None:
    delta = MetadataDelta(EMPTY_IMAGE)
    delta.replay_all([TopicRecord("orders", T1), partition(0, [1, 2, 3], 1),
                      partition(1, [2, 3, 1], 2), partition(2, [2, 3], 2)])
    changes = delta.local_changes(1)
    assert set(changes.leaders) == set(changes.elected_leaders) == {("orders", 0)}
    assert set(changes.followers) == {("orders", 1)}
    assert changes.leaders[("orders", 0)].topic_id == T1
    assert changes.topic_ids == {"orders": T1}
    assert changes.deletes == set()


def test_local_changes_after_isr_and_leader_changes() -> None:
    image = three_partitions()
    delta = MetadataDelta(image)
    delta.replay_all([
        change(0, isr=[1, 2]),                        # 1 still leads: not newly elected
        change(1, leader=1),                          # 1 is elected
        change(2, replicas=[3, 2], isr=[3, 2], directories=[DIR_A, DIR_A]),  # 1 removed
    ])
    changes = delta.local_changes(1)
    assert set(changes.leaders) == {("orders", 0), ("orders", 1)}
    assert set(changes.elected_leaders) == {("orders", 1)}
    assert changes.deletes == {("orders", 2)}
    follower = delta.local_changes(2)
    # every partition whose partition epoch moved, where 2 is a replica but not the leader
    assert set(follower.followers) == {("orders", 0), ("orders", 1), ("orders", 2)}
    assert set(follower.leaders) == set()
    assert follower.directory_ids[(T1, ("orders", 2))] == DIR_A


def test_a_snapshot_replaces_the_image() -> None:
    image = three_partitions()
    delta = MetadataDelta(image)
    delta.replay_all([FeatureLevelRecord("metadata.version", 33), broker(4),
                      TopicRecord("other", T2), partition(0, [4, 1], 4, topic_id=T2)])
    delta.finish_snapshot()
    after = delta.apply()
    assert list(after.topics.by_name) == ["other"] and list(after.cluster) == [4]
    changes = delta.local_changes(1)
    assert changes.deletes == {("orders", 0), ("orders", 1), ("orders", 2)}
    assert set(changes.followers) == {("other", 0)}


def test_records_rebuild_the_image() -> None:
    image = MetadataDelta(three_partitions()).replay_all([
        change(0, leader=2, isr=[2, 3], eligible_leader_replicas=[1]),
        ConfigRecord(TOPIC, "orders", "retention.ms", "1000"),
        ProducerIdsRecord(broker_id=1, broker_epoch=10, next_producer_id=3000),
        FeatureLevelRecord("transaction.version", 2),
        RegisterControllerRecord(controller_id=1, incarnation_id=T2, end_points=[], features=[]),
        ClientQuotaRecord([EntityData("user", None)], "consumer_byte_rate", 7.0),
    ]).apply(offset=41, epoch=3)
    rebuilt = MetadataDelta().replay_all(image.records()).apply(offset=41, epoch=3)
    assert rebuilt == image
    assert type(image.records()[0]) is FeatureLevelRecord


def test_broker_directories_are_kept_in_kafkas_uuid_order() -> None:
    high = bytes([0x80]) + bytes(15)  # negative as Kafka's signed long: sorts first
    record = broker(5)
    record.log_dirs = [DIR_A, high]
    assert image_of(record).cluster[5].directories == (high, DIR_A)


_replica_lists = st.lists(st.sampled_from([1, 2, 3]), min_size=1, max_size=3, unique=True)
_changes = st.lists(st.builds(
    lambda pid, isr, leader, elr: change(pid, isr=isr, leader=leader,
                                         eligible_leader_replicas=elr),
    st.integers(0, 2), st.none() | _replica_lists, st.sampled_from([-2, -2, -1, 1, 2, 3]),
    st.none() | _replica_lists), max_size=12)


@settings(max_examples=60, deadline=None)
@given(changes=_changes, cut=st.integers(0, 12))
def test_one_delta_or_two_give_the_same_image(changes, cut) -> None:
    """Replaying records in one delta or split over two deltas, and rebuilding an image from
    its own records, give the same image."""
    base = three_partitions()
    whole = MetadataDelta(base).replay_all(changes).apply()
    first = MetadataDelta(base).replay_all(changes[:cut]).apply()
    split = MetadataDelta(first).replay_all(changes[cut:]).apply()
    assert split == whole
    assert MetadataDelta().replay_all(whole.records()).apply() == whole
    p = whole.topics.get("orders").partitions
    assert sum(q.partition_epoch for q in p.values()) == len(changes)
