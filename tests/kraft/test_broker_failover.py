"""A partition leader dies (SIGKILL) in a cluster of three KRaft node processes: its session
ends (broker.session.timeout.ms), the controller fences it and elects a leader from the ISR,
the brokers apply the new leadership (the new leader stops fetching, the other follower
fetches from it), and clients follow Metadata to the new leader: acks=all produces go on and a
consumer reads everything, the survivors' logs byte for byte the same."""

from __future__ import annotations

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from pykafkad.testing import run_cluster
from tests.integration.clients import WAIT_S, confluent_consume, confluent_produce
from tests.kraft.test_broker_replication import (
    log_files,
    node_bootstrap,
    partition_state,
    wait_for,
)

#: a short session, so that the dead leader is fenced soon (Kafka's default: 9000 ms)
CONFIG = {"broker.session.timeout.ms": "3000", "broker.heartbeat.interval.ms": "500"}


@pytest.fixture
def cluster(tmp_path):
    with run_cluster(3, config=CONFIG, data_dir=tmp_path / "failover") as c:
        yield c


def test_clients_follow_the_new_leader_after_the_leader_dies(cluster):
    topic = "failover"
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    admin.create_topics([NewTopic(topic, 1, 3)])[topic].result(WAIT_S)
    for node_id in cluster.nodes:
        wait_for(lambda n=node_id: partition_state(node_bootstrap(cluster, n), topic),
                 f"{topic} on broker {node_id}")
    confluent_produce(cluster.bootstrap_servers, topic,
                      [{"value": b"before-%d" % i} for i in range(50)], acks="all")
    leader, replicas, isr = partition_state(cluster.bootstrap_servers, topic)
    assert isr == [1, 2, 3]
    cluster.kill(leader)
    survivors = [n for n in cluster.nodes if n != leader]
    for node_id in survivors:  # both survivors' Metadata name the same new leader
        wait_for(lambda n=node_id: (lambda s: s is not None and s[0] in survivors
                                    and s[2] == survivors)(
            partition_state(node_bootstrap(cluster, n), topic)), f"a new leader on {node_id}")
    bootstrap = ",".join(node_bootstrap(cluster, n) for n in survivors)
    confluent_produce(bootstrap, topic, [{"value": b"after-%d" % i} for i in range(50)],
                      acks="all")
    got = confluent_consume(bootstrap, topic, 100)
    assert [m.value() for m in got] == ([b"before-%d" % i for i in range(50)]
                                        + [b"after-%d" % i for i in range(50)])
    wait_for(lambda: (lambda f: f[0] and f[0] == f[1])(
        [log_files(cluster, n, topic) for n in survivors]), "identical surviving replicas")
