"""From "which nodes are isolated, and from whom" to each node's partition table.

A node isolated from the nodes refuses every peer and reaches none; every other node refuses
it and does not reach it, so the cut holds from both sides (and after either side restarts,
since the isolated node still refuses the restarted peer).  A node isolated from the clients
keeps its peers and closes every client connection."""

from __future__ import annotations

from collections.abc import Mapping

FROM_NODES, FROM_CLIENTS = "nodes", "clients"


def partition_tables(endpoints: Mapping[int, list[tuple[str, int]]],
                     isolated: Mapping[int, str]) -> dict[int, dict]:
    """``endpoints``: every node's listeners by node id; ``isolated``: node id -> FROM_NODES
    or FROM_CLIENTS.  Returns each node's table as FaultControl.set_partition's arguments."""
    cut = {n for n, how in isolated.items() if how == FROM_NODES}
    tables = {}
    for node in endpoints:
        if node in cut:
            refused = [n for n in endpoints if n != node]
            tables[node] = {"all_nodes": True, "blocked_nodes": refused,
                            "blocked_endpoints": [e for n in refused for e in endpoints[n]]}
        else:
            refused = sorted(cut)
            tables[node] = {"all_nodes": False, "blocked_nodes": refused,
                            "blocked_endpoints": [e for n in refused for e in endpoints[n]]}
        tables[node]["clients"] = isolated.get(node) == FROM_CLIENTS
    return tables
