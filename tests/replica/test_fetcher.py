"""The follower's replica fetcher against a real pykafkad leader (in-process, real sockets),
producing with confluent-kafka: the follower's log ends byte for byte the leader's."""

from __future__ import annotations

import threading
import uuid
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trio
from confluent_kafka import Producer
from confluent_kafka import TopicPartition as CTopicPartition
from confluent_kafka.admin import AdminClient

from compat.kafka_broker import free_port
from pykafkad.log.config import LogConfig
from pykafkad.log.partition import PartitionLog
from pykafkad.replica.fetcher import LogFollower
from pykafkad.replica.fetcher_manager import ReplicaFetcherManager, fetcher_id, java_string_hash
from pykafkad.replica.leader_endpoint import BrokerEndpoint, FetcherConfig
from pykafkad.replica.manager import LocalChanges
from pykafkad.replica.partition import PartitionRegistration
from tests.integration.clients import WAIT_S, confluent_produce, create_topic
from tests.kraft.released_broker import run_released
from tests.log.batches import make_batch
from wire.errors import ErrorCode

#: short long-polls and backoffs: the tests wait on conditions, never on these
FAST = FetcherConfig(max_wait_ms=100, backoff_ms=50)
ONE_BATCH = FetcherConfig(max_wait_ms=100, backoff_ms=50, max_bytes_per_partition=1)
#: the leader's (pykafkad's single broker) leader epoch
LEADER_EPOCH = 0


@pytest.fixture
def leader(tmp_path):
    with run_released(tmp_path / "leader") as b:
        yield b


def new_topic(bootstrap: str, **config) -> str:
    name = f"f-{uuid.uuid4().hex[:10]}"
    create_topic(bootstrap, name, config={k.replace("_", "."): str(v) for k, v in config.items()})
    return name


def assign_follower(b, topic: str, follower_id: int = 2, partitions=(0,)) -> None:
    """Makes the leader's ``partitions`` of ``topic`` a replica set of {leader, follower} in
    the same leader epoch (as a metadata update would): Kafka's leader answers a fetch from a
    replica outside the assignment with UNKNOWN_LEADER_EPOCH (followerReplicaOrThrow)."""
    def apply():
        replicas = b.broker.replicas
        me = replicas.local_broker_id
        leaders = {}
        for index in partitions:
            partition = replicas.get_partition(topic, index)
            leaders[(topic, index)] = (partition.topic_id, PartitionRegistration(
                replicas=[me, follower_id], isr=[me], leader=me,
                leader_epoch=partition.leader_epoch,
                partition_epoch=partition.partition_epoch + 1))
        replicas.apply(LocalChanges(leaders=leaders))
    b.call(apply)


def on_leader(b, fn):
    """``fn()`` on the leader broker's thread (its logs are only touched there)."""
    return trio.to_thread.run_sync(b.call, fn)


def leader_log(b, topic: str) -> PartitionLog:
    return b.broker.logs.get(topic, 0)


async def wait_until(cond, what: str, timeout: float = WAIT_S) -> None:
    """Polls ``cond()`` (a bool, or an awaitable of one) until true, within ``timeout``."""
    with trio.move_on_after(timeout):
        while True:
            ok = cond()
            if not isinstance(ok, bool):
                ok = await ok
            if ok:
                return
            await trio.sleep(0.02)
    pytest.fail(f"timed out waiting for {what}")


@asynccontextmanager
async def fetching(b, partitions: dict, **kw):
    """A fetcher manager replicating ``{tp: (follower, leader epoch, fetch offset)}`` from the
    leader ``b``."""
    followers = {tp: f for tp, (f, _, _) in partitions.items()}
    async with trio.open_nursery() as nursery:
        manager = ReplicaFetcherManager(broker_id=kw.pop("broker_id", 2),
                                        get_partition=followers.get,
                                        config=kw.pop("config", FAST), **kw)
        await nursery.start(manager.run)
        endpoint = BrokerEndpoint(1, b.host, b.port)
        manager.add_partitions({tp: (endpoint, epoch, offset)
                                for tp, (_, epoch, offset) in partitions.items()})
        yield manager
        nursery.cancel_scope.cancel()


def open_follower(tmp_path: Path, topic: str, **config) -> PartitionLog:
    return PartitionLog.open(tmp_path / "follower" / f"{topic}-0", LogConfig(**config),
                             lambda: 1_000_000)


