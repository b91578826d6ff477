"""The transaction coordinator as a state machine over __transaction_state, with a fake clock:
no sockets, a real Broker (logs, producer ids) in a temporary directory.  Markers are written
by the coordinator's marker channel, which ``complete_markers`` runs until it is idle."""

from __future__ import annotations

import pytest
import trio

from pykafkad.broker import Broker
from pykafkad.config import BrokerConfig
from pykafkad.coordinator.transaction_log import (
    TransactionMetadata,
    TxnState,
    decode_key,
    decode_value,
    encode_key,
    encode_value,
)
from wire.errors import ErrorCode
from wire.records.batch import build_batch
from wire.records.header import BatchHeader

START = 1_700_000_000_000


class Clock:
    def __init__(self):
        self.now = START

    def __call__(self) -> int:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def make_broker(tmp_path, clock):
    opened = []

    def _make(**config):
        conf = {"transaction.state.log.num.partitions": "3", **config}
        b = Broker(BrokerConfig.from_sources(None, conf), tmp_path / "data", clock=clock)
        opened.append(b)
        return b

    yield _make
    for b in opened:
        b.close()


def txn_batch(pid, epoch, seq, value=b"v"):
    data = build_batch([(None, value, (), START)], producer_id=pid, producer_epoch=epoch,
                       base_sequence=seq, is_transactional=True)
    return data, BatchHeader(data)


def produce(broker, topic, p, pid, epoch, seq):
    data, header = txn_batch(pid, epoch, seq)
    assert broker.txn_coordinator.verify_partition(pid, epoch, topic, p) == 0
    return broker.partition(topic, p).append_records_to_leader(data, 1)


def complete_markers(broker) -> None:
    """Runs the marker channel until every prepared transaction is complete."""
    channel = broker.txn_coordinator.channel

    async def main():
        async with trio.open_nursery() as nursery:
            nursery.start_soon(channel.run)
            with trio.fail_after(10):
                await channel.wait_until_idle()
            nursery.cancel_scope.cancel()

    trio.run(main)


def test_log_key_and_value_round_trip():
    txn = TransactionMetadata("tx", 42, 3, 60000, TxnState.ONGOING, {("a", 0), ("a", 2), ("b", 1)},
                              START, START + 5)
    assert decode_key(encode_key("tx")) == "tx"
    assert encode_key("tx") == b"\x00\x00\x00\x02tx"
    back = decode_value("tx", encode_value(txn))
    assert back == txn
    empty = TransactionMetadata("tx", 42, 3, 60000, TxnState.EMPTY, set(), -1, START)
    raw = encode_value(empty)
    assert raw[2 + 8 + 2 + 4 + 1:][:4] == b"\xff\xff\xff\xff"  # null partitions when Empty
    assert decode_value("tx", raw) == empty


def test_init_bumps_epoch_and_fences(make_broker):
    b = make_broker()
    c = b.txn_coordinator
    err, pid, epoch = c.init_producer_id("tx", 60000)
    assert (err, epoch) == (0, 0)
    assert c.init_producer_id("tx", 60000)[1:] == (pid, 1)
    # the first instance (epoch 0) is fenced
    assert c.add_partitions("tx", pid, 0, [("t", 0)]) == ErrorCode.PRODUCER_FENCED
    assert c.end_txn("tx", pid, 0, True) == ErrorCode.PRODUCER_FENCED
    # KIP-360 re-init with the current id/epoch bumps; a stale epoch is fenced
    assert c.init_producer_id("tx", 60000, pid, 1)[1:] == (pid, 2)
    assert c.init_producer_id("tx", 60000, pid, 0)[0] == ErrorCode.PRODUCER_FENCED
    assert c.init_producer_id("tx", 60000, pid + 100, 0)[0] == ErrorCode.PRODUCER_FENCED
    assert c.init_producer_id("tx", 10**9)[0] == ErrorCode.INVALID_TRANSACTION_TIMEOUT
    assert c.init_producer_id("", 1000)[0] == ErrorCode.INVALID_REQUEST
    assert c.add_partitions("nope", pid, 2, [("t", 0)]) == ErrorCode.INVALID_PRODUCER_ID_MAPPING


def test_commit_and_abort_write_markers(make_broker):
    b = make_broker()
    b.create_topic("t", 2, {})
    c = b.txn_coordinator
    _, pid, epoch = c.init_producer_id("tx", 60000)
    assert c.verify_partition(pid, epoch, "t", 0) == ErrorCode.INVALID_TXN_STATE
    assert c.add_partitions("tx", pid, epoch, [("t", 0), ("t", 1)]) == 0
    assert c.describe("tx").state == TxnState.ONGOING
    produce(b, "t", 0, pid, epoch, 0)
    t0 = b.partition("t", 0).log
    assert t0.last_stable_offset == 0 and t0.high_watermark == 1
    assert c.end_txn("tx", pid, epoch, True) == 0
    # answered once PrepareCommit is written; until the markers are in, the transaction is busy
    assert c.describe("tx").state == TxnState.PREPARE_COMMIT
    assert c.end_txn("tx", pid, epoch, True) == ErrorCode.CONCURRENT_TRANSACTIONS
    assert c.end_txn("tx", pid, epoch, False) == ErrorCode.INVALID_TXN_STATE
    assert c.add_partitions("tx", pid, epoch, [("t", 0)]) == ErrorCode.CONCURRENT_TRANSACTIONS
    assert c.init_producer_id("tx", 60000)[0] == ErrorCode.CONCURRENT_TRANSACTIONS
    assert t0.last_stable_offset == 0
    complete_markers(b)
    assert c.describe("tx").state == TxnState.COMPLETE_COMMIT
    assert c.end_txn("tx", pid, epoch, True) == 0  # a retry
    assert c.end_txn("tx", pid, epoch, False) == ErrorCode.INVALID_TXN_STATE
    assert t0.last_stable_offset == t0.high_watermark == 2
    assert b.partition("t", 1).log_end_offset == 1  # a marker even without data
    c.add_partitions("tx", pid, epoch, [("t", 0)])
    produce(b, "t", 0, pid, epoch, 1)
    assert c.end_txn("tx", pid, epoch, False) == 0
    complete_markers(b)
    assert t0.aborted_transactions(0, 100)[0][:3] == (pid, 2, 3)
    assert c.end_txn("tx", pid, epoch, False) == 0
    assert c.end_txn("tx", pid, epoch, True) == ErrorCode.INVALID_TXN_STATE


