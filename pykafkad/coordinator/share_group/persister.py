"""The share-partition leader's persister (Kafka's DefaultStatePersister): a share partition's
state is read from and written to its share coordinator, the leader of the key's
__share_group_state partition.  Where that is this node the coordinator is called in place;
else ReadShareGroupState / WriteShareGroupState go to it over the inter-broker listener.  A
coordinator that moved or is loading is looked up again and retried until the deadline, as
Kafka's persister retries NOT_COORDINATOR and COORDINATOR_NOT_AVAILABLE."""

from __future__ import annotations

import logging

import trio

from pykafkad.coordinator.share_group import state_records as sr
from pykafkad.coordinator.share_group.share_coordinator import ShareCoordinator
from pykafkad.coordinator.share_group.state_store import SHARE_GROUP_STATE_TOPIC
from pykafkad.network.client import NodeClient, NodeUnavailableError
from pykafkad.security.client import inter_broker_security
from wire.errors import ErrorCode, KafkaError
from wire.messages import delete_share_group_state_request as delete_req
from wire.messages import initialize_share_group_state_request as init_req
from wire.messages import read_share_group_state_request as read_req
from wire.messages import read_share_group_state_summary_request as summary_req
from wire.messages import write_share_group_state_request as write_req

log = logging.getLogger("pykafkad.coordinator.share")

#: errors after which the coordinator is looked up again
_RETRIABLE = frozenset({ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE,
                        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.NETWORK_EXCEPTION,
                        ErrorCode.REQUEST_TIMED_OUT})
#: how long one read or write keeps retrying (Kafka's persister: until the request times out)
RETRY_S = 15.0
BACKOFF_S = 0.1
Key = tuple[str, bytes, int]


