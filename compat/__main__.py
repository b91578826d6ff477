"""Runs the compatibility suite and writes the matrix.

    python -m compat                              # a fresh pykafkad, started here
    python -m compat --kafka                      # the official Apache Kafka broker, started here
    python -m compat --bootstrap-server HOST:PORT # any running broker or cluster
    python -m compat --kafka-cluster              # a three-node Apache Kafka cluster, started here
    python -m compat --cluster                    # a three-node pykafkad cluster, started here
    python -m compat --clients java,kcat --scenarios produce-consume,headers
    python -m compat --kafka-cluster --scenarios cluster   # only the cluster scenarios
    python -m compat --mixed-cluster              # Kafka controller, Kafka + pykafkad brokers
    python -m compat --mixed-cluster --mixed-controller pykafkad --mixed-brokers kafka,pykafkad,pykafkad
    python -m compat --failover --rounds 4        # the kill loop, pykafkad, Kafka, mixed clusters
    python -m compat --secured                    # pykafkad with SASL_SSL, SCRAM and ACLs
    python -m compat --kafka --secured            # Apache Kafka configured the same way

The cluster scenarios need three brokers: against a single broker they are n/a.

The matrix is printed and written as Markdown and HTML (compat/reports/latest.* for pykafkad,
compat/reports/kafka-<version>.* for Apache Kafka, kafka-cluster-<version>.* for its cluster,
cluster.* for pykafkad's cluster, mixed-cluster.* for the mixed one, compat/reports/<name>.*
otherwise).  ``--mixed-cluster`` (compat/mixed_targets.py) starts a controller-only node and
three brokers of the given kinds, Apache Kafka and pykafkad side by side, default a Kafka
controller with one Kafka and two pykafkad brokers.
``--failover`` runs compat/failover.py's kill loop on a three-node pykafkad cluster, a
three-node Apache Kafka cluster and the mixed cluster (its rounds kill a Kafka and a pykafkad
broker in turn), one after the other, and writes them side by side
(compat/reports/failover.md).
The exit status is 1 when any scenario failed.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
from pathlib import Path

from compat import report
from compat.node_control import KafkaNodes, PykafkadNodes
from compat.runner import run_matrix
from compat.scenarios import CLIENTS, CLUSTER_SCENARIOS, CLUSTER_SIZE, SCENARIOS

REPORTS = Path(__file__).resolve().parent / "reports"
#: both brokers run with the settings of a test broker: no 3 s wait for more group members
TEST_BROKER_CONFIG = {"group.initial.rebalance.delay.ms": "0"}


class ClusterUnavailable(RuntimeError):
    """This pykafkad has no multi-node cluster to start yet."""


@contextlib.contextmanager
def pykafkad_cluster(nodes: int = CLUSTER_SIZE):
    """A pykafkad cluster from pykafkad.testing.run_cluster, imported only when asked for."""
    try:
        from pykafkad.testing import run_cluster
    except ImportError:
        raise ClusterUnavailable(
            "this pykafkad has no pykafkad.testing.run_cluster yet: the multi-node pykafkad "
            "(issue 10) is not merged; use --kafka-cluster or --bootstrap-server") from None
    with run_cluster(nodes, config=TEST_BROKER_CONFIG) as cluster:
        yield cluster


def parse_scenarios(text: str | None) -> list[str] | None:
    """A comma-separated list; the word ``cluster`` stands for every cluster scenario."""
    if not text:
        return None
    out: list[str] = []
    for name in text.split(","):
        out += [s.name for s in CLUSTER_SCENARIOS] if name == "cluster" else [name]
    return out


@contextlib.contextmanager
def pykafkad_broker():
    from pykafkad.testing import run_broker

    with tempfile.TemporaryDirectory(prefix="pykafkad-compat-") as tmp:
        with run_broker(Path(tmp) / "data", config=TEST_BROKER_CONFIG) as b:
            yield b.bootstrap_servers


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m compat", description=__doc__.split("\n")[0])
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--bootstrap-server", help="run against this broker instead")
    where.add_argument("--kafka", action="store_true",
                       help="start the official Apache Kafka broker (from Maven Central)")
    where.add_argument("--kafka-cluster", action="store_true",
                       help=f"start a {CLUSTER_SIZE}-node Apache Kafka cluster (KRaft, one JVM "
                            "per node)")
    where.add_argument("--cluster", action="store_true",
                       help=f"start a {CLUSTER_SIZE}-node pykafkad cluster "
                            "(pykafkad.testing.run_cluster)")
    where.add_argument("--mixed-cluster", action="store_true",
                       help=f"start a mixed cluster: a controller-only node and {CLUSTER_SIZE} "
                            "brokers, Apache Kafka and pykafkad (compat/mixed_targets.py)")
    where.add_argument("--failover", action="store_true",
                       help="the kill loop on a pykafkad and an Apache Kafka cluster, side by "
                            "side (compat/reports/failover.md)")
    ap.add_argument("--secured", action="store_true",
                    help="the clients connect over SASL_SSL with SCRAM-SHA-512 to a broker with "
                         "the StandardAuthorizer (compat/security.py), and the authorization "
                         "scenario runs; with the default pykafkad or --kafka")
    ap.add_argument("--mixed-brokers", default="kafka,pykafkad,pykafkad",
                    help="the kinds of the mixed cluster's brokers (kafka or pykafkad)")
    ap.add_argument("--mixed-controller", default="kafka", choices=("kafka", "pykafkad"),
                    help="the kind of the mixed cluster's controller-only node")
    ap.add_argument("--rounds", type=int, default=4, help="kills per cluster for --failover")
    ap.add_argument("--kafka-version", default=None,
                    help="Apache Kafka version for --kafka and --kafka-cluster")
    ap.add_argument("--target-name", help="the broker's name in the report")
    ap.add_argument("--clients", help=f"comma-separated subset of {','.join(CLIENTS)}")
    ap.add_argument("--scenarios", help="comma-separated subset of the scenarios ('cluster': "
                                        "the cluster scenarios)")
    ap.add_argument("--report-dir", type=Path, default=REPORTS)
    ap.add_argument("--report-name", help="file name stem of the reports")
    ap.add_argument("--list", action="store_true", help="list the scenarios and exit")
    args = ap.parse_args(argv)
    if args.list:
        for s in SCENARIOS:
            print(f"{s.name:34} {s.summary}")
        return 0
    if args.failover:
        return failover(args)
    clients = args.clients.split(",") if args.clients else None
    scenarios = parse_scenarios(args.scenarios)
    nodes = None  # set for the clusters started here: scenarios that stop a node need it
    secured = None  # a compat.security.SecuredTarget with --secured

    if args.secured and (args.kafka_cluster or args.cluster or args.bootstrap_server
                         or args.mixed_cluster):
        print("python -m compat: --secured works with the default pykafkad or --kafka",
              file=sys.stderr)
        return 2
    if args.secured:
        from compat import security

        if args.kafka:
            from compat.kafka_broker import DEFAULT_VERSION

            version = args.kafka_version or DEFAULT_VERSION
            target = args.target_name or f"Apache Kafka {version}, SASL_SSL"
            stem = args.report_name or f"kafka-{version}-secured"
            start = security.secured_kafka(version, config=TEST_BROKER_CONFIG)
        else:
            from pykafkad import __version__

            target = args.target_name or f"pykafkad {__version__}, SASL_SSL"
            stem = args.report_name or "secured"
            start = security.secured_pykafkad(config=TEST_BROKER_CONFIG)
        broker = contextlib.ExitStack()
        secured = broker.enter_context(start)
        bootstrap = secured.bootstrap
    elif args.kafka:
        from compat.kafka_broker import DEFAULT_VERSION, run_kafka

        version = args.kafka_version or DEFAULT_VERSION
        target = args.target_name or f"Apache Kafka {version}"
        stem = args.report_name or f"kafka-{version}"
        broker = contextlib.ExitStack()
        kafka = broker.enter_context(run_kafka(version, config=TEST_BROKER_CONFIG))
        bootstrap = kafka.bootstrap_servers
    elif args.kafka_cluster:
        from compat.kafka_broker import DEFAULT_VERSION, run_kafka_cluster

        version = args.kafka_version or DEFAULT_VERSION
        target = args.target_name or f"Apache Kafka {version}, {CLUSTER_SIZE} nodes"
        stem = args.report_name or f"kafka-cluster-{version}"
        broker = contextlib.ExitStack()
        kafka = broker.enter_context(
            run_kafka_cluster(CLUSTER_SIZE, version, config=TEST_BROKER_CONFIG))
        bootstrap = kafka.bootstrap_servers
        nodes = KafkaNodes(kafka)
    elif args.mixed_cluster:
        from compat.mixed_targets import MixedNodes, run_mixed_cluster

        broker = contextlib.ExitStack()
        mixed = broker.enter_context(run_mixed_cluster(
            tuple(args.mixed_brokers.split(",")), args.mixed_controller,
            config=TEST_BROKER_CONFIG))
        target = args.target_name or f"mixed cluster ({mixed.describe()})"
        stem = args.report_name or "mixed-cluster"
        bootstrap = mixed.bootstrap_servers
        nodes = MixedNodes(mixed)
    elif args.cluster:
        from pykafkad import __version__

        target = args.target_name or f"pykafkad {__version__}, {CLUSTER_SIZE} nodes"
        stem = args.report_name or "cluster"
        broker = contextlib.ExitStack()
        try:
            handle = broker.enter_context(pykafkad_cluster())
        except ClusterUnavailable as e:
            print(f"python -m compat --cluster: {e}", file=sys.stderr)
            return 2
        bootstrap = handle.bootstrap_servers
        nodes = PykafkadNodes(handle)
    elif args.bootstrap_server:
        target = args.target_name or args.bootstrap_server
        stem = args.report_name or "external"
        broker = contextlib.ExitStack()
        bootstrap = args.bootstrap_server
    else:
        from pykafkad import __version__

        target = args.target_name or f"pykafkad {__version__}"
        stem = args.report_name or "latest"
        broker = contextlib.ExitStack()
        bootstrap = broker.enter_context(pykafkad_broker())
    with broker:
        matrix = run_matrix(bootstrap, target=target, scenarios=scenarios, clients=clients,
                            log=lambda line: print(line, file=sys.stderr, flush=True),
                            nodes=nodes, secured=secured)
    print(report.text(matrix))
    md, page = report.write(matrix, args.report_dir, stem)
    print(f"\nreports: {md} {page}")
    return 1 if matrix.failures() else 0


def failover(args) -> int:
    """The kill loop on each kind of cluster, one at a time (they share the machine)."""
    from compat.failover import CLUSTER_CONFIG, KafkaTarget, PykafkadTarget, run_failover
    from compat.kafka_broker import DEFAULT_VERSION, run_kafka_cluster
    from compat.mixed_targets import MixedTarget, run_mixed_cluster
    from pykafkad import __version__
    from pykafkad.testing import run_cluster

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    version = args.kafka_version or DEFAULT_VERSION
    results = []
    with run_cluster(CLUSTER_SIZE, config=CLUSTER_CONFIG) as handle:
        results.append(run_failover(PykafkadTarget(handle), f"pykafkad {__version__}",
                                    rounds=args.rounds, log=log))
    with run_kafka_cluster(CLUSTER_SIZE, version, config=CLUSTER_CONFIG) as kafka:
        results.append(run_failover(KafkaTarget(kafka), f"Apache Kafka {version}",
                                    rounds=args.rounds, log=log))
    kinds = tuple(args.mixed_brokers.split(","))
    with run_mixed_cluster(kinds, args.mixed_controller, config=CLUSTER_CONFIG) as mixed:
        results.append(run_failover(
            MixedTarget(mixed), f"mixed: {args.mixed_controller} controller, brokers "
            f"{'+'.join(kinds)}", rounds=args.rounds, log=log,
            roles=[k for k in ("kafka", "pykafkad") if k in kinds]))
    print(report.failover_markdown(results))
    print(f"report: {report.write_failover(results, args.report_dir)}")
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
