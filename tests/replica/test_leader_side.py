"""The leader side of replication, driven by stock clients and a raw follower Fetch (a replica
id no client sends): HW vs log end, acks=all, ISR shrink / expand, min.insync.replicas, and
the leader epoch checks."""

from __future__ import annotations

import threading

import pytest
from confluent_kafka import KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from compat.wire_client import WireClient
from tests.integration.clients import WAIT_S, confluent_produce, create_topic, needs_java
from tests.kraft.released_broker import run_released
from tests.replica.frames import (
    FETCH_REPLICA_STATE,
    batches,
    fetch,
    list_offsets,
    offset_for_leader_epoch,
    produce,
    record_offsets,
    topic_id,
)
from tests.replica.frames import metadata_partition as raw_metadata_partition
from tests.replica.support import (
    Clock,
    follow,
    lead,
    metadata_partition,
    on_broker,
    wait_until,
)
from wire.errors import ErrorCode
from wire.records.batch import build_batch

LAG_MS = 30000  # replica.lag.time.max.ms, Kafka's default
FOLLOWER = 2


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def kafka(tmp_path, clock):
    with run_released(tmp_path / "data", clock=clock) as k:
        yield k


def _values(n: int, start: int = 0):
    return [{"value": f"v{i}".encode()} for i in range(start, start + n)]


def test_high_watermark_waits_for_the_follower(kafka, topic_name):
    bs = kafka.bootstrap_servers
    create_topic(bs, topic_name)
    part = lead(kafka, topic_name, replicas=[1, FOLLOWER], isr=[1, FOLLOWER], leader_epoch=1)
    assert metadata_partition(bs, topic_name).isrs == [1, FOLLOWER]

    # acks=1 is answered at once: the leader has the records, the follower not yet
    delivered = confluent_produce(bs, topic_name, _values(3), acks=1)
    assert [m.offset() for m in delivered] == [0, 1, 2]
    assert (part.high_watermark, part.log_end_offset) == (0, 3)
    with WireClient(bs) as c:
        # consumers see the HW (and nothing above it); a replica sees the log end
        assert list_offsets(c, topic_name).offset == 0
        assert list_offsets(c, topic_name).leader_epoch == 1
        assert list_offsets(c, topic_name, replica_id=FOLLOWER).offset == 3
        consumed = fetch(c, topic_name, 0, current_leader_epoch=1)
        assert (consumed.error_code, consumed.high_watermark, record_offsets(consumed.records)) \
            == (0, 0, [])

        # the follower reads to the log end; the batch carries the leader epoch
        got = fetch(c, topic_name, 0, replica_id=FOLLOWER, current_leader_epoch=1)
        assert got.error_code == 0 and got.high_watermark == 0
        assert batches(got.records) == [(0, 3, 1)]
        assert part.high_watermark == 0  # the follower's log end is still 0

        # fetching from 3 tells the leader the follower has 0-2: the HW moves (the answer
        # carries the HW read before the move, as Kafka's does)
        got = fetch(c, topic_name, 3, replica_id=FOLLOWER, current_leader_epoch=1)
        assert (got.error_code, got.high_watermark) == (0, 0)
        assert part.high_watermark == 3
        got = fetch(c, topic_name, 3, replica_id=FOLLOWER, replica_epoch=7,
                    version=FETCH_REPLICA_STATE, topic_id=part.topic_id)
        assert (got.error_code, got.high_watermark, got.log_start_offset) == (0, 3, 0)
        consumed = fetch(c, topic_name, 0)
        assert (consumed.high_watermark, record_offsets(consumed.records)) == (3, [0, 1, 2])

        # acks=all: appended at once, answered only once the follower has it
        results = []
        p = Producer({"bootstrap.servers": bs, "acks": "all", "linger.ms": 0})
        p.produce(topic_name, b"v3", partition=0,
                  on_delivery=lambda err, msg: results.append((err, msg.offset())))
        p.poll(0)
        wait_until(lambda: on_broker(kafka, lambda: part.log_end_offset) == 4, "the append")
        p.poll(0)
        assert results == []  # the broker cannot have answered: the HW is still 3
        assert list_offsets(c, topic_name).offset == 3
        got = fetch(c, topic_name, 4, replica_id=FOLLOWER, current_leader_epoch=1)
        assert got.error_code == 0
        assert p.flush(WAIT_S) == 0
        assert results == [(None, 3)]
        assert list_offsets(c, topic_name).offset == 4


