"""transaction.partition.verification.enable (KIP-890 part 1) across brokers: Kafka's
AddPartitionsToTxnManager.

Before a producer's first transactional batch in a partition is appended, the partition's
leader asks the transactional id's coordinator (the leader of its ``__transaction_state``
partition) whether the partition was added to the producer's ongoing transaction.  A coordinator
on this broker is asked directly (``verify_partition``); another broker with AddPartitionsToTxn
v4+, ``verify_only``, as Kafka's brokers do.  Its answer is mapped as Kafka's ReplicaManager
maps it for the producer: PRODUCER_FENCED is INVALID_PRODUCER_EPOCH, a coordinator that cannot
answer now (not available, loading, moved, unreachable, busy) NOT_ENOUGH_REPLICAS (which every
client retries without a metadata refresh), a peer too old for v4 is not asked (the batch goes
in unverified, as Kafka).

Transaction version 2 (KIP-890 part 2): a Produce v12+ or TxnOffsetCommit v5+ producer never
sends AddPartitionsToTxn/AddOffsetsToTxn; the broker adds the partition instead (``add``:
AddPartitionsToTxn v5 without verify_only, as Kafka's AddPartitionsToTxnManager does for the
ADD_PARTITION operation).
"""

from __future__ import annotations

import logging

import trio

from pykafkad.coordinator.partitioning import partition_for
from pykafkad.coordinator.rebalance import append_error
from pykafkad.coordinator.transaction_log import TRANSACTION_STATE_TOPIC
from pykafkad.network.client import NodeClient, NodeUnavailableError, UnsupportedVersionError
from pykafkad.security.client import inter_broker_security
from wire.errors import ErrorCode, KafkaError
from wire.messages.add_partitions_to_txn_request import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnTopic,
    AddPartitionsToTxnTransaction,
)

log = logging.getLogger("pykafkad.txn")

#: AddPartitionsToTxn v4 batches transactions and carries verify_only (broker to broker)
VERIFY_ONLY_VERSION = 4
#: v5: the partition is added for a transaction version 2 producer
ADD_PARTITION_VERSION = 5
NETWORK_EXCEPTION = ErrorCode.NETWORK_EXCEPTION
#: what the producer is told instead of a coordinator-side retriable error
_RETRY_AS_NOT_ENOUGH_REPLICAS = frozenset({
    ErrorCode.CONCURRENT_TRANSACTIONS, NETWORK_EXCEPTION, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
    ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR})


def _name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return str(code)


