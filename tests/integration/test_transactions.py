"""Transactions end to end with the stock clients: markers, LSO, read_committed, fencing,
timeouts, restarts (clean and kill -9) in the middle of a transaction."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from kafka import KafkaConsumer, KafkaProducer
from kafka import TopicPartition as KTopicPartition

from pykafkad.testing import run_broker
from tests.integration.broker_process import BrokerProcess
from tests.integration.clients import WAIT_S, create_topic

TXN_WAIT = 30


def wait_for(condition, what: str, timeout: float = WAIT_S):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def txn_producer(bootstrap: str, txn_id: str, **conf) -> Producer:
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id, "linger.ms": 5,
                  **conf})
    p.init_transactions(TXN_WAIT)
    return p


def read_all(bootstrap: str, topic: str, partitions, isolation: str) -> list[bytes]:
    """Everything readable under ``isolation``: librdkafka stops at EOF (the LSO when
    read_committed)."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "reader",
                  "enable.auto.commit": False, "enable.partition.eof": True,
                  "isolation.level": isolation})
    c.assign([TopicPartition(topic, p, 0) for p in partitions])
    got, eof = [], set()
    deadline = time.monotonic() + WAIT_S
    try:
        while len(eof) < len(partitions) and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                assert m.error().code() == -191, m.error()  # _PARTITION_EOF
                eof.add(m.partition())
                continue
            eof.discard(m.partition())
            got.append(m.value())
    finally:
        c.close()
    return sorted(got)


def kafka_python_read(bootstrap: str, topic: str, partitions, isolation: str, expect: int):
    c = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                      isolation_level=isolation)
    tps = [KTopicPartition(topic, p) for p in partitions]
    c.assign(tps)
    c.seek_to_beginning(*tps)
    got = []
    deadline = time.monotonic() + WAIT_S
    try:
        while len(got) < expect and time.monotonic() < deadline:
            for records in c.poll(timeout_ms=300).values():
                got.extend(r.value for r in records)
        for records in c.poll(timeout_ms=500).values():  # nothing more may come
            got.extend(r.value for r in records)
        end = c.end_offsets(tps)
    finally:
        c.close()
    return sorted(got), end


def test_commits_and_aborts_interleaved_across_partitions(broker, topic_name):
    bs = broker.bootstrap_servers
    create_topic(bs, topic_name, partitions=3)
    p = txn_producer(bs, "interleaved")
    committed, everything = [], []
    for t in range(6):
        p.begin_transaction()
        values = [f"t{t}-{i}".encode() for i in range(9)]
        for i, v in enumerate(values):
            p.produce(topic_name, v, partition=i % 3)
        everything += values
        if t % 2 == 0:
            p.commit_transaction(TXN_WAIT)
            committed += values
        else:
            assert p.flush(TXN_WAIT) == 0  # on the broker before the abort
            p.abort_transaction(TXN_WAIT)
    # idempotent, non-transactional records in between are always visible
    plain = Producer({"bootstrap.servers": bs, "enable.idempotence": True})
    plain.produce(topic_name, b"plain", partition=1)
    plain.flush(TXN_WAIT)
    committed.append(b"plain")
    everything.append(b"plain")

    parts = (0, 1, 2)
    assert read_all(bs, topic_name, parts, "read_committed") == sorted(committed)
    assert read_all(bs, topic_name, parts, "read_uncommitted") == sorted(everything)
    got, _ = kafka_python_read(bs, topic_name, parts, "read_committed", len(committed))
    assert got == sorted(committed)
    got, _ = kafka_python_read(bs, topic_name, parts, "read_uncommitted", len(everything))
    assert got == sorted(everything)


def test_open_transaction_holds_the_lso(broker, topic_name):
    bs = broker.bootstrap_servers
    create_topic(bs, topic_name)
    p = txn_producer(bs, "holder")
    p.begin_transaction()
    p.produce(topic_name, b"pending", partition=0)
    assert p.flush(TXN_WAIT) == 0
    plain = Producer({"bootstrap.servers": bs})
    plain.produce(topic_name, b"after", partition=0)
    plain.flush(TXN_WAIT)
    tp = KTopicPartition(topic_name, 0)
    got, end = kafka_python_read(bs, topic_name, (0,), "read_committed", 0)
    assert got == [] and end[tp] == 0  # the LSO is the open transaction's first offset
    got, end = kafka_python_read(bs, topic_name, (0,), "read_uncommitted", 2)
    assert got == [b"after", b"pending"] and end[tp] == 2
    p.commit_transaction(TXN_WAIT)
    got, end = kafka_python_read(bs, topic_name, (0,), "read_committed", 2)
    assert got == [b"after", b"pending"] and end[tp] == 3


