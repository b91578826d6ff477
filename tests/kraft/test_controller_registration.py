"""KIP-919 controller registration: every controller sends ControllerRegistration to the active
controller, which writes a RegisterControllerRecord (Kafka's kafka-dump-log decodes it from the
metadata log, in the shape Kafka 4.4's own controller writes); a restarted controller registers
again under a new incarnation id; DescribeCluster on a controller listener lists the
registered controllers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compat.kafka_tools import run_tool
from compat.wire_client import WireClient
from pykafkad.testing import run_cluster
from tests.integration.clients import needs_java
from tests.kraft.test_broker_replication import active_controller, wait_for
from wire.messages.describe_cluster_request import DescribeClusterRequest

pytestmark = needs_java


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with run_cluster(3, data_dir=tmp_path_factory.mktemp("reg")) as c:
        yield c


def registrations(log_dir: Path) -> list[dict]:
    """The RegisterControllerRecords of a metadata log, as kafka-dump-log decodes them."""
    segments = sorted(str(p) for p in log_dir.glob("*.log"))
    out = run_tool("kafka-dump-log", ["--cluster-metadata-decoder", "--files",
                                      ",".join(segments)], check=True).stdout
    found = []
    for line in out.splitlines():
        if "REGISTER_CONTROLLER_RECORD" in line:
            found.append(json.loads(line[line.index("payload: ") + len("payload: "):]))
    return found


def incarnations(records: list[dict]) -> list[str]:
    """The incarnation id each controller registered last, by controller id."""
    last = {r["data"]["controllerId"]: r["data"]["incarnationId"] for r in records}
    return [last[i] for i in sorted(last)]


def metadata_dir(cluster, node_id: int) -> Path:
    return cluster.data_dir / f"node-{node_id}" / "data" / "__cluster_metadata-0"


def described_controllers(node) -> list[tuple[int, int]]:
    with WireClient(f"{node.host}:{node.controller_port}", timeout=10) as c:
        r = c.request(60, 1, DescribeClusterRequest(endpoint_type=2))
    return [(b.broker_id, b.port) for b in r.brokers]


def test_every_controller_registers_as_kafkas_do(cluster, reference_kafka):
    expected = [(i, n.controller_port) for i, n in sorted(cluster.nodes.items())]
    wait_for(lambda: described_controllers(cluster.nodes[1]) == expected,
             "every controller registered")
    records = registrations(metadata_dir(cluster, 1))
    # one registration per controller incarnation (a resend after a leader change may add
    # the same one twice, as on Kafka)
    assert sorted({(r["data"]["controllerId"], r["data"]["endPoints"][0]["port"],
                    r["data"]["incarnationId"]) for r in records}) == \
        [(i, port, inc) for (i, port), inc in zip(expected, incarnations(records), strict=True)]
    kafka = registrations(reference_kafka.data_dir / "logs" / "__cluster_metadata-0")
    assert kafka, "Kafka wrote no RegisterControllerRecord"
    ours, theirs = records[0], kafka[0]
    assert (ours["version"], sorted(ours["data"])) == (theirs["version"], sorted(theirs["data"]))
    assert [(e["name"], e["securityProtocol"]) for e in ours["data"]["endPoints"]] == \
        [(e["name"], e["securityProtocol"]) for e in theirs["data"]["endPoints"]]
    assert ours["data"]["zkMigrationReady"] is theirs["data"]["zkMigrationReady"] is False


def test_a_restarted_controller_registers_again(cluster):
    node_id = next(n for n in sorted(cluster.nodes) if n != active_controller(cluster))
    survivor = next(n for n in sorted(cluster.nodes) if n != node_id)
    before = [r["data"]["incarnationId"] for r in registrations(metadata_dir(cluster, survivor))
              if r["data"]["controllerId"] == node_id]
    cluster.stop(node_id)
    cluster.start(node_id)
    after = wait_for(lambda: (lambda ids: ids if len(ids) > len(before) else None)(
        [r["data"]["incarnationId"] for r in registrations(metadata_dir(cluster, survivor))
         if r["data"]["controllerId"] == node_id]), f"controller {node_id} registered again")
    assert after[:len(before)] == before and after[-1] not in before
