"""Transaction markers: WriteTxnMarkers on the wire (the same answers as Apache Kafka 4.4.0),
and the coordinator's asynchronous, retried marker channel seen by stock clients: a marker that
hits a full disk is retried until space is back, and a coordinator killed (kill -9) between
PrepareCommit and CompleteCommit resumes the markers when it starts again.

The full-disk tests put the data dir on a small tmpfs (tests/full_disk.py).  To have the
PrepareCommit record fit while the data partition's marker does not, the data partition's log
is padded (with an ordinary record) to end exactly on a page: tmpfs gives space by pages, so
the small __transaction_state record still fits its log's last page and the marker needs a new
one."""

from __future__ import annotations

import random
from pathlib import Path

from confluent_kafka import Producer

from compat.wire_client import WireClient
from pykafkad.testing import run_broker
from tests import full_disk
from tests.full_disk import fill
from tests.integration.broker_process import BrokerProcess
from tests.integration.clients import WAIT_S, create_topic, needs_java
from tests.integration.test_transactions import read_all, txn_producer, wait_for
from wire.messages.describe_transactions_request import DescribeTransactionsRequest
from wire.messages.write_txn_markers_request import (
    WritableTxnMarker,
    WritableTxnMarkerTopic,
    WriteTxnMarkersRequest,
)
from wire.records.batch import iter_batch_headers

small_disk = full_disk.small_disk  # the fixture
PAGE = 4096
TXN_STATE_ONE_PARTITION = {"transaction.state.log.num.partitions": "1"}


def _marker(pid, epoch, commit, partitions, coordinator_epoch=0, transaction_version=0):
    by_topic: dict[str, list[int]] = {}
    for topic, index in partitions:
        by_topic.setdefault(topic, []).append(index)
    return WritableTxnMarker(
        producer_id=pid, producer_epoch=epoch, transaction_result=commit,
        topics=[WritableTxnMarkerTopic(name=t, partition_indexes=ps) for t, ps in by_topic.items()],
        coordinator_epoch=coordinator_epoch, transaction_version=transaction_version)


def _marker_answers(bootstrap: str, topic: str, base_pid: int) -> dict:
    """Each scenario's answer, producer ids relative to ``base_pid`` and topics to ``topic``
    (results compared as sets: Kafka keys them by producer id in a hash map)."""
    create_topic(bootstrap, topic, partitions=2)

    def normalized(response):
        return sorted(
            (m.producer_id - base_pid if m.producer_id >= 0 else m.producer_id,
             sorted((t.name.replace(topic, "T"), p.partition_index, p.error_code)
                    for t in m.topics for p in t.partitions))
            for m in response.markers)

    pid = base_pid
    out = {}
    with WireClient(bootstrap) as c:
        out["versions"] = c.api_versions()[27]
        # Kafka's broker hosts a new topic's partitions a moment after CreateTopics answers
        # (UNKNOWN_TOPIC_OR_PARTITION until then): markers of another producer until both take
        wait_for(lambda: all(
            p.error_code == 0 for m in c.send(WriteTxnMarkersRequest(markers=[_marker(
                pid - 1, 0, True, [(topic, 0), (topic, 1)])]), 1).markers
            for t in m.topics for p in t.partitions), "the new topic's partitions")

        def ask(label, version, *markers):
            out[label] = normalized(c.send(WriteTxnMarkersRequest(markers=list(markers)), version))

        ask("no markers v1", 1)
        ask("no markers v2", 2)
        ask("unknown partitions", 1, _marker(pid, 5, True, [
            (topic + "-missing", 0), (topic, 7), (topic, -1)]))
        ask("written", 1, _marker(pid, 5, True, [(topic, 0), (topic, 1)], coordinator_epoch=3))
        ask("stale producer epoch", 1, _marker(pid, 4, False, [(topic, 0)], coordinator_epoch=3))
        ask("stale coordinator epoch", 1, _marker(pid, 5, False, [(topic, 0)],
                                                  coordinator_epoch=2))
        ask("both stale", 1, _marker(pid, 4, False, [(topic, 0)], coordinator_epoch=2))
        ask("the same again", 1, _marker(pid, 5, True, [(topic, 0)], coordinator_epoch=3))
        ask("v2, transaction version 2, same epoch", 2, _marker(
            pid, 5, True, [(topic, 1)], coordinator_epoch=3, transaction_version=2))
        ask("one producer in two markers", 1, _marker(pid + 1, 0, True, [(topic, 0)]),
            _marker(pid + 1, 0, True, [(topic, 1), (topic, 9)]))
        ask("two producers", 1, _marker(pid + 2, 0, True, [(topic, 0)]),
            _marker(pid + 3, 0, False, [(topic, 1)]))
        ask("no producer id", 1, _marker(-1, 0, True, [(topic, 0)]))
        ask("no producer epoch", 1, _marker(pid + 4, -1, True, [(topic, 0)]))
    return out


