"""The streams task assignor against Apache Kafka 4.4's StickyTaskAssignor: first facts of
Kafka's algorithm (from its source and StickyTaskAssignorTest), then the same random groups
given to Kafka's own assignor class (the broker jar, through compat/java/
StreamsAssignorProbe.java) and to pykafkad's, which must hand out the same tasks."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from pykafkad.coordinator.streams_group.assignor import AssignorMember, TaskSets, assign
from pykafkad.coordinator.streams_group.java_order import hash_map_order, string_hash
from tests.integration.clients import needs_java

PROBE = Path(__file__).resolve().parents[2] / "compat" / "java" / "StreamsAssignorProbe.java"


def member(mid, process=None, active=(), standby=(), offsets=None):
    return AssignorMember(mid, process or mid, TaskSets(set(active), set(standby)),
                          dict(offsets or {}))


def counts(out):
    return {mid: (len(t.active), len(t.standby)) for mid, t in out.items()}


# -- facts of Kafka's algorithm ----------------------------------------------------------------

def test_java_string_hash_and_hash_map_order():
    assert string_hash("abc") == 96354
    assert string_hash("") == 0
    # HashMap<String,?>(3) iterates by bucket, ties in insertion order, after its resizes
    assert hash_map_order(["p3", "p1", "zz", "member-abc"] + [f"m{i}" for i in range(13)], 3) \
        == ["zz", "p1", "p3"] + [f"m{i}" for i in range(10)] + ["m11", "m10", "m12",
                                                                   "member-abc"]


def test_one_active_task_per_process_when_counts_match():
    out = assign([member("a"), member("b"), member("c")], {"0": 3}, 0)
    assert sorted(len(t.active) for t in out.values()) == [1, 1, 1]
    assert set().union(*(t.active for t in out.values())) == {("0", 0), ("0", 1), ("0", 2)}


def test_active_tasks_stay_with_their_previous_owner():
    out = assign([member("a", active=[("0", 1), ("0", 2)]), member("b", active=[("0", 0)])],
                 {"0": 3}, 0)
    assert out["a"].active == {("0", 1), ("0", 2)} and out["b"].active == {("0", 0)}


def test_a_new_member_takes_tasks_beyond_the_quota_of_the_old_ones():
    out = assign([member("a", active=[("0", p) for p in range(4)]), member("b")], {"0": 4}, 0)
    assert counts(out) == {"a": (2, 0), "b": (2, 0)}
    # sorted by partition, the first two stay with their owner
    assert out["a"].active == {("0", 0), ("0", 1)}


def test_a_previous_standby_gets_the_active_task_of_a_member_gone():
    out = assign([member("b", standby=[("0", 0)]), member("c")], {"0": 1}, 0, {"0"})
    assert out["b"].active == {("0", 0)}


def test_reported_offsets_make_a_member_a_standby_candidate():
    """A restarted member owns nothing but reports its local state: it gets the task back,
    the most caught-up candidate first."""
    out = assign([member("x", offsets={("0", 0): 5}), member("y", offsets={("0", 0): 50})],
                 {"0": 1}, 0, {"0"})
    assert out["y"].active == {("0", 0)}


def test_standbys_only_for_stateful_subtopologies_and_never_on_the_active_process():
    out = assign([member("a1", "p1"), member("a2", "p1"), member("b", "p2")],
                 {"0": 2, "1": 2}, 1, {"0"})
    by_process = {"p1": out["a1"].all() | out["a2"].all(), "p2": out["b"].all()}
    standbys = set().union(*(t.standby for t in out.values()))
    assert standbys == {("0", 0), ("0", 1)}
    for t in standbys:  # one copy on each process: the active on one, the standby on the other
        assert t in by_process["p1"] and t in by_process["p2"]
    for t in out.values():
        assert not t.active & t.standby


def test_no_standby_without_a_second_process():
    out = assign([member("a", "p"), member("b", "p")], {"0": 2}, 1, {"0"})
    assert all(not t.standby for t in out.values())
    assert counts(out) == {"a": (1, 0), "b": (1, 0)}


def test_the_previous_active_owner_keeps_a_standby_of_a_task_it_lost():
    out = assign([member("a", active=[("0", 0), ("0", 1)]), member("b")], {"0": 2}, 1, {"0"})
    assert counts(out) == {"a": (1, 1), "b": (1, 1)}
    assert out["a"].active | out["a"].standby == {("0", 0), ("0", 1)}


def test_no_warmup_tasks():
    out = assign([member("a", active=[("0", 0), ("0", 1)]), member("b", "p")], {"0": 2}, 2, {"0"})
    assert all(not t.warmup for t in out.values())


# -- the same groups given to Kafka's own assignor ---------------------------------------------

def _task_list(tasks):
    return ",".join(f"{s}:{p}" for s, p in sorted(tasks)) or "-"


def _parse(text):
    return set() if text == "-" else {(s, int(p)) for s, p in
                                      (t.split(":") for t in text.split(","))}


def _random_group(rng: random.Random):
    subs = {str(i): rng.randint(1, 6) for i in range(rng.randint(1, 3))}
    stateful = {s for s in subs if rng.random() < 0.6}
    processes = [f"{rng.getrandbits(64):016x}-p" for _ in range(rng.randint(1, 4))]
    members = []
    tasks = [(s, p) for s, n in subs.items() for p in range(n)]
    for i in range(rng.randint(1, 8)):
        mid = f"member-{rng.getrandbits(32):08x}-{i}"
        active = {t for t in tasks if rng.random() < 0.25}
        standby = {t for t in tasks if t[0] in stateful and t not in active
                   and rng.random() < 0.2}
        offsets = {t: rng.randint(0, 1000) for t in tasks
                   if t[0] in stateful and rng.random() < 0.15}
        members.append(member(mid, rng.choice(processes), active, standby, offsets))
    return subs, stateful, rng.randint(0, 2), members


def _case_text(subs, stateful, standby, members) -> str:
    lines = [f"standby {standby}"]
    lines += [f"sub {s} {n} {int(s in stateful)}" for s, n in subs.items()]
    for m in members:
        offsets = ",".join(f"{s}:{p}={o}" for (s, p), o in sorted(m.task_offsets.items())) \
            or "-"
        lines.append(f"member {m.member_id} {m.process_id} {_task_list(m.previous.active)} "
                     f"{_task_list(m.previous.standby)} {offsets}")
    return "\n".join(lines + ["end"]) + "\n"


@pytest.fixture(scope="module")
def kafka_assignor():
    """Runs many cases through one JVM: Kafka's answers, one dict per case."""
    from compat.kafka_broker import kafka_classpath

    def run(cases):
        proc = subprocess.run(
            [shutil.which("java"), "-cp", kafka_classpath(), str(PROBE)],
            input="".join(_case_text(*c) for c in cases), capture_output=True, text=True,
            timeout=300, check=True)
        answers, current = [], {}
        for line in proc.stdout.splitlines():
            if line == "done":
                answers.append(current)
                current = {}
            elif line.startswith("member "):
                _, mid, active, standby = line.split(" ")
                current[mid] = TaskSets(_parse(active), _parse(standby))
        return answers
    return run