def segment_files(dir: Path, suffixes=(".log", ".index", ".timeindex", ".txnindex")) -> dict:
    return {p.name: p.read_bytes() for p in sorted(dir.iterdir()) if p.suffix in suffixes}


async def caught_up(b, topic: str, follower: PartitionLog) -> bool:
    """The follower has everything and the leader has no open transaction left."""
    def leader_ends():
        plog = leader_log(b, topic)
        return plog.log_end_offset, plog.last_stable_offset, plog.log_start_offset
    leo, lso, start = await on_leader(b, leader_ends)
    return (leo == lso == follower.log_end_offset == follower.high_watermark
            and follower.log_start_offset == start)


def produce_idempotent_and_transactional(bootstrap: str, topic: str) -> None:
    confluent_produce(bootstrap, topic, [{"value": b"plain-%d" % i} for i in range(20)])
    confluent_produce(bootstrap, topic, [{"value": b"idem-%d" % i, "key": b"k%d" % (i % 3)}
                                         for i in range(50)], **{"enable.idempotence": True})
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"txn-{topic}",
                  "linger.ms": 5})
    p.init_transactions(WAIT_S)
    for outcome in ("commit", "abort", "commit"):
        p.begin_transaction()
        for i in range(15):
            p.produce(topic, b"%s-%d" % (outcome.encode(), i))
            if i % 5 == 4:
                p.flush(WAIT_S)  # several batches per transaction
        if outcome == "commit":
            p.commit_transaction(WAIT_S)
        else:
            p.abort_transaction(WAIT_S)


def test_follower_log_is_byte_identical_to_the_leader(leader, tmp_path):
    topic = new_topic(leader.bootstrap_servers, internal_segment_bytes=1500)
    assign_follower(leader, topic)
    follower = open_follower(tmp_path, topic, segment_bytes=1500)
    tid = leader.broker.topics.get(topic).topic_id
    part = LogFollower(follower, LEADER_EPOCH, tid)
    produced = threading.Event()

    async def main():
        # one batch per fetch (KIP-74: the first batch always comes): the follower rolls its
        # segments where the leader did (with several batches per append, a roll may come
        # one append later, as on Kafka)
        async with fetching(leader, {(topic, 0): (part, LEADER_EPOCH, None)},
                            config=ONE_BATCH) as manager:
            # the produce runs while the fetcher long-polls the leader
            await trio.to_thread.run_sync(produce_idempotent_and_transactional,
                                          leader.bootstrap_servers, topic)
            produced.set()
            await wait_until(lambda: caught_up(leader, topic, follower), "the follower")
            state = manager.fetch_state((topic, 0))
            assert (state.state, state.fetch_offset, state.last_fetched_epoch, state.lag) == (
                "Fetching", follower.log_end_offset, LEADER_EPOCH, 0)
            assert manager.failed_partitions == {}
            session = manager.fetcher_for((topic, 0)).leader.session
            assert session.session_id != 0 and session.next_epoch > 2  # incremental fetches

    trio.run(main)
    assert produced.is_set()
    follower.close()
    mine = open_follower(tmp_path, topic, segment_bytes=1500)  # as it is on disk
    assert len(mine.segments) >= 2
    assert mine.aborted_transactions(0, mine.log_end_offset)  # the aborted one is indexed
    lead_dir = leader.data_dir / f"{topic}-0"
    leader.call(lambda: leader_log(leader, topic).flush())
    ours, theirs = segment_files(mine.dir), segment_files(lead_dir)
    # the active segment's last time-index entry is written at roll or close, and the leader
    # is still running
    active = f"{mine.segments[-1].base_offset:020d}.timeindex"
    ours.pop(active), theirs.pop(active)
    assert ours == theirs
    assert ((mine.dir / "leader-epoch-checkpoint").read_text()
            == (lead_dir / "leader-epoch-checkpoint").read_text() == "0\n1\n0 0\n")
    mine.close()


