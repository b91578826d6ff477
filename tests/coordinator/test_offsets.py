"""Offset commits, fetches, deletion, expiration and replay, on a fake clock."""

from __future__ import annotations

import pytest

from pykafkad.coordinator.coordinator import CommitPartition, CommitRequest
from pykafkad.coordinator.group import GroupState
from pykafkad.coordinator.records import (
    GroupMetadataKey,
    OffsetCommitKey,
    decode_key,
    decode_offset_commit_value,
)
from pykafkad.coordinator.storage import StoredRecord
from tests.coordinator.harness import Harness
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

DAY = 24 * 3600 * 1000


def test_simple_group_commit_and_fetch():
    h = Harness()
    results = h.commit({("t", 0): 5, ("t", 1): 7}, metadata="hi", leader_epoch=2)
    assert [e for _, e in results] == [0, 0]
    assert h.group().is_simple and h.group().state is GroupState.EMPTY
    assert h.committed() == {("t", 0): 5, ("t", 1): 7}
    assert h.committed(topics=[("t", [0, 3]), ("u", [0])]) == {
        ("t", 0): 5, ("t", 3): -1, ("u", 0): -1}
    [(_, [f])] = h.coord.fetch_offsets("g", [("t", [1])], False)
    assert (f.offset, f.leader_epoch, f.metadata) == (7, 2, "hi")
    # the records are Kafka's
    key, value = h.storage.records[0].key, h.storage.records[0].value
    assert decode_key(key) == OffsetCommitKey("g", "t", 0)
    stored = decode_offset_commit_value(value)
    assert (stored.offset, stored.leader_epoch, stored.metadata) == (5, 2, "hi")
    assert stored.commit_timestamp == h.clock.now and stored.expire_timestamp == -1


def test_fetch_of_an_unknown_group_is_empty_without_error():
    h = Harness()
    assert h.coord.fetch_offsets("nope", None, True) == []
    [(_, [f])] = h.coord.fetch_offsets("nope", [("t", [0])], True)
    assert (f.offset, f.error) == (-1, 0)


def test_commit_validation_against_the_group():
    h = Harness()
    with pytest.raises(KafkaError) as e:
        h.commit({("t", 0): 1}, generation=1, member_id="m", version=8)
    assert e.value.code == E.ILLEGAL_GENERATION
    with pytest.raises(KafkaError) as e:
        h.commit({("t", 0): 1}, generation=1, member_id="m", version=9)
    assert e.value.code == E.GROUP_ID_NOT_FOUND
    (a, b), gen = h.form(2)
    assert [e for _, e in h.commit({("t", 0): 3}, member_id=a, generation=gen)] == [0]
    for kwargs, code in [
        ({"member_id": a, "generation": gen - 1}, E.ILLEGAL_GENERATION),
        ({"member_id": "stranger", "generation": gen}, E.UNKNOWN_MEMBER_ID),
        ({}, E.UNKNOWN_MEMBER_ID),  # no member, no generation: only while Empty
    ]:
        with pytest.raises(KafkaError) as e:
            h.commit({("t", 0): 4}, **kwargs)
        assert e.value.code == code, kwargs
    h.join(a)  # leader rejoin: rebalance; a commit with the old generation still works
    assert h.group().state is GroupState.PREPARING_REBALANCE
    assert [e for _, e in h.commit({("t", 0): 5}, member_id=b, generation=gen)] == [0]
    h.join(b)
    assert h.group().state is GroupState.COMPLETING_REBALANCE
    with pytest.raises(KafkaError) as e:
        h.commit({("t", 0): 6}, member_id=b, generation=gen + 1)
    assert e.value.code == E.REBALANCE_IN_PROGRESS
    assert h.committed() == {("t", 0): 5}


def test_commit_keeps_the_session_alive():
    h = Harness()
    (a,), gen = h.form(1, session=1000)
    for _ in range(5):
        h.advance(800)
        h.commit({("t", 0): 1}, member_id=a, generation=gen)
    assert h.group().has_member(a)


