"""StripedReplicaPlacer, run on the same random stream as Kafka's own StripedReplicaPlacerTest
(Kafka's MockRandom behind java.util.Random): the placements must be the ones Kafka's test
expects, so the placement logic is Kafka's, not just similar."""

from __future__ import annotations

from collections import Counter

import pytest

from pykafkad.controller.placement import (
    InvalidReplicationFactor,
    StripedReplicaPlacer,
    UsableBroker,
    _RackList,
)
from tests.controller.java_random import KafkaMockRandom


def brokers(*specs):
    return [UsableBroker(i, rack, fenced) for i, rack, fenced in specs]


def test_avoid_fenced_replica_if_possible_on_single_rack():
    rack_list = _RackList(KafkaMockRandom(), brokers(
        (3, None, False), (1, None, True), (0, None, False), (4, None, False), (2, None, False)))
    assert (rack_list.num_total, rack_list.num_unfenced) == (5, 4)
    with pytest.raises(InvalidReplicationFactor):
        rack_list.place(0)
    assert [rack_list.place(4) for _ in range(5)] == [
        [3, 4, 0, 2], [4, 0, 2, 3], [0, 2, 3, 4], [2, 3, 4, 0], [0, 4, 3, 2]]


def test_placement_on_fenced_replica_on_single_rack():
    rack_list = _RackList(KafkaMockRandom(), brokers((3, None, False), (1, None, True),
                                                     (2, None, False)))
    assert [rack_list.place(3) for _ in range(4)] == [
        [3, 2, 1], [2, 3, 1], [3, 2, 1], [2, 3, 1]]


def test_rack_list_with_multiple_racks():
    rack_list = _RackList(KafkaMockRandom(), brokers(
        (11, "1", False), (10, "1", False), (30, "3", False), (31, "3", False),
        (21, "2", False), (20, "2", True)))
    assert rack_list.rack_names == ["1", "2", "3"]
    assert [rack_list.place(4) for _ in range(3)] == [
        [11, 21, 31, 10], [21, 30, 10, 20], [31, 11, 21, 30]]


def test_rack_list_with_invalid_racks():
    rack_list = _RackList(KafkaMockRandom(), brokers(
        (11, "1", False), (10, "1", False), (30, "3", True), (31, "3", True),
        (20, "2", True), (21, "2", True), (41, "4", False), (40, "4", True)))
    assert (rack_list.num_total, rack_list.num_unfenced) == (8, 3)
    assert [rack_list.place(4) for _ in range(3)] == [
        [41, 11, 21, 30], [10, 20, 31, 41], [41, 21, 30, 11]]


def test_successful_placement():
    placer = StripedReplicaPlacer(KafkaMockRandom())
    assert placer.place(5, 3, brokers((0, None, False), (3, None, False), (2, None, False),
                                      (1, None, False))) == [
        [2, 3, 0], [3, 0, 1], [0, 1, 2], [1, 2, 3], [1, 0, 2]]


def test_single_unfenced_broker_takes_every_partition():
    placer = StripedReplicaPlacer(KafkaMockRandom())
    assert placer.place(3, 1, brokers((0, None, False), (1, None, True))) == [[0], [0], [0]]


def test_even_distribution():
    placer = StripedReplicaPlacer(KafkaMockRandom())
    placements = placer.place(200, 2, brokers(*[(i, None, False) for i in range(4)]))
    assert Counter(tuple(p) for p in placements) == {
        (0, 1): 14, (0, 2): 22, (0, 3): 14, (1, 0): 17, (1, 2): 17, (1, 3): 16,
        (2, 0): 13, (2, 1): 17, (2, 3): 20, (3, 0): 20, (3, 1): 19, (3, 2): 11}


@pytest.mark.parametrize("rf, specs, message", [
    (1, [(11, "1", True), (10, "1", True)],
     "All brokers are currently fenced, or have all their log directories cordoned."),
    (3, [(11, "1", False), (10, "1", False)],
     "The target replication factor of 3 cannot be reached because only 2 broker(s) are "
     "registered or some brokers have all their log directories cordoned."),
    (0, [(11, "1", False), (10, "1", False)],
     "Invalid replication factor 0: the replication factor must be positive."),
])
def test_placement_errors(rf, specs, message):
    with pytest.raises(InvalidReplicationFactor) as e:
        StripedReplicaPlacer(KafkaMockRandom()).place(1, rf, brokers(*specs))
    assert e.value.message == message


def test_create_topics_places_as_kafka_on_the_same_random_stream():
    """End to end through CreateTopics: four registered brokers and Kafka's MockRandom give
    the assignment Kafka's testSuccessfulPlacement expects."""
    from pykafkad.controller import QuorumController
    from tests.controller.support import CLUSTER_ID, MetadataLog
    from tests.controller.test_replication_control import create_topic

    log = MetadataLog(QuorumController(CLUSTER_ID, rnd=KafkaMockRandom()))
    log.start_brokers(0, 3, 2, 1)
    result, _ = create_topic(log, "t", 5, 3)
    assert result.error_code == 0
    assert [list(log.partition("t", p).replicas) for p in range(5)] == [
        [2, 3, 0], [3, 0, 1], [0, 1, 2], [1, 2, 3], [1, 0, 2]]
