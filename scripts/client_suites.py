"""Runs the stock clients' own integration suites against a 3-node ``pykafkad cluster``.

Issue 10 asks that kafka-python's cluster admin tests pass and that librdkafka's test suite runs
in its default three-broker, replication-factor-3 scenario.  Neither project ships a way to
point its suite at a broker we start, so this script fetches the suite, adds the few adapter
files the suite needs to reach an external cluster (never touching their test bodies), starts
the cluster and runs the tests.

kafka-python: the sdist of the installed kafka-python version (from PyPI, with ``pip download``)
holds ``test/integration``.  Its fixtures use an already running broker when ``KAFKA_URI`` is
set; the sdist lacks ``test/service.py`` (``ExternalService``) and ``test/__init__.py``, which we
write.  ``KAFKA_VERSION`` is set to 4.4.0 so the suite takes its KRaft-era paths.

librdkafka: see ``librdkafka`` below (needs a librdkafka source tree; ``--librdkafka-src``).

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
import importlib.metadata
import os
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CACHE = ROOT / ".cache" / "client_suites"

#: the kafka-python tests issue 10 names: each needs several brokers or a KRaft quorum
KAFKA_PYTHON_CLUSTER_TESTS = (
    "test_describe_log_dirs",
    "test_alter_replica_log_dirs",
    "test_elect_leaders",
    "test_alter_partition_reassignments",
    "test_list_partition_reassignments",
    "test_describe_metadata_quorum",
)

#: the broker version the suites are told they talk to (their version gates)
KAFKA_VERSION = "4.4.0"

#: what a 3-node test cluster needs beyond the defaults: internal topics spread over all
#: nodes, as librdkafka's and kafka-python's own cluster setups configure Kafka
CLUSTER_CONFIG = {
    "default.replication.factor": "3",
    "min.insync.replicas": "2",
    "offsets.topic.replication.factor": "3",
    "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2",
}

# Written into the downloaded tree: the sdist imports ``test.service`` but does not ship it.
_SERVICE_ADAPTER = '''"""Added by pykafkad's scripts/client_suites.py: the sdist lacks test/service.py.
Only the external-broker path (KAFKA_URI) is used, so spawning is refused."""


class ExternalService:
    def __init__(self, host, port):
        self.host = host
        self.port = port

    def open(self):
        pass

    def close(self):
        pass

    def dump_logs(self):
        pass

    def wait_for(self, pattern, timeout=30):
        return True


class SpawnedService:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("client_suites runs against an external cluster (KAFKA_URI)")
'''

# Stops pytest's ini search at the suite's root (else it finds the project's pyproject.toml).
_PYTEST_INI = "[pytest]\naddopts = -p no:cacheprovider -p no:randomly -p no:hypothesispytest\n"


def kafka_python_suite(cache: Path = CACHE) -> Path:
    """The installed kafka-python's sdist tests, unpacked under ``cache`` (downloaded once)."""
    version = importlib.metadata.version("kafka-python")
    root = cache / f"kafka-python-{version}"
    marker = root / "test" / "integration" / "test_admin_integration.py"
    if not marker.exists():
        cache.mkdir(parents=True, exist_ok=True)
        sdist = cache / f"kafka_python-{version}.tar.gz"
        if not sdist.exists():
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                 f"kafka-python=={version}", "-d", str(cache)],
                check=True, stdout=subprocess.DEVNULL)
        prefix = f"kafka_python-{version}/test/"
        with tarfile.open(sdist) as tar:
            members = [m for m in tar.getmembers() if m.name.startswith(prefix) and m.isfile()]
            for m in members:
                m.name = m.name[len(f"kafka_python-{version}/"):]
            tar.extractall(root, members=members, filter="data")
    test_dir = root / "test"
    if not (test_dir / "service.py").exists():
        (test_dir / "service.py").write_text(_SERVICE_ADAPTER)
    (test_dir / "__init__.py").touch()
    (root / "pytest.ini").write_text(_PYTEST_INI)
    return root


def _first_broker(bootstrap: str) -> str:
    return bootstrap.split(",")[0]


def run_kafka_python(bootstrap: str, tests: list[str] | None, extra: list[str],
                     cache: Path = CACHE) -> int:
    """Runs kafka-python's ``test_admin_integration.py`` (only ``tests`` if given) against the
    broker at ``bootstrap``; returns pytest's exit status."""
    root = kafka_python_suite(cache)
    # their Fixture insists that KAFKA_ROOT (a Kafka install) exists, even for KAFKA_URI
    kafka_root = root / "servers" / "external"
    kafka_root.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "KAFKA_VERSION": KAFKA_VERSION, "KAFKA_ROOT": str(kafka_root),
           "KAFKA_URI": f"PLAINTEXT://{_first_broker(bootstrap)}"}
    env.pop("PYTHONPATH", None)  # their ``test`` package and the installed ``kafka`` only
    args = [sys.executable, "-m", "pytest", "test/integration/test_admin_integration.py",
            "-q", "-rfE", "-p", "no:pykafkad", *extra]
    if tests:
        args += ["-k", " or ".join(tests)]
    return subprocess.run(args, cwd=root, env=env).returncode


@contextlib.contextmanager
def pykafkad_cluster(nodes: int = 3) -> Iterator[str]:
    """A ``pykafkad cluster`` of ``nodes`` combined nodes; yields its bootstrap servers."""
    from pykafkad.testing import run_cluster

    t0 = time.monotonic()
    with run_cluster(nodes, config=CLUSTER_CONFIG) as cluster:
        print(f"pykafkad cluster of {nodes} ready in {time.monotonic() - t0:.1f} s: "
              f"{cluster.bootstrap_servers}", flush=True)
        yield cluster.bootstrap_servers


@contextlib.contextmanager
def kafka_cluster(nodes: int = 3) -> Iterator[str]:
    """The same cluster shape from Apache Kafka 4.4.0's jars (the reference)."""
    from compat.kafka_broker import run_kafka_cluster

    t0 = time.monotonic()
    with run_kafka_cluster(nodes, config=CLUSTER_CONFIG) as cluster:
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
    argv = sys.argv[1:] if argv is None else argv
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    a = p.parse_args(argv[:len(argv) - len(extra) - (1 if "--" in argv else 0)])

    if a.bootstrap:
        cluster = contextlib.nullcontext(a.bootstrap)
    else:
        cluster = kafka_cluster() if a.kafka else pykafkad_cluster()
    t0 = time.monotonic()
    with cluster as bootstrap:
        if a.suite == "kafka-python":
            tests = None if a.all else list(KAFKA_PYTHON_CLUSTER_TESTS)
            rc = run_kafka_python(bootstrap, tests, extra)
        else:
            from client_suites_librdkafka import run_librdkafka

            rc = run_librdkafka(bootstrap, a.librdkafka_src, a.tests)
    print(f"{a.suite}: exit {rc} in {time.monotonic() - t0:.1f} s", flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
