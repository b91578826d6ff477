"""The share partition's state machine (Kafka's SharePartition) without a broker: acquisition,
acknowledgement types, delivery-count limit, lock expiry on a fake clock, the lazily moving
start offset, the records of __share_group_state, and the simple share assignor."""

from __future__ import annotations

import pytest

from pykafkad.coordinator.share_group import state_records as sr
from pykafkad.coordinator.share_group.group import ShareGroupCoordinator, simple_assignment
from pykafkad.coordinator.share_group.share_partition import (
    ACCEPT,
    ACKNOWLEDGED,
    ARCHIVED,
    AVAILABLE,
    BATCH_OPTIMIZED,
    GAP,
    RECORD_LIMIT,
    REJECT,
    RELEASE,
    RENEW,
    BatchBounds,
    SharePartition,
    aborted_batches,
)
from pykafkad.log.txn_index import AbortedTxn
from wire.errors import ErrorCode, KafkaError

LOCK, LIMIT = 30_000, 5


def batches(*ranges):
    """Batches of (base, last) read back to back."""
    out, pos = [], 0
    for base, last in ranges:
        out.append(BatchBounds(base, last, False, pos, pos + 100))
        pos += 100
    return out


def test_new_records_are_acquired_whole_batches_at_a_time():
    sp = SharePartition("g", b"t" * 16, 0, 0)
    got, send = sp.acquire("m1", batches((0, 4), (5, 9)), 3, BATCH_OPTIMIZED, 0, LOCK, 10)
    assert got == [(0, 4, 1)] and send == 100 and sp.end_offset == 5
    got, send = sp.acquire("m2", batches((5, 9)), 3, RECORD_LIMIT, 0, LOCK, 10)
    assert got == [(5, 7, 1)] and sp.end_offset == 8


def test_read_committed_archives_the_records_of_aborted_transactions():
    """Producer 7 aborts [0, 2] (marker 3), producer 8 commits [4] (marker 5), producer 7's
    next transaction [6] commits: only offsets 4 and 6 are acquired; the rest is archived."""
    def batch(base, last, pid, control=False):
        return BatchBounds(base, last, control, base * 10, base * 10 + 10, pid, True)

    read = [batch(0, 2, 7), batch(3, 3, 7, True), batch(4, 4, 8), batch(5, 5, 8, True),
            batch(6, 6, 7)]
    aborted = aborted_batches(read, [AbortedTxn(7, 0, 3, 0)])
    assert aborted == {0}
    sp = SharePartition("g", b"t" * 16, 0, 0)
    ranges, _ = sp.acquire("m", read, 500, BATCH_OPTIMIZED, 0, LOCK, 7, frozenset(aborted))
    assert ranges == [(4, 4, 1), (6, 6, 1)]
    assert [(r.first, r.last) for r in sp.runs if r.state == ARCHIVED] == [(5, 5)]
    assert sp.start_offset == 4


def test_acknowledge_types_and_the_delivery_count_limit():
    sp = SharePartition("g", b"t" * 16, 0, 0)
    sp.acquire("m", batches((0, 3)), 10, BATCH_OPTIMIZED, 0, LOCK, 4)
    sp.acknowledge("m", [(0, 3, [ACCEPT, RELEASE, REJECT, GAP])], 0, LOCK, LIMIT)
    assert [sp.record(o).state for o in range(4)] == [ACKNOWLEDGED, AVAILABLE, ARCHIVED, ARCHIVED]
    assert sp.start_offset == 0  # moves at the next fetch, as Kafka's persisted SPSO
    assert sp.first_fetch_offset() == 1 and sp.start_offset == 1
    for delivery in range(2, LIMIT + 1):
        got, _ = sp.acquire("m", batches((0, 3)), 10, BATCH_OPTIMIZED, 0, LOCK, 4)
        assert got == [(1, 1, delivery)]
        sp.acknowledge("m", [(1, 1, [RELEASE])], 0, LOCK, LIMIT)
    assert sp.record(1).state == ARCHIVED  # released at the limit: archived
    assert sp.first_fetch_offset() == 4 and sp.start_offset == 4