class SharePersister:
    def __init__(self, broker, coordinator: ShareCoordinator):
        self.broker = broker
        self.coordinator = coordinator
        self._clients: dict[int, NodeClient] = {}

    async def read(self, key: Key, leader_epoch: int) -> sr.ShareStateValue | None:
        """The stored state; None for a share partition never initialized."""
        group_id, topic_id, partition = key
        request = read_req.ReadShareGroupStateRequest(group_id=group_id, topics=[
            read_req.ReadStateData(topic_id=topic_id, partitions=[read_req.PartitionData(
                partition=partition, leader_epoch=leader_epoch)])])

        async def local():
            try:
                return ErrorCode.NONE, self.coordinator.read(key, leader_epoch)
            except KafkaError as e:
                return e.code, None

        code, answer = await self._call(key, local, request)
        if code == ErrorCode.INVALID_REQUEST:  # uninitialized
            return None
        if code:
            raise KafkaError(code)
        if isinstance(answer, sr.ShareStateValue):
            return answer
        p = answer.results[0].partitions[0]
        return sr.ShareStateValue(
            snapshot_epoch=0, leader_epoch=leader_epoch, start_offset=p.start_offset,
            state_epoch=p.state_epoch,
            state_batches=[(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count)
                           for b in p.state_batches])

    async def summary(self, key: Key) -> tuple[int, int, int, int] | None:
        """ReadShareGroupStateSummary: (state epoch, leader epoch, start offset, delivery
        complete count) of the stored state, None for a share partition never initialized
        (what the group coordinator's admin APIs describe, wherever the state lives)."""
        group_id, topic_id, partition = key
        request = summary_req.ReadShareGroupStateSummaryRequest(group_id=group_id, topics=[
            summary_req.ReadStateSummaryData(topic_id=topic_id, partitions=[
                summary_req.PartitionData(partition=partition, leader_epoch=0)])])

        async def local():
            return ErrorCode.NONE, self.coordinator.summary(key)

        code, answer = await self._call(key, local, request)
        if code:
            raise KafkaError(code)
        if answer is None or isinstance(answer, sr.ShareStateValue):
            state = answer
            return None if state is None else (state.state_epoch, state.leader_epoch,
                                               state.start_offset,
                                               state.delivery_complete_count)
        p = answer.results[0].partitions[0]
        if p.start_offset < 0:
            return None
        return p.state_epoch, p.leader_epoch, p.start_offset, p.delivery_complete_count

    async def write(self, key: Key, state_epoch: int, leader_epoch: int, start_offset: int,
                    batches: list[tuple[int, int, int, int]], done: int) -> None:
        group_id, topic_id, partition = key
        request = write_req.WriteShareGroupStateRequest(group_id=group_id, topics=[
            write_req.WriteStateData(topic_id=topic_id, partitions=[write_req.PartitionData(
                partition=partition, state_epoch=state_epoch, leader_epoch=leader_epoch,
                start_offset=start_offset, delivery_complete_count=done,
                state_batches=[write_req.StateBatch(first_offset=a, last_offset=z,
                                                    delivery_state=s, delivery_count=c)
                               for a, z, s, c in batches])])])

        await self._written(key, lambda: self.coordinator.write(
            key, state_epoch, leader_epoch, start_offset, batches, done), request)

    async def initialize(self, key: Key, state_epoch: int, start_offset: int) -> None:
        """InitializeShareGroupState: the share partition's first state (Kafka's group
        coordinator initializes it; pykafkad's leader does, on its first read)."""
        group_id, topic_id, partition = key
        request = init_req.InitializeShareGroupStateRequest(group_id=group_id, topics=[
            init_req.InitializeStateData(topic_id=topic_id, partitions=[init_req.PartitionData(
                partition=partition, state_epoch=state_epoch, start_offset=start_offset)])])

        await self._written(key, lambda: self.coordinator.initialize(
            key, state_epoch, start_offset), request)

    async def delete(self, key: Key) -> None:
        """DeleteShareGroupState: the share partition's stored state is forgotten."""
        group_id, topic_id, partition = key
        request = delete_req.DeleteShareGroupStateRequest(group_id=group_id, topics=[
            delete_req.DeleteStateData(topic_id=topic_id, partitions=[
                delete_req.PartitionData(partition=partition)])])

        await self._written(key, lambda: self.coordinator.delete(key), request)

    async def _written(self, key: Key, append, request) -> None:
        """A state change: ``append()`` (the coordinator's records, when this node is the key's
        coordinator) answered once replicated, else ``request`` to the coordinator."""
        async def local():
            try:
                receipt = append()
            except KafkaError as e:
                return e.code, None
            return await self.coordinator.store.replicated(receipt), None

        code, _ = await self._call(key, local, request)
        if code:
            raise KafkaError(code)

    async def _call(self, key: Key, local, request) -> tuple[int, object]:
        """(error code, the answer): in place when this node is the key's coordinator, else
        over the wire; retried while the coordinator moves."""
        deadline = trio.current_time() + RETRY_S
        while True:
            code, answer = await self._once(key, local, request)
            if code not in _RETRIABLE or trio.current_time() >= deadline \
                    or self.broker.shutting_down:
                return code, answer
            await trio.sleep(BACKOFF_S)

    async def _once(self, key: Key, local, request) -> tuple[int, object]:
        if self.broker.topics.get(SHARE_GROUP_STATE_TOPIC) is None:
            self.coordinator.store.ensure_topic()
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, None
        index = self.coordinator.index_of(key)
        endpoint = self.broker.leader_endpoint(SHARE_GROUP_STATE_TOPIC, index)
        if endpoint is None or endpoint[0] < 0:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, None
        node_id, host, port = endpoint
        if node_id == self.broker.node_id:
            code = self.coordinator.check(key)
            return (code, None) if code else await local()
        client = self._client(node_id, host, port)
        try:
            response = await client.request(
                request, timeout_s=self.broker.config["request.timeout.ms"] / 1000)
        except (NodeUnavailableError, trio.TooSlowError, OSError) as e:
            log.info("share state of %s from broker %d: %s", key, node_id, e)
            return ErrorCode.NETWORK_EXCEPTION, None
        p = response.results[0].partitions[0]
        return p.error_code, response

    def client(self, node_id: int, host: str, port: int) -> NodeClient:
        """This node's connection to another broker's inter-broker listener."""
        return self._client(node_id, host, port)

    def _client(self, node_id: int, host: str, port: int) -> NodeClient:
        client = self._clients.get(node_id)
        if client is None or (client.host, client.port) != (host, port):
            client = self._clients[node_id] = NodeClient(
                host, port, client_id=f"broker-{self.broker.node_id}-share-persister",
                security=inter_broker_security(self.broker.config))
        return client