def test_follower_follows_the_leaders_log_start(leader, tmp_path):
    """DeleteRecords on the leader moves the follower's log start; a new follower whose fetch
    offset is below the leader's log start (OFFSET_OUT_OF_RANGE) starts its log there."""
    topic = new_topic(leader.bootstrap_servers, internal_segment_bytes=2000)
    assign_follower(leader, topic)
    tid = leader.broker.topics.get(topic).topic_id
    confluent_produce(leader.bootstrap_servers, topic,
                      [{"value": b"x" * 100} for _ in range(60)], **{"batch.size": 600})
    first = open_follower(tmp_path / "a", topic, segment_bytes=2000)
    late = open_follower(tmp_path / "b", topic, segment_bytes=2000)

    async def main():
        tp = (topic, 0)
        async with fetching(leader, {tp: (LogFollower(first, LEADER_EPOCH, tid), 0, None)}):
            await wait_until(lambda: caught_up(leader, topic, first), "the first follower")
            admin = AdminClient({"bootstrap.servers": leader.bootstrap_servers})
            futures = admin.delete_records([CTopicPartition(topic, 0, 37)])
            await trio.to_thread.run_sync(lambda: [f.result(WAIT_S) for f in futures.values()])
            # in a thread: the follower (now in the ISR) must fetch for acks=all to complete
            await trio.to_thread.run_sync(lambda: confluent_produce(
                leader.bootstrap_servers, topic, [{"value": b"more"}]))
            await wait_until(lambda: caught_up(leader, topic, first), "the new log start")
        assert first.log_start_offset == 37
        assert first.segments[0].base_offset <= 37 < first.segments[0].base_offset + 20
        async with fetching(leader, {tp: (LogFollower(late, LEADER_EPOCH, tid), 0, None)}):
            await wait_until(lambda: caught_up(leader, topic, late), "the late follower")
        # 37 lies inside a leader batch: the log restarts at that batch's base offset and its
        # log start follows the leader's (Kafka's appendRecordsToFollowerOrFutureReplica)
        first_batch = first.segments[0].translate_offset(37)
        assert first_batch.base_offset < 37 <= first_batch.last_offset
        assert (late.log_start_offset, late.segments[0].base_offset) == (
            37, first_batch.base_offset)

    trio.run(main)
    assert late.read(37, 1 << 20).to_bytes() == first.read(37, 1 << 20).to_bytes()
    first.close()
    late.close()


def _leader_with_epochs(b, topic: str) -> None:
    """Gives the leader's log a history of two leader epochs: 0 for [0, 6), 2 for [6, 12)."""
    plog = leader_log(b, topic)
    plog.truncate_fully_and_start_at(0)
    for base, epoch in ((0, 0), (3, 0), (6, 2), (9, 2)):
        plog.append_as_follower(make_batch([b"leader-%d" % (base + i) for i in range(3)],
                                           base_offset=base, leader_epoch=epoch))


def test_divergent_follower_is_truncated_with_offset_for_leader_epoch(leader, tmp_path):
    """A follower with uncommitted batches of epoch 1 (an old leader's) after the leader's
    epoch 0: OffsetForLeaderEpoch(1) says epoch 0 ends at 6 on the leader, so the follower
    cuts its log at 6 and fetches the leader's epoch-2 batches (the Truncating path a leader
    without diverging-epoch answers needs)."""
    topic = new_topic(leader.bootstrap_servers)
    assign_follower(leader, topic)
    tid = leader.broker.topics.get(topic).topic_id
    leader.call(_leader_with_epochs, leader, topic)
    follower = open_follower(tmp_path, topic)
    for base in (0, 3):
        follower.append_as_follower(make_batch([b"leader-%d" % (base + i) for i in range(3)],
                                               base_offset=base, leader_epoch=0))
    follower.append_as_follower(make_batch([b"stale-%d" % i for i in range(4)],
                                           base_offset=6, leader_epoch=1))
    follower.update_high_watermark(6)

    async def main():
        tp = (topic, 0)
        part = LogFollower(follower, LEADER_EPOCH, tid)
        async with fetching(leader, {tp: (part, LEADER_EPOCH, None)},
                            truncate_on_fetch=False):
            await wait_until(lambda: caught_up(leader, topic, follower), "the follower")

    trio.run(main)
    assert follower.leader_epochs.entries == [(0, 0), (2, 6)]
    lead_dir = leader.data_dir / f"{topic}-0"
    leader.call(lambda: leader_log(leader, topic).flush())
    follower.close()
    assert segment_files(follower.dir, (".log",)) == segment_files(lead_dir, (".log",))


