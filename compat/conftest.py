"""The compatibility suite inside pytest: one matrix per session, printed after the tests (in
pytest's terminal summary, not between the progress dots) and written to pytest's temporary
directory; ``python -m compat`` writes the committed reports.

The cluster scenarios run against one three-node Apache Kafka cluster per session
(``kafka_cluster``), which proves the scenarios themselves; against the single pykafkad of
``matrix`` they are n/a.
"""

from __future__ import annotations

import os

import pytest

from compat import report
from compat.runner import Matrix, run_matrix
from compat.scenarios import CLUSTER_SCENARIOS, CLUSTER_SIZE

MATRIX = pytest.StashKey[Matrix]()
CLUSTER_MATRIX = pytest.StashKey[Matrix]()


@pytest.fixture(scope="module")
def matrix(request, tmp_path_factory) -> Matrix:
    from compat.__main__ import TEST_BROKER_CONFIG
    from pykafkad import __version__
    from pykafkad.testing import run_broker

    data = tmp_path_factory.mktemp("compat") / "data"
    with run_broker(data, config=TEST_BROKER_CONFIG) as broker:
        # in CI every client must be there (scripts/test installs them)
        m = run_matrix(broker.bootstrap_servers, target=f"pykafkad {__version__}",
                       require_clients=bool(os.environ.get("CI")))
    md, page = report.write(m, tmp_path_factory.mktemp("compat-reports"), "latest")
    m.notes.append(f"reports: {md} {page}")
    request.config.stash[MATRIX] = m
    return m


@pytest.fixture(scope="session")
def kafka_cluster():
    """One three-node Apache Kafka cluster (KRaft, one JVM per node) for the whole session."""
    from compat.__main__ import TEST_BROKER_CONFIG
    from compat.kafka_broker import DEFAULT_VERSION, run_kafka_cluster

    with run_kafka_cluster(CLUSTER_SIZE, DEFAULT_VERSION, config=TEST_BROKER_CONFIG) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def cluster_matrix(request, kafka_cluster, tmp_path_factory) -> Matrix:
    """The cluster scenarios with every client against the session's Apache Kafka cluster."""
    m = run_matrix(kafka_cluster.bootstrap_servers,
                   target=f"Apache Kafka {kafka_cluster.nodes[0].version}, {CLUSTER_SIZE} nodes",
                   scenarios=[s.name for s in CLUSTER_SCENARIOS],
                   require_clients=bool(os.environ.get("CI")))
    md, page = report.write(m, tmp_path_factory.mktemp("compat-reports"), "kafka-cluster")
    m.notes.append(f"reports: {md} {page}")
    request.config.stash[CLUSTER_MATRIX] = m
    return m


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    for key in (MATRIX, CLUSTER_MATRIX):
        m = config.stash.get(key, None)
        if m is not None:
            terminalreporter.section("compatibility matrix")
            terminalreporter.write_line(report.text(m))
