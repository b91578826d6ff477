"""Kafka's ReplicaFetcherManager: the follower's fetcher tasks, ``num.replica.fetchers`` per
source broker, each partition on the fetcher its topic and partition hash to.

``await nursery.start(manager.run)`` first; then ``add_partitions`` / ``remove_partitions`` are
synchronous (as the replica manager calls them while applying metadata). A fetcher whose
partitions are all gone is shut down, and its connection closed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import trio

from pykafkad.network.client import NodeClient
from pykafkad.replica.fetcher import (
    FollowerPartition,
    InitialFetchState,
    PartitionFetchState,
    ReplicaFetcher,
)
from pykafkad.replica.leader_endpoint import (
    BrokerEndpoint,
    FetcherConfig,
    RemoteLeaderEndPoint,
    TopicPartition,
)


def java_string_hash(s: str) -> int:
    """Java's String.hashCode (UTF-16 code units, 32-bit overflow)."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def fetcher_id(tp: TopicPartition, num_fetchers: int) -> int:
    """Kafka's getFetcherId: abs(31 * topic.hashCode + partition) % num.replica.fetchers."""
    h = (31 * java_string_hash(tp[0]) + tp[1]) & 0xFFFFFFFF
    h = h - (1 << 32) if h & 0x80000000 else h
    return (0 if h == -(1 << 31) else abs(h)) % num_fetchers  # Kafka's Utils.abs


class ReplicaFetcherManager:
    """The fetchers of one follower broker."""

    def __init__(
        self,
        *,
        broker_id: int,
        get_partition: Callable[[TopicPartition], FollowerPartition | None],
        config: FetcherConfig | None = None,
        broker_epoch: Callable[[], int] = lambda: -1,
        client_factory: Callable[[BrokerEndpoint, int], NodeClient] | None = None,
        truncate_on_fetch: bool = True,
        on_partition_failed: Callable[[TopicPartition, str], None] | None = None,
        security: Any = None,
    ):
        self.broker_id = broker_id
        self.config = config or FetcherConfig()
        self._get_partition = get_partition
        self._broker_epoch = broker_epoch
        #: pykafkad.security.client.ClientSecurity of the inter-broker listener, or None
        self.security = security
        self._client_factory = client_factory or self._default_client
        self.truncate_on_fetch = truncate_on_fetch
        self.on_partition_failed = on_partition_failed
        #: (source broker id, fetcher id) -> fetcher
        self.fetchers: dict[tuple[int, int], ReplicaFetcher] = {}
        self._nursery: trio.Nursery | None = None

    def _default_client(self, endpoint: BrokerEndpoint, fid: int) -> NodeClient:
        return NodeClient(endpoint.host, endpoint.port,
                          client_id=f"broker-{self.broker_id}-fetcher-{fid}",
                          security=self.security)

    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        """Hosts the fetcher tasks until cancelled."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            task_status.started()
            try:
                await trio.sleep_forever()
            finally:
                self._nursery = None
                for fetcher in self.fetchers.values():
                    fetcher.shutdown()

    def add_partitions(
        self, partitions: dict[TopicPartition, tuple[BrokerEndpoint, int, int | None]]
    ) -> None:
        """Starts fetching ``{tp: (leader endpoint, leader epoch, fetch offset or None)}``; a
        partition fetched from another broker before moves to the new one."""
        if self._nursery is None:
            raise RuntimeError("ReplicaFetcherManager.run is not running")
        grouped: dict[tuple[int, int], tuple[BrokerEndpoint, dict]] = {}
        for tp, (endpoint, epoch, offset) in partitions.items():
            key = (endpoint.id, fetcher_id(tp, self.config.num_fetchers))
            grouped.setdefault(key, (endpoint, {}))[1][tp] = InitialFetchState(epoch, offset)
        for key, (endpoint, initial) in grouped.items():
            for other_key, other in self.fetchers.items():
                if other_key != key:
                    other.remove_partitions(initial)
            fetcher = self.fetchers.get(key)
            if fetcher is not None and fetcher.leader.endpoint != endpoint:
                fetcher.shutdown()  # the broker moved: a new fetcher at its new address
                fetcher = None
            if fetcher is None:
                fetcher = self._new_fetcher(endpoint, key[1])
                self.fetchers[key] = fetcher
                self._nursery.start_soon(fetcher.run)
            fetcher.add_partitions(initial)
        self.shutdown_idle_fetchers()

    def remove_partitions(self, tps: Iterable[TopicPartition]) -> dict[TopicPartition, PartitionFetchState]:
        """Stops fetching ``tps``; returns their last fetch states."""
        tps = list(tps)
        removed: dict[TopicPartition, PartitionFetchState] = {}
        for fetcher in self.fetchers.values():
            removed.update(fetcher.remove_partitions(tps))
        self.shutdown_idle_fetchers()
        return removed

    def shutdown_idle_fetchers(self) -> None:
        for key, fetcher in list(self.fetchers.items()):
            if not fetcher.states and not fetcher.failed:
                fetcher.shutdown()
                del self.fetchers[key]

    def fetcher_for(self, tp: TopicPartition) -> ReplicaFetcher | None:
        for fetcher in self.fetchers.values():
            if tp in fetcher.states or tp in fetcher.failed:
                return fetcher
        return None

    def fetch_state(self, tp: TopicPartition) -> PartitionFetchState | None:
        fetcher = self.fetcher_for(tp)
        return fetcher.fetch_state(tp) if fetcher is not None else None

    @property
    def failed_partitions(self) -> dict[TopicPartition, str]:
        out: dict[TopicPartition, str] = {}
        for fetcher in self.fetchers.values():
            out.update(fetcher.failed)
        return out

    def _new_fetcher(self, endpoint: BrokerEndpoint, fid: int) -> ReplicaFetcher:
        leader = RemoteLeaderEndPoint(
            endpoint, self._client_factory(endpoint, fid), replica_id=self.broker_id,
            broker_epoch=self._broker_epoch, config=self.config)
        return ReplicaFetcher(
            f"ReplicaFetcherThread-{fid}-{endpoint.id}", leader, self._get_partition,
            truncate_on_fetch=self.truncate_on_fetch,
            on_partition_failed=self.on_partition_failed)