@needs_java
def test_write_txn_markers_answers_as_apache_kafka(broker, reference_kafka, topic_name):
    base_pid = random.randrange(10**12, 10**13)
    ours = _marker_answers(broker.bootstrap_servers, topic_name, base_pid)
    assert ours == _marker_answers(reference_kafka.bootstrap_servers, topic_name, base_pid)
    assert ours["versions"] == (1, 2)
    assert ours["unknown partitions"] == [(0, [("T", -1, 3), ("T", 7, 3), ("T-missing", 0, 3)])]
    assert ours["stale producer epoch"] == [(0, [("T", 0, 47)])]  # INVALID_PRODUCER_EPOCH
    assert ours["stale coordinator epoch"] == [(0, [("T", 0, 52)])]  # COORDINATOR_FENCED
    assert ours["one producer in two markers"] == [(1, [("T", 0, 0), ("T", 1, 0), ("T", 9, 3)])]


def test_write_txn_markers_end_a_producers_transaction(broker, topic_name):
    """A marker sent on the wire ends the transaction a stock producer left open: the LSO
    moves and a read_committed consumer sees the records (commit) or never does (abort)."""
    bs = broker.bootstrap_servers
    create_topic(bs, topic_name, partitions=2)
    p = txn_producer(bs, "wire-marked")
    p.begin_transaction()
    p.produce(topic_name, b"kept", partition=0)
    p.produce(topic_name, b"dropped", partition=1)
    assert p.flush(WAIT_S) == 0
    txn = broker.broker.txn_coordinator.describe("wire-marked")
    assert read_all(bs, topic_name, (0, 1), "read_committed") == []
    with WireClient(bs) as c:
        r = c.send(WriteTxnMarkersRequest(markers=[
            _marker(txn.producer_id, txn.producer_epoch, True, [(topic_name, 0)]),
            _marker(txn.producer_id + 10**9, 0, True, [(topic_name, 0)]),
        ]), 2)
        assert sorted(p.error_code for m in r.markers for t in m.topics for p in t.partitions) \
            == [0, 0]
        r = c.send(WriteTxnMarkersRequest(markers=[
            _marker(txn.producer_id, txn.producer_epoch, False, [(topic_name, 1)])]), 1)
        assert r.markers[0].topics[0].partitions[0].error_code == 0
    assert read_all(bs, topic_name, (0, 1), "read_committed") == [b"kept"]
    plog = broker.broker.logs.get(topic_name, 1)
    assert plog.last_stable_offset == plog.high_watermark == 2
    assert len(plog.aborted_transactions(0, 10)) == 1


def test_single_node_transactions_complete_after_end_txn_answers(broker, topic_name):
    """EndTxn answers once PrepareCommit is logged, as Kafka's; the markers follow from the
    channel (one local WriteTxnMarkers per transaction), so a producer's next transaction may
    meet CONCURRENT_TRANSACTIONS, which the client retries; every commit completes (LSO at the
    end of each partition, CompleteCommit)."""
    bs = broker.bootstrap_servers
    create_topic(bs, topic_name, partitions=3)
    p = txn_producer(bs, "prompt")
    coordinator = broker.broker.txn_coordinator
    for round_ in range(5):
        p.begin_transaction()
        for i in range(3):
            p.produce(topic_name, b"%d-%d" % (round_, i), partition=i)
        p.commit_transaction(WAIT_S)
        wait_for(lambda: coordinator.describe("prompt").state.kafka_name == "CompleteCommit",
                 "CompleteCommit")
        for i in range(3):
            plog = broker.broker.logs.get(topic_name, i)
            assert plog.last_stable_offset == plog.high_watermark == 2 * (round_ + 1)
    assert coordinator.channel.requests_sent == {"local": 5}
    assert read_all(bs, topic_name, (0, 1, 2), "read_committed") == sorted(
        b"%d-%d" % (r, i) for i in range(3) for r in range(5))


# -- the marker channel on a full disk --------------------------------------------------------
def _vlen(n: int) -> int:
    """Bytes of a zigzag varint."""
    z = (n << 1) ^ (n >> 63)
    size = 1
    while z >= 0x80:
        z >>= 7
        size += 1
    return size


def _padding_value(need: int) -> bytes | None:
    """A value whose one-record batch (no key, no headers, uncompressed) is ``need`` bytes:
    61 bytes of batch header, then the record's length and body (attributes, timestamp and
    offset deltas, key length -1, value length, value, header count)."""
    for size in range(need):
        body = 5 + _vlen(size) + size
        if 61 + _vlen(body) + body == need:
            return b"p" * size
        if 61 + _vlen(body) + body > need:
            return None
    return None


