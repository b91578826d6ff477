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
from compat.runner import NA, Matrix, Result, run_matrix
from compat.scenarios import CLUSTER_SCENARIOS, CLUSTER_SIZE, SCENARIOS

MATRIX = pytest.StashKey[Matrix]()
CLUSTER_MATRIX = pytest.StashKey[Matrix]()
SECURED_MATRIX = pytest.StashKey[Matrix]()
KAFKA_SECURED_MATRIX = pytest.StashKey[Matrix]()

#: what runs over SASL_SSL on both brokers: every single-broker scenario, the authorization
#: one included (about two minutes a broker), but the Kafka Streams application's (PLAINTEXT)
SECURED_SCENARIOS = [s.name for s in SCENARIOS if s.brokers == 1 and s.name != "streams-group"]


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


#: the scenario that stops and restarts a node costs a JVM start per client: in the test suite
#: it runs with these two (kafka-python, and the Java client's own JVM-per-step path) only;
#: ``python -m compat --kafka-cluster`` runs it with every client
NODE_STOPPING = {"not-enough-replicas": ["kafka-python", "java"]}


@pytest.fixture(scope="module")
def cluster_matrix(request, kafka_cluster, tmp_path_factory) -> Matrix:
    """The cluster scenarios with every client against the session's Apache Kafka cluster."""
    from compat.node_control import KafkaNodes

    def run(scenarios, clients=None) -> Matrix:
        return run_matrix(
            kafka_cluster.bootstrap_servers, scenarios=scenarios, clients=clients,
            target=f"Apache Kafka {kafka_cluster.nodes[0].version}, {CLUSTER_SIZE} nodes",
            require_clients=bool(os.environ.get("CI")), nodes=KafkaNodes(kafka_cluster))

    m = run([s.name for s in CLUSTER_SCENARIOS if s.name not in NODE_STOPPING])
    for scenario, clients in NODE_STOPPING.items():
        m.scenarios.append(scenario)
        part = run([scenario], clients)
        m.results.update(part.results)
        m.seconds += part.seconds
        for c in set(m.clients) - set(clients):
            m.results[(scenario, c)] = Result(NA, 0.0, "not run in the test suite")
    md, page = report.write(m, tmp_path_factory.mktemp("compat-reports"), "kafka-cluster")
    m.notes.append(f"reports: {md} {page}")
    request.config.stash[CLUSTER_MATRIX] = m
    return m


def _secured_matrix(request, tmp_path_factory, start, target: str, stem: str, key) -> Matrix:
    with start as secured:
        m = run_matrix(secured.bootstrap, target=target, scenarios=SECURED_SCENARIOS,
                       require_clients=bool(os.environ.get("CI")), secured=secured)
    md, page = report.write(m, tmp_path_factory.mktemp("compat-reports"), stem)
    m.notes.append(f"reports: {md} {page}")
    request.config.stash[key] = m
    return m


@pytest.fixture(scope="module")
def secured_matrix(request, tmp_path_factory) -> Matrix:
    """The secured scenarios against a pykafkad with a SASL_SSL listener and the
    StandardAuthorizer (compat/security.py)."""
    from compat.__main__ import TEST_BROKER_CONFIG
    from compat.security import secured_pykafkad
    from pykafkad import __version__

    return _secured_matrix(request, tmp_path_factory, secured_pykafkad(TEST_BROKER_CONFIG),
                           f"pykafkad {__version__}, SASL_SSL", "secured", SECURED_MATRIX)


@pytest.fixture(scope="module")
def kafka_secured_matrix(request, tmp_path_factory) -> Matrix:
    """The same scenarios against Apache Kafka configured the same way: they must pass there."""
    from compat.__main__ import TEST_BROKER_CONFIG
    from compat.kafka_broker import DEFAULT_VERSION
    from compat.security import secured_kafka

    return _secured_matrix(request, tmp_path_factory,
                           secured_kafka(DEFAULT_VERSION, TEST_BROKER_CONFIG),
                           f"Apache Kafka {DEFAULT_VERSION}, SASL_SSL", "kafka-secured",
                           KAFKA_SECURED_MATRIX)


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    for key in (MATRIX, CLUSTER_MATRIX, SECURED_MATRIX, KAFKA_SECURED_MATRIX):
        m = config.stash.get(key, None)
        if m is not None:
            terminalreporter.section("compatibility matrix")
            terminalreporter.write_line(report.text(m))
