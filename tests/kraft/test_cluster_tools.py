"""Kafka's own admin tools against a three-node pykafkad cluster, through any broker (which
forwards to the active controller): kafka-reassign-partitions moves replicas (add, catch up,
switch, remove), kafka-leader-election restores preferred leaders, kafka-log-dirs shows each
broker's replicas."""

from __future__ import annotations

import json

import pytest

from compat.kafka_tools import run_tool
from compat.wire_client import advertised_apis
from pykafkad.testing import run_cluster
from tests.integration.clients import needs_java
from tests.kraft.quorum_helpers import wait_for

pytestmark = needs_java


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with run_cluster(3, data_dir=tmp_path_factory.mktemp("tools")) as c:
        yield c


def describe(bootstrap: str, topic: str) -> dict[int, tuple[int, list[int], list[int]]]:
    """partition -> (leader, replicas, isr), as kafka-topics --describe prints them."""
    out = run_tool("kafka-topics", ["--bootstrap-server", bootstrap, "--describe", "--topic",
                                    topic], check=True).stdout
    parts = {}
    for line in out.splitlines():
        fields = dict(f.split(": ", 1) for f in line.strip().split("\t") if ": " in f)
        if "Partition" in fields:
            parts[int(fields["Partition"])] = (
                int(fields["Leader"]), [int(r) for r in fields["Replicas"].split(",")],
                sorted(int(r) for r in fields["Isr"].split(",")))
    return parts


def test_reassignment_then_preferred_election(cluster, tmp_path):
    bs = cluster.bootstrap_servers
    run_tool("kafka-topics", ["--bootstrap-server", bs, "--create", "--topic", "moved",
                              "--replica-assignment", "1:2,2:3"], check=True)
    assert describe(bs, "moved") == {0: (1, [1, 2], [1, 2]), 1: (2, [2, 3], [2, 3])}
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "moved", "partition": 0, "replicas": [3, 1]},
        {"topic": "moved", "partition": 1, "replicas": [1, 3]}]}))
    started = run_tool("kafka-reassign-partitions", [
        "--bootstrap-server", bs, "--reassignment-json-file", str(plan), "--execute"],
        check=True).stdout
    assert "Successfully started partition reassignments for moved-0,moved-1" in started

    def verified() -> bool:
        out = run_tool("kafka-reassign-partitions", [
            "--bootstrap-server", bs, "--reassignment-json-file", str(plan), "--verify"],
            check=True).stdout
        return out.count("is completed") == 2

    wait_for(verified, "both reassignments completed")
    after = describe(bs, "moved")
    assert [after[p][1] for p in (0, 1)] == [[3, 1], [1, 3]]
    assert [after[p][2] for p in (0, 1)] == [[1, 3], [1, 3]]
    # the old leader of moved-0 (1) kept leading it; the preferred one is now 3
    assert after[0][0] == 1
    elected = run_tool("kafka-leader-election", [
        "--bootstrap-server", bs, "--election-type", "preferred", "--all-topic-partitions"],
        check=True).stdout
    assert "Successfully completed leader election (PREFERRED) for partitions moved-0" in elected
    wait_for(lambda: describe(bs, "moved")[0][0] == 3, "moved-0 led by its preferred replica")

    def hosted() -> dict[int, list[str]]:
        out = run_tool("kafka-log-dirs", ["--bootstrap-server", bs, "--describe",
                                          "--topic-list", "moved"], check=True).stdout
        report = json.loads(out.splitlines()[-1])
        return {b["broker"]: sorted(p["partition"] for d in b["logDirs"]
                                    for p in d["partitions"]) for b in report["brokers"]}

    # the removed replicas (broker 2's) are deleted; 1 and 3 host both partitions
    wait_for(lambda: hosted() == {1: ["moved-0", "moved-1"], 2: [], 3: ["moved-0", "moved-1"]},
             "the replicas where the plan put them, and none left on broker 2")


def test_forwarded_apis_have_kafkas_broker_ranges(cluster, reference_kafka):
    """A KRaft broker advertises the APIs it only forwards (ElectLeaders, the reassignment
    APIs, DescribeQuorum, UnregisterBroker) with the ranges Apache Kafka 4.4's broker
    advertises."""
    node = cluster.nodes[1]
    ours = advertised_apis(f"{node.host}:{node.port}")
    kafka = advertised_apis(reference_kafka.bootstrap_servers)
    forwarded = (43, 45, 46, 55, 64)
    assert {k: ours.get(k) for k in forwarded} == {k: kafka[k] for k in forwarded}
