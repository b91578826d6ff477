"""librdkafka's own test suite (tests/test-runner of a librdkafka source tree) against a
running cluster, as its "default" scenario runs it: three brokers, replication factor 3.

librdkafka's suite reads the cluster from ``test.conf`` (any librdkafka property, plus
``test.*`` ones) and the broker version from ``TEST_KAFKA_VERSION``, and writes a JSON report
where ``TEST_REPORT`` says.  We hand it a ``test.conf`` naming the cluster's bootstrap servers
and run ``test-runner`` in quick mode (-Q), without the broker-less local tests (-L) and
without sockem (-E), which needs a build with its socket emulator.  The source tree and its
built test-runner are the caller's: nothing here fetches or builds librdkafka.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from compat.client_suites import CLUSTER_CONFIG

#: broker version the suite gates its tests on (Kafka 4.4.0's protocol)
KAFKA_VERSION = "4.4.0"

#: librdkafka's "default" scenario (tests/scenarios/default.json): auto-created topics with 4
#: partitions and replication factor 3, on top of the 3-node settings
LIBRDKAFKA_CLUSTER_CONFIG = {**CLUSTER_CONFIG, "auto.create.topics.enable": "true",
                             "num.partitions": "4"}

#: run when none are named: 0001-0140, of which test-runner -L -E leaves out the broker-less
#: (mock cluster) and socket-emulator ones; the share-consumer tests (0170-) are not included
DEFAULT_TESTS = tuple(
    f"{n:04d}" for n in range(1, 141)
    # 0038 is a benchmark; 0097, 0115, 0119, 0126, 0135 need TLS, SASL or OAUTHBEARER
    if n not in (38, 97, 115, 119, 126, 135))


def test_conf(bootstrap: str, timeout_multiplier: float = 3.0) -> str:
    """The ``test.conf`` librdkafka's test framework reads."""
    return (f"bootstrap.servers={bootstrap}\n"
            f"test.timeout.multiplier={timeout_multiplier}\n"
            "test.topic.random=true\n")


#: the Kafka tools some tests run from ``$KAFKA_PATH/bin`` (``test_kafka_topics``): here they
#: are compat/kafka_tools.py's, Kafka's own tool classes from Maven Central jars
KAFKA_PATH_TOOLS = ("kafka-topics", "kafka-configs")
ROOT = Path(__file__).resolve().parent.parent


def kafka_path(work: Path) -> Path:
    """A directory laid out as a Kafka install's ``bin/`` for the tools librdkafka's tests
    call, each a script running ``python -m compat.kafka_tools TOOL``."""
    bin_dir = work / "kafka" / "bin"
    bin_dir.mkdir(parents=True)
    for tool in KAFKA_PATH_TOOLS:
        script = bin_dir / f"{tool}.sh"
        script.write_text(f"#!/bin/sh\nPYTHONPATH={ROOT} exec {sys.executable} "
                          f"-m compat.kafka_tools {tool} \"$@\"\n")
        script.chmod(0o755)
    return bin_dir.parent


def run_librdkafka(bootstrap: str, src: Path | None, tests: str | None = None,
                   parallel: int = 2, log_path: Path | None = None) -> tuple[int, dict[str, str]]:
    """Runs ``src``/tests/test-runner against ``bootstrap``; returns its exit status and each
    selected test's state (PASSED, FAILED, SKIPPED, ...) from its JSON report.  ``tests``: space- or
    comma-separated test numbers (``DEFAULT_TESTS`` if None).  Output goes to ``log_path``
    (else to our stdout)."""
    if src is None:
        raise SystemExit("librdkafka: --librdkafka-src DIR (a source tree with "
                         "tests/test-runner built) is needed")
    tests_dir = Path(src) / "tests"
    runner = tests_dir / "test-runner"
    if not runner.exists():
        raise SystemExit(f"librdkafka: {runner} is not built")
    names = (tests or " ".join(DEFAULT_TESTS)).replace(",", " ").split()
    work = Path(tempfile.mkdtemp(prefix="librdkafka-suite-"))
    try:
        conf = work / "test.conf"
        conf.write_text(test_conf(bootstrap))
        report = work / "report.json"
        env = {**os.environ, "RDKAFKA_TEST_CONF": str(conf), "TEST_REPORT": str(report),
               "KAFKA_PATH": str(kafka_path(work)), "BROKERS": bootstrap,
               "TEST_KAFKA_VERSION": KAFKA_VERSION, "TESTS": ",".join(names),
               # test-runner links the tree's own librdkafka, not an installed one
               "LD_LIBRARY_PATH": os.pathsep.join(
                   [str(Path(src) / "src"), str(Path(src) / "src-cpp"),
                    os.environ.get("LD_LIBRARY_PATH", "")])}
        out = open(log_path, "w") if log_path else None  # noqa: SIM115
        try:
            proc = subprocess.run([str(runner), "-Q", "-L", "-E", f"-p{parallel}"],
                                  cwd=tests_dir, env=env, stdout=out,
                                  stderr=subprocess.STDOUT if out else None)
        finally:
            if out:
                out.close()
        states = report_states(report)
        return proc.returncode, {n: st for n, st in states.items() if n[:4] in names}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report_states(report: Path) -> dict[str, str]:
    """Test name -> state from test-runner's JSON report (empty if it wrote none)."""
    try:
        data = json.loads(report.read_text())
    except (OSError, ValueError):
        return {}
    return {name: t["state"] for name, t in data.get("tests", {}).items()}
