"""One KRaft quorum of pykafkad and Apache Kafka 4.4 controllers (issue 14.3), serving a Kafka
broker: a pykafkad leader with a Kafka follower that copies its metadata log byte for byte, a
Kafka leader elected when the pykafkad leader dies (the pykafkad voter restarts as its
follower), and a pykafkad leader again when the Kafka one dies; topics are created through the
broker under each leader and keep serving clients."""

from __future__ import annotations

import time

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from compat.mixed_cluster import run_mixed_quorum
from compat.wire_client import WireClient
from tests.integration.clients import WAIT_S, confluent_consume, confluent_produce, needs_java
from wire.messages.describe_quorum_request import DescribeQuorumRequest, PartitionData, TopicData

pytestmark = needs_java

KAFKA_VOTER = 3
#: the Kafka voter notices a dead leader first, so it is the one elected then
CONFIG = {1: {"controller.quorum.election.timeout.ms": "4000"},
          2: {"controller.quorum.election.timeout.ms": "4000"},
          KAFKA_VOTER: {"controller.quorum.election.timeout.ms": "500"}}


def quorum_leader(bootstrap: str) -> int:
    """The leader DescribeQuorum names (through the broker), -1 while there is none."""
    try:
        with WireClient(bootstrap, timeout=5) as c:
            r = c.request(55, 2, DescribeQuorumRequest(topics=[TopicData(
                topic_name="__cluster_metadata", partitions=[PartitionData(0)])]))
    except OSError:
        return -1
    if r.error_code or not r.topics or r.topics[0].partitions[0].error_code:
        return -1
    return r.topics[0].partitions[0].leader_id


def wait_for(condition, what: str, timeout: float = 4 * WAIT_S):
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)  # polling other processes: nothing to wait on
    return value


def logs_agree(a, b) -> bool:
    """Two voters' metadata logs: one a non-empty prefix of the other, byte for byte."""
    x, y = a.metadata_log.read_bytes(), b.metadata_log.read_bytes()
    return bool(x) and bool(y) and (x.startswith(y) or y.startswith(x))


def create_and_use(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(WAIT_S)
    assert len(confluent_produce(bootstrap, topic, [{"value": topic.encode()}],
                                 acks="all")) == 1


@pytest.fixture(scope="module")
def quorum(tmp_path_factory):
    with run_mixed_quorum(("pykafkad", "pykafkad", "kafka"), first=(1, 2), config=CONFIG,
                          data_dir=tmp_path_factory.mktemp("mixedq")) as q:
        yield q


def test_leadership_passes_between_pykafkad_and_kafka_controllers(quorum):
    bootstrap = quorum.broker.bootstrap_servers
    kafka = quorum.voters[KAFKA_VOTER]
    first = wait_for(lambda: (leader := quorum_leader(bootstrap)) in (1, 2) and leader,
                     "a pykafkad leader")
    create_and_use(bootstrap, "under-pykafkad")
    wait_for(lambda: logs_agree(quorum.voters[first], kafka),
             "the Kafka follower copies the pykafkad leader's log")

    # the Kafka voter's UpdateRaftVoter (its listeners, sent once it follows) is served
    wait_for(lambda: f"updated in-memory voter {KAFKA_VOTER} (UpdateRaftVoter)"
             in quorum.voters[first].log_path.read_text(errors="replace"),
             "the pykafkad leader takes the Kafka voter's UpdateRaftVoter")
    assert "failed due to unsupported version error" not in kafka.log_path.read_text(
        errors="replace")

    quorum.voters[first].kill()
    assert wait_for(lambda: (leader := quorum_leader(bootstrap)) not in (-1, first) and leader,
                    "a new leader") == KAFKA_VOTER
    quorum.voters[first].start()  # a pykafkad follower of the Kafka leader
    create_and_use(bootstrap, "under-kafka")
    wait_for(lambda: logs_agree(kafka, quorum.voters[first]),
             "the restarted pykafkad voter copies the Kafka leader's log")

    kafka.kill()
    wait_for(lambda: quorum_leader(bootstrap) in (1, 2), "a pykafkad leader again")
    create_and_use(bootstrap, "under-pykafkad-again")
    for topic in ("under-pykafkad", "under-kafka", "under-pykafkad-again"):
        assert [m.value() for m in confluent_consume(bootstrap, topic, 1)] == [topic.encode()]
