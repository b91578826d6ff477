"""The classic rebalance protocol on a fake clock: joins, syncs, heartbeats, timeouts, leaves."""

from __future__ import annotations

from pykafkad.coordinator.group import GroupState
from pykafkad.coordinator.records import (
    GroupMetadataKey,
    decode_group_metadata_value,
    decode_key,
)
from tests.coordinator.harness import Harness, subscription
from wire.errors import ErrorCode as E


def test_single_member_join_sync_heartbeat():
    h = Harness()
    first = h.join()
    assert first.done and first.value.error == E.MEMBER_ID_REQUIRED
    member = first.value.member_id
    assert member.startswith("client-")
    joined = h.join(member)
    assert joined.done, "no initial delay: the join completes at once"
    r = joined.value
    assert (r.error, r.generation_id, r.leader, r.protocol_name) == (0, 1, member, "range")
    assert [m[0] for m in r.members] == [member]
    assert h.group().state is GroupState.COMPLETING_REBALANCE
    synced = h.sync(member, 1, {member: b"assignment"})
    assert synced.done and synced.value.error == 0 and synced.value.assignment == b"assignment"
    assert synced.value.protocol_name == "range" and synced.value.protocol_type == "consumer"
    assert h.group().state is GroupState.STABLE
    assert h.heartbeat(member, 1) == E.NONE
    assert h.heartbeat(member, 0) == E.ILLEGAL_GENERATION
    assert h.heartbeat("nobody", 1) == E.UNKNOWN_MEMBER_ID
    assert h.heartbeat(member, 1, group="other") == E.UNKNOWN_MEMBER_ID


def test_old_join_versions_need_no_member_id():
    h = Harness()
    p = h.join(version=3)
    assert p.done and p.value.error == 0 and p.value.generation_id == 1


def test_initial_rebalance_delay_collects_members_into_one_generation():
    h = Harness(initial_rebalance_delay_ms=3000)
    joins = [h.join_new(rebalance=10_000) for _ in range(3)]
    assert not any(p.done for _, p in joins)
    h.advance(2999)
    assert not any(p.done for _, p in joins)
    h.advance(1)
    # members kept arriving during the first delay: it is extended once more
    assert not any(p.done for _, p in joins)
    h.advance(3000)
    assert all(p.done for _, p in joins)
    gens = {p.value.generation_id for _, p in joins}
    assert gens == {1}
    leader = joins[0][1].value.leader
    assert len(next(p.value.members for m, p in joins if m == leader)) == 3
    assert all(p.value.members == [] for m, p in joins if m != leader)


def test_initial_delay_is_bounded_by_the_rebalance_timeout():
    h = Harness(initial_rebalance_delay_ms=3000)
    _, p = h.join_new(rebalance=4000)
    for _ in range(5):
        h.join_new(rebalance=4000)
        h.advance(1000)
    assert p.done, "new members cannot delay the first generation past the rebalance timeout"


def test_new_member_triggers_rebalance_signalled_by_heartbeat():
    h = Harness()
    (a,), gen = h.form(1)
    b, pb = h.join_new()
    assert not pb.done
    assert h.group().state is GroupState.PREPARING_REBALANCE
    assert h.heartbeat(a, gen) == E.REBALANCE_IN_PROGRESS
    pa = h.join(a)
    assert pa.done and pb.done
    assert pa.value.generation_id == pb.value.generation_id == gen + 1
    assert pa.value.leader == a and len(pa.value.members) == 2 and pb.value.members == []


def test_session_timeout_removes_a_silent_member_and_rebalances():
    h = Harness()
    (a, b), gen = h.form(2, session=1000)
    h.advance(600)
    assert h.heartbeat(a, gen) == E.NONE
    h.advance(600)  # b's session (1000 ms) expired; a heartbeated 600 ms ago
    assert not h.group().has_member(b)
    assert h.group().state is GroupState.PREPARING_REBALANCE
    assert h.heartbeat(a, gen) == E.REBALANCE_IN_PROGRESS
    p = h.join(a)
    assert p.done and p.value.generation_id == gen + 1 and len(p.value.members) == 1


