"""The keyed timer, and the trio layer that parks JoinGroup/SyncGroup on events."""

from __future__ import annotations

from pathlib import Path

import trio

from pykafkad.broker import Broker
from pykafkad.config import BrokerConfig
from pykafkad.coordinator.coordinator import CommitPartition, CommitRequest
from pykafkad.coordinator.membership import JoinRequest, SyncRequest
from pykafkad.coordinator.timer import Timer
from tests.coordinator.harness import FakeClock, subscription
from wire.errors import ErrorCode as E


def test_timer_runs_due_tasks_in_order_and_rescheduling_replaces():
    clock = FakeClock(0)
    timer = Timer(clock)
    ran = []
    timer.schedule("a", 100, lambda: ran.append("a"))
    timer.schedule("b", 50, lambda: ran.append("b"))
    timer.schedule("a", 200, lambda: ran.append("a2"))  # replaces the first "a"
    timer.schedule("c", 10, lambda: ran.append("c"))
    timer.cancel("c")
    assert timer.next_deadline() == 50 and len(timer) == 2
    clock.now = 150
    assert timer.run_due() == 1 and ran == ["b"]
    clock.now = 200
    timer.run_due()
    assert ran == ["b", "a2"] and timer.next_deadline() is None


def test_timer_tasks_may_schedule_due_tasks():
    clock = FakeClock(0)
    timer = Timer(clock)
    ran = []
    timer.schedule("x", 0, lambda: timer.schedule("y", 0, lambda: ran.append("y")))
    assert timer.run_due() == 2 and ran == ["y"]


def _broker(tmp_path: Path, clock=None, **config) -> Broker:
    settings = {"group.initial.rebalance.delay.ms": "0", "group.min.session.timeout.ms": "100",
                "offsets.topic.num.partitions": "3", **config}
    extra = {"clock": clock} if clock else {}
    return Broker(BrokerConfig.from_sources(None, settings), tmp_path, **extra)


def _join(member_id="", group="g", rebalance=30_000):
    return JoinRequest(group, member_id, 10_000, rebalance, "consumer",
                       [("range", subscription("t"))], client_id="c", api_version=3)


def test_parked_join_completes_when_the_rest_of_the_group_rejoins(tmp_path):
    broker = _broker(tmp_path)
    groups = broker.groups

    async def main():
        first = await groups.join_group(_join())
        a = first.member_id
        await groups.sync_group(SyncRequest("g", 1, a, {a: b"x"}))
        results = {}

        async def join_b():
            results["b"] = await groups.join_group(_join())

        async with trio.open_nursery() as nursery:
            nursery.start_soon(join_b)
            await trio.sleep(0.05)
            assert "b" not in results, "b waits for a to rejoin"
            results["a"] = await groups.join_group(_join(a))
        assert results["a"].generation_id == results["b"].generation_id == 2

    trio.run(main)
    broker.close()


def test_timers_wake_a_parked_join(tmp_path):
    """a never rejoins: b's join is answered when the rebalance timeout (200 ms) expires."""
    broker = _broker(tmp_path)
    groups = broker.groups

    async def main():
        async with trio.open_nursery() as nursery:
            nursery.start_soon(groups.run_timers)
            a = (await groups.join_group(_join(rebalance=200))).member_id
            await groups.sync_group(SyncRequest("g", 1, a, {a: b"x"}))
            with trio.fail_after(5):
                b = await groups.join_group(_join(rebalance=200))
            assert b.error == 0 and b.generation_id == 2 and b.leader == b.member_id
            groups.shutdown()

    trio.run(main)
    broker.close()


def test_shutdown_answers_parked_requests(tmp_path):
    broker = _broker(tmp_path)
    groups = broker.groups

    async def main():
        a = (await groups.join_group(_join())).member_id
        await groups.sync_group(SyncRequest("g", 1, a, {a: b"x"}))
        answers = []

        async def join_b():
            answers.append(await groups.join_group(_join()))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(join_b)
            await trio.sleep(0.05)
            groups.shutdown()
        assert answers[0].error == E.NOT_COORDINATOR

    trio.run(main)
    broker.close()


def test_groups_and_offsets_survive_a_broker_restart(tmp_path):
    clock = FakeClock()
    broker = _broker(tmp_path, clock)
    groups = broker.groups
    assert broker.topics.get("__consumer_offsets") is None, "created lazily"

    async def main():
        a = (await groups.join_group(_join())).member_id
        await groups.sync_group(SyncRequest("g", 1, a, {a: b"x"}))
        return a

    a = trio.run(main)
    topic = broker.topics.get("__consumer_offsets")
    assert topic is not None and topic.is_internal and topic.num_partitions == 3
    assert topic.configs["cleanup.policy"] == "compact"
    broker.create_topic("t", 1, {})
    groups.coordinator.commit_offsets(CommitRequest("g", [CommitPartition("t", 0, 42)], 1, a))
    broker.close()

    again = _broker(tmp_path, clock)
    g = again.groups.coordinator.groups["g"]
    assert g.state.value == "Stable" and list(g.members) == [a] and g.generation_id == 1
    [(_, [f])] = again.groups.coordinator.fetch_offsets("g", [("t", [0])], True)
    assert f.offset == 42
    again.close()
