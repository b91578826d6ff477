"""Partition's high watermark and ISR rules on a real log, step by step (Kafka's
maybeIncrementLeaderHW, isFollowerInSync, maximal ISR, min.insync.replicas), with the
controller's answers to AlterPartition handed in as it will hand them."""

from __future__ import annotations

import pytest

from pykafkad.config import BrokerConfig, resolve_topic_config
from pykafkad.log.config import LogConfig
from pykafkad.log.partition import PartitionLog
from pykafkad.replica import AlterPartitionResult, Partition, PartitionRegistration
from tests.replica.support import Clock
from wire.errors import ErrorCode, KafkaError
from wire.records.batch import build_batch

LAG_MS = 30000


class Controller:
    """Collects AlterPartition requests; answers them only when the test says so."""

    def __init__(self) -> None:
        self.requests: list[tuple[list[int], int, int]] = []

    def __call__(self, partition, new_isr, leader_epoch, partition_epoch):
        self.requests.append((list(new_isr), leader_epoch, partition_epoch))
        return None  # in flight


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def controller():
    return Controller()


@pytest.fixture
def make_partition(tmp_path, clock, controller):
    logs = []

    def make(*, replicas, isr, min_isr=1, leader_epoch=1):
        plog = PartitionLog.open(tmp_path / "t-0", LogConfig(), clock)
        logs.append(plog)
        config = resolve_topic_config(BrokerConfig.from_sources(None, {}),
                                      {"min.insync.replicas": str(min_isr)})
        p = Partition("t", 0, b"\x01" * 16, 1, plog, clock=clock, replica_lag_time_max_ms=LAG_MS,
                      topic_config=lambda: config, alter_partition=controller)
        assert p.make_leader(PartitionRegistration(
            replicas=replicas, isr=isr, leader=1, leader_epoch=leader_epoch, partition_epoch=1))
        return p

    yield make
    for plog in logs:
        plog.close()


def append(p: Partition, n: int, clock) -> None:
    p.append_as_leader(build_batch([(None, b"v", (), clock()) for _ in range(n)]))


def test_new_leader_epoch_starts_at_the_log_end(make_partition, clock):
    p = make_partition(replicas=[1], isr=[1], leader_epoch=0)
    append(p, 3, clock)
    assert p.make_leader(PartitionRegistration(
        replicas=[1], isr=[1], leader=1, leader_epoch=4, partition_epoch=2))
    append(p, 1, clock)
    assert p.log.leader_epochs.entries == [(0, 0), (4, 3)]
    assert p.leader_epoch_start_offset == 3
    # a registration older than the partition epoch known is skipped
    assert not p.make_leader(PartitionRegistration(
        replicas=[1], isr=[1], leader=1, leader_epoch=5, partition_epoch=1))
    assert p.leader_epoch == 4


def test_expansion_in_flight_holds_the_high_watermark(make_partition, clock, controller):
    p = make_partition(replicas=[1, 2, 3], isr=[1, 2])
    append(p, 5, clock)
    p.update_follower_fetch_state(2, 5, 0, clock())
    assert p.high_watermark == 5
    p.update_follower_fetch_state(3, 5, 0, clock())  # caught up: asks to join
    assert controller.requests == [([1, 2, 3], 1, 1)]
    assert p.isr == [1, 2] and p.maximal_isr == [1, 2, 3]
    append(p, 2, clock)
    p.update_follower_fetch_state(2, 7, 0, clock())
    assert p.high_watermark == 5  # the maximal ISR counts replica 3 already
    p.complete_alter_partition(AlterPartitionResult([1, 2, 3], 1, 2))
    assert (p.isr, p.partition_epoch, p.pending_isr) == ([1, 2, 3], 2, None)
    p.update_follower_fetch_state(3, 7, 0, clock())
    assert p.high_watermark == 7


def test_a_caught_up_follower_outside_the_isr_holds_the_high_watermark(
        make_partition, clock, controller):
    p = make_partition(replicas=[1, 2, 3], isr=[1, 2])
    append(p, 5, clock)
    p.update_follower_fetch_state(2, 5, 0, clock())
    p.update_follower_fetch_state(3, 5, 0, clock())
    p.complete_alter_partition(None)  # the controller refused: replica 3 stays out
    assert p.isr == [1, 2]
    append(p, 2, clock)
    p.update_follower_fetch_state(2, 7, 0, clock())
    assert p.high_watermark == 5  # replica 3 caught up within the lag time: waited for
    clock.advance(LAG_MS + 1)
    assert p.maybe_increment_leader_hw()
    assert p.high_watermark == 7


