"""DescribeCluster as Kafka 4.4 answers it on broker and controller listeners: v2's
include_fenced_brokers lists fenced brokers with is_fenced (kafka-cluster list-endpoints
--include-fenced-brokers shows their STATE), --bootstrap-controller lists the controllers, and
an endpoint type that is not the listener's gets Kafka's exact error (same fields as the
reference broker answers)."""

from __future__ import annotations

import pytest

from compat.kafka_tools import run_tool
from compat.wire_client import WireClient
from pykafkad.testing import run_cluster
from tests.integration.clients import needs_java
from tests.kraft.test_broker_replication import active_controller, node_bootstrap, wait_for
from wire.messages.describe_cluster_request import DescribeClusterRequest

pytestmark = needs_java

CONFIG = {"broker.session.timeout.ms": "3000", "broker.heartbeat.interval.ms": "500"}
#: (version, endpoint type, include fenced): requests whose answer does not depend on the
#: cluster's shape, only on the listener they are sent to
ERROR_CASES = [(0, 1, False), (1, 2, False), (1, 3, False), (1, 0, False), (2, 2, True),
               (1, 1, False), (2, 1, True)]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with run_cluster(3, config=CONFIG, data_dir=tmp_path_factory.mktemp("dc")) as c:
        yield c


def describe(address: str, version: int, endpoint_type: int, include_fenced: bool):
    with WireClient(address, timeout=10) as c:
        return c.request(60, version, DescribeClusterRequest(
            include_cluster_authorized_operations=False, endpoint_type=endpoint_type,
            include_fenced_brokers=include_fenced))


def shape(r) -> tuple:
    """What two clusters' answers share: errors verbatim; for a success, the endpoint type,
    whether the controller is one of the nodes, and the fenced flags."""
    if r.error_code:
        return (r.error_code, r.error_message, r.endpoint_type, r.cluster_id, r.controller_id,
                r.brokers)
    return (0, r.endpoint_type, r.controller_id in {b.broker_id for b in r.brokers},
            sorted({b.is_fenced for b in r.brokers}))


def test_endpoint_types_answer_as_kafka(cluster, reference_kafka):
    node = cluster.nodes[1]
    ours = {"broker": f"{node.host}:{node.port}",
            "controller": f"{node.host}:{node.controller_port}"}
    kafka = {"broker": reference_kafka.bootstrap_servers,
             "controller": f"127.0.0.1:{reference_kafka.controller_port}"}
    for listener in ("broker", "controller"):
        for case in ERROR_CASES:
            assert shape(describe(ours[listener], *case)) == \
                shape(describe(kafka[listener], *case)), (listener, case)


def list_endpoints(*args: str) -> list[list[str]]:
    out = run_tool("kafka-cluster", ["list-endpoints", *args], check=True).stdout
    return [line.split() for line in out.splitlines()[1:] if line.strip()]


def test_controllers_listed_with_bootstrap_controller(cluster):
    rows = list_endpoints("--bootstrap-controller", ",".join(
        f"{n.host}:{n.controller_port}" for n in cluster.nodes.values()))
    assert rows == [[str(i), n.host, str(n.controller_port), "null", "controller"]
                    for i, n in sorted(cluster.nodes.items())]


def test_fenced_broker_listed_only_when_asked(cluster):
    victim = next(n for n in sorted(cluster.nodes) if n != active_controller(cluster))
    survivor = next(n for n in sorted(cluster.nodes) if n != victim)
    cluster.kill(victim)
    try:
        bootstrap = node_bootstrap(cluster, survivor)
        wait_for(lambda: str(victim) not in [r[0] for r in list_endpoints(
            "--bootstrap-server", bootstrap)], f"broker {victim} fenced")
        rows = list_endpoints("--bootstrap-server", bootstrap, "--include-fenced-brokers")
        states = {int(r[0]): r[4] for r in rows}
        assert states == {i: "fenced" if i == victim else "unfenced" for i in cluster.nodes}
        r = describe(bootstrap, 2, 1, True)
        assert [(b.broker_id, b.is_fenced) for b in r.brokers] == \
            [(i, i == victim) for i in sorted(cluster.nodes)]
    finally:
        cluster.start(victim)


def test_unregister_through_a_broker(cluster):
    """``kafka-cluster unregister`` through a broker: the broker forwards UnregisterBroker to
    the controller, which removes the stopped broker from the metadata; it registers again
    when it starts."""
    victim = next(n for n in sorted(cluster.nodes) if n != active_controller(cluster))
    survivor = next(n for n in sorted(cluster.nodes) if n != victim)
    bootstrap = node_bootstrap(cluster, survivor)
    cluster.kill(victim)
    try:
        wait_for(lambda: str(victim) not in [r[0] for r in list_endpoints(
            "--bootstrap-server", bootstrap)], f"broker {victim} fenced")
        run_tool("kafka-cluster", ["unregister", "--bootstrap-server", bootstrap,
                                   "--id", str(victim)], check=True)
        wait_for(lambda: str(victim) not in [r[0] for r in list_endpoints(
            "--bootstrap-server", bootstrap, "--include-fenced-brokers")],
            f"broker {victim} unregistered")
    finally:
        cluster.start(victim)
    wait_for(lambda: str(victim) in [r[0] for r in list_endpoints(
        "--bootstrap-server", bootstrap)], f"broker {victim} registered again")