def test_isr_shrinks_after_the_lag_time_and_expands_on_catch_up(kafka, clock, topic_name):
    bs = kafka.bootstrap_servers
    create_topic(bs, topic_name)
    part = lead(kafka, topic_name, replicas=[1, FOLLOWER], isr=[1, FOLLOWER], leader_epoch=1)
    confluent_produce(bs, topic_name, _values(3), acks=1)
    assert part.high_watermark == 0

    clock.advance(LAG_MS)  # exactly the lag time: still in sync
    assert on_broker(kafka, kafka.broker.replicas.maybe_shrink_isr) == []
    clock.advance(1)
    assert on_broker(kafka, kafka.broker.replicas.maybe_shrink_isr) == [part]
    assert metadata_partition(bs, topic_name).isrs == [1]
    assert part.partition_epoch == 2
    assert part.high_watermark == 3  # the ISR is the leader alone now

    with WireClient(bs) as c:
        # behind the HW: not back in the ISR
        assert fetch(c, topic_name, 1, replica_id=FOLLOWER).error_code == 0
        assert metadata_partition(bs, topic_name).isrs == [1]
        # caught up to the HW (and into this leader epoch): back in
        assert fetch(c, topic_name, 3, replica_id=FOLLOWER).error_code == 0
    assert metadata_partition(bs, topic_name).isrs == [1, FOLLOWER]
    assert part.partition_epoch == 3

    # a follower that keeps fetching to the log end stays in
    clock.advance(LAG_MS + 1)
    with WireClient(bs) as c:
        assert fetch(c, topic_name, 3, replica_id=FOLLOWER).error_code == 0
    assert on_broker(kafka, kafka.broker.replicas.maybe_shrink_isr) == []


def _acks_all_producer(bs: str) -> Producer:
    # no retries, so the first error reaches the delivery report
    return Producer({"bootstrap.servers": bs, "acks": "all", "retries": 0, "linger.ms": 0,
                     "enable.idempotence": False})


def test_min_insync_replicas_not_enough_replicas(kafka, topic_name):
    bs = kafka.bootstrap_servers
    create_topic(bs, topic_name, config={"min.insync.replicas": "2"})
    part = lead(kafka, topic_name, replicas=[1, FOLLOWER], isr=[1], leader_epoch=1)
    results = []
    p = _acks_all_producer(bs)
    p.produce(topic_name, b"refused", partition=0,
              on_delivery=lambda err, msg: results.append(err))
    assert p.flush(WAIT_S) == 0
    assert [e.code() for e in results] == [KafkaError.NOT_ENOUGH_REPLICAS]
    assert part.log_end_offset == 0  # refused before the append
    # acks=1 does not ask for the ISR
    assert [m.offset() for m in confluent_produce(bs, topic_name, _values(1), acks=1)] == [0]


def test_min_insync_replicas_not_enough_replicas_after_append(kafka, clock, topic_name):
    bs = kafka.bootstrap_servers
    create_topic(bs, topic_name, config={"min.insync.replicas": "2"})
    part = lead(kafka, topic_name, replicas=[1, FOLLOWER], isr=[1, FOLLOWER], leader_epoch=1)
    results = []
    p = _acks_all_producer(bs)
    p.produce(topic_name, b"appended", partition=0,
              on_delivery=lambda err, msg: results.append((err, msg.offset())))
    p.poll(0)
    wait_until(lambda: on_broker(kafka, lambda: part.log_end_offset) == 1, "the append")

    def follower_catches_up_then_falls_out():
        # between two looks of the waiting produce: the follower's fetch moves the HW past
        # the batch, another record arrives, and the follower falls out of the ISR
        part.update_follower_fetch_state(FOLLOWER, 1, 0, clock())
        part.append_as_leader(build_batch([(None, b"more", (), clock())]))
        clock.advance(LAG_MS + 1)
        return part.maybe_shrink_isr()

    assert on_broker(kafka, follower_catches_up_then_falls_out)
    assert p.flush(WAIT_S) == 0
    ((err, offset),) = results
    assert err.code() == KafkaError.NOT_ENOUGH_REPLICAS_AFTER_APPEND
    assert part.isr == [1] and part.log_end_offset == 2


def test_acks_all_times_out_without_the_follower(kafka, topic_name):
    bs = kafka.bootstrap_servers
    create_topic(bs, topic_name)
    part = lead(kafka, topic_name, replicas=[1, FOLLOWER], isr=[1, FOLLOWER], leader_epoch=1)
    results = []
    p = Producer({"bootstrap.servers": bs, "acks": "all", "retries": 0, "linger.ms": 0,
                  "enable.idempotence": False, "request.timeout.ms": 100})
    p.produce(topic_name, b"x", partition=0,
              on_delivery=lambda err, msg: results.append(err))
    assert p.flush(WAIT_S) == 0
    assert [e.code() for e in results] == [KafkaError.REQUEST_TIMED_OUT]
    assert part.log_end_offset == 1  # appended all the same, as in Kafka


