"""Runs the stock clients' own integration suites against a 3-node ``pykafkad cluster``.

Issue 10 asks that kafka-python's cluster admin tests pass and that librdkafka's test suite runs
in its default three-broker, replication-factor-3 scenario.  Neither project ships a way to
point its suite at a broker we start, so this script fetches the suite, adds the few adapter
files the suite needs to reach an external cluster (never touching their test bodies), starts
the cluster and runs the tests.

kafka-python: compat/client_suites.py (the sdist of the installed version, from PyPI).
librdkafka: compat/client_suites_librdkafka.py (a librdkafka source tree whose tests/test-runner
is built: ``--librdkafka-src``).

    python scripts/client_suites.py kafka-python            # the six cluster admin tests
    python scripts/client_suites.py kafka-python --all      # all of test_admin_integration.py
    python scripts/client_suites.py kafka-python --kafka    # the same against 3 Apache Kafka JVMs
    python scripts/client_suites.py kafka-python -- -x -v   # after --: extra pytest arguments
    python scripts/client_suites.py librdkafka --librdkafka-src DIR [--tests 0001,0002]

Exit status: pytest's / test-runner's.
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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("suite", choices=["kafka-python", "librdkafka"])
    p.add_argument("--kafka", action="store_true",
                   help="run against a 3-node Apache Kafka 4.4.0 cluster instead")
    p.add_argument("--bootstrap", help="run against this already running cluster")
    p.add_argument("--all", action="store_true",
                   help="kafka-python: all of test_admin_integration.py, not just the six")
    p.add_argument("--librdkafka-src", type=Path, help="librdkafka source tree")
    p.add_argument("--tests", help="librdkafka: comma-separated test numbers (TESTS=)")
    p.add_argument("--log", type=Path, help="librdkafka: write test-runner's output here")
    argv = sys.argv[1:] if argv is None else argv
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    a = p.parse_args(argv[:len(argv) - len(extra) - (1 if "--" in argv else 0)])

    if a.bootstrap:
        cluster = contextlib.nullcontext(a.bootstrap)
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