def test_a_fenced_follower_no_longer_holds_the_high_watermark(make_partition, clock):
    """A follower killed right after a fetch is caught up for replica.lag.time.max.ms more;
    once the controller fences it (its session over) and takes it out of the ISR, the leader
    stops waiting for it, as Kafka's isReplicaIsrEligible says: acks=all goes on at once."""
    p = make_partition(replicas=[1, 2, 3], isr=[1, 2, 3], min_isr=2)
    fenced: set[int] = set()
    p.is_replica_isr_eligible = lambda replica_id: replica_id not in fenced
    append(p, 5, clock)
    p.update_follower_fetch_state(2, 5, 0, clock())
    p.update_follower_fetch_state(3, 5, 0, clock())
    append(p, 2, clock)
    p.update_follower_fetch_state(2, 7, 0, clock())  # replica 3 died at offset 5
    assert p.high_watermark == 5
    fenced.add(3)  # the controller fences broker 3 and shrinks the ISR in the same batch
    assert p.make_leader(PartitionRegistration(
        replicas=[1, 2, 3], isr=[1, 2], leader=1, leader_epoch=1, partition_epoch=2))
    assert p.high_watermark == 7


def test_a_follower_behind_the_high_watermark_does_not_join(make_partition, clock, controller):
    p = make_partition(replicas=[1, 2], isr=[1])
    append(p, 4, clock)
    assert p.high_watermark == 4  # the ISR is the leader alone
    p.update_follower_fetch_state(2, 3, 0, clock())
    assert controller.requests == []
    p.update_follower_fetch_state(2, 4, 0, clock())
    assert controller.requests == [([1, 2], 1, 1)]


def test_a_follower_must_reach_the_leader_epoch_to_join(make_partition, clock, controller):
    p = make_partition(replicas=[1, 2], isr=[1], leader_epoch=0)
    append(p, 4, clock)
    p.make_leader(PartitionRegistration(
        replicas=[1, 2], isr=[1], leader=1, leader_epoch=1, partition_epoch=2))
    assert p.leader_epoch_start_offset == 4
    p.log.update_high_watermark(2)  # as after an election: the HW below the epoch start
    p.update_follower_fetch_state(2, 3, 0, clock())
    assert controller.requests == []  # at the HW, but not into epoch 1
    p.update_follower_fetch_state(2, 4, 0, clock())
    assert controller.requests == [([1, 2], 1, 2)]


def test_under_min_isr_the_high_watermark_stays(make_partition, clock):
    p = make_partition(replicas=[1, 2], isr=[1], min_isr=2)
    append(p, 3, clock)
    assert (p.high_watermark, p.log_end_offset) == (0, 3)
    with pytest.raises(KafkaError) as e:
        p.append_records_to_leader(build_batch([(None, b"v", (), clock())]), -1)
    assert e.value.code == ErrorCode.NOT_ENOUGH_REPLICAS
    assert p.log_end_offset == 3


def test_min_insync_replicas_is_capped_at_the_replication_factor(make_partition, clock):
    p = make_partition(replicas=[1], isr=[1], min_isr=3)
    info = p.append_records_to_leader(build_batch([(None, b"v", (), clock())]), -1)
    assert info.base_offset == 0 and p.high_watermark == 1


def test_shrink_waits_for_the_controller(make_partition, clock, controller):
    p = make_partition(replicas=[1, 2], isr=[1, 2])
    append(p, 2, clock)
    clock.advance(LAG_MS + 1)
    assert p.maybe_shrink_isr()
    assert controller.requests == [([1], 1, 1)]
    assert p.high_watermark == 0  # a shrink in flight still counts replica 2
    assert not p.maybe_shrink_isr()  # one change at a time
    p.complete_alter_partition(AlterPartitionResult([1], 1, 2))
    assert (p.isr, p.high_watermark) == ([1], 2)
    # an answer for an older leader epoch is not applied
    p.update_follower_fetch_state(2, 2, 0, clock())
    p.complete_alter_partition(AlterPartitionResult([1, 2], 0, 3))
    assert p.isr == [1]