def _pad_log_to_page(bootstrap: str, topic: str, log_file: Path) -> None:
    """Appends one ordinary record so that ``log_file`` ends exactly on a page."""
    need = -log_file.stat().st_size % PAGE
    value = _padding_value(need) if need else None
    if need and value is None:
        value = _padding_value(need + PAGE)
    if value is not None:
        plain = Producer({"bootstrap.servers": bootstrap, "compression.codec": "none",
                          "linger.ms": 0})
        plain.produce(topic, value, partition=0)
        assert plain.flush(WAIT_S) == 0
    assert log_file.stat().st_size % PAGE == 0, log_file.stat().st_size


def _room_in_last_page(log_file: Path) -> int:
    size = log_file.stat().st_size
    return -size % PAGE if size else 0


def _control_batches(log_file: Path) -> int:
    data = log_file.read_bytes()
    return sum(1 for _, h in iter_batch_headers(data) if h.is_control)


def _prepare_commit_on_full_disk(bootstrap: str, data: Path, disk: Path, topic: str,
                                 txn_id: str) -> Path:
    """A transaction whose PrepareCommit is written while its marker cannot be: returns the
    filler file (delete it to free the space)."""
    create_topic(bootstrap, topic)
    p = txn_producer(bootstrap, txn_id)
    p.begin_transaction()
    p.produce(topic, b"committed", partition=0)
    assert p.flush(WAIT_S) == 0
    data_log = data / f"{topic}-0" / "00000000000000000000.log"
    _pad_log_to_page(bootstrap, topic, data_log)
    state_log = data / "__transaction_state-0" / "00000000000000000000.log"
    assert _room_in_last_page(state_log) >= 400, "PrepareCommit would not fit either"
    filler = fill(disk)
    p.commit_transaction(WAIT_S)  # answered once PrepareCommit is in the log
    return filler


def test_marker_on_a_full_disk_is_retried_until_space_is_back(small_disk, topic_name):
    data = small_disk / "data"
    with run_broker(data, config=TXN_STATE_ONE_PARTITION) as b:
        bs = b.bootstrap_servers
        filler = _prepare_commit_on_full_disk(bs, data, small_disk, topic_name, "disk-full")
        coordinator = b.broker.txn_coordinator
        channel = coordinator.channel
        # the marker fails with KAFKA_STORAGE_ERROR and is sent again, the transaction waits
        wait_for(lambda: channel.requests_sent.get("local", 0) >= 3, "marker retries")
        assert coordinator.describe("disk-full").state.kafka_name == "PrepareCommit"
        plog = b.broker.logs.get(topic_name, 0)
        assert plog.last_stable_offset == 0 < plog.high_watermark
        filler.unlink()
        wait_for(lambda: coordinator.describe("disk-full").state.kafka_name == "CompleteCommit",
                 "the commit to complete once space is back")
        values = read_all(bs, topic_name, (0,), "read_committed")
        assert b"committed" in values
        log_file = data / f"{topic_name}-0" / "00000000000000000000.log"
        assert _control_batches(log_file) == 1  # one marker, however many tries
    with run_broker(data, config=TXN_STATE_ONE_PARTITION) as b:
        wait_for(lambda: b.broker.txn_coordinator.describe("disk-full") is not None,
                 "the restarted coordinator to load __transaction_state")
        assert b.broker.txn_coordinator.describe("disk-full").state.kafka_name == "CompleteCommit"
        assert b"committed" in read_all(b.bootstrap_servers, topic_name, (0,), "read_committed")


def test_kill_9_between_prepare_and_complete_resumes_the_markers(small_disk, topic_name):
    data = small_disk / "data"
    args = ("--set", "transaction.state.log.num.partitions=1")
    proc = BrokerProcess(data, *args).start()
    try:
        filler = _prepare_commit_on_full_disk(
            proc.bootstrap_servers, data, small_disk, topic_name, "crash-prepared")
        with WireClient(proc.bootstrap_servers) as c:
            r = c.send(DescribeTransactionsRequest(transactional_ids=["crash-prepared"]), 0)
            assert r.transaction_states[0].transaction_state == "PrepareCommit"
        proc.kill()
        filler.unlink()
        proc = BrokerProcess(data, *args).start()
        bs = proc.bootstrap_servers
        assert b"committed" in read_all(bs, topic_name, (0,), "read_committed")

        def state():
            with WireClient(bs) as c:
                r = c.send(DescribeTransactionsRequest(transactional_ids=["crash-prepared"]), 0)
            return r.transaction_states[0].transaction_state == "CompleteCommit"

        wait_for(state, "CompleteCommit after the restart")
        # the producer's next transaction goes through as usual
        p = txn_producer(bs, "crash-prepared")
        p.begin_transaction()
        p.produce(topic_name, b"next", partition=0)
        p.commit_transaction(WAIT_S)
        assert b"next" in read_all(bs, topic_name, (0,), "read_committed")
    finally:
        if proc.proc.poll() is None:
            proc.kill()
