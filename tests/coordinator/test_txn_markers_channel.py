"""The marker channel between brokers: real in-process brokers on real sockets, the
coordinator's broker sending WriteTxnMarkers with NodeClient to the broker that leads a
transaction's partition.  ``leader_endpoint`` (what the cluster's metadata will answer) is set
by each test to say where a partition's leader is: an unreachable port, a broker that does not
host it (a stale leader), the right broker, or nowhere (deleted)."""

from __future__ import annotations

import socket
import time

import pytest

from pykafkad.coordinator.transaction_log import TxnState
from tests.kraft.released_broker import run_released
from wire.errors import ErrorCode
from wire.records.batch import build_batch, iter_batch_headers

WAIT_S = 30
TOPIC = "remote"


def wait_for(condition, what: str):
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def brokers(tmp_path):
    """(coordinator, partition leader, bystander): three single-node brokers, node ids 1-3;
    the leader hosts TOPIC."""
    with run_released(tmp_path / "a", config={"node.id": "1"}) as a, \
            run_released(tmp_path / "b", config={"node.id": "2"}) as b, \
            run_released(tmp_path / "c", config={"node.id": "3"}) as c:
        b.call(b.broker.create_topic, TOPIC, 2, {})
        yield a, b, c


def open_transaction(a, b, txn_id: str):
    """A transaction on ``a``'s coordinator with TOPIC-0 and TOPIC-1, whose data went to
    ``b`` (appended there as its Produce would)."""
    coordinator = a.broker.txn_coordinator
    err, pid, epoch = a.call(coordinator.init_producer_id, txn_id, 60000)
    assert err == 0
    assert a.call(coordinator.add_partitions, txn_id, pid, epoch, [(TOPIC, 0), (TOPIC, 1)]) == 0
    for p in (0, 1):
        batch = build_batch([(None, b"v%d" % p, (), 0)], producer_id=pid, producer_epoch=epoch,
                            base_sequence=0, is_transactional=True)
        b.call(lambda p=p, batch=batch: b.broker.partition(TOPIC, p).append_records_to_leader(
            batch, 1))
    return coordinator, pid, epoch


def route(a, where):
    """Sends TOPIC's markers wherever ``where(partition)`` says; other topics stay local."""
    local = a.broker.leader_endpoint
    a.broker.txn_coordinator.channel.leader_endpoint = (
        lambda topic, p: where(p) if topic == TOPIC else local(topic, p))


def endpoint(running, node_id):
    return node_id, running.host, running.port


def control_batches(running, p: int) -> list:
    plog = running.broker.logs.get(TOPIC, p)
    data = plog.read(0, 1 << 20).to_bytes()
    return [h for _, h in iter_batch_headers(data) if h.is_control]


def state(a, txn_id):
    return a.broker.txn_coordinator.describe(txn_id).state


def test_markers_reach_the_partition_leader_over_the_network(brokers):
    a, b, _ = brokers
    coordinator, pid, epoch = open_transaction(a, b, "net")
    route(a, lambda p: endpoint(b, 2))
    assert a.call(coordinator.end_txn, "net", pid, epoch, True) == 0
    wait_for(lambda: state(a, "net") == TxnState.COMPLETE_COMMIT, "CompleteCommit")
    for p in (0, 1):
        (marker,) = control_batches(b, p)
        assert (marker.producer_id, marker.producer_epoch) == (pid, epoch)
        plog = b.broker.logs.get(TOPIC, p)
        assert plog.last_stable_offset == plog.high_watermark == 2
    channel = coordinator.channel
    assert channel.requests_sent == {"2": 1}  # both partitions in one WriteTxnMarkers
    assert channel.idle


