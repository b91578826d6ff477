"""Producer state in the partition log: sequence checks, duplicates, transactions, LSO,
.txnindex, snapshots across restarts, expiry. No sockets: PartitionLog with a fake clock."""

from __future__ import annotations

import pytest

from pykafkad.log.producer_state import ProducerStateManager
from pykafkad.log.txn_index import AbortedTxn, TransactionIndex
from wire.errors import ErrorCode, KafkaError
from wire.records.batch import build_batch
from wire.records.control import ABORT, COMMIT, build_control_batch
from wire.records.header import BatchHeader


def batch(pid, epoch, seq, n=1, *, txn=False, ts=1000):
    data = build_batch(
        [(b"k", b"v%d" % i, (), ts) for i in range(n)],
        producer_id=pid, producer_epoch=epoch, base_sequence=seq, is_transactional=txn)
    return data, BatchHeader(data)


def produce(log, pid, epoch, seq, n=1, **kw):
    data, header = batch(pid, epoch, seq, n, **kw)
    return log.append_produced(data, header, 0)


def marker(log, kind, pid, epoch):
    data = build_control_batch(kind, pid, epoch, 0, 0, 0, 2000)
    return log.append_marker(data, kind, pid, epoch, 0, 0)


def code(fn, *args, **kw):
    with pytest.raises(KafkaError) as e:
        fn(*args, **kw)
    return e.value.code


def test_in_sequence_batches_append_and_retries_return_original_offsets(open_log):
    log = open_log()
    assert produce(log, 7, 0, 0, 3).base_offset == 0
    assert produce(log, 7, 0, 3, 2).base_offset == 3
    assert log.log_end_offset == 5
    dup = produce(log, 7, 0, 0, 3)
    assert dup.duplicate and (dup.base_offset, dup.last_offset) == (0, 2)
    dup = produce(log, 7, 0, 3, 2)
    assert dup.duplicate and dup.base_offset == 3
    assert log.log_end_offset == 5


def test_only_the_last_five_batches_are_deduplicated(open_log):
    log = open_log()
    for i in range(6):
        produce(log, 1, 0, i)
    assert produce(log, 1, 0, 1).duplicate
    assert code(produce, log, 1, 0, 0) == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_out_of_order_and_epoch_errors(open_log):
    log = open_log()
    produce(log, 1, 3, 0, 2)
    assert code(produce, log, 1, 3, 5) == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert code(produce, log, 1, 2, 2) == ErrorCode.INVALID_PRODUCER_EPOCH
    # a new epoch must start at 0
    assert code(produce, log, 1, 4, 2) == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert produce(log, 1, 4, 0).base_offset == 2
    # an unknown producer may start anywhere (KIP-360: no UNKNOWN_PRODUCER_ID on produce)
    assert produce(log, 2, 0, 17).base_offset == 3


def test_sequence_wraps_at_int32_max(open_log):
    log = open_log()
    produce(log, 1, 0, 0x7FFFFFFF - 1, 2)
    assert produce(log, 1, 0, 0).base_offset == 2


def test_transactions_move_the_lso_and_index_aborts(open_log):
    log = open_log()
    produce(log, 1, 0, 0, 2)                # 0-1 idempotent
    produce(log, 2, 0, 0, 2, txn=True)      # 2-3 txn of pid 2
    produce(log, 3, 0, 0, 1, txn=True)      # 4 txn of pid 3
    assert log.last_stable_offset == 2 and log.high_watermark == 5
    assert code(produce, log, 2, 0, 2) == ErrorCode.INVALID_TXN_STATE  # non-txn within a txn
    marker(log, ABORT, 2, 0)                # 5
    assert log.last_stable_offset == 4
    assert log.aborted_transactions(0, 10) == [AbortedTxn(2, 2, 5, 4)]
    assert log.aborted_transactions(6, 10) == []
    marker(log, COMMIT, 3, 0)               # 6
    assert log.last_stable_offset == log.high_watermark == 7
    # a marker from an older epoch is refused
    produce(log, 3, 1, 0, 1, txn=True)
    assert code(marker, log, COMMIT, 3, 0) == ErrorCode.INVALID_PRODUCER_EPOCH


