"""The compatibility suite as part of the test command: every scenario with every client
against a fresh pykafkad; no scenario may fail or be unsupported.  The cluster scenarios,
n/a against that single broker, run against a three-node Apache Kafka cluster, where they
must pass (a scenario failing on Apache Kafka is a broken scenario).

The matrices (the ``matrix`` and ``cluster_matrix`` fixtures, compat/conftest.py) are printed
at the end of the session, also when the tests pass.
"""

from __future__ import annotations

from compat.conftest import SECURED_SCENARIOS
from compat.runner import NA, PASS, SECURED_ONLY, UNSUPPORTED
from compat.scenarios import CLUSTER_SCENARIOS, CLUSTER_SIZE, SCENARIOS
from tests.integration.clients import needs_java

CLUSTER = {s.name for s in CLUSTER_SCENARIOS}
SECURED = {s.name for s in SCENARIOS if s.secured}


def _failures(m) -> str:
    return "compat failures:\n" + "\n".join(f"  {s} / {c}: {r.reason}" for s, c, r in m.failures())


def test_compat_matrix(matrix):
    unsupported = sorted({s for (s, _), r in matrix.results.items() if r.status == UNSUPPORTED})
    assert not unsupported, f"scenarios the broker cannot run: {unsupported}"
    assert not matrix.failures(), _failures(matrix)


def test_cluster_scenarios_are_not_applicable_on_one_broker(matrix):
    cells = {(s, c): (r.status, r.reason) for (s, c), r in matrix.results.items() if s in CLUSTER}
    assert cells
    assert set(cells.values()) == {(NA, f"needs {CLUSTER_SIZE} brokers; the target has 1")}


@needs_java
def test_cluster_scenarios_pass_on_apache_kafka(cluster_matrix):
    assert not cluster_matrix.failures(), _failures(cluster_matrix)
    passed = {s for (s, _), r in cluster_matrix.results.items() if r.status == PASS}
    assert passed == CLUSTER, f"cluster scenarios no client ran: {sorted(CLUSTER - passed)}"


def test_secured_scenarios_are_not_applicable_on_plaintext(matrix):
    cells = {(s, c): (r.status, r.reason) for (s, c), r in matrix.results.items() if s in SECURED}
    assert cells
    assert set(cells.values()) == {(NA, SECURED_ONLY)}


def _every_client_ran(m, scenarios) -> None:
    """Every client passed each scenario it can express, and every scenario ran somewhere."""
    assert not m.failures(), _failures(m)
    passed = {s for (s, _), r in m.results.items() if r.status == PASS}
    assert passed == set(scenarios), f"scenarios no client ran: {sorted(set(scenarios) - passed)}"


def test_secured_matrix_over_sasl_ssl(secured_matrix):
    _every_client_ran(secured_matrix, SECURED_SCENARIOS)
    authorization = {c: r.status for (s, c), r in secured_matrix.results.items()
                     if s == "authorization"}
    assert set(authorization.values()) == {PASS}, authorization


@needs_java
def test_secured_scenarios_pass_on_apache_kafka_configured_the_same_way(kafka_secured_matrix):
    _every_client_ran(kafka_secured_matrix, SECURED_SCENARIOS)