def test_acknowledging_what_the_member_does_not_hold_fails_whole():
    sp = SharePartition("g", b"t" * 16, 0, 0)
    sp.acquire("a", batches((0, 1)), 10, BATCH_OPTIMIZED, 0, LOCK, 2)
    with pytest.raises(KafkaError) as e:
        sp.acknowledge("b", [(0, 1, [ACCEPT])], 0, LOCK, LIMIT)
    assert e.value.code == ErrorCode.INVALID_RECORD_STATE
    with pytest.raises(KafkaError) as e:
        sp.acknowledge("a", [(0, 0, [ACCEPT]), (1, 2, [ACCEPT])], 0, LOCK, LIMIT)
    assert e.value.code == ErrorCode.INVALID_RECORD_STATE
    assert sp.record(0).member_id == "a"  # nothing applied


def test_locks_expire_on_the_clock_and_renew_extends_them():
    sp = SharePartition("g", b"t" * 16, 0, 0)
    sp.acquire("a", batches((0, 1)), 10, BATCH_OPTIMIZED, 1000, LOCK, 2)
    sp.acknowledge("a", [(1, 1, [RENEW])], 20_000, LOCK, LIMIT)
    assert not sp.expire_locks(1000 + LOCK - 1, LIMIT)
    assert sp.expire_locks(1000 + LOCK, LIMIT)
    assert sp.record(0).state == AVAILABLE and sp.record(1).state != AVAILABLE
    assert sp.next_lock_deadline() == 20_000 + LOCK
    got, _ = sp.acquire("b", batches((0, 1)), 10, BATCH_OPTIMIZED, 2000, LOCK, 2)
    assert got == [(0, 0, 2)]


def test_state_batches_round_trip_through_kafkas_record_layout():
    sp = SharePartition("g", b"t" * 16, 3, 0)
    sp.acquire("m", batches((0, 5)), 10, BATCH_OPTIMIZED, 0, LOCK, 6)
    sp.acknowledge("m", [(0, 5, [ACCEPT, ACCEPT, RELEASE, REJECT, ACCEPT, ACCEPT])], 0, LOCK, LIMIT)
    value = sr.ShareStateValue(snapshot_epoch=1, leader_epoch=0, start_offset=sp.start_offset,
                               state_batches=sp.state_batches(), state_epoch=0,
                               create_timestamp=5, write_timestamp=6,
                               delivery_complete_count=sp.delivery_complete_count())
    key = sr.ShareStateKey(sr.SNAPSHOT, "g", b"t" * 16, 3)
    assert sr.decode_key(sr.encode_key(key)) == key
    back = sr.decode_value(sr.SNAPSHOT, sr.encode_value(sr.SNAPSHOT, value))
    assert back == value
    assert back.state_batches == [(0, 1, ACKNOWLEDGED, 1), (2, 2, AVAILABLE, 1),
                                  (3, 3, ARCHIVED, 1), (4, 5, ACKNOWLEDGED, 1)]
    restored = SharePartition.from_state("g", b"t" * 16, 3, back.start_offset, 0,
                                         back.state_batches)
    assert restored.start_offset == 2 and restored.first_fetch_offset() == 2
    assert restored.record(2).delivery_count == 1 and restored.end_offset == 6


def test_simple_assignor_spreads_partitions_and_shares_them_when_members_outnumber():
    parts = [(b"t", 0), (b"t", 1), (b"t", 2)]
    assert simple_assignment(["a", "b"], parts) == {"a": {b"t": [0, 2]}, "b": {b"t": [1]}}
    four = simple_assignment(["a", "b", "c", "d"], parts[:1])
    assert all(a == {b"t": [0]} for a in four.values())


