"""UpdateFeatures (API 57) on a three-node pykafkad cluster with Kafka's own kafka-features:
a broker forwards it to the active controller, which validates it as Kafka 4.4's controller
does (same refusals, word for word, as a Kafka 4.4 broker prints for the same commands), a dry
run changes nothing, and a real downgrade/upgrade of eligible.leader.replicas.version reaches
every broker's and controller's ApiVersions (kafka-features describe)."""

from __future__ import annotations

import re

import pytest

from compat.kafka_tools import run_tool
from pykafkad.testing import run_cluster
from tests.integration.clients import needs_java
from tests.kraft.test_broker_replication import node_bootstrap, wait_for

pytestmark = needs_java

ELR = "eligible.leader.replicas.version"
#: commands whose output Kafka 4.4 and pykafkad must print alike (refusals and dry runs)
SAME_OUTPUT = [
    ["upgrade", "--metadata", "4.3", "--dry-run"],
    ["downgrade", "--metadata", "4.3", "--dry-run"],
    ["downgrade", "--metadata", "3.9", "--unsafe", "--dry-run"],
    ["upgrade", "--feature", "foo.bar=1", "--dry-run"],
    ["disable", "--feature", "foo.bar", "--dry-run"],
    ["upgrade", "--feature", "metadata.version=99", "--dry-run"],
    ["upgrade", "--feature", "metadata.version=33", "--dry-run"],
    ["downgrade", "--feature", f"{ELR}=0", "--dry-run"],
    ["disable", "--feature", ELR, "--dry-run"],
    ["upgrade", "--feature", f"{ELR}=1", "--dry-run"],
    ["upgrade", "--feature", "kraft.version=1", "--dry-run"],
    ["upgrade", "--feature", f"{ELR}=5", "--feature", "metadata.version=33", "--dry-run"],
]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with run_cluster(3, data_dir=tmp_path_factory.mktemp("features")) as c:
        yield c


def features(bootstrap: list[str]) -> tuple[int, str]:
    p = run_tool("kafka-features", bootstrap)
    out = (p.stdout + p.stderr).replace("\r", "")
    # the active controller's id differs between the two clusters
    return p.returncode, re.sub(r"Local controller \d+", "Local controller N", out)


def finalized(bootstrap: list[str]) -> dict[str, str]:
    """feature -> FinalizedVersionLevel, from kafka-features describe."""
    code, out = features([*bootstrap, "describe"])
    assert code == 0, out
    return dict(re.findall(r"Feature: (\S+).*FinalizedVersionLevel: (\S+(?: \d+)?)\s+Epoch", out))


def test_refusals_and_dry_runs_print_what_kafka_prints(cluster, reference_kafka):
    ours = ["--bootstrap-server", cluster.bootstrap_servers]
    kafka = ["--bootstrap-server", reference_kafka.bootstrap_servers]
    for args in SAME_OUTPUT:
        assert features([*ours, *args]) == features([*kafka, *args]), args
    assert finalized(ours)[ELR] == finalized(kafka)[ELR] == "1"  # the dry runs changed nothing


def test_a_downgrade_and_upgrade_reach_every_node(cluster):
    through = ["--bootstrap-server", node_bootstrap(cluster, 1)]
    controllers = ["--bootstrap-controller", ",".join(
        f"{n.host}:{n.controller_port}" for n in cluster.nodes.values())]
    assert features([*through, "downgrade", "--feature", f"{ELR}=0"]) == (
        0, f"{ELR} was downgraded to 0.\n")
    for node_id in cluster.nodes:
        wait_for(lambda n=node_id: finalized(["--bootstrap-server", node_bootstrap(cluster, n)])
                 [ELR] == "0", f"{ELR} 0 on broker {node_id}")
    assert finalized(controllers)[ELR] == "0"
    assert features([*through, "upgrade", "--feature", f"{ELR}=1"]) == (
        0, f"{ELR} was upgraded to 1.\n")
    for node_id in cluster.nodes:
        wait_for(lambda n=node_id: finalized(["--bootstrap-server", node_bootstrap(cluster, n)])
                 [ELR] == "1", f"{ELR} 1 on broker {node_id}")