def test_metadata_too_large_fails_only_that_partition():
    h = Harness(offset_metadata_max_bytes=4)
    results = h.coord.commit_offsets(CommitRequest("g", [
        CommitPartition("t", 0, 1, metadata="12345"), CommitPartition("t", 1, 2, metadata="1234"),
    ]))
    assert [e for _, e in results] == [E.OFFSET_METADATA_TOO_LARGE, 0]
    assert h.committed() == {("t", 1): 2}


def test_failed_write_fails_the_commit_and_changes_nothing():
    h = Harness()
    h.storage.fail = E.NOT_LEADER_OR_FOLLOWER
    with pytest.raises(KafkaError) as e:
        h.commit({("t", 0): 1})
    assert e.value.code == E.NOT_COORDINATOR
    h.storage.fail = E.MESSAGE_TOO_LARGE
    with pytest.raises(KafkaError) as e:
        h.commit({("t", 0): 1})
    assert e.value.code == E.UNKNOWN_SERVER_ERROR
    assert h.committed() == {}


def test_restart_replays_offsets_and_groups():
    h = Harness()
    (a, b), gen = h.form(2, session=5000)
    h.commit({("t", 0): 10, ("t", 1): 20}, member_id=a, generation=gen, metadata="x")
    h.commit({("u", 0): 1}, group="simple")
    h.commit({("u", 0): 2}, group="simple")
    h2 = h.reload()
    assert h2.committed() == {("t", 0): 10, ("t", 1): 20}
    assert h2.committed("simple") == {("u", 0): 2}
    g = h2.group()
    assert g.state is GroupState.STABLE and g.generation_id == gen and set(g.members) == {a, b}
    assert g.leader_id == a and g.protocol_name == "range" and g.subscribed_topics == {"t"}
    # members resume where they were: heartbeats and syncs of the same generation work
    assert h2.heartbeat(a, gen) == 0
    assert h2.sync(b, gen).value.assignment == b.encode()
    # b stays silent: its session (5 s) expires, then a rebalance drops it
    h2.advance(4000)
    assert h2.heartbeat(a, gen) == 0
    h2.advance(1000)
    assert h2.heartbeat(a, gen) == E.REBALANCE_IN_PROGRESS
    p = h2.join(a, session=5000)
    assert p.value.generation_id == gen + 1 and len(p.value.members) == 1


def test_delete_groups():
    h = Harness()
    (a,), gen = h.form(1)
    h.commit({("t", 0): 1}, member_id=a, generation=gen)
    h.commit({("t", 0): 1}, group="simple")
    results = h.coord.delete_groups(["g", "simple", "missing"])
    assert results == [("g", E.NON_EMPTY_GROUP), ("simple", 0), ("missing", E.GROUP_ID_NOT_FOUND)]
    tail = h.storage.records[-2:]
    assert decode_key(tail[0].key) == OffsetCommitKey("simple", "t", 0) and tail[0].value is None
    assert decode_key(tail[1].key) == GroupMetadataKey("simple") and tail[1].value is None
    assert "simple" not in h.coord.groups and h.committed("simple") == {}
    h.coord.leave_group("g", [(a, None, None)])
    assert h.coord.delete_groups(["g"]) == [("g", 0)]
    assert h.coord.groups == {} and h.committed() == {}
    assert h.reload().coord.groups == {}, "the tombstones replay as deletions"


def test_delete_offsets():
    h = Harness()
    (a,), gen = h.form(1, topics=("t",))
    h.commit({("t", 0): 1, ("old", 0): 2, ("old", 1): 3}, member_id=a, generation=gen)
    result = h.coord.delete_offsets("g", [("t", [0]), ("old", [0, 5])])
    assert result == [("t", [(0, E.GROUP_SUBSCRIBED_TO_TOPIC)]), ("old", [(0, 0), (5, 0)])]
    assert h.committed() == {("t", 0): 1, ("old", 1): 3}
    for group, code in [("missing", E.GROUP_ID_NOT_FOUND), ("", E.INVALID_GROUP_ID)]:
        with pytest.raises(KafkaError) as e:
            h.coord.delete_offsets(group, [])
        assert e.value.code == code