def test_rebalance_timeout_drops_members_that_do_not_rejoin():
    h = Harness()
    (a, b), gen = h.form(2, session=60_000, rebalance=5000)
    pa = h.join(a, session=60_000, rebalance=5000)  # a leader rejoin forces a rebalance
    assert not pa.done
    h.advance(4999)
    assert h.heartbeat(b, gen) == E.REBALANCE_IN_PROGRESS  # b is alive but never rejoins
    assert not pa.done
    h.advance(1)
    assert pa.done and pa.value.generation_id == gen + 1
    assert list(h.group().members) == [a]


def test_member_that_does_not_sync_is_removed_after_the_rebalance_timeout():
    h = Harness()
    (a, b), gen = h.form(2, rebalance=5000)
    pa, pb = h.join(a, rebalance=5000), None
    pb = h.join(b, rebalance=5000)
    assert pa.done and pb.done
    gen = pa.value.generation_id
    sa = h.sync(a, gen, {a: b"A", b: b"B"})
    assert sa.done and sa.value.assignment == b"A"
    h.advance(5000)  # b never sent SyncGroup
    assert not h.group().has_member(b)
    assert h.group().state is GroupState.PREPARING_REBALANCE


def test_followers_wait_in_sync_for_the_leader():
    h = Harness()
    (a, b), gen = h.form(2)
    pa, pb = h.join(a), h.join(b)
    gen = pa.value.generation_id
    assert pb.value.generation_id == gen and pb.value.members == []
    sb = h.sync(b, gen)
    assert not sb.done
    sa = h.sync(a, gen, {a: b"A", b: b"B"})
    assert sa.value.assignment == b"A" and sb.done and sb.value.assignment == b"B"
    # the assignment is stored before anyone is answered
    key, value = h.storage.records[-1].key, h.storage.records[-1].value
    assert decode_key(key) == GroupMetadataKey("g")
    stored = decode_group_metadata_value(value)
    assert stored.generation == gen and stored.protocol == "range" and stored.leader == a
    assert {m.member_id: m.assignment for m in stored.members} == {a: b"A", b: b"B"}
    assert stored.protocol_type == "consumer"


def test_rebalance_during_sync_answers_rebalance_in_progress():
    h = Harness()
    (a, b), gen = h.form(2)
    h.join(a)
    pb = h.join(b)
    gen = pb.value.generation_id
    sb = h.sync(b, gen)
    h.join_new()
    assert sb.done and sb.value.error == E.REBALANCE_IN_PROGRESS
    assert h.sync(a, gen).value.error == E.REBALANCE_IN_PROGRESS


def test_leave_group_rebalances_and_the_last_leave_empties_the_group():
    h = Harness()
    (a, b), gen = h.form(2)
    err, results = h.coord.leave_group("g", [(b, None, "bye")])
    assert err == 0 and results == [(b, None, 0)]
    assert h.group().state is GroupState.PREPARING_REBALANCE
    pa = h.join(a)
    assert pa.done and pa.value.generation_id == gen + 1
    h.sync(a, gen + 1, {a: b""})
    err, results = h.coord.leave_group("g", [(a, None, None), ("ghost", None, None)])
    assert results == [(a, None, 0), ("ghost", None, E.UNKNOWN_MEMBER_ID)]
    # a was alone: the join phase completes at once into an Empty generation
    assert h.group().state is GroupState.EMPTY and h.group().generation_id == gen + 2
    stored = decode_group_metadata_value(h.storage.records[-1].value)
    assert stored.members == [] and stored.generation == gen + 2 and stored.protocol is None
    assert h.coord.leave_group("nope", [(a, None, None)]) == (0, [(a, None, E.UNKNOWN_MEMBER_ID)])
    assert h.coord.leave_group("", [])[0] == E.INVALID_GROUP_ID


def test_protocol_selection_and_inconsistent_protocols():
    h = Harness()
    meta = subscription("t")
    p1 = h.join(version=3, protocols=[("range", meta), ("roundrobin", meta)])
    a = p1.value.member_id
    h.sync(a, 1, {a: b""})
    p2 = h.join(version=3, protocols=[("roundrobin", meta), ("sticky", meta)])
    pa = h.join(a, version=3, protocols=[("range", meta), ("roundrobin", meta)])
    assert pa.value.protocol_name == p2.value.protocol_name == "roundrobin"
    bad = h.join(version=3, protocols=[("cooperative-sticky", meta)])
    assert bad.value.error == E.INCONSISTENT_GROUP_PROTOCOL


