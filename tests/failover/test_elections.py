"""Clean and unclean elections when every in-sync replica of a partition is gone: the
partition stays offline (Metadata answers LEADER_NOT_AVAILABLE, produces time out) while only
an out-of-sync replica is back; once the topic sets unclean.leader.election.enable the
controller's periodic unclean election (unclean.leader.election.interval.ms, as Kafka's
QuorumController schedules it) makes that replica leader in a new epoch, losing what only the
dead leader had, as Kafka does; and the old leader, back, truncates its log to the new
leader's (OffsetForLeaderEpoch) until the two replicas are byte for byte the same.  The same
scenario runs on Apache Kafka 4.4 (three brokers and a dedicated controller too), which
answers alike."""

from __future__ import annotations

from confluent_kafka import KafkaError

from compat.failover import CLUSTER_CONFIG, KafkaTarget, PykafkadTarget
from compat.kafka_broker import run_kafka_cluster
from pykafkad.testing import run_cluster
from tests.failover.outage import TRUNCATION_RESETS, offline_then_unclean
from tests.integration.clients import needs_java
from wire.errors import ErrorCode

#: three brokers and a dedicated controller: two brokers may be down while the quorum lives
CONFIG = {**CLUSTER_CONFIG, "unclean.leader.election.interval.ms": "100"}


def test_offline_partition_then_unclean_election_then_truncation(tmp_path):
    with run_cluster(3, 1, config=CONFIG, data_dir=tmp_path / "cluster") as cluster:
        seen = offline_then_unclean(PykafkadTarget(cluster))
    check_unclean(seen)


@needs_java
def test_apache_kafka_offline_partition_then_unclean_election_alike(tmp_path):
    with run_kafka_cluster(3, config=CONFIG, data_dir=tmp_path / "kafka",
                           controllers=1) as kafka:
        seen = offline_then_unclean(KafkaTarget(kafka))
    check_unclean(seen)


def check_unclean(seen: dict) -> None:
    """What both pykafkad and Apache Kafka answer in offline_then_unclean."""
    assert seen["first"] == seen["alone"] == [""] * 5
    error, leader, _, isr = seen["offline"]
    assert (error, leader, isr) == (ErrorCode.LEADER_NOT_AVAILABLE, -1, [])
    assert seen["offline_produce"] == ["_MSG_TIMED_OUT"]
    # the out-of-sync replica back: still offline (a clean election needs an ISR member)
    assert seen["after_2_returned"][:2] == (ErrorCode.LEADER_NOT_AVAILABLE, -1)
    assert (seen["unclean"][0], seen["unclean"][1], seen["unclean"][3]) == (0, 2, [2])
    assert seen["unclean_epoch_bumped"]
    # what only broker 1 had (b0..b4) is gone, as with Kafka's unclean election
    assert seen["values_on_2"] == [b"a%d" % i for i in range(5)]
    assert seen["later"] == [""] * 3
    # KIP-320: consumers that had read b0..b4 from broker 1 detect the truncation
    assert seen["read_before"] == {r: [b"a%d" % i for i in range(5)] + [b"b%d" % i for i in
                                                                        range(5)]
                                   for r in TRUNCATION_RESETS}
    assert seen["read_after_truncation"] == {
        # auto.offset.reset=error: librdkafka reports the truncation it detected
        # (RD_KAFKA_RESP_ERR__LOG_TRUNCATION) as _AUTO_OFFSET_RESET, its reason in the message
        "error": [(KafkaError._AUTO_OFFSET_RESET, True)],
        # otherwise librdkafka seeks to the new leader's end of the old epoch and reads on
        "earliest": [(5 + i, b"d%d" % i) for i in range(3)]}
    assert seen["values_at_end"] == [b"a%d" % i for i in range(5)] + [b"d%d" % i for i in range(3)]
    assert seen["replicas_identical"]
