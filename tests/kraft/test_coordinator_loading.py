"""COORDINATOR_LOAD_IN_PROGRESS on a pykafkad cluster (run_cluster, stock clients): a broker
that becomes leader of a __consumer_offsets partition reads it in a worker thread, and until
its groups are replayed their requests (OffsetFetch here, as kafka-python's admin sends it)
answer COORDINATOR_LOAD_IN_PROGRESS, which clients retry, then the committed offsets.

The coordinator moves by a preferred leader election. Not compared with Kafka: a single
reference broker never moves a coordinator."""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka import TopicPartition as CTopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaAdminClient
from kafka import TopicPartition as KTopicPartition
from kafka.errors import KafkaError as KError

from pykafkad.testing import run_cluster
from tests.integration.clients import WAIT_S
from tests.kraft.test_broker_replication import partition_state, wait_for

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


def move_leadership(cluster, topic: str) -> int:
    """Makes another replica of ``topic``-0 its preferred one (same replicas, new order) and
    runs the preferred leader election; the new leader."""
    leader, replicas, isr = wait_for(
        lambda: (lambda s: s if s and len(s[2]) == 3 else None)(
            partition_state(cluster.bootstrap_servers, topic)), f"{topic}-0 fully replicated")
    successor = next(r for r in replicas if r != leader)
    order = [successor] + [r for r in replicas if r != successor]
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
    successor = move_leadership(cluster, "__consumer_offsets")
    seen: list[str] = []
    probe = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                offsets = probe.list_group_offsets({group: None})[group]
                break
            except KError as e:
                if not seen or seen[-1] != type(e).__name__:
                    seen.append(type(e).__name__)
        else:
            pytest.fail(f"no offsets within 60 s; errors seen: {seen}")
    finally:
        probe.close()
    assert "CoordinatorLoadInProgressError" in seen, seen
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