def test_second_producer_with_same_id_fences_the_first(broker, topic_name):
    bs = broker.bootstrap_servers
    create_topic(bs, topic_name)
    first = txn_producer(bs, "fence-me")
    first.begin_transaction()
    first.produce(topic_name, b"zombie", partition=0)
    assert first.flush(TXN_WAIT) == 0

    second = txn_producer(bs, "fence-me")  # aborts the open transaction, bumps the epoch
    second.begin_transaction()
    second.produce(topic_name, b"winner", partition=0)
    second.commit_transaction(TXN_WAIT)

    with pytest.raises(KafkaException) as e:
        first.produce(topic_name, b"late", partition=0)
        first.commit_transaction(TXN_WAIT)
    assert e.value.args[0].fatal() or "fenced" in str(e.value).lower()
    assert read_all(bs, topic_name, (0,), "read_committed") == [b"winner"]


def test_transaction_past_its_timeout_is_aborted(tmp_path, topic_name):
    now = [1_800_000_000_000]
    with run_broker(tmp_path / "d", clock=lambda: now[0]) as b:
        bs = b.bootstrap_servers
        create_topic(bs, topic_name)
        p = txn_producer(bs, "slow", **{"transaction.timeout.ms": 10_000})
        p.begin_transaction()
        p.produce(topic_name, b"too-late", partition=0)
        assert p.flush(TXN_WAIT) == 0
        coordinator = b.broker.txn_coordinator
        assert b.call(coordinator.abort_timed_out_transactions) == []
        now[0] += 10_001
        assert b.call(coordinator.abort_timed_out_transactions) == ["slow"]
        # the abort markers are written asynchronously, as Kafka's
        wait_for(lambda: coordinator.describe("slow").state.kafka_name == "CompleteAbort",
                 "the timed-out transaction to complete its abort")
        plog = b.broker.logs.get(topic_name, 0)
        assert plog.last_stable_offset == plog.high_watermark == 2
        assert read_all(bs, topic_name, (0,), "read_committed") == []
        with pytest.raises(KafkaException):
            p.commit_transaction(TXN_WAIT)


def test_kafka_python_transactional_producer(broker, topic_name):
    bs = broker.bootstrap_servers
    create_topic(bs, topic_name, partitions=2)
    p = KafkaProducer(bootstrap_servers=bs, transactional_id="kp-txn")
    p.init_transactions()
    p.begin_transaction()
    for i in range(10):
        p.send(topic_name, f"c{i}".encode(), partition=i % 2)
    p.commit_transaction()
    p.begin_transaction()
    for i in range(10):
        p.send(topic_name, f"a{i}".encode(), partition=i % 2)
    p.flush()
    p.abort_transaction()
    p.close()
    want = sorted(f"c{i}".encode() for i in range(10))
    assert read_all(bs, topic_name, (0, 1), "read_committed") == want
    got, _ = kafka_python_read(bs, topic_name, (0, 1), "read_committed", 10)
    assert got == want
    assert len(read_all(bs, topic_name, (0, 1), "read_uncommitted")) == 20


def test_clean_restart_in_the_middle_of_a_transaction(tmp_path, topic_name):
    data = tmp_path / "data"
    with run_broker(data) as b:
        port = b.port
        create_topic(b.bootstrap_servers, topic_name)
        p = txn_producer(b.bootstrap_servers, "survivor")
        p.begin_transaction()
        p.produce(topic_name, b"before-restart", partition=0)
        assert p.flush(TXN_WAIT) == 0
    with run_broker(data, port=port) as b:
        deadline = time.monotonic() + TXN_WAIT  # the new leader loads __transaction_state
        while b.call(b.broker.txn_coordinator.describe, "survivor") is None:
            assert time.monotonic() < deadline, "the transaction was not loaded"
            time.sleep(0.01)
        assert b.broker.txn_coordinator.describe("survivor").state.kafka_name == "Ongoing"
        assert b.broker.logs.get(topic_name, 0).last_stable_offset == 0
        p.produce(topic_name, b"after-restart", partition=0)
        p.commit_transaction(TXN_WAIT)
        assert read_all(b.bootstrap_servers, topic_name, (0,), "read_committed") == [
            b"after-restart", b"before-restart"]


def test_kill_9_in_the_middle_of_a_transaction(tmp_path, topic_name):
    data = tmp_path / "data"
    proc = BrokerProcess(data).start()
    try:
        bs = proc.bootstrap_servers
        create_topic(bs, topic_name, partitions=2)
        p = txn_producer(bs, "crashy")
        p.begin_transaction()
        p.produce(topic_name, b"kept", partition=0)
        p.produce(topic_name, b"kept", partition=1)
        p.commit_transaction(TXN_WAIT)
        p.begin_transaction()
        p.produce(topic_name, b"lost", partition=0)
        p.produce(topic_name, b"lost", partition=1)
        assert p.flush(TXN_WAIT) == 0
        proc.kill()
        del p

        proc = BrokerProcess(data).start()
        bs = proc.bootstrap_servers
        tp = KTopicPartition(topic_name, 0)
        got, end = kafka_python_read(bs, topic_name, (0,), "read_committed", 1)
        assert got == [b"kept"] and end[tp] == 2  # the LSO is held at the open transaction
        successor = txn_producer(bs, "crashy")  # fences and aborts the open transaction
        assert read_all(bs, topic_name, (0, 1), "read_committed") == [b"kept", b"kept"]
        successor.begin_transaction()
        successor.produce(topic_name, b"new", partition=1)
        successor.commit_transaction(TXN_WAIT)
        assert read_all(bs, topic_name, (0, 1), "read_committed") == [b"kept", b"kept", b"new"]
        assert len(read_all(bs, topic_name, (0, 1), "read_uncommitted")) == 5
    finally:
        if proc.proc.poll() is None:
            proc.kill()