def test_join_validation():
    h = Harness()
    assert h.join(session=50).value.error == E.INVALID_SESSION_TIMEOUT
    assert h.join(session=60_001).value.error == E.INVALID_SESSION_TIMEOUT
    assert h.join(group="").value.error == E.INVALID_GROUP_ID
    assert h.join("unknown-member").value.error == E.UNKNOWN_MEMBER_ID
    assert h.coord.groups == {}


def test_group_max_size():
    h = Harness(max_group_size=1)
    h.form(1)
    assert h.join().value.error == E.GROUP_MAX_SIZE_REACHED


def test_pending_member_expires_after_its_session_timeout():
    h = Harness()
    first = h.join(session=1000)
    member = first.value.member_id
    assert h.group().is_pending_member(member)
    h.advance(1000)
    assert not h.group().is_pending_member(member)


def test_leader_rejoin_in_stable_forces_a_rebalance_follower_rejoin_does_not():
    h = Harness()
    (a, b), gen = h.form(2)
    pb = h.join(b)
    assert pb.done and pb.value.generation_id == gen and h.group().state is GroupState.STABLE
    pa = h.join(a)
    assert not pa.done and h.group().state is GroupState.PREPARING_REBALANCE


def test_static_member_rejoin_keeps_the_generation_and_fences_the_old_id():
    h = Harness()
    p = h.join(instance="i-1", version=5)
    assert p.done and p.value.error == 0, "static members need no MEMBER_ID_REQUIRED round"
    old = p.value.member_id
    assert old.startswith("i-1-")
    h.sync(old, 1, {old: b"A"}, instance="i-1")
    other, po = h.join_new()
    h.join(old, instance="i-1")
    gen = po.value.generation_id
    h.sync(old, gen, {old: b"A", other: b"B"}, instance="i-1")
    h.sync(other, gen)
    assert h.group().state is GroupState.STABLE
    # the static member restarts: it rejoins without its member id
    again = h.join(instance="i-1", version=5)
    assert again.done and again.value.error == 0
    new = again.value.member_id
    assert new != old and again.value.generation_id == gen
    assert h.group().state is GroupState.STABLE, "no rebalance"
    assert again.value.leader == old, "below v9 the old leader id keeps it from reassigning"
    assert h.sync(new, gen, instance="i-1").value.assignment == b"A"
    assert h.heartbeat(old, gen, instance="i-1") == E.FENCED_INSTANCE_ID
    assert h.heartbeat(new, gen, instance="i-1") == E.NONE
    assert h.heartbeat(other, gen) == E.NONE


def test_static_leader_rejoin_v9_skips_assignment():
    h = Harness()
    p = h.join(instance="i-1", version=9)
    old = p.value.member_id
    h.sync(old, 1, {old: b"A"}, instance="i-1")
    again = h.join(instance="i-1", version=9)
    r = again.value
    assert r.error == 0 and r.leader == r.member_id and r.skip_assignment
    assert [m[0] for m in r.members] == [r.member_id]


def test_static_member_survives_session_timeout_only_until_it_expires():
    h = Harness()
    p = h.join(instance="i-1", session=1000)
    m = p.value.member_id
    h.sync(m, 1, {m: b"A"}, instance="i-1")
    h.advance(1000)
    assert h.group().state is GroupState.EMPTY
    err, results = h.coord.leave_group("g", [("", "i-1", None)])
    assert results == [("", "i-1", E.UNKNOWN_MEMBER_ID)]


def test_admin_removes_a_static_member_by_instance_id():
    h = Harness()
    p = h.join(instance="i-1")
    m = p.value.member_id
    h.sync(m, 1, {m: b"A"}, instance="i-1")
    err, results = h.coord.leave_group("g", [("", "i-1", "admin")])
    assert err == 0 and results == [("", "i-1", 0)]
    assert h.group().state is GroupState.EMPTY


def test_unload_answers_parked_requests():
    h = Harness()
    (a,), gen = h.form(1)
    h.join_new()
    pa = h.join(a, rebalance=30_000)
    _, pc = h.join_new()
    assert not pc.done or pa.done
    h.coord.unload()
    assert pc.done and pc.value.error in (0, E.NOT_COORDINATOR)