def _epoch_answers(bs: str, topic: str, epochs) -> list:
    """(API, current leader epoch, error, offset) for Fetch, ListOffsets, OffsetForLeaderEpoch,
    and a follower Fetch from a replica id outside the assignment."""
    out = []
    with WireClient(bs) as c:
        for e in epochs:
            f = fetch(c, topic, 0, current_leader_epoch=e)
            out.append(("fetch", e, f.error_code, f.high_watermark, f.log_start_offset))
            lo = list_offsets(c, topic, current_leader_epoch=e)
            out.append(("list_offsets", e, lo.error_code, lo.offset, lo.leader_epoch))
            oe = offset_for_leader_epoch(c, topic, epochs[1], current_leader_epoch=e)
            out.append(("offset_for_leader_epoch", e, oe.error_code, oe.end_offset, oe.leader_epoch))
        for e in (-1, epochs[1]):
            f = fetch(c, topic, 0, replica_id=5, current_leader_epoch=e)
            out.append(("follower fetch", e, f.error_code, f.high_watermark, f.log_start_offset))
        # v16+ (KIP-951) names the current leader on NOT_LEADER_OR_FOLLOWER / FENCED
        tid = topic_id(c, topic)
        for e in (-1, *epochs):
            for replica_id in (-1, 5):
                f, whole = fetch(c, topic, 0, replica_id=replica_id, current_leader_epoch=e,
                                 version=16, topic_id=tid, whole=True)
                out.append(("fetch v16", replica_id, e, f.error_code, f.current_leader.leader_id,
                            f.current_leader.leader_epoch, len(whole.node_endpoints)))
    return out


def test_leader_epoch_checks(kafka, topic_name):
    """A stale epoch is fenced, a newer one unknown (Kafka's checkCurrentLeaderEpoch)."""
    bs = kafka.bootstrap_servers
    create_topic(bs, topic_name)
    confluent_produce(bs, topic_name, _values(2))
    lead(kafka, topic_name, replicas=[1], isr=[1], leader_epoch=3)
    assert metadata_partition(bs, topic_name).leader == 1
    fenced, unknown = ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.UNKNOWN_LEADER_EPOCH
    assert _epoch_answers(bs, topic_name, [2, 3, 4]) == [
        ("fetch", 2, fenced, -1, -1),
        ("list_offsets", 2, fenced, -1, -1),
        ("offset_for_leader_epoch", 2, fenced, -1, -1),
        ("fetch", 3, 0, 2, 0),
        ("list_offsets", 3, 0, 2, 3),
        ("offset_for_leader_epoch", 3, 0, 2, 3),
        ("fetch", 4, unknown, -1, -1),
        ("list_offsets", 4, unknown, -1, -1),
        ("offset_for_leader_epoch", 4, unknown, -1, -1),
        ("follower fetch", -1, ErrorCode.NOT_LEADER_OR_FOLLOWER, -1, -1),
        ("follower fetch", 3, unknown, -1, -1),
        ("fetch v16", -1, -1, 0, -1, -1, 0),
        ("fetch v16", 5, -1, ErrorCode.NOT_LEADER_OR_FOLLOWER, 1, 3, 0),
        ("fetch v16", -1, 2, fenced, 1, 3, 0),
        ("fetch v16", 5, 2, fenced, 1, 3, 0),
        ("fetch v16", -1, 3, 0, -1, -1, 0),
        ("fetch v16", 5, 3, unknown, -1, -1, 0),
        ("fetch v16", -1, 4, unknown, -1, -1, 0),
        ("fetch v16", 5, 4, unknown, -1, -1, 0),
    ]


@needs_java
def test_leader_epoch_answers_match_kafka(kafka, topic_name, reference_kafka):
    """Epochs -1 (no check), 0 (the current one of a new topic) and 1 (newer), and a follower
    Fetch from a replica id outside the assignment: the same answers as Apache Kafka's."""
    answers = []
    for bs in (kafka.bootstrap_servers, reference_kafka.bootstrap_servers):
        create_topic(bs, topic_name)
        confluent_produce(bs, topic_name, _values(2))
        answers.append(_epoch_answers(bs, topic_name, [-1, 0, 1]))
    assert answers[0] == answers[1]


def test_leader_epoch_survives_a_restart(tmp_path, topic_name):
    data = tmp_path / "data"
    with run_released(data) as k:
        create_topic(k.bootstrap_servers, topic_name)
        lead(k, topic_name, replicas=[1], isr=[1], leader_epoch=5)
        confluent_produce(k.bootstrap_servers, topic_name, _values(1))
    with run_released(data) as k:
        # Metadata answers from the leader-epoch-checkpoint before the log is opened
        with WireClient(k.bootstrap_servers) as c:
            described = raw_metadata_partition(c, topic_name)
            assert (described.leader_id, described.leader_epoch) == (1, 5)
            assert list_offsets(c, topic_name, current_leader_epoch=5).leader_epoch == 5
            assert batches(fetch(c, topic_name, 0, current_leader_epoch=5).records) == [(0, 1, 5)]