def test_delete_offsets_of_a_non_consumer_group_needs_it_empty():
    h = Harness()
    p = h.join(version=3, protocol_type="connect", protocols=[("default", b"")])
    assert p.value.error == 0
    with pytest.raises(KafkaError) as e:
        h.coord.delete_offsets("g", [("t", [0])])
    assert e.value.code == E.NON_EMPTY_GROUP


def test_offsets_expire_after_the_group_empties():
    h = Harness(offsets_retention_ms=7 * DAY, offsets_retention_check_interval_ms=600_000)
    (a,), gen = h.form(1)
    h.commit({("t", 0): 1}, member_id=a, generation=gen)
    h.advance(8 * DAY)  # a Stable group keeps the offsets of topics it subscribes to
    h.heartbeat(a, gen)  # (the session expired meanwhile, which emptied the group)
    assert h.group() is not None and h.committed() == {("t", 0): 1}
    emptied_at = h.group().state_timestamp
    h.advance(7 * DAY - (h.clock.now - emptied_at) - 1000)
    assert h.committed() == {("t", 0): 1}
    h.advance(600_000)
    assert h.committed() == {}
    assert h.group() is None, "an empty group without offsets is deleted"


def test_simple_group_offsets_expire_after_their_commit():
    h = Harness(offsets_retention_ms=DAY, offsets_retention_check_interval_ms=60_000)
    h.commit({("t", 0): 1}, group="s")
    h.advance(DAY // 2)
    h.commit({("t", 1): 1}, group="s")
    h.advance(DAY // 2 + 60_000)
    assert h.committed("s") == {("t", 1): 1}
    h.advance(DAY // 2)
    assert h.committed("s") == {} and "s" not in h.coord.groups


def test_explicit_retention_time_expires_on_its_own():
    h = Harness(offsets_retention_ms=7 * DAY, offsets_retention_check_interval_ms=60_000)
    h.coord.commit_offsets(CommitRequest("s", [CommitPartition("t", 0, 1)],
                                         retention_time_ms=120_000, api_version=2))
    assert decode_offset_commit_value(h.storage.records[0].value).expire_timestamp == \
        h.clock.now + 120_000
    h.advance(120_000)
    assert h.committed("s") == {}


def test_deleted_topic_offsets_are_tombstoned():
    h = Harness()
    h.commit({("t", 0): 1, ("u", 0): 2}, group="a")
    h.commit({("t", 3): 1}, group="b")
    h.coord.on_topic_deleted("t")
    assert h.committed("a") == {("u", 0): 2} and h.committed("b") == {}


def test_transactional_offsets_are_pending_until_the_marker():
    h = Harness()
    h.commit({("t", 0): 1}, group="g")
    h.coord.commit_transactional_offsets(
        CommitRequest("g", [CommitPartition("t", 0, 50)]), producer_id=7, producer_epoch=0)
    h.coord.commit_transactional_offsets(
        CommitRequest("g", [CommitPartition("t", 1, 9)]), producer_id=8, producer_epoch=0)
    assert h.storage.records[-1].producer_id == 8
    assert h.committed() == {("t", 0): 1}
    assert h.committed(require_stable=True) == {("t", 0): E.UNSTABLE_OFFSET_COMMIT}
    assert h.committed(topics=[("t", [1])], require_stable=True) == {
        ("t", 1): E.UNSTABLE_OFFSET_COMMIT}
    # the transaction coordinator wrote the markers (commit for 7, abort for 8)
    h.coord.offsets.replay_end_transaction(7, committed=True)
    h.coord.offsets.replay_end_transaction(8, committed=False)
    assert h.committed(require_stable=True) == {("t", 0): 50}
    # a restart replays the same: transactional records, then the markers
    for pid, commit in ((7, True), (8, False)):
        h.storage.records.append(StoredRecord(len(h.storage.records), pid, None, None, commit))
    assert h.reload().committed(require_stable=True) == {("t", 0): 50}


def test_an_unreadable_record_is_skipped_at_load():
    h = Harness()
    h.commit({("t", 0): 1})
    h.storage.records.append(StoredRecord(99, -1, b"\x00\x01\x00", b"\x00"))  # truncated key
    h.commit({("t", 1): 2})
    assert h.reload().committed() == {("t", 0): 1, ("t", 1): 2}
