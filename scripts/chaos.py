"""The kill loop of issue 11 at a bigger scale than its test (tests/failover/test_kill_loop.py):
a three-node cluster, a topic of replication factor 3 and min.insync.replicas=2, an idempotent
acks=all producer and a committing consumer group; SIGKILL the leader of the busiest partition,
restart it, then the active controller, and so on for --rounds kills.  Then every acknowledged
record must be in the log exactly once and in order, the group's committed offsets kept and
every replica's log byte for byte the same (compat/failover.py holds the scenario).

Prints the time to elect a new leader, the records per second acknowledged while a node was
down, and the records lost and duplicated; exit status 1 when anything was lost, duplicated,
reordered or left different.

    python scripts/chaos.py --rounds 20 --rate 3000
    python scripts/chaos.py --kafka --rounds 6      # the same on an Apache Kafka 4.4 cluster
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compat.failover import (  # noqa: E402
    CLUSTER_CONFIG,
    KafkaTarget,
    PykafkadTarget,
    run_failover,
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="scripts/chaos.py", description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=20, help="kills, alternately leader and "
                                                           "controller (default 20)")
    ap.add_argument("--rate", type=float, default=2000, help="records produced per second")
    ap.add_argument("--partitions", type=int, default=6)
    ap.add_argument("--kafka", action="store_true", help="run on an Apache Kafka cluster")
    ap.add_argument("--data-dir", type=Path, help="keep the cluster's files here")
    args = ap.parse_args(argv)

    def log(line: str) -> None:
        print(line, flush=True)

    with tempfile.TemporaryDirectory(prefix="pykafkad-chaos-") as tmp:
        data_dir = args.data_dir or Path(tmp)
        if args.kafka:
            from compat.kafka_broker import DEFAULT_VERSION, run_kafka_cluster

            with run_kafka_cluster(3, config=CLUSTER_CONFIG, data_dir=data_dir) as cluster:
                result = run_failover(KafkaTarget(cluster), f"Apache Kafka {DEFAULT_VERSION}",
                                      rounds=args.rounds, partitions=args.partitions,
                                      rate=args.rate, log=log)
        else:
            from pykafkad.testing import run_cluster

            with run_cluster(3, config=CLUSTER_CONFIG, data_dir=data_dir) as cluster:
                result = run_failover(PykafkadTarget(cluster), "pykafkad", rounds=args.rounds,
                                      partitions=args.partitions, rate=args.rate, log=log)
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
