"""kafka-python's own cluster admin tests (its sdist's test/integration, unchanged) against a
3-node pykafkad cluster: issue 10's "kafka-python's test_describe_log_dirs, ... pass".  The
same tests against 3-node Apache Kafka 4.4.0: compat/test_client_suites.py."""

from __future__ import annotations

from compat.client_suites import (
    CLUSTER_CONFIG,
    KAFKA_PYTHON_CHECKED,
    kafka_python_suite_or_skip,
    run_kafka_python,
)
from pykafkad.testing import run_cluster


def test_kafka_pythons_cluster_admin_tests_pass_on_a_pykafkad_cluster():
    kafka_python_suite_or_skip()
    with run_cluster(3, config=CLUSTER_CONFIG) as cluster:
        rc, outcomes = run_kafka_python(cluster.bootstrap_servers, list(KAFKA_PYTHON_CHECKED),
                                        capture=True)
    assert outcomes == {name: "passed" for name in KAFKA_PYTHON_CHECKED}
    assert rc == 0