def test_consume_transform_produce_moves_each_input_exactly_once(broker, topic_name):
    """send_offsets_to_transaction: the group's offsets commit with the output, and an aborted
    attempt (offsets included) is redone from the committed position."""
    if getattr(broker.broker, "groups", None) is None:
        pytest.skip("needs the group coordinator")
    bs = broker.bootstrap_servers
    src, dst = topic_name + "-in", topic_name + "-out"
    create_topic(bs, src, partitions=2)
    create_topic(bs, dst, partitions=2)
    n = 60
    plain = Producer({"bootstrap.servers": bs})
    for i in range(n):
        plain.produce(src, f"in{i}".encode(), partition=i % 2)
    plain.flush(TXN_WAIT)

    consumer = Consumer({"bootstrap.servers": bs, "group.id": "ctp", "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", "isolation.level": "read_committed"})
    consumer.subscribe([src])
    producer = txn_producer(bs, "ctp-txn")
    done = 0
    attempt = 0
    deadline = time.monotonic() + 2 * WAIT_S
    while done < n and time.monotonic() < deadline:
        msgs = [m for m in consumer.consume(10, 1.0) if m.error() is None]
        if not msgs:
            continue
        attempt += 1
        producer.begin_transaction()
        for m in msgs:
            producer.produce(dst, m.value().replace(b"in", b"out"), partition=m.partition())
        producer.send_offsets_to_transaction(
            consumer.position(consumer.assignment()), consumer.consumer_group_metadata(),
            TXN_WAIT)
        if attempt == 2:  # a failed attempt: rewind to the committed offsets and redo
            assert producer.flush(TXN_WAIT) == 0
            producer.abort_transaction(TXN_WAIT)
            for tp in consumer.committed(consumer.assignment(), TXN_WAIT):
                consumer.seek(TopicPartition(tp.topic, tp.partition,
                                             tp.offset if tp.offset >= 0 else 0))
            continue
        producer.commit_transaction(TXN_WAIT)
        done += len(msgs)
    committed = consumer.committed(
        [TopicPartition(src, 0), TopicPartition(src, 1)], TXN_WAIT)
    consumer.close()
    assert sorted(tp.offset for tp in committed) == [n // 2, n // 2]
    out = read_all(bs, dst, (0, 1), "read_committed")
    assert out == sorted(f"out{i}".encode() for i in range(n))
    assert len(read_all(bs, dst, (0, 1), "read_uncommitted")) > n  # the aborted attempt


def test_admin_views_of_producers_and_transactions(broker, topic_name):
    """DescribeProducers, DescribeTransactions and ListTransactions on the wire."""
    from compat.wire_client import WireClient
    from wire.messages.describe_producers_request import DescribeProducersRequest, TopicRequest
    from wire.messages.describe_transactions_request import DescribeTransactionsRequest
    from wire.messages.list_transactions_request import ListTransactionsRequest

    bs = broker.bootstrap_servers
    create_topic(bs, topic_name)
    p = txn_producer(bs, "visible")
    p.begin_transaction()
    p.produce(topic_name, b"x", partition=0)
    assert p.flush(TXN_WAIT) == 0
    with WireClient(broker.bootstrap_servers) as wc:
        r = wc.send(DescribeProducersRequest(topics=[TopicRequest(
            name=topic_name, partition_indexes=[0, 9])]), 0)
        p0, p9 = r.topics[0].partitions
        assert p9.error_code == 3  # UNKNOWN_TOPIC_OR_PARTITION
        (state,) = p0.active_producers
        assert (state.last_sequence, state.current_txn_start_offset) == (0, 0)
        r = wc.send(DescribeTransactionsRequest(transactional_ids=["visible", "nope"]), 0)
        found, missing = r.transaction_states
        assert found.transaction_state == "Ongoing" and found.producer_id == state.producer_id
        assert [(t.topic, t.partitions) for t in found.topics] == [(topic_name, [0])]
        assert missing.error_code == 105  # TRANSACTIONAL_ID_NOT_FOUND
        r = wc.send(ListTransactionsRequest(state_filters=["Ongoing"], producer_id_filters=[]), 1)
        assert [t.transactional_id for t in r.transaction_states] == ["visible"]
    p.commit_transaction(TXN_WAIT)
