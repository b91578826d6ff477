"""Clean and unclean elections when every in-sync replica of a partition is gone: the
partition stays offline (Metadata answers LEADER_NOT_AVAILABLE, produces time out) while only
an out-of-sync replica is back; once the topic sets unclean.leader.election.enable the
controller's periodic unclean election (unclean.leader.election.interval.ms, as Kafka's
QuorumController schedules it) makes that replica leader in a new epoch, losing what only the
dead leader had, as Kafka does; and the old leader, back, truncates its log to the new
leader's (OffsetForLeaderEpoch) until the two replicas are byte for byte the same."""

from __future__ import annotations

from compat.failover import CLUSTER_CONFIG, PykafkadTarget
from pykafkad.testing import run_cluster
from tests.failover.outage import offline_then_unclean
from wire.errors import ErrorCode

#: three brokers and a dedicated controller: two brokers may be down while the quorum lives
CONFIG = {**CLUSTER_CONFIG, "unclean.leader.election.interval.ms": "100"}


def test_offline_partition_then_unclean_election_then_truncation(tmp_path):
    with run_cluster(3, 1, config=CONFIG, data_dir=tmp_path / "cluster") as cluster:
        seen = offline_then_unclean(PykafkadTarget(cluster))
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
    assert seen["values_at_end"] == [b"a%d" % i for i in range(5)] + [b"d%d" % i for i in range(3)]
    assert seen["replicas_identical"]