def test_reinit_aborts_the_open_transaction(make_broker):
    b = make_broker()
    b.create_topic("t", 1, {})
    c = b.txn_coordinator
    _, pid, epoch = c.init_producer_id("tx", 60000)
    c.add_partitions("tx", pid, epoch, [("t", 0)])
    produce(b, "t", 0, pid, epoch, 0)
    assert c.init_producer_id("tx", 60000)[0] == ErrorCode.CONCURRENT_TRANSACTIONS
    assert c.describe("tx").state == TxnState.PREPARE_ABORT
    assert c.init_producer_id("tx", 60000)[0] == ErrorCode.CONCURRENT_TRANSACTIONS
    complete_markers(b)
    assert c.describe("tx").state == TxnState.COMPLETE_ABORT
    assert c.describe("tx").producer_epoch == epoch + 1
    err, pid2, epoch2 = c.init_producer_id("tx", 60000)
    assert (err, pid2, epoch2) == (0, pid, epoch + 2)
    plog = b.partition("t", 0).log
    assert plog.last_stable_offset == plog.high_watermark == 2
    assert len(plog.aborted_transactions(0, 10)) == 1


def test_timeout_aborts_and_fences(make_broker, clock):
    b = make_broker()
    b.create_topic("t", 1, {})
    c = b.txn_coordinator
    _, pid, epoch = c.init_producer_id("tx", 10_000)
    c.add_partitions("tx", pid, epoch, [("t", 0)])
    produce(b, "t", 0, pid, epoch, 0)
    clock.now += 10_000
    assert c.abort_timed_out_transactions() == []
    clock.now += 1
    assert c.abort_timed_out_transactions() == ["tx"]
    complete_markers(b)
    assert c.describe("tx").state == TxnState.COMPLETE_ABORT
    assert c.end_txn("tx", pid, epoch, True) == ErrorCode.PRODUCER_FENCED
    data, header = txn_batch(pid, epoch, 1)
    with pytest.raises(Exception) as e:
        b.partition("t", 0).log.append_produced(data, header, 0)
    assert e.value.code == ErrorCode.INVALID_PRODUCER_EPOCH


def test_state_is_replayed_and_prepared_transactions_complete(make_broker, clock):
    b = make_broker()
    b.create_topic("t", 1, {})
    c = b.txn_coordinator
    _, pid, epoch = c.init_producer_id("open", 60000)
    c.add_partitions("open", pid, epoch, [("t", 0)])
    produce(b, "t", 0, pid, epoch, 0)
    _, pid2, epoch2 = c.init_producer_id("prepared", 60000)
    c.add_partitions("prepared", pid2, epoch2, [("t", 0)])
    produce(b, "t", 0, pid2, epoch2, 0)

    class Crash(Exception):
        pass

    def crash(txn):
        raise Crash

    c.before_markers = crash
    with pytest.raises(Crash):
        c.end_txn("prepared", pid2, epoch2, True)
    b.close()

    b = make_broker()
    c = b.txn_coordinator
    # loading finds "prepared" in PrepareCommit and resumes its markers
    assert c.describe("prepared").state == TxnState.PREPARE_COMMIT
    assert set(c.channel.pending) == {"prepared"}
    complete_markers(b)
    assert c.describe("prepared").state == TxnState.COMPLETE_COMMIT
    assert c.describe("open").state == TxnState.ONGOING
    plog = b.partition("t", 0).log
    assert plog.last_stable_offset == 0  # "open" still holds it
    assert plog.high_watermark == 3
    assert c.end_txn("open", pid, epoch, True) == 0
    complete_markers(b)
    assert plog.last_stable_offset == plog.high_watermark == 4
    # producer ids keep moving forward across restarts
    assert c.init_producer_id("third", 60000)[1] > max(pid, pid2)


def test_expiry_and_listing(make_broker, clock):
    b = make_broker(**{"transactional.id.expiration.ms": "1000"})
    b.create_topic("t", 1, {})
    c = b.txn_coordinator
    _, pid, epoch = c.init_producer_id("idle", 60000)
    _, pid2, epoch2 = c.init_producer_id("busy", 60000)
    c.add_partitions("busy", pid2, epoch2, [("t", 0)])
    unknown, txns = c.list(["Ongoing", "Bogus"], [])
    assert unknown == ["Bogus"] and [t.transactional_id for t in txns] == ["busy"]
    assert [t.transactional_id for t in c.list([], [pid])[1]] == ["idle"]
    clock.now += 3000
    # as Kafka: now - start > duration (an id without a transaction has start -1)
    assert [t.transactional_id for t in c.list([], [], 4000)[1]] == ["idle"]
    assert [t.transactional_id for t in c.list([], [], 2000)[1]] == ["idle", "busy"]
    assert c.expire_transactional_ids() == ["idle"]
    b.close()
    b = make_broker(**{"transactional.id.expiration.ms": "1000"})
    assert b.txn_coordinator.describe("idle") is None
    assert b.txn_coordinator.describe("busy") is not None