def test_leader_errors_back_off_and_retry(leader, tmp_path):
    """An epoch newer than the leader's (UNKNOWN_LEADER_EPOCH) and an unreachable leader:
    the partition stays, backs off, and nothing is appended."""
    topic = new_topic(leader.bootstrap_servers)
    tid = leader.broker.topics.get(topic).topic_id
    confluent_produce(leader.bootstrap_servers, topic, [{"value": b"v"}])
    follower = open_follower(tmp_path, topic)
    tp = (topic, 0)

    async def main():
        part = LogFollower(follower, 5, tid)
        async with fetching(leader, {tp: (part, 5, None)}) as manager:
            fetcher = manager.fetcher_for(tp)
            await wait_until(lambda: fetcher.fetch_count >= 2, "two fetches")
            state = manager.fetch_state(tp)
            assert state.last_error == ErrorCode.UNKNOWN_LEADER_EPOCH
            assert state.delay_until > 0 and manager.failed_partitions == {}
        assert follower.log_end_offset == 0

        nursery_manager = ReplicaFetcherManager(
            broker_id=2, get_partition={tp: part}.get, config=FAST)
        async with trio.open_nursery() as nursery:
            await nursery.start(nursery_manager.run)
            nursery_manager.add_partitions({tp: (BrokerEndpoint(1, "127.0.0.1", free_port()),
                                                 5, None)})
            state = nursery_manager.fetch_state(tp)
            await wait_until(lambda: state.delay_until > trio.current_time(),
                             "a backoff after the failed connection")
            assert nursery_manager.fetcher_for(tp).fetch_count == 0
            nursery_manager.remove_partitions([tp])
            assert nursery_manager.fetchers == {}  # an idle fetcher is shut down
            nursery.cancel_scope.cancel()

    trio.run(main)
    follower.close()


def test_fetcher_ids_are_kafkas():
    # the values Java prints for String.hashCode and Kafka's getFetcherId
    # (Utils.abs(31 * topic.hashCode + partition) % num.replica.fetchers)
    assert [java_string_hash(s) for s in ("", "a", "hello", "topic-é")] == [
        0, 97, 99162322, -1139260469]
    assert [fetcher_id(("hello", p), 3) for p in range(4)] == [0, 2, 1, 0]


def test_partitions_spread_over_num_replica_fetchers(leader, tmp_path):
    """num.replica.fetchers=2: each partition on the fetcher Kafka's hash picks, one connection
    per fetcher, and every partition replicated."""
    bs = leader.bootstrap_servers
    topic = f"f-{uuid.uuid4().hex[:10]}"
    create_topic(bs, topic, partitions=4)
    assign_follower(leader, topic, partitions=range(4))
    tid = leader.broker.topics.get(topic).topic_id
    confluent_produce(bs, topic, [{"value": b"v%d" % i, "partition": i % 4} for i in range(40)])
    logs = {p: PartitionLog.open(tmp_path / f"{topic}-{p}", LogConfig(), lambda: 1_000_000)
            for p in range(4)}
    config = FetcherConfig.from_config({"num.replica.fetchers": "2",
                                        "replica.fetch.wait.max.ms": "100"})
    assert (config.num_fetchers, config.max_wait_ms, config.backoff_ms) == (2, 100, 1000)

    async def main():
        partitions = {(topic, p): (LogFollower(plog, LEADER_EPOCH, tid), LEADER_EPOCH, None)
                      for p, plog in logs.items()}
        async with fetching(leader, partitions, config=config) as manager:
            await wait_until(lambda: all(plog.log_end_offset == 10 for plog in logs.values()),
                             "every partition")
            assert sorted(manager.fetchers) == [(1, 0), (1, 1)]
            for p in range(4):
                assert manager.fetcher_for((topic, p)) is manager.fetchers[
                    (1, fetcher_id((topic, p), 2))]
            manager.remove_partitions([(topic, p) for p in range(4)])
            assert manager.fetchers == {}

    trio.run(main)
    for plog in logs.values():
        plog.close()