def test_unreachable_and_stale_leaders_are_retried_until_the_right_one_answers(brokers):
    a, b, c = brokers
    coordinator, pid, epoch = open_transaction(a, b, "moving")
    dead = closed_port()
    leaders = {0: (2, "127.0.0.1", dead), 1: endpoint(c, 3)}  # nobody there; not hosted by c
    route(a, lambda p: leaders[p])
    assert a.call(coordinator.end_txn, "moving", pid, epoch, False) == 0
    channel = coordinator.channel
    wait_for(lambda: channel.requests_sent.get("3", 0) >= 2, "retries to the stale leader")
    # pending markers keep the transaction busy, as Kafka answers
    assert state(a, "moving") == TxnState.PREPARE_ABORT
    assert a.call(coordinator.add_partitions, "moving", pid, epoch, [(TOPIC, 0)]) == (
        ErrorCode.CONCURRENT_TRANSACTIONS)
    assert a.call(coordinator.init_producer_id, "moving", 60000)[0] == (
        ErrorCode.CONCURRENT_TRANSACTIONS)
    assert b.broker.logs.get(TOPIC, 0).last_stable_offset == 0
    leaders[0] = leaders[1] = endpoint(b, 2)  # the metadata catches up
    wait_for(lambda: state(a, "moving") == TxnState.COMPLETE_ABORT, "CompleteAbort")
    for p in (0, 1):
        assert len(control_batches(b, p)) == 1
        assert len(b.broker.logs.get(TOPIC, p).aborted_transactions(0, 10)) == 1
    assert c.broker.topics.get(TOPIC) is None  # the stale leader wrote nothing


def test_a_deleted_partition_is_dropped_from_the_pending_markers(brokers):
    a, b, _ = brokers
    coordinator, pid, epoch = open_transaction(a, b, "deleted")
    route(a, lambda p: endpoint(b, 2) if p == 0 else None)  # TOPIC-1 has no leader entry
    assert a.call(coordinator.end_txn, "deleted", pid, epoch, True) == 0
    wait_for(lambda: state(a, "deleted") == TxnState.COMPLETE_COMMIT, "CompleteCommit")
    assert len(control_batches(b, 0)) == 1
    assert control_batches(b, 1) == []


def test_a_new_coordinator_epoch_resumes_the_markers_and_fences_the_old_one(brokers):
    a, b, _ = brokers
    coordinator, pid, epoch = open_transaction(a, b, "handover")
    dead = closed_port()
    leaders = {0: (2, "127.0.0.1", dead), 1: (2, "127.0.0.1", dead)}
    route(a, lambda p: leaders[p])
    assert a.call(coordinator.end_txn, "handover", pid, epoch, True) == 0
    txn_partition = coordinator.partition_for("handover")
    # the partition of __transaction_state moves away and comes back at a newer epoch
    a.call(coordinator.on_resignation, txn_partition, 0)
    assert coordinator.describe("handover") is None and coordinator.channel.idle
    assert a.call(coordinator.end_txn, "handover", pid, epoch, True) == ErrorCode.NOT_COORDINATOR
    leaders[0] = leaders[1] = endpoint(b, 2)
    a.call(coordinator.on_election, txn_partition, 1)
    assert state(a, "handover") == TxnState.PREPARE_COMMIT
    wait_for(lambda: state(a, "handover") == TxnState.COMPLETE_COMMIT, "CompleteCommit")
    entry = b.broker.logs.get(TOPIC, 0).producer_state.producers[pid]
    assert entry.coordinator_epoch == 1
    # a zombie coordinator at epoch 0 is fenced by the partition
    from compat.wire_client import WireClient
    from wire.messages.write_txn_markers_request import (
        WritableTxnMarker,
        WritableTxnMarkerTopic,
        WriteTxnMarkersRequest,
    )

    with WireClient(b.bootstrap_servers) as wc:
        r = wc.send(WriteTxnMarkersRequest(markers=[WritableTxnMarker(
            producer_id=pid, producer_epoch=epoch, transaction_result=False,
            topics=[WritableTxnMarkerTopic(name=TOPIC, partition_indexes=[0])],
            coordinator_epoch=0)]), 1)
    assert r.markers[0].topics[0].partitions[0].error_code == (
        ErrorCode.TRANSACTION_COORDINATOR_FENCED)
