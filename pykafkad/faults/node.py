"""A node's fault state (its rules and partition table) and the commands that change it."""

from __future__ import annotations

import json
import logging
from typing import Any

from pykafkad.faults.partition_table import PartitionTable
from pykafkad.faults.rules import FaultRuleError, FaultRules
from pykafkad.network import client as node_client

log = logging.getLogger("pykafkad.faults")

#: the property that turns the control channel on (off by default; pykafkad.testing and
#: ``pykafkad cluster`` turn it on)
FAULTS_ENABLE = "pykafkad.faults.enable"
_RULE_FIELDS = ("error", "count", "delay_ms", "close", "topic", "partition", "group",
                "transactional_id")


def faults_enabled(config) -> bool:
    return str(config.ignored.get(FAULTS_ENABLE, "false")).strip().lower() == "true"


class NodeFaults:
    """Held by the Server; connections consult ``rules.by_key`` and ``partition``."""

    def __init__(self, enabled: bool = False, node_id: int = -1) -> None:
        self.enabled = enabled
        self.rules = FaultRules()
        self.partition = PartitionTable(self_id=node_id)
        #: set by the Server: closes accepted connections the partition table now refuses
        self.on_partition_change = None

    def handle(self, payload: bytes) -> dict[str, Any]:
        """Runs one control command; problems come back as ``{"error": ...}``."""
        try:
            command = json.loads(payload)
            op = command.pop("op")
            if op == "faults.add":
                api = command.pop("api")
                unknown = set(command) - set(_RULE_FIELDS)
                if unknown:
                    raise FaultRuleError(f"unknown rule fields: {', '.join(sorted(unknown))}")
                rule = self.rules.add(api, **command)
                log.info("fault rule %d added: %s", rule.rule_id, rule.as_dict())
                return {"rule_id": rule.rule_id}
            if op == "faults.list":
                return {"rules": [r.as_dict() for r in self.rules.list()]}
            if op == "faults.clear":
                return {"removed": self.rules.clear(command.get("rule_id"))}
            if op == "partition.set":
                self.set_partition(**command)
                return {"partition": self.partition.as_dict()}
            if op == "partition.get":
                return {"partition": self.partition.as_dict()}
            raise FaultRuleError(f"unknown command {op!r}")
        except (FaultRuleError, AttributeError, KeyError, TypeError, ValueError) as e:
            return {"error": str(e) if not isinstance(e, KeyError) else f"missing {e}"}

    def set_partition(self, blocked_nodes=(), all_nodes: bool = False, clients: bool = False,
                      blocked_endpoints=()) -> None:
        """Replaces the partition table (all empty: healed) and applies it at once."""
        table = self.partition
        table.blocked_nodes = {int(n) for n in blocked_nodes}
        table.all_nodes = bool(all_nodes)
        table.clients = bool(clients)
        table.blocked_endpoints = {(str(h), int(p)) for h, p in blocked_endpoints}
        log.info("partition table: %s", table.as_dict())
        # the inter-node client consults it before every request (one global read)
        node_client.refuse_endpoint = table.refuses_outbound if table.blocked_endpoints else None
        if self.on_partition_change is not None:
            self.on_partition_change()