@needs_java
def test_same_assignment_as_kafka_for_random_groups(kafka_assignor):
    rng = random.Random(1071)
    cases = [_random_group(rng) for _ in range(600)]
    answers = kafka_assignor(cases)
    assert len(answers) == len(cases)
    for case, expected in zip(cases, answers, strict=True):
        subs, stateful, standby, members = case
        got = assign(members, subs, standby, stateful)
        assert got == expected, _case_text(*case)


@needs_java
def test_same_assignment_as_kafka_over_successive_rebalances(kafka_assignor):
    """Members join and leave one by one, each round starting from the last answer."""
    rng = random.Random(4)
    subs, stateful = {"0": 6, "1": 4}, {"0"}
    members = [member("m-a", "proc-1"), member("m-b", "proc-2")]
    cases = []
    for step in range(12):
        cases.append((subs, stateful, 1, [member(m.member_id, m.process_id, m.previous.active,
                                                 m.previous.standby) for m in members]))
        out = assign(members, subs, 1, stateful)
        members = [member(m.member_id, m.process_id, out[m.member_id].active,
                          out[m.member_id].standby) for m in members]
        if step % 3 == 2 and len(members) > 1:
            members.pop(rng.randrange(len(members)))
        else:
            members.append(member(f"m-{step}", f"proc-{rng.randint(1, 3)}"))
    answers = kafka_assignor(cases)
    for case, expected in zip(cases, answers, strict=True):
        subs, stateful, standby, members = case
        assert assign(members, subs, standby, stateful) == expected, _case_text(*case)
