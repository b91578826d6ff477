"""Consume-transform-produce on a cluster where the group's coordinator and the transactional
id's coordinator are different brokers: TxnOffsetCommit reaches the group coordinator, which
must ask the transaction coordinator on the other broker (AddPartitionsToTxn verify_only, as
Kafka's group coordinator does) whether AddOffsetsToTxn added the group.  Before, the group
coordinator looked the transactional id up in its own (empty) transaction state and answered
INVALID_PRODUCER_ID_MAPPING, a fatal error for librdkafka (found by librdkafka's own test
0103_transactions, do_test_consumer_producer_txn)."""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from pykafkad.coordinator.partitioning import partition_for
from pykafkad.testing import run_cluster
from tests.integration.clients import WAIT_S

CONFIG = {"offsets.topic.replication.factor": "3",
          "transaction.state.log.replication.factor": "3",
          "transaction.state.log.min.isr": "2"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with run_cluster(3, config=CONFIG, data_dir=tmp_path_factory.mktemp("txn-offsets")) as c:
        yield c


def _leader(admin: AdminClient, topic: str, partition: int) -> int:
    return admin.list_topics(topic, timeout=WAIT_S).topics[topic].partitions[partition].leader


def _ids_on_different_brokers(admin: AdminClient) -> tuple[str, str]:
    """A group id and a transactional id whose coordinators (the leaders of their internal
    partitions, which Kafka picks by the id's hash) are different brokers."""
    for topic in ("__consumer_offsets", "__transaction_state"):
        admin.list_topics(topic, timeout=WAIT_S)  # both exist once a client asked for them
    group = f"g-{uuid.uuid4().hex[:8]}"
    offsets = admin.list_topics("__consumer_offsets", timeout=WAIT_S).topics["__consumer_offsets"]
    group_node = _leader(admin, "__consumer_offsets", partition_for(group, len(offsets.partitions)))
    state = admin.list_topics("__transaction_state", timeout=WAIT_S).topics["__transaction_state"]
    for i in range(200):
        txn_id = f"tx-{i}-{group}"
        n = len(state.partitions)
        if _leader(admin, "__transaction_state", partition_for(txn_id, n)) != group_node:
            return group, txn_id
    raise AssertionError("no transactional id with a coordinator on another broker")


def test_send_offsets_to_transaction_with_coordinators_on_different_brokers(cluster):
    bootstrap = cluster.bootstrap_servers
    admin = AdminClient({"bootstrap.servers": bootstrap})
    topic = f"t-{uuid.uuid4().hex[:8]}"
    admin.create_topics([NewTopic(topic, 2, 3)])[topic].result(WAIT_S)
    # a transactional producer's first InitProducerId and a group's first FindCoordinator make
    # the two internal topics; then the ids are chosen
    warm = Producer({"bootstrap.servers": bootstrap, "transactional.id": "warm-up"})
    warm.init_transactions(WAIT_S)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "warm-up-group",
                         "enable.auto.commit": False})
    consumer.committed([TopicPartition(topic, 0)], WAIT_S)
    consumer.close()
    group, txn_id = _ids_on_different_brokers(admin)

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                         "enable.auto.commit": False})
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id})
    producer.init_transactions(WAIT_S)
    for i in range(3):
        producer.begin_transaction()
        producer.send_offsets_to_transaction(
            [TopicPartition(topic, 1, 10 + i)], consumer.consumer_group_metadata(), WAIT_S)
        producer.produce(topic, f"r{i}".encode(), partition=0)
        producer.commit_transaction(WAIT_S)

    [committed] = consumer.committed([TopicPartition(topic, 1)], WAIT_S)
    assert committed.offset == 12
    consumer.close()
    reader = Consumer({"bootstrap.servers": bootstrap, "group.id": f"r-{group}",
                       "isolation.level": "read_committed", "auto.offset.reset": "earliest"})
    reader.assign([TopicPartition(topic, 0, 0)])
    values = []
    for _ in range(100):
        msg = reader.poll(0.5)
        if msg is not None and not msg.error():
            values.append(msg.value())
        if len(values) == 3:
            break
    reader.close()
    assert values == [b"r0", b"r1", b"r2"]


def test_transaction_version_2_with_coordinators_on_different_brokers(cluster):
    """Transaction version 2 across brokers: TxnOffsetCommit v5 on the group's coordinator
    adds the group's partition at the transaction's coordinator (AddPartitionsToTxn v5), and
    the Java client's transactions (partitions led by every broker, a group's offsets) commit
    and abort with Produce v12+ adding each partition through its leader."""
    from compat.clients.java import run_java
    from compat.wire_client import WireClient
    from tests.integration import txn_v2_wire
    from tests.integration.clients import needs_java
    from wire.messages.find_coordinator_request import FindCoordinatorRequest
    from wire.messages.txn_offset_commit_request import (
        TxnOffsetCommitRequest,
        TxnOffsetCommitRequestPartition,
        TxnOffsetCommitRequestTopic,
    )

    bootstrap = cluster.bootstrap_servers
    admin = AdminClient({"bootstrap.servers": bootstrap})
    topic = f"t-{uuid.uuid4().hex[:8]}"
    admin.create_topics([NewTopic(topic, 1, 3)])[topic].result(WAIT_S)
    warm = Producer({"bootstrap.servers": bootstrap, "transactional.id": "warm-up-v2"})
    warm.init_transactions(WAIT_S)
    Consumer({"bootstrap.servers": bootstrap, "group.id": "warm-up-v2"}).close()
    group, txn_id = _ids_on_different_brokers(admin)

    def coordinator(key: str, key_type: int) -> str:
        with WireClient(bootstrap) as wc:
            found = txn_v2_wire._retry(lambda: wc.send(
                FindCoordinatorRequest(key=key, key_type=key_type), 3), "FindCoordinator")
        return f"{found.host}:{found.port}"

    with WireClient(coordinator(txn_id, 1)) as txn_wc, \
            WireClient(coordinator(group, 0)) as group_wc:
        init = txn_v2_wire._retry(lambda: txn_wc.send(txn_v2_wire.InitProducerIdRequest(
            transactional_id=txn_id, transaction_timeout_ms=60000), 5), "InitProducerId")
        r = txn_v2_wire._retry(lambda: group_wc.send(TxnOffsetCommitRequest(
            transactional_id=txn_id, group_id=group, producer_id=init.producer_id,
            producer_epoch=init.producer_epoch, topics=[TxnOffsetCommitRequestTopic(
                name=topic, partitions=[TxnOffsetCommitRequestPartition(
                    partition_index=0, committed_offset=7)])]), 5).topics[0].partitions[0],
            "TxnOffsetCommit")
        assert r.error_code == 0
        _, state, parts = txn_v2_wire._described(txn_wc, txn_id)
        assert (state, [t for t, _ in parts]) == ("Ongoing", ["__consumer_offsets"])
        end = txn_wc.send(txn_v2_wire.EndTxnRequest(
            transactional_id=txn_id, producer_id=init.producer_id,
            producer_epoch=init.producer_epoch, committed=True), 5)
        assert (end.error_code, end.producer_epoch) == (0, init.producer_epoch + 1)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    [committed] = consumer.committed([TopicPartition(topic, 0)], WAIT_S)
    consumer.close()
    assert committed.offset == 7

    if needs_java.mark.args[0]:
        pytest.skip(needs_java.mark.kwargs["reason"])
    scenarios = ["transaction-across-brokers", "transactions-v2"]
    results, stderr = run_java(bootstrap, scenarios)
    for name in scenarios:
        assert results[name].status == "pass", (name, results[name].reason, stderr[-2000:])
