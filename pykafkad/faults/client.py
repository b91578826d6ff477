"""FaultControl: a test's handle on one node's fault rules, over the node's control channel."""

from __future__ import annotations

import enum
from typing import Any

from pykafkad.faults.control import call


class FaultControl:
    """``broker.faults`` / ``cluster.nodes[i].faults``: add, list and clear a node's rules.

        rule = kafka.faults.add(api="Produce", error="NOT_LEADER_OR_FOLLOWER", count=2)
    """

    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.port = port

    def __repr__(self) -> str:
        return f"FaultControl({self.host}:{self.port})"

    def _call(self, op: str, **fields: Any) -> dict:
        return call(self.host, self.port, {"op": op, **fields})

    def add(self, api: int | str, *, error: int | str | None = None, count: int | None = 1,
            delay_ms: int = 0, close: bool = False, topic: str | None = None,
            partition: int | None = None, group: str | None = None,
            transactional_id: str | None = None) -> int:
        """The next ``count`` requests of ``api`` (Kafka's name or key; ``"*"``: any API, for
        a delay or a close) that name ``topic`` /
        ``partition`` / ``group`` / ``transactional_id`` (when given) wait ``delay_ms``, then
        answer ``error`` (name or code) or lose their connection (``close``); with only a
        delay they are answered normally.  ``count`` None: until cleared.  Returns the rule
        id."""
        if isinstance(error, enum.Enum):
            error = int(error.value)
        answer = self._call("faults.add", api=api, error=error, count=count, delay_ms=delay_ms,
                            close=close, topic=topic, partition=partition, group=group,
                            transactional_id=transactional_id)
        return answer["rule_id"]

    def list(self) -> list[dict]:
        """The rules still armed, oldest first, each with ``fired`` (requests it hit)."""
        return self._call("faults.list")["rules"]

    def clear(self, rule_id: int | None = None) -> int:
        """Removes one rule, or every rule; returns how many went."""
        return self._call("faults.clear", rule_id=rule_id)["removed"]

    def set_partition(self, *, blocked_nodes=(), all_nodes: bool = False, clients: bool = False,
                      blocked_endpoints=()) -> dict:
        """Replaces the node's partition table (see pykafkad/faults/partition_table.py);
        ``run_cluster``'s isolate / heal compute it for every node."""
        return self._call("partition.set", blocked_nodes=list(blocked_nodes),
                          all_nodes=all_nodes, clients=clients,
                          blocked_endpoints=[list(e) for e in blocked_endpoints])["partition"]

    def partition(self) -> dict:
        return self._call("partition.get")["partition"]
