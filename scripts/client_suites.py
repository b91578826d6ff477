"""Runs the stock clients' own integration suites against a 3-node ``pykafkad cluster``.

Issue 10 asks that kafka-python's cluster admin tests pass and that librdkafka's test suite runs
in its default three-broker, replication-factor-3 scenario.  Neither project ships a way to
point its suite at a broker we start, so this script fetches the suite, adds the few adapter
files the suite needs to reach an external cluster (never touching their test bodies), starts
the cluster and runs the tests.

kafka-python: compat/client_suites.py (the sdist of the installed version, from PyPI).
librdkafka: compat/client_suites_librdkafka.py (a librdkafka source tree whose tests/test-runner
is built: ``--librdkafka-src``).
confluent-kafka (issues 12 and 13): compat/client_suites_confluent.py (confluent-kafka-python's
tests/integration from a git copy of its repository, ``CONFLUENT_KAFKA_PYTHON_SRC``), on one
node, as its CI runs it, with the StandardAuthorizer for the ACL step.
franz-go: compat/client_suites_franzgo.py (package pkg/kgo's tests from franz-go's module, fetched
through the Go module proxy), on one node: ``-run REGEX`` selects them (default: the ETL and
share-group tests).

    python scripts/client_suites.py kafka-python            # the six cluster admin tests
    python scripts/client_suites.py kafka-python --all      # all of test_admin_integration.py
    python scripts/client_suites.py kafka-python --kafka    # the same against 3 Apache Kafka JVMs
    python scripts/client_suites.py kafka-python -- -x -v   # after --: extra pytest arguments
    python scripts/client_suites.py librdkafka --librdkafka-src DIR [--tests 0001,0002]
    python scripts/client_suites.py confluent-kafka           # the three named tests
    python scripts/client_suites.py confluent-kafka --all [--group-protocol consumer] [--kafka]
    python scripts/client_suites.py franz-go [--kafka] [-run REGEX] [--records N] [--log FILE]

Exit status: pytest's / test-runner's / go test's.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from compat.client_suites import CLUSTER_CONFIG, KAFKA_PYTHON_CLUSTER_TESTS, run_kafka_python  # noqa: E402


@contextlib.contextmanager
def pykafkad_cluster(nodes: int = 3, config: dict[str, str] = CLUSTER_CONFIG) -> Iterator[str]:
    """A ``pykafkad cluster`` of ``nodes`` combined nodes; yields its bootstrap servers."""
    from pykafkad.testing import run_cluster

    t0 = time.monotonic()
    with run_cluster(nodes, config=config) as cluster:
        print(f"pykafkad cluster of {nodes} ready in {time.monotonic() - t0:.1f} s: "
              f"{cluster.bootstrap_servers}", flush=True)
        yield cluster.bootstrap_servers


@contextlib.contextmanager
def kafka_cluster(nodes: int = 3, config: dict[str, str] = CLUSTER_CONFIG) -> Iterator[str]:
    """The same cluster shape from Apache Kafka 4.4.0's jars (the reference)."""
    from compat.kafka_broker import run_kafka_cluster

    t0 = time.monotonic()
    with run_kafka_cluster(nodes, config=config) as cluster:
        print(f"Apache Kafka cluster of {nodes} ready in {time.monotonic() - t0:.1f} s: "
              f"{cluster.bootstrap_servers}", flush=True)
        yield cluster.bootstrap_servers


