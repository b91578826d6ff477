"""COORDINATOR_LOAD_IN_PROGRESS on a pykafkad cluster (run_cluster, stock clients): a broker
that becomes leader of a __consumer_offsets partition reads it in a worker thread, and until
its groups are replayed their requests (OffsetFetch here) answer COORDINATOR_LOAD_IN_PROGRESS,
which clients retry, then the committed offsets.

The coordinator moves by a preferred leader election. Not compared with Kafka: a single
reference broker never moves a coordinator."""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka import TopicPartition as CTopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaAdminClient
from kafka import TopicPartition as KTopicPartition

from pykafkad.testing import run_cluster
from tests.integration.clients import WAIT_S
from tests.kraft.test_broker_replication import (
    node_bootstrap,
    offset_fetch,
    partition_state,
    wait_for,
)
from wire.errors import ErrorCode

#: one __consumer_offsets partition (every group in it), replicated on all three brokers
CONFIG = {"offsets.topic.num.partitions": "1", "transaction.state.log.num.partitions": "1",
          "broker.heartbeat.interval.ms": "500"}
PARTITIONS = 100
#: commits of every partition: PARTITIONS * COMMITS offset records to load
COMMITS = 300


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with run_cluster(3, config=CONFIG, data_dir=tmp_path_factory.mktemp("coordinators")) as c:
        yield c


def next_leader(cluster, topic: str) -> tuple[int, list[int]]:
    """Once ``topic``-0 is fully replicated: the replica ``move_leadership`` hands it to and
    the replica order that makes it preferred."""
    leader, replicas, isr = wait_for(
        lambda: (lambda s: s if s and len(s[2]) == 3 else None)(
            partition_state(cluster.bootstrap_servers, topic)), f"{topic}-0 fully replicated")
    successor = next(r for r in replicas if r != leader)
    return successor, [successor] + [r for r in replicas if r != successor]


def move_leadership(cluster, topic: str) -> int:
    """Makes another replica of ``topic``-0 its preferred one (same replicas, new order) and
    runs the preferred leader election; the new leader."""
    successor, order = next_leader(cluster, topic)
    tp = KTopicPartition(topic, 0)
    tool = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    try:
        assert tool.alter_partition_reassignments({tp: order}) == {tp: None}
        wait_for(lambda: (partition_state(cluster.bootstrap_servers, topic) or (0, []))[1]
                 == order, "the new replica order")
        tool.elect_leaders(0, {topic: [0]})
    finally:
        tool.close()
    return successor


def test_a_new_coordinator_answers_load_in_progress_until_its_groups_are_loaded(cluster):
    topic, group = f"cl-{uuid.uuid4().hex[:8]}", f"g-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(WAIT_S)
    c = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": group,
                  "enable.auto.commit": False})
    try:
        for n in range(COMMITS):
            c.commit(offsets=[CTopicPartition(topic, p, n + 1) for p in range(PARTITIONS)],
                     asynchronous=False)
    finally:
        c.close()
    # a probe asks the successor itself, without pause, from before the move, so it is there
    # while the successor loads (about 0.4 s for these 30000 records on a CI machine)
    successor, _ = next_leader(cluster, "__consumer_offsets")
    at = node_bootstrap(cluster, successor)
    codes: list[int] = []
    moved = threading.Event()

    def probe() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            code, _ = offset_fetch(at, group, topic, 1)
            if not codes or codes[-1] != code:
                codes.append(code)
            if code == ErrorCode.NONE and moved.is_set():
                return

    prober = threading.Thread(target=probe)
    prober.start()
    try:
        assert move_leadership(cluster, "__consumer_offsets") == successor
    finally:
        moved.set()
        prober.join()
    assert codes == [ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
                     ErrorCode.NONE], codes
    # a stock client finds the new coordinator and reads every committed offset
    reader = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    try:
        offsets = reader.list_group_offsets({group: None})[group]
    finally:
        reader.close()
    assert offsets == {KTopicPartition(topic, p): offsets[KTopicPartition(topic, p)]
                       for p in range(PARTITIONS)}
    assert {o.offset for o in offsets.values()} == {COMMITS}
    assert partition_state(cluster.bootstrap_servers, "__consumer_offsets")[0] == successor


def test_a_new_transaction_coordinator_loads_the_transactional_ids(cluster):
    """The __transaction_state partition is read off the request loop too; once loaded, the
    new coordinator knows the id: a new producer's InitProducerId fences the old one."""
    topic, txn_id = f"tx-{uuid.uuid4().hex[:8]}", f"tid-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    admin.create_topics([NewTopic(topic, 1, 3)])[topic].result(WAIT_S)
    conf = {"bootstrap.servers": cluster.bootstrap_servers, "transactional.id": txn_id}
    old = Producer(conf)
    old.init_transactions(WAIT_S)
    old.begin_transaction()
    old.produce(topic, b"first")
    old.commit_transaction(WAIT_S)
    move_leadership(cluster, "__transaction_state")
    new = Producer(conf)
    new.init_transactions(WAIT_S)  # (retried while the new coordinator loads)
    new.begin_transaction()
    new.produce(topic, b"second")
    new.commit_transaction(WAIT_S)
    old.begin_transaction()
    old.produce(topic, b"zombie")
    with pytest.raises(KafkaException) as raised:
        old.commit_transaction(WAIT_S)
    assert raised.value.args[0].code() == KafkaError._FENCED