def test_heartbeat_epochs_join_leave_and_fencing():
    now = [0]
    t = b"t" * 16
    coord = ShareGroupCoordinator(lambda: now[0], lambda name: (t, 2),
                                  lambda g: 45_000, lambda g: 5_000)
    r = coord.heartbeat("g", "m1", 0, None, ["topic"], "c", "/h")
    # a new group's first epoch is 2 (as Kafka 4.4's); nothing is assigned before its share
    # state is initialized, at the group epoch
    assert (r.error, r.member_epoch, r.assignment) == (0, 2, {})
    assert (r.initialize, r.state_epoch) == ([(t, 0, -1), (t, 1, -1)], 2)
    # being initialized: not handed out again
    assert coord.heartbeat("g", "m1", 2, None, None, "c", "/h").initialize == []
    coord.initialized("g", [(t, 0)], [(t, 1)])
    r = coord.heartbeat("g", "m1", 2, None, None, "c", "/h")
    # a partition of a topic already initialized starts at offset 0
    assert (r.member_epoch, r.assignment, r.initialize) == (3, {t: [0]}, [(t, 1, 0)])
    coord.initialized("g", [(t, 1)], [])
    r = coord.heartbeat("g", "m1", 3, None, None, "c", "/h")
    assert (r.member_epoch, r.assignment) == (4, {t: [0, 1]})
    r = coord.heartbeat("g", "m2", 0, None, ["topic"], "c", "/h")
    assert r.member_epoch == 5
    r = coord.heartbeat("g", "m1", 4, None, None, "c", "/h")
    assert r.member_epoch == 5 and r.assignment == {t: [0]}
    assert coord.heartbeat("g", "m1", 7, None, None, "c", "/h").error == ErrorCode.FENCED_MEMBER_EPOCH
    assert coord.heartbeat("g", "zz", 3, None, None, "c", "/h").error == ErrorCode.UNKNOWN_MEMBER_ID
    assert coord.heartbeat("g", "", 0, None, ["topic"], "c", "/h").error == ErrorCode.INVALID_REQUEST
    now[0] = 40_000
    assert coord.heartbeat("g", "m1", 5, None, None, "c", "/h").assignment is None
    now[0] = 46_000  # m2 never heartbeated again: its session timed out
    r = coord.heartbeat("g", "m1", 5, None, None, "c", "/h")
    assert r.member_epoch == 6 and r.assignment == {t: [0, 1]}
    assert coord.heartbeat("g", "m1", -1, None, None, "c", "/h").member_epoch == -1
    assert coord.describe("g").state == "Empty"


def test_a_large_window_stays_a_few_runs():
    """The window is kept as runs (Kafka's in-flight batches), so acquiring and
    acknowledging 100,000 records costs per batch and per acknowledged range, not per record."""
    sp = SharePartition("g", b"t" * 16, 0, 0)
    read = batches(*[(i, i + 9_999) for i in range(0, 100_000, 10_000)])
    got, _ = sp.acquire("m", read, 100_000, BATCH_OPTIMIZED, 0, LOCK, 100_000)
    assert got == [(0, 99_999, 1)] and len(sp.runs) == 1
    sp.acknowledge("m", [(0, 49_999, [ACCEPT]), (50_000, 50_000, [RELEASE]),
                         (50_001, 99_999, [ACCEPT])], 0, LOCK, LIMIT)
    assert [(r.first, r.last, r.state) for r in sp.runs] == [
        (0, 49_999, ACKNOWLEDGED), (50_000, 50_000, AVAILABLE), (50_001, 99_999, ACKNOWLEDGED)]
    assert sp.state_batches(only_changed=True) == [
        (0, 49_999, ACKNOWLEDGED, 1), (50_000, 50_000, AVAILABLE, 1),
        (50_001, 99_999, ACKNOWLEDGED, 1)]
    assert sp.first_fetch_offset() == 50_000 and sp.delivery_complete_count() == 49_999


def test_a_share_update_is_written_over_its_snapshot_by_ranges():
    """The share coordinator applies a ShareUpdate over its snapshot with range arithmetic:
    the update's batches replace the offsets they cover, the rest keeps the snapshot's."""
    from pykafkad.coordinator.share_group.state_store import _apply_update

    def value(start, batches):
        return sr.ShareStateValue(snapshot_epoch=1, leader_epoch=0, start_offset=start,
                                  state_batches=batches, state_epoch=0, create_timestamp=1,
                                  write_timestamp=2, delivery_complete_count=-1)
    snapshot = value(0, [(0, 99_999, AVAILABLE, 1), (100_000, 100_009, ARCHIVED, 5)])
    update = value(-1, [(10, 19, ACKNOWLEDGED, 1), (99_990, 100_004, AVAILABLE, 2)])
    merged = _apply_update(snapshot, update)
    assert merged.start_offset == 0 and merged.state_batches == [
        (0, 9, AVAILABLE, 1), (10, 19, ACKNOWLEDGED, 1), (20, 99_989, AVAILABLE, 1),
        (99_990, 100_004, AVAILABLE, 2), (100_005, 100_009, ARCHIVED, 5)]
    assert _apply_update(snapshot, value(50_000, [])).state_batches == [
        (50_000, 99_999, AVAILABLE, 1), (100_000, 100_009, ARCHIVED, 5)]
