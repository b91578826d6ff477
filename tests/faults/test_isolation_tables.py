"""Each node's partition table for an isolation, computed from the cluster plan (no
processes): both sides of a cut refuse each other, and a broker's table never names the
dedicated controllers' listener as its own."""

from __future__ import annotations

from pathlib import Path

from pykafkad.faults.isolation import FROM_CLIENTS, FROM_NODES, partition_tables
from pykafkad.faults.partition_table import PartitionTable, peer_node_id
from pykafkad.launcher import NodeProcess, plan_cluster


def endpoints(nodes: int, controllers: int) -> dict[int, list[tuple[str, int]]]:
    specs = plan_cluster(nodes, controllers, 9000, Path("/nonexistent"))
    return {s.node_id: NodeProcess(s).endpoints for s in specs}


def test_combined_nodes_cut_both_ways():
    eps = endpoints(3, 0)
    assert eps[1] == [("127.0.0.1", 9000), ("127.0.0.1", 9003)]
    tables = partition_tables(eps, {1: FROM_NODES})
    assert tables[1] == {"all_nodes": True, "blocked_nodes": [2, 3], "clients": False,
                         "blocked_endpoints": eps[2] + eps[3]}
    assert tables[2] == tables[3] == {"all_nodes": False, "blocked_nodes": [1],
                                      "clients": False, "blocked_endpoints": eps[1]}


def test_a_broker_with_dedicated_controllers_is_only_its_own_listener():
    eps = endpoints(2, 1)
    assert eps == {1: [("127.0.0.1", 9000)], 2: [("127.0.0.1", 9001)], 3: [("127.0.0.1", 9002)]}
    tables = partition_tables(eps, {1: FROM_NODES})
    assert tables[2]["blocked_endpoints"] == [("127.0.0.1", 9000)]


def test_cut_from_clients_keeps_the_peers():
    tables = partition_tables(endpoints(3, 0), {2: FROM_CLIENTS})
    assert tables[2] == {"all_nodes": False, "blocked_nodes": [], "clients": True,
                         "blocked_endpoints": []}
    assert not tables[1]["clients"] and not tables[1]["blocked_endpoints"]


def test_peers_are_known_by_kafkas_inter_node_client_ids():
    assert [peer_node_id(c) for c in ("raft-client-3", "broker-2-fetcher-0",
                                      "broker-12-to-controller", "rdkafka", None, "broker-x")] \
        == [3, 2, 12, None, None, None]
    table = PartitionTable(self_id=1, all_nodes=True)
    assert table.refuses_inbound(2) and not table.refuses_inbound(1)
    assert not table.refuses_inbound(None)