@contextlib.contextmanager
def single_node(kafka: bool, config: dict[str, str] | None = None) -> Iterator[str]:
    """One pykafkad node, or Apache Kafka 4.4.0, with ``config`` (by default
    confluent-kafka-python's broker settings)."""
    if config is None:
        from compat.client_suites_confluent import BROKER_CONFIG as config

    t0 = time.monotonic()
    if kafka:
        from compat.kafka_broker import run_kafka as start
    else:
        from pykafkad.testing import run_broker as start
    with start(config=config) as node:
        print(f"{'Apache Kafka' if kafka else 'pykafkad'} node ready in "
              f"{time.monotonic() - t0:.1f} s: {node.bootstrap_servers}", flush=True)
        yield node.bootstrap_servers


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("suite", choices=["kafka-python", "librdkafka", "confluent-kafka", "franz-go"])
    p.add_argument("--kafka", action="store_true",
                   help="run against Apache Kafka 4.4.0 instead (3 nodes; confluent-kafka: 1)")
    p.add_argument("--bootstrap", help="run against this already running cluster")
    p.add_argument("--all", action="store_true",
                   help="kafka-python: all of test_admin_integration.py, not just the six; "
                        "confluent-kafka: every module a plain node can serve")
    p.add_argument("--group-protocol", choices=["classic", "consumer"],
                   help="confluent-kafka --all: TEST_CONSUMER_GROUP_PROTOCOL (their KIP-848 runs)")
    p.add_argument("--librdkafka-src", type=Path, help="librdkafka source tree")
    p.add_argument("--tests", help="librdkafka: comma-separated test numbers (TESTS=)")
    p.add_argument("--log", type=Path,
                   help="librdkafka, franz-go: write test-runner's / go test's output here")
    p.add_argument("-run", "--run", dest="run",
                   help="franz-go: go test -run REGEX (default: the ETL and share-group tests)")
    p.add_argument("--records", type=int, default=20000,
                   help="franz-go: KGO_TEST_RECORDS, records each ETL test produces")
    argv = sys.argv[1:] if argv is None else argv
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    a = p.parse_args(argv[:len(argv) - len(extra) - (1 if "--" in argv else 0)])

    if a.bootstrap:
        cluster = contextlib.nullcontext(a.bootstrap)
    elif a.suite == "confluent-kafka":
        cluster = single_node(a.kafka)
    elif a.suite == "franz-go":
        from compat.client_suites_franzgo import BROKER_CONFIG as franz_config

        cluster = single_node(a.kafka, franz_config)
    else:
        config = CLUSTER_CONFIG
        if a.suite == "librdkafka":
            from compat.client_suites_librdkafka import LIBRDKAFKA_CLUSTER_CONFIG as config
        cluster = kafka_cluster(config=config) if a.kafka else pykafkad_cluster(config=config)
    t0 = time.monotonic()
    with cluster as bootstrap:
        if a.suite == "kafka-python":
            tests = None if a.all else list(KAFKA_PYTHON_CLUSTER_TESTS)
            rc, outcomes = run_kafka_python(bootstrap, tests, extra)
            for name, outcome in outcomes.items():
                print(f"  {outcome:8} {name}")
        elif a.suite == "confluent-kafka":
            from compat.client_suites_confluent import run_confluent, run_named

            if a.all or extra:
                gp = a.group_protocol if a.group_protocol != "classic" else None
                rc, outcomes = run_confluent(bootstrap, None, extra=extra,
                                             group_protocol=gp)
            else:
                outcomes = run_named(bootstrap, capture=False)
                rc = 0 if set(outcomes.values()) == {"passed"} else 1
            for name, outcome in sorted(outcomes.items()):
                print(f"  {outcome:8} {name}")
            counts = {s: list(outcomes.values()).count(s) for s in sorted(set(outcomes.values()))}
            print(f"confluent-kafka: {counts}")
        elif a.suite == "franz-go":
            from compat.client_suites_franzgo import NAMED_TESTS, run_franz_go, run_regex

            rc, outcomes = run_franz_go(bootstrap, a.run or run_regex(NAMED_TESTS),
                                        records=a.records, log_path=a.log)
            for name, outcome in sorted(outcomes.items()):
                print(f"  {outcome:5} {name}")
            counts = {s: list(outcomes.values()).count(s) for s in sorted(set(outcomes.values()))}
            print(f"franz-go: {counts}")
        else:
            from compat.client_suites_librdkafka import run_librdkafka

            rc, states = run_librdkafka(bootstrap, a.librdkafka_src, a.tests, log_path=a.log)
            for name, state in sorted(states.items()):
                print(f"  {state:11} {name}")
            counts = {s: list(states.values()).count(s) for s in sorted(set(states.values()))}
            print(f"librdkafka: {counts}")
    print(f"{a.suite}: exit {rc} in {time.monotonic() - t0:.1f} s", flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
