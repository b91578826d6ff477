"""Group configs in a cluster: kept where Kafka keeps them, as ConfigRecords of the metadata
log (resource type GROUP), so a config set through one broker is what every broker describes
and applies, and a restarted broker still has it.  (The single node's answers are compared
with Kafka's in tests/integration/test_group_configs.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from compat.wire_client import WireClient
from pykafkad.metadata.batches import decode_batches
from pykafkad.testing import run_cluster
from tests.kraft.quorum_helpers import wait_for
from wire.messages.describe_configs_request import DescribeConfigsRequest, DescribeConfigsResource
from wire.messages.incremental_alter_configs_request import (
    AlterableConfig,
    AlterConfigsResource,
    IncrementalAlterConfigsRequest,
)
from wire.metadata import ConfigRecord

GROUP, SET, DELETE = 32, 0, 1


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with run_cluster(3, data_dir=tmp_path_factory.mktemp("gc")) as c:
        yield c


def address(cluster, node_id: int) -> str:
    n = cluster.nodes[node_id]
    return f"{n.host}:{n.port}"


def alter(where: str, group: str, *ops: tuple[str, int, str | None]):
    with WireClient(where, timeout=10) as c:
        return c.request(44, 1, IncrementalAlterConfigsRequest(resources=[AlterConfigsResource(
            resource_type=GROUP, resource_name=group,
            configs=[AlterableConfig(name=n, config_operation=op, value=v) for n, op, v in ops])]))


def overrides(where: str, group: str) -> dict[str, str]:
    """The group's configs that are not defaults, as the broker at ``where`` describes them."""
    with WireClient(where, timeout=10) as c:
        r = c.request(32, 4, DescribeConfigsRequest(resources=[DescribeConfigsResource(
            resource_type=GROUP, resource_name=group, configuration_keys=None)]))
    (result,) = r.results
    assert result.error_code == 0, result.error_message
    return {e.name: e.value for e in result.configs if e.config_source == 8}  # GROUP_CONFIG


def test_a_group_config_set_through_one_broker_is_every_brokers(cluster):
    r = alter(address(cluster, 1), "g-everywhere", ("consumer.session.timeout.ms", SET, "50000"),
              ("share.auto.offset.reset", SET, "earliest"))
    assert [x.error_code for x in r.responses] == [0]
    want = {"consumer.session.timeout.ms": "50000", "share.auto.offset.reset": "earliest"}
    for node_id in cluster.nodes:
        wait_for(lambda n=node_id: overrides(address(cluster, n), "g-everywhere") == want,
                 f"broker {node_id} describing the group's configs")
    r = alter(address(cluster, 2), "g-everywhere", ("share.auto.offset.reset", DELETE, None))
    assert [x.error_code for x in r.responses] == [0]
    for node_id in cluster.nodes:
        wait_for(lambda n=node_id: overrides(address(cluster, n), "g-everywhere") == {
            "consumer.session.timeout.ms": "50000"}, f"broker {node_id} after the delete")


def test_group_configs_are_config_records_and_survive_a_restart(cluster):
    r = alter(address(cluster, 3), "g-kept", ("consumer.heartbeat.interval.ms", SET, "6000"))
    assert [x.error_code for x in r.responses] == [0]
    log = Path(cluster.data_dir) / "node-1" / "data" / "__cluster_metadata-0"
    wait_for(lambda: any(
        isinstance(rec, ConfigRecord) and rec.resource_type == GROUP
        and rec.resource_name == "g-kept" and rec.value == "6000"
        for seg in sorted(log.glob("*.log")) for batch in decode_batches(seg.read_bytes())
        for rec, _ in batch.records), "the ConfigRecord in node 1's metadata log")
    cluster.stop(2)
    cluster.start(2)
    wait_for(lambda: overrides(address(cluster, 2), "g-kept") == {
        "consumer.heartbeat.interval.ms": "6000"}, "the restarted broker describing it")


def test_an_invalid_group_config_is_refused_by_the_controller(cluster):
    r = alter(address(cluster, 1), "g-bad", ("consumer.session.timeout.ms", SET, "1"))
    (result,) = r.responses
    assert result.error_code == 40  # INVALID_CONFIG, with the single node's (Kafka's) message
    assert "consumer.session.timeout.ms" in result.error_message
    assert overrides(address(cluster, 2), "g-bad") == {}