def test_state_survives_clean_restart_and_crash(tmp_path, open_log):
    d = tmp_path / "topic-0"
    log = open_log(dir=d)
    produce(log, 1, 0, 0, 2)
    produce(log, 2, 0, 0, 1, txn=True)
    produce(log, 4, 0, 0, 1, txn=True)
    marker(log, ABORT, 4, 0)
    log.close()
    assert list(d.glob("*.snapshot"))
    assert list(d.glob("*.txnindex"))

    log = open_log(dir=d)
    assert produce(log, 1, 0, 0, 2).duplicate
    assert log.last_stable_offset == 2
    assert log.aborted_transactions(0, 100) == [AbortedTxn(4, 3, 4, 2)]
    produce(log, 1, 0, 2, 1)                # 5
    marker(log, COMMIT, 2, 0)               # 6
    # a crash: no snapshot at the end, the tail is replayed from the log
    for p in d.glob("*.snapshot"):
        p.unlink()
    log._closed = True  # drop without close()
    log = open_log(dir=d, recover=True)
    assert log.last_stable_offset == log.high_watermark == 7
    assert produce(log, 1, 0, 2, 1).duplicate
    assert code(produce, log, 1, 0, 7) == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert log.aborted_transactions(0, 100) == [AbortedTxn(4, 3, 4, 2)]


def test_snapshot_at_roll_and_replay_after_it(tmp_path, open_log):
    d = tmp_path / "topic-0"
    log = open_log(dir=d)
    produce(log, 1, 0, 0)
    log.roll()
    assert [p.name for p in d.glob("*.snapshot")] == [f"{1:020d}.snapshot"]
    produce(log, 1, 0, 1)
    log._closed = True
    log = open_log(dir=d, recover=True)
    assert produce(log, 1, 0, 1).duplicate
    assert produce(log, 1, 0, 2).base_offset == 2


def test_snapshot_file_format(tmp_path):
    """Kafka's ProducerSnapshot v1: version, crc32c, count, 46-byte entries."""
    m = ProducerStateManager(tmp_path)
    m.update_data_batch(5, 2, 9, 10, 14, 1234, True)
    m.take_snapshot(15)
    data = (tmp_path / f"{15:020d}.snapshot").read_bytes()
    assert len(data) == 10 + 46
    assert data[:2] == b"\x00\x01"
    m2 = ProducerStateManager(tmp_path)
    assert m2.load_snapshot(100) == 15
    e = m2.producers[5]
    assert (e.producer_epoch, e.last_seq, e.last_offset, e.current_txn_first_offset) == (
        2, 9, 14, 10)
    assert m2.first_unstable_offset() == 10
    # corrupt: ignored and removed
    (tmp_path / f"{15:020d}.snapshot").write_bytes(data[:-1] + b"\x00")
    assert ProducerStateManager(tmp_path).load_snapshot(100) == -1


def test_txn_index_file(tmp_path):
    path = tmp_path / "00000000000000000000.txnindex"
    idx = TransactionIndex(path)
    idx.append(AbortedTxn(1, 0, 5, 6))
    idx.append(AbortedTxn(2, 3, 9, 10))
    assert path.stat().st_size == 68
    again = TransactionIndex(path)
    assert again.entries == idx.entries
    again.truncate_to(9)
    assert TransactionIndex(path).entries == [AbortedTxn(1, 0, 5, 6)]


def test_producer_expiry_keeps_open_transactions(open_log):
    log = open_log()
    produce(log, 1, 0, 0, ts=1000)
    produce(log, 2, 0, 0, txn=True, ts=1000)
    assert log.remove_expired_producers(5000, 1000) == 1
    assert set(log.producer_state.producers) == {2}
    # an expired producer may continue at any sequence (it is unknown now)
    assert produce(log, 1, 0, 42).base_offset == 2
