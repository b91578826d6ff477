"""A node's partition table: which peers it may not talk to, and whether clients are cut off.

Isolation happens inside the nodes, so it needs no root and no firewall: a node closes
connections accepted from a refused peer (or from clients), and its inter-node client refuses
to reach a refused peer's endpoints.  A peer is told from a client by the client id Kafka's
inter-node clients use, which carries the sender's node id (``raft-client-<id>``,
``broker-<id>-fetcher-<n>``, ``broker-<id>-to-controller`` ...)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_NODE_CLIENT_ID = re.compile(r"raft-client-(\d+)|broker-(\d+)-.+")


def peer_node_id(client_id: str | None) -> int | None:
    """The sending node's id when ``client_id`` is an inter-node client's, else None."""
    m = _NODE_CLIENT_ID.fullmatch(client_id or "")
    if m is None:
        return None
    return int(m.group(1) or m.group(2))


@dataclass
class PartitionTable:
    """``self_id``: this node (its own connections to itself are never refused)."""

    self_id: int = -1
    #: peers this node may not reach or be reached by
    blocked_nodes: set[int] = field(default_factory=set)
    #: every peer is refused (the node is isolated from the others)
    all_nodes: bool = False
    #: host:port endpoints (any listener) of refused peers, for outgoing connections
    blocked_endpoints: set[tuple[str, int]] = field(default_factory=set)
    #: clients are cut off (only inter-node connections are accepted)
    clients: bool = False

    @property
    def active(self) -> bool:
        return bool(self.blocked_nodes or self.all_nodes or self.blocked_endpoints or self.clients)

    def refuses_inbound(self, peer: int | None) -> bool:
        if peer is None:
            return self.clients
        if peer == self.self_id:
            return False
        return self.all_nodes or peer in self.blocked_nodes

    def refuses_outbound(self, host: str, port: int) -> bool:
        return (host, port) in self.blocked_endpoints

    def as_dict(self) -> dict:
        return {"self_id": self.self_id, "blocked_nodes": sorted(self.blocked_nodes),
                "all_nodes": self.all_nodes, "clients": self.clients,
                "blocked_endpoints": sorted([h, p] for h, p in self.blocked_endpoints)}