def test_fetcher_rides_out_a_leader_restart(tmp_path):
    """The leader goes away after the follower caught up (fetches fail: backoff, the partition
    stays) and comes back on the same address: the fetcher reconnects and catches up again."""
    port = free_port()
    data = tmp_path / "leader"
    follower = open_follower(tmp_path, "t")
    with run_released(data, port=port) as b:
        create_topic(b.bootstrap_servers, "t")
        tid = b.broker.topics.get("t").topic_id

    def serve(value: bytes, until: int) -> None:
        """The leader up until the follower has ``until`` records, ``value`` produced."""
        with run_released(data, port=port) as up:
            assign_follower(up, "t")  # a restarted single node leads with replicas [1] again
            confluent_produce(up.bootstrap_servers, "t", [{"value": value}] * 5)
            trio.from_thread.run(wait_until, lambda: follower.log_end_offset == until,
                                 f"the follower at {until}")

    async def main():
        part = LogFollower(follower, LEADER_EPOCH, tid)
        async with trio.open_nursery() as nursery:
            manager = ReplicaFetcherManager(broker_id=2, get_partition={("t", 0): part}.get,
                                            config=FAST)
            await nursery.start(manager.run)
            manager.add_partitions({("t", 0): (BrokerEndpoint(1, "127.0.0.1", port), 0, None)})
            await trio.to_thread.run_sync(serve, b"before", 5)
            state = manager.fetch_state(("t", 0))
            await wait_until(lambda: state.delay_until > trio.current_time(),
                             "a backoff once the leader is gone")
            assert manager.failed_partitions == {} and state.fetch_offset == 5
            await trio.to_thread.run_sync(serve, b"after", 10)
            nursery.cancel_scope.cancel()

    trio.run(main)
    assert follower.log_end_offset == follower.high_watermark == 10
    follower.close()


@pytest.mark.parametrize("sessions", ["incremental", "declined by the leader", "off"])
def test_fetch_sessions(tmp_path, sessions):
    """KIP-227 as Kafka's followers use it; a leader whose session cache has no slot answers
    without a session id (full fetches go on), and sessions can be turned off (epoch -1)."""
    slots = "0" if sessions == "declined by the leader" else "1000"
    with run_released(tmp_path / "leader",
                    config={"max.incremental.fetch.session.cache.slots": slots}) as b:
        topic = new_topic(b.bootstrap_servers)
        assign_follower(b, topic)
        tid = b.broker.topics.get(topic).topic_id
        follower = open_follower(tmp_path, topic)
        config = FetcherConfig(max_wait_ms=100, backoff_ms=50,
                               fetch_sessions=sessions != "off")

        async def main():
            tp = (topic, 0)
            part = LogFollower(follower, LEADER_EPOCH, tid)
            async with fetching(b, {tp: (part, LEADER_EPOCH, None)}, config=config) as manager:
                for n in (1, 2, 3):
                    await trio.to_thread.run_sync(
                        confluent_produce, b.bootstrap_servers, topic, [{"value": b"v"}] * 4)
                    await wait_until(lambda: caught_up(b, topic, follower), f"round {n}")
                session = manager.fetcher_for(tp).leader.session
                if sessions == "off":
                    assert session is None
                elif sessions == "incremental":
                    assert session.session_id != 0 and session.next_epoch > 1
                else:
                    assert (session.session_id, session.next_epoch) == (0, 0)

        trio.run(main)
        assert follower.log_end_offset == 12
        follower.close()


def test_fetch_session_handler_sends_only_changes():
    from pykafkad.replica.fetch_session import FetchSessionHandler
    from pykafkad.replica.leader_endpoint import FetchPartitionData
    from wire.messages.fetch_response import FetchResponse

    def data(offset):
        return FetchPartitionData(b"\x01" * 16, offset, 0, 0, 0, 1 << 20)

    h = FetchSessionHandler()
    a, b_, c = ("t", 0), ("t", 1), ("t", 2)
    full = h.build({a: data(0), b_: data(0)})
    assert (set(full.to_send), full.to_forget, full.session_id, full.epoch) == ({a, b_}, {}, 0, 0)
    assert h.handle_response(FetchResponse(error_code=0, session_id=77))
    inc = h.build({a: data(5), c: data(0)})  # a moved on, b left, c joined
    assert (set(inc.to_send), set(inc.to_forget), inc.session_id, inc.epoch) == (
        {a, c}, {b_}, 77, 1)
    assert h.handle_response(FetchResponse(error_code=0, session_id=77))
    assert not h.build({a: data(5), c: data(0)}).to_send  # nothing changed: nothing sent
    assert not h.handle_response(FetchResponse(
        error_code=ErrorCode.INVALID_FETCH_SESSION_EPOCH, session_id=0))
    again = h.build({a: data(5), c: data(0)})  # a new session, in full, closing 77
    assert (set(again.to_send), again.session_id, again.epoch) == ({a, c}, 77, 0)
    assert not h.handle_response(FetchResponse(
        error_code=ErrorCode.FETCH_SESSION_ID_NOT_FOUND, session_id=0))
    assert (h.build({a: data(5)}).session_id, h.next_epoch) == (0, 0)
