"""AlterReplicaLogDirs on a 3-node cluster, with kafka-python's admin (what its own
test_alter_replica_log_dirs calls): to each broker's own log dir, a replication-factor-1
partition is NONE on the broker holding it, REPLICA_NOT_AVAILABLE on the others (the topic
exists, the replica is elsewhere), and an unknown topic UNKNOWN_TOPIC_OR_PARTITION everywhere;
3-node Apache Kafka 4.4.0 answers the same (compat/test_client_suites.py)."""

from __future__ import annotations

import time
import uuid

from kafka import KafkaAdminClient
from kafka.admin import NewTopic
from kafka.structs import TopicPartitionReplica

from compat.client_suites import CLUSTER_CONFIG
from pykafkad.testing import run_cluster
from tests.integration.clients import WAIT_S


def alter_log_dirs_answers(bootstrap: str) -> dict[str, set[str]]:
    """Error class names by kind of broker: holding the replica, not holding it, and for an
    unknown topic."""
    with KafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        topic = f"suites-arld-{uuid.uuid4().hex[:8]}"
        admin.create_topics([NewTopic(topic, 1, 1)], wait_for_metadata=True)
        deadline = time.monotonic() + WAIT_S
        while True:  # the leader is known to every broker shortly after creation
            leader = admin.describe_topics([topic])[0]["partitions"][0]["leader_id"]
            if leader >= 0 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        dirs = {r["broker"]: r["log_dirs"][0]["log_dir"] for r in admin.describe_log_dirs()}
        answers: dict[str, set[str]] = {"holding": set(), "other": set(), "unknown": set()}
        for broker, log_dir in dirs.items():
            [code] = admin.alter_replica_log_dirs(
                {TopicPartitionReplica(topic, 0, broker): log_dir}).values()
            answers["holding" if broker == leader else "other"].add(code.__name__)
            [code] = admin.alter_replica_log_dirs(
                {TopicPartitionReplica(f"{topic}-none", 0, broker): log_dir}).values()
            answers["unknown"].add(code.__name__)
        return answers


EXPECTED = {"holding": {"NoError"}, "other": {"ReplicaNotAvailableError"},
            "unknown": {"UnknownTopicOrPartitionError"}}


def test_alter_replica_log_dirs_on_a_broker_without_the_replica(tmp_path):
    with run_cluster(3, config=CLUSTER_CONFIG, data_dir=tmp_path) as cluster:
        assert alter_log_dirs_answers(cluster.bootstrap_servers) == EXPECTED
