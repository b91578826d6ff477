"""The broker's view of the cluster for the handlers that describe it (Kafka's MetadataCache):
who leads which partition in which epoch, the replicas and ISR, the live brokers and their
advertised endpoint per listener, the controller id.

Two implementations behind one interface: ``SingleNodeMetadataCache`` (today's single broker:
every partition is this broker's, the replica layer knows the epochs) and
``KRaftMetadataCache`` (a KRaft broker: everything comes from the last published
MetadataImage, as Kafka's KRaftMetadataCache).
"""

from __future__ import annotations

from typing import Any, NamedTuple


class BrokerNode(NamedTuple):
    """A broker as Metadata / DescribeCluster advertise it on one listener."""

    node_id: int
    host: str
    port: int
    rack: str | None


class PartitionView(NamedTuple):
    leader: int
    leader_epoch: int
    replicas: list[int]
    isr: list[int]
    offline: list[int]


class SingleNodeMetadataCache:
    """One broker that leads everything (the replica layer holds the epochs)."""

    def __init__(self, broker: Any):
        self.broker = broker

    def partition(self, topic: str, index: int) -> PartitionView:
        leader, epoch, replicas, isr = self.broker.replicas.describe(topic, index)
        return PartitionView(leader, epoch, replicas, isr, [])

    def alive_brokers(self, listener_name: str) -> list[BrokerNode]:
        ep = self.broker.endpoint_for(listener_name)
        return [BrokerNode(ep.node_id, ep.host, ep.port, self.broker.config["broker.rack"])]

    def controller_id(self, listener_name: str) -> int:
        return self.broker.endpoint_for(listener_name).node_id

    def brokers(self, listener_name: str, include_fenced: bool) -> list[tuple[BrokerNode, bool]]:
        """(node, fenced) for DescribeCluster: this one broker is never fenced."""
        return [(n, False) for n in self.alive_brokers(listener_name)]

    def broker_endpoint(self, broker_id: int, listener_name: str) -> BrokerNode | None:
        nodes = self.alive_brokers(listener_name)
        return next((n for n in nodes if n.node_id == broker_id), None)


class KRaftMetadataCache:
    """The last MetadataImage the broker's publisher saw."""

    def __init__(self, node_id: int):
        self.node_id = node_id
        self.image: Any = None
        #: the quorum leader as the raft client knows it (Kafka answers a random alive broker
        #: as controller_id to clients; -1 before any broker is known)
        self._controller_hint = -1

    def set_image(self, image: Any) -> None:
        self.image = image

    def partition(self, topic: str, index: int) -> PartitionView:
        image = self.image
        t = image.topics.by_name.get(topic) if image is not None else None
        p = t.partitions.get(index) if t is not None else None
        if p is None:
            return PartitionView(-1, -1, [], [], [])
        offline = [r for r in p.replicas if not self._is_alive(r)]
        return PartitionView(p.leader, p.leader_epoch, list(p.replicas), list(p.isr), offline)

    def _is_alive(self, broker_id: int) -> bool:
        b = self.image.cluster.get(broker_id) if self.image is not None else None
        return b is not None and not b.fenced

    def is_replica_isr_eligible(self, broker_id: int) -> bool:
        """Kafka's isReplicaIsrEligible (KIP-841): registered, unfenced, not shutting down."""
        b = self.image.cluster.get(broker_id) if self.image is not None else None
        return b is not None and not b.fenced and not b.in_controlled_shutdown

    def alive_brokers(self, listener_name: str) -> list[BrokerNode]:
        """Unfenced brokers with an endpoint on ``listener_name`` (Kafka's
        getAliveBrokerNodes), by id."""
        if self.image is None:
            return []
        out = []
        for broker_id in sorted(self.image.cluster):
            b = self.image.cluster[broker_id]
            ep = b.listener(listener_name)
            if ep is not None and not b.fenced:
                out.append(BrokerNode(broker_id, ep.host, ep.port, b.rack))
        return out

    def brokers(self, listener_name: str, include_fenced: bool) -> list[tuple[BrokerNode, bool]]:
        """(node, fenced) by id for DescribeCluster: the alive brokers, or every registered
        one with an endpoint on ``listener_name`` (KIP-1073's include_fenced_brokers)."""
        if self.image is None:
            return []
        out = []
        for broker_id in sorted(self.image.cluster):
            b = self.image.cluster[broker_id]
            ep = b.listener(listener_name)
            if ep is not None and (include_fenced or not b.fenced):
                out.append((BrokerNode(broker_id, ep.host, ep.port, b.rack), bool(b.fenced)))
        return out

    def broker_endpoint(self, broker_id: int, listener_name: str) -> BrokerNode | None:
        """A registered broker's endpoint on ``listener_name``, fenced or not (followers reach
        their leader through it)."""
        b = self.image.cluster.get(broker_id) if self.image is not None else None
        ep = b.listener(listener_name) if b is not None else None
        return None if ep is None else BrokerNode(broker_id, ep.host, ep.port, b.rack)

    def controller_id(self, listener_name: str) -> int:
        """Kafka 4's KRaft brokers answer a random alive broker (clients send their admin
        requests there, and it forwards them); this one answers itself when alive, else the
        lowest alive id, so repeated answers stay stable."""
        nodes = self.alive_brokers(listener_name)
        ids = [n.node_id for n in nodes]
        if self.node_id in ids:
            return self.node_id
        return ids[0] if ids else -1