def test_a_follower_partition_refuses_leader_requests(kafka, topic_name):
    """Led by broker 2 now: Produce, ListOffsets, OffsetForLeaderEpoch and old consumers'
    Fetch are NOT_LEADER_OR_FOLLOWER; a v11+ consumer (KIP-392) reads up to the HW."""
    bs = kafka.bootstrap_servers
    create_topic(bs, topic_name)
    confluent_produce(bs, topic_name, _values(2))
    follow(kafka, topic_name, replicas=[FOLLOWER, 1], isr=[FOLLOWER, 1], leader=FOLLOWER,
           leader_epoch=4)
    not_leader = ErrorCode.NOT_LEADER_OR_FOLLOWER
    with WireClient(bs) as c:
        described = raw_metadata_partition(c, topic_name)
        assert (described.leader_id, described.leader_epoch, described.replica_nodes) \
            == (FOLLOWER, 4, [FOLLOWER, 1])
        batch = build_batch([(None, b"x", (), 0)])
        assert produce(c, topic_name, batch).error_code == not_leader
        # v10+ names the leader (KIP-951)
        answered = produce(c, topic_name, batch, version=10)
        assert (answered.error_code, answered.current_leader.leader_id,
                answered.current_leader.leader_epoch) == (not_leader, FOLLOWER, 4)
        assert list_offsets(c, topic_name).error_code == not_leader
        assert offset_for_leader_epoch(c, topic_name, 0).error_code == not_leader
        assert fetch(c, topic_name, 0, version=10).error_code == not_leader
        got = fetch(c, topic_name, 0, current_leader_epoch=4)
        assert (got.error_code, record_offsets(got.records)) == (0, [0, 1])
        assert fetch(c, topic_name, 0, current_leader_epoch=3).error_code \
            == ErrorCode.FENCED_LEADER_EPOCH


def test_long_polls_wake_on_the_log_end_for_followers_and_the_hw_for_consumers(kafka, topic_name):
    """Each poll asks for far longer than its socket's timeout: only the right wake-up answers
    it in time (a follower's on the append, a consumer's once the HW covers the record)."""
    bs = kafka.bootstrap_servers
    create_topic(bs, topic_name)
    lead(kafka, topic_name, replicas=[1, FOLLOWER], isr=[1, FOLLOWER], leader_epoch=1)
    answers = {}

    def poll(name, **kwargs):
        with WireClient(bs, timeout=WAIT_S) as c:
            answers[name] = fetch(c, topic_name, 0, min_bytes=1, max_wait_ms=600_000, **kwargs)

    threads = [threading.Thread(target=poll, args=("consumer",)),
               threading.Thread(target=poll, args=("follower",), kwargs={"replica_id": FOLLOWER})]
    for t in threads:
        t.start()
    wait_until(lambda: sum(c.in_flight for c in list(kafka.server.connections)) == 2,
               "both polls parked")
    confluent_produce(bs, topic_name, _values(1), acks=1)
    threads[1].join(WAIT_S)
    assert record_offsets(answers["follower"].records) == [0]
    assert "consumer" not in answers  # its HW is still 0
    with WireClient(bs) as c:  # the follower has offset 0 now: the HW moves
        assert fetch(c, topic_name, 1, replica_id=FOLLOWER).error_code == 0
    threads[0].join(WAIT_S)
    got = answers["consumer"]
    assert (got.high_watermark, record_offsets(got.records)) == (1, [0])


def test_delete_records_waits_for_the_followers_log_start(kafka, topic_name):
    bs = kafka.bootstrap_servers
    create_topic(bs, topic_name)
    part = lead(kafka, topic_name, replicas=[1, FOLLOWER], isr=[1, FOLLOWER], leader_epoch=1)
    confluent_produce(bs, topic_name, _values(5), acks=1)
    with WireClient(bs) as c:
        assert fetch(c, topic_name, 5, replica_id=FOLLOWER, log_start_offset=0).error_code == 0
    assert part.high_watermark == 5
    admin = AdminClient({"bootstrap.servers": bs})
    tp = TopicPartition(topic_name, 0, 3)
    future = admin.delete_records([tp], operation_timeout=WAIT_S)[tp]
    wait_until(lambda: on_broker(kafka, lambda: part.log_start_offset) == 3, "the deletion")
    assert not future.done()  # the follower still starts at 0
    with WireClient(bs) as c:  # the follower deleted its records too
        assert fetch(c, topic_name, 5, replica_id=FOLLOWER, log_start_offset=3).error_code == 0
    assert future.result(WAIT_S).low_watermark == 3
