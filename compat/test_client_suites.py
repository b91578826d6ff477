"""The kafka-python tests tests/integration/test_client_suites.py runs on a pykafkad cluster
pass on the session's 3-node Apache Kafka 4.4.0 cluster too: they test Kafka's behaviour, not
an accident of ours."""

from __future__ import annotations

from compat.client_suites import KAFKA_PYTHON_CHECKED, kafka_python_suite_or_skip, run_kafka_python
from tests.integration.clients import needs_java


@needs_java
def test_kafka_pythons_cluster_admin_tests_pass_on_apache_kafka(kafka_cluster):
    kafka_python_suite_or_skip()
    rc, outcomes = run_kafka_python(kafka_cluster.bootstrap_servers, list(KAFKA_PYTHON_CHECKED),
                                    capture=True)
    assert outcomes == {name: "passed" for name in KAFKA_PYTHON_CHECKED}
    assert rc == 0


@needs_java
def test_alter_replica_log_dirs_answers_are_kafkas(kafka_cluster):
    from tests.kraft.test_alter_replica_log_dirs_cluster import EXPECTED, alter_log_dirs_answers

    assert alter_log_dirs_answers(kafka_cluster.bootstrap_servers) == EXPECTED