class AddPartitionsToTxnManager:
    """Verifies transactional appends with the transactional id's coordinator."""

    def __init__(self, broker):
        self.broker = broker
        self._clients: dict[int, NodeClient] = {}

    def coordinator_endpoint(self, transactional_id: str) -> tuple[int, str, int] | None:
        """The leader of the id's __transaction_state partition (None / node id < 0: none)."""
        topic = self.broker.topics.get(TRANSACTION_STATE_TOPIC)
        n = (topic.num_partitions if topic is not None
             else self.broker.config["transaction.state.log.num.partitions"])
        return self.broker.leader_endpoint(TRANSACTION_STATE_TOPIC,
                                           partition_for(transactional_id, n))

    def is_remote(self, transactional_id: str | None) -> bool:
        """Whether the id's coordinator is another broker (then ``verify`` goes over the
        network; otherwise the partition asks this broker's coordinator directly)."""
        if not transactional_id:
            return False
        endpoint = self.coordinator_endpoint(transactional_id)
        return endpoint is None or endpoint[0] != self.broker.node_id

    async def verify(self, transactional_id: str, producer_id: int, producer_epoch: int,
                     topic: str, partition: int, *, add: bool = False
                     ) -> tuple[int, str | None]:
        """(error code, message) for the producer: NONE when the partition is in the
        producer's ongoing transaction (``add``: once it was added to it, transaction
        version 2)."""
        code = await self._ask(transactional_id, producer_id, producer_epoch, topic, partition,
                               add=add)
        if code == ErrorCode.PRODUCER_FENCED:
            code = ErrorCode.INVALID_PRODUCER_EPOCH
        if code in _RETRY_AS_NOT_ENOUGH_REPLICAS:
            return ErrorCode.NOT_ENOUGH_REPLICAS, (
                "Unable to verify the partition has been added to the transaction. Underlying "
                f"error: {_name(code)}")
        if code == ErrorCode.INVALID_TXN_STATE:
            return code, "Partition was not added to the transaction"
        return code, None

    async def add_offsets(self, transactional_id: str, producer_id: int,
                          producer_epoch: int, topic: str, partition: int) -> int:
        """TxnOffsetCommit v5+ whose transactional id's coordinator is another broker: the
        group's offsets partition is added there (AddPartitionsToTxn v5), errors mapped as
        ``verify_offsets`` maps them."""
        return await self.verify_offsets(transactional_id, producer_id, producer_epoch, topic,
                                         partition, add=True)

    async def verify_offsets(self, transactional_id: str, producer_id: int,
                             producer_epoch: int, topic: str, partition: int, *,
                             add: bool = False) -> int:
        """TxnOffsetCommit on a group coordinator whose transactional id's coordinator is
        another broker: whether the group's offsets partition was added (AddOffsetsToTxn) to the
        producer's ongoing transaction.  The coordinator's code, PRODUCER_FENCED as
        INVALID_PRODUCER_EPOCH (what a fenced write answers) and one it cannot give now as
        COORDINATOR_NOT_AVAILABLE (the client retries it; Kafka's group coordinator turns
        NOT_ENOUGH_REPLICAS into that)."""
        code = await self._ask(transactional_id, producer_id, producer_epoch, topic, partition,
                               add=add)
        if code == ErrorCode.PRODUCER_FENCED:
            return ErrorCode.INVALID_PRODUCER_EPOCH
        if code in _RETRY_AS_NOT_ENOUGH_REPLICAS:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        return code

    async def _ask(self, transactional_id: str, producer_id: int, producer_epoch: int,
                   topic: str, partition: int, *, add: bool = False) -> int:
        endpoint = self.coordinator_endpoint(transactional_id)
        if endpoint is None or endpoint[0] < 0:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        node_id, host, port = endpoint
        coordinator = self.broker.txn_coordinator
        if node_id == self.broker.node_id:
            if not add:
                return coordinator.add_partitions(
                    transactional_id, producer_id, producer_epoch, [(topic, partition)],
                    verify_only=True)
            try:
                code = coordinator.add_partitions(
                    transactional_id, producer_id, producer_epoch, [(topic, partition)],
                    client_transaction_version=2)
            except KafkaError as e:
                return append_error(e.code)
            replicated = await coordinator.replicated(transactional_id)
            return code if code else replicated
        request = AddPartitionsToTxnRequest(transactions=[AddPartitionsToTxnTransaction(
            transactional_id=transactional_id, producer_id=producer_id,
            producer_epoch=producer_epoch, verify_only=not add,
            topics=[AddPartitionsToTxnTopic(name=topic, partitions=[partition])])])
        client = self._client(node_id, host, port)
        try:
            versions = await client.api_versions()
            low, high = versions.get(AddPartitionsToTxnRequest.API_KEY, (0, -1))
            if add and high < ADD_PARTITION_VERSION:
                return ErrorCode.UNSUPPORTED_VERSION
            if high < VERIFY_ONLY_VERSION:
                log.warning("broker %d serves no AddPartitionsToTxn v4: %s-%d is appended "
                            "unverified", node_id, topic, partition)
                return ErrorCode.NONE
            response = await client.request(
                request, timeout_s=self.broker.config["request.timeout.ms"] / 1000,
                **({"version": ADD_PARTITION_VERSION} if add else {}))
        except UnsupportedVersionError:
            return ErrorCode.NONE
        except (NodeUnavailableError, trio.TooSlowError) as e:
            log.info("verifying %s-%d with broker %d failed: %s", topic, partition, node_id, e)
            return NETWORK_EXCEPTION
        if response.error_code:
            return (ErrorCode.INVALID_TXN_STATE
                    if response.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
                    else response.error_code)
        for result in response.results_by_transaction:
            for t in result.topic_results:
                for p in t.results_by_partition:
                    if (t.name, p.partition_index) == (topic, partition):
                        return p.partition_error_code
        return ErrorCode.NONE

    def _client(self, node_id: int, host: str, port: int) -> NodeClient:
        client = self._clients.get(node_id)
        if client is None or (client.host, client.port) != (host, port):
            client = self._clients[node_id] = NodeClient(
                host, port, client_id=f"broker-{self.broker.node_id}-verification",
                security=inter_broker_security(self.broker.config))
        return client

    async def run(self) -> None:
        """Holds the connections for the broker's lifetime and closes them at shutdown."""
        try:
            await trio.sleep_forever()
        finally:
            clients, self._clients = self._clients, {}
            with trio.CancelScope(shield=True):
                for client in clients.values():
                    await client.aclose()
