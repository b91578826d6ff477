"""KIP-890 part 1 across brokers: a partition leader whose transaction coordinator is another
broker verifies a producer's first transactional batch with AddPartitionsToTxn (v4+,
verify_only) over the network before appending it.  Two real in-process brokers; the leader's
``leader_endpoint`` names the coordinator's broker as the leader of ``__transaction_state``
(what the cluster's metadata will answer).  The Produce requests are raw frames: no stock
client can be pointed at a coordinator on one broker and a leader on another outside a cluster.
"""

from __future__ import annotations

import socket

import pytest

from compat.wire_client import WireClient
from pykafkad.coordinator.transaction_log import TRANSACTION_STATE_TOPIC
from tests.kraft.released_broker import run_released
from wire.errors import ErrorCode
from wire.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from wire.records.batch import build_batch

TOPIC = "verified"


@pytest.fixture
def pair(tmp_path):
    """(coordinator broker, partition leader broker)."""
    with run_released(tmp_path / "a", config={"node.id": "1"}) as a, \
            run_released(tmp_path / "b", config={"node.id": "2"}) as b:
        b.call(b.broker.create_topic, TOPIC, 1, {})
        a.call(a.broker.create_topic, TOPIC, 1, {})  # a cluster's brokers all know the topic
        a.call(a.broker.txn_coordinator.ensure_state_topic)
        yield a, b


def coordinator_on(b, endpoint):
    local = b.broker.leader_endpoint
    b.broker.leader_endpoint = (
        lambda topic, p: endpoint if topic == TRANSACTION_STATE_TOPIC else local(topic, p))


def produce(b, txn_id, pid, epoch, seq, value=b"v"):
    batch = build_batch([(None, value, (), 0)], producer_id=pid, producer_epoch=epoch,
                        base_sequence=seq, is_transactional=True)
    with WireClient(b.bootstrap_servers) as c:
        r = c.send(ProduceRequest(transactional_id=txn_id, acks=-1, timeout_ms=5000, topic_data=[
            TopicProduceData(name=TOPIC, partition_data=[
                PartitionProduceData(index=0, records=batch)])]), 9)
    part = r.responses[0].partition_responses[0]
    return part.error_code, part.error_message


def test_first_transactional_batch_is_verified_with_the_remote_coordinator(pair):
    a, b = pair
    coordinator_on(b, (1, a.host, a.port))
    c = a.broker.txn_coordinator
    err, pid, epoch = a.call(c.init_producer_id, "remote-txn", 60000)
    assert err == 0
    # not added to the transaction yet: refused, nothing appended
    assert produce(b, "remote-txn", pid, epoch, 0) == (
        ErrorCode.INVALID_TXN_STATE, "Partition was not added to the transaction")
    assert b.broker.logs.get(TOPIC, 0).log_end_offset == 0
    assert a.call(c.add_partitions, "remote-txn", pid, epoch, [(TOPIC, 0)]) == 0
    assert produce(b, "remote-txn", pid, epoch, 0) == (0, None)
    assert produce(b, "remote-txn", pid, epoch, 1) == (0, None)  # in the transaction now
    assert b.broker.logs.get(TOPIC, 0).log_end_offset == 2
    # a stale epoch is fenced by the coordinator (as INVALID_PRODUCER_EPOCH for the producer)
    other_pid = a.call(c.init_producer_id, "other-txn", 60000)[1]
    a.call(c.init_producer_id, "other-txn", 60000)  # epoch 1 fences epoch 0
    assert produce(b, "other-txn", other_pid, 0, 0)[0] == ErrorCode.INVALID_PRODUCER_EPOCH


def test_an_unreachable_coordinator_is_not_enough_replicas(pair):
    _, b = pair
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    coordinator_on(b, (1, "127.0.0.1", dead))
    assert produce(b, "lost-txn", 4242, 0, 0) == (
        ErrorCode.NOT_ENOUGH_REPLICAS, "Unable to verify the partition has been added to the "
        "transaction. Underlying error: NETWORK_EXCEPTION")
    coordinator_on(b, None)  # no leader for the coordinator's partition
    assert produce(b, "lost-txn", 4242, 0, 0)[0] == ErrorCode.NOT_ENOUGH_REPLICAS
    assert b.broker.logs.get(TOPIC, 0).log_end_offset == 0
