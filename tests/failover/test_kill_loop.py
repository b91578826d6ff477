"""The proof of issue 11: a three-node pykafkad cluster loses the leader of its busiest
partition, then its active controller (SIGKILL, restarted before the next kill), under an
idempotent acks=all producer and a committing consumer group; every acknowledged record is
then in the log exactly once and in order, the group's committed offsets are kept, and every
replica's log files are byte for byte the same.  The scenario is compat/failover.py;
scripts/chaos.py runs it for many rounds, ``python -m compat --failover`` next to Kafka."""

from __future__ import annotations

from compat.failover import CLUSTER_CONFIG, PykafkadTarget, run_failover
from pykafkad.testing import run_cluster


def test_kill_loop_loses_and_duplicates_nothing(tmp_path):
    with run_cluster(3, config=CLUSTER_CONFIG, data_dir=tmp_path / "cluster") as cluster:
        result = run_failover(PykafkadTarget(cluster), "pykafkad", rounds=4, rate=1000,
                              log=print)
    print(result.summary())
    assert [r.role for r in result.rounds] == ["leader", "controller"] * 2
    assert all(r.election_s is not None for r in result.rounds)
    assert all(r.controller_s is not None for r in result.rounds if r.role == "controller")
    assert all(r.create_topics_ok for r in result.rounds if r.role == "controller")
    # auto leader rebalance: the restarted node takes its preferred leaderships back
    assert all(r.preferred_back_s is not None for r in result.rounds)
    assert result.acked > 0
    assert (result.lost, result.duplicated, result.misplaced, result.out_of_order) == (0, 0, 0, 0)
    assert result.not_consumed == 0
    assert result.committed_kept
    assert result.replicas_identical
    assert not result.problems, result.problems
