"""Kafka's BrokerServer, the data-plane half: what turns today's Broker into a KRaft broker.

It puts the cluster-mode parts in place of the single-node ones (the metadata cache and topic
view fed by the BrokerMetadataPublisher, the AlterPartitionManager as every Partition's
``alter_partition``, producer id blocks from the controller, forwarding of the admin APIs)
and runs their tasks: the replica fetchers, the AlterPartition sender, the producer id
allocator.  The node (KafkaRaftServer) registers ``publisher`` with its metadata loader.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import trio

from pykafkad.kraft.alter_partition_manager import AlterPartitionManager
from pykafkad.kraft.assignments_manager import AssignmentsManager
from pykafkad.kraft.broker_metadata_publisher import BrokerMetadataPublisher
from pykafkad.kraft.coordinator_locator import AutoTopicCreationManager, CoordinatorLocator
from pykafkad.kraft.forwarding import ForwardingManager
from pykafkad.kraft.producer_id_manager import RPCProducerIdManager
from pykafkad.replica.fetcher_manager import ReplicaFetcherManager
from pykafkad.replica.leader_endpoint import FetcherConfig
from pykafkad.security.client import inter_broker_security


class BrokerServer:
    def __init__(self, broker: Any, channel: Any, *, inter_broker_listener: str,
                 broker_epoch: Callable[[], int], fetcher_config: FetcherConfig | None = None):
        self.broker = broker
        self.channel = channel
        node_id = broker.node_id
        self.alter_partition = AlterPartitionManager(channel, node_id, broker_epoch)
        broker.replicas.alter_partition = self.alter_partition
        self.producer_ids = RPCProducerIdManager(channel, node_id, broker_epoch)
        broker.producer_ids = self.producer_ids
        broker.forwarding = ForwardingManager(channel)
        self.publisher: BrokerMetadataPublisher | None = None
        self.fetchers = ReplicaFetcherManager(
            broker_id=node_id, get_partition=lambda tp: self.publisher.follower(tp),
            config=fetcher_config or FetcherConfig.from_config(broker.config),
            broker_epoch=broker_epoch, security=inter_broker_security(broker.config))
        self.publisher = BrokerMetadataPublisher(
            broker, self.fetchers, inter_broker_listener=inter_broker_listener,
            spawn=self._spawn)
        self.assignments = AssignmentsManager(channel, node_id, broker_epoch)
        self.publisher.assignments = self.assignments
        broker.assignments = self.assignments  # replica moves between log dirs report here
        self._nursery: trio.Nursery | None = None
        broker.auto_topic_creation = AutoTopicCreationManager(broker, channel, self._spawn)
        broker.coordinator_locator = CoordinatorLocator(broker, broker.auto_topic_creation)

    def _spawn(self, fn, *args) -> None:
        if self._nursery is not None:
            self._nursery.start_soon(fn, *args)

    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        """Runs the fetchers and the senders until cancelled."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            await nursery.start(self.fetchers.run)
            await nursery.start(self.alter_partition.run)
            await nursery.start(self.producer_ids.run)
            await nursery.start(self.assignments.run)
            task_status.started()
