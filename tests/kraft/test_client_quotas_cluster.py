"""Client quotas on a KRaft cluster: AlterClientQuotas through any broker is forwarded to the
active controller, written as ClientQuotaRecords, and every broker then describes (and
enforces) them from its metadata image. Raw frames: no Python client sends these APIs."""

from __future__ import annotations

from compat.wire_client import WireClient
from pykafkad.testing import run_cluster
from tests.kraft.quorum_helpers import wait_for
from wire.messages.alter_client_quotas_request import (
    AlterClientQuotasRequest,
    EntityData,
    EntryData,
    OpData,
)
from wire.messages.create_topics_request import CreatableTopic, CreateTopicsRequest
from wire.messages.describe_client_quotas_request import (
    ComponentData,
    DescribeClientQuotasRequest,
)


def _describe(address: str) -> dict:
    with WireClient(address) as c:
        r = c.request(48, 1, DescribeClientQuotasRequest(
            components=[ComponentData("client-id", 2, None)], strict=False))
    assert r.error_code == 0
    return {tuple((e.entity_type, e.entity_name) for e in entry.entity):
            {v.key: v.value for v in entry.values} for entry in r.entries}


def test_quotas_altered_through_one_broker_are_described_by_every_broker(tmp_path):
    with run_cluster(3, data_dir=tmp_path) as cluster:
        first = next(iter(cluster.nodes.values()))
        with WireClient(f"{first.host}:{first.port}") as c:
            r = c.request(49, 1, AlterClientQuotasRequest(entries=[
                EntryData(entity=[EntityData("client-id", "quotas-k")],
                          ops=[OpData("producer_byte_rate", 4096, False)]),
                EntryData(entity=[EntityData("client-id", "quotas-bad")],
                          ops=[OpData("producer_byte_rate", 1.5, False)]),
            ], validate_only=False))
        assert [(e.error_code, e.error_message) for e in r.entries] == [
            (0, None), (42, "producer_byte_rate cannot be a fractional value.")]
        want = {(("client-id", "quotas-k"),): {"producer_byte_rate": 4096.0}}
        for node in cluster.nodes.values():
            wait_for(lambda n=node: _describe(f"{n.host}:{n.port}") == want,
                     f"node {node.node_id} to describe the quota")


def test_the_mutation_quota_is_the_active_controllers_whichever_broker_forwards(tmp_path):
    """controller_mutation_rate is kept where Kafka keeps it: on the active controller, per
    client id of the forwarded request, so topics created through different brokers draw on
    one bucket (1/s: 11 partitions, which a 30-partition topic overdraws).  Raw CreateTopics
    v7 frames, to pick the broker (stock admin clients pick the one Metadata names)."""
    with run_cluster(3, data_dir=tmp_path) as cluster:
        first, second = list(cluster.nodes.values())[:2]
        with WireClient(f"{first.host}:{first.port}") as c:
            r = c.request(49, 1, AlterClientQuotasRequest(entries=[EntryData(
                entity=[EntityData("client-id", "mutator")],
                ops=[OpData("controller_mutation_rate", 1.0, False)])], validate_only=False))
        assert r.entries[0].error_code == 0

        def create(node, name: str) -> tuple:
            with WireClient(f"{node.host}:{node.port}", client_id="mutator") as c:
                r = c.request(19, 7, CreateTopicsRequest(topics=[CreatableTopic(
                    name=name, num_partitions=30, replication_factor=1)], timeout_ms=30000))
            return r.throttle_time_ms, [(t.name, t.error_code, t.error_message)
                                        for t in r.topics]

        assert create(first, "through-first") == (0, [("through-first", 0, None)])
        throttle, topics = create(second, "through-second")
        assert topics == [("through-second", 89, None)]
        assert 0 < throttle <= 19000  # 30 - 11 = 19 partitions to pay back at 1/s
