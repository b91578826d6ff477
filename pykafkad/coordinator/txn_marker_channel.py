"""The transaction coordinator's marker channel: Kafka's TransactionMarkerChannelManager and
TransactionMarkerRequestCompletionHandler (KIP-98).

Once PrepareCommit/PrepareAbort is in ``__transaction_state`` (and replicated), the markers of the
transaction are queued per destination broker, the leader of each partition
(``leader_endpoint(topic, partition) -> (node_id, host, port) | None``), and sent with
WriteTxnMarkers: one request in flight per broker, carrying the markers of every transaction
queued for it.  A partition whose marker failed with a retriable error (leader moved, not enough
replicas, disk full, timed out), or whose broker could not be reached, is queued again, to its
leader of the moment, after ``retry.backoff.ms``; a partition with no leader entry at all (its
topic was deleted) is dropped from the transaction, as Kafka does.  Once every partition has its
marker, the coordinator writes CompleteCommit/CompleteAbort (retried while that write fails, e.g.
on a full disk).  A producer or coordinator epoch that moved on (INVALID_PRODUCER_EPOCH,
TRANSACTION_COORDINATOR_FENCED), or a coordinator that lost the transaction's partition, ends
the sending: whoever owns the transaction now completes it.

Markers for partitions this broker leads go through the same WriteTxnMarkers code
(``txn_marker_writer.write_txn_markers``) without a socket: the request and response objects
and the appends are the same, only the bytes are skipped.  A single node so never depends on
its advertised listener being reachable from itself (a NAT'd or containerised
``advertised.listeners`` need not be), and saves an encode/decode per transaction.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import trio

from pykafkad.coordinator.transaction_log import TxnState
from pykafkad.network.client import NodeClient, NodeUnavailableError, UnsupportedVersionError
from wire.errors import ErrorCode, KafkaError
from wire.messages.write_txn_markers_request import (
    WritableTxnMarker,
    WritableTxnMarkerTopic,
    WriteTxnMarkersRequest,
)

log = logging.getLogger("pykafkad.txn")

TopicPartition = tuple[str, int]
#: (node id, host, port) of a partition's leader; node id < 0: the partition exists but has no
#: reachable leader now (Kafka's Node.noNode: kept and retried); None: no such partition
LeaderEndpoint = Callable[[str, int], "tuple[int, str, int] | None"]

#: the marker is in the partition (or the partition cannot take markers: the producer could not
#: have written there either, so it leaves the set as Kafka does)
_DONE = frozenset({ErrorCode.NONE, ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT,
                   ErrorCode.UNSUPPORTED_VERSION})
_RETRIABLE = frozenset({
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.NOT_LEADER_OR_FOLLOWER,
    ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
    ErrorCode.REQUEST_TIMED_OUT, ErrorCode.KAFKA_STORAGE_ERROR})
#: the producer or the coordinator moved on: this coordinator stops sending
_FENCED = frozenset({ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.TRANSACTION_COORDINATOR_FENCED})


@dataclass(eq=False)
class PendingCompleteTxn:
    """A prepared transaction whose markers are being written (Kafka's PendingCompleteTxn).
    ``txn`` is the coordinator's cached metadata in PrepareCommit/PrepareAbort: its
    ``partitions`` shrink as markers land, and the transaction completes when it is empty."""

    transactional_id: str
    coordinator_epoch: int
    #: the __transaction_state partition of the transactional id
    txn_topic_partition: int
    txn: Any  # TransactionMetadata

    @property
    def committed(self) -> bool:
        return self.txn.state == TxnState.PREPARE_COMMIT


@dataclass(eq=False)
class _Queued:
    pending: PendingCompleteTxn
    partitions: set[TopicPartition]


def _topics(partitions: set[TopicPartition]) -> list[WritableTxnMarkerTopic]:
    by_topic: dict[str, list[int]] = {}
    for topic, index in sorted(partitions):
        by_topic.setdefault(topic, []).append(index)
    return [WritableTxnMarkerTopic(name=t, partition_indexes=ps) for t, ps in by_topic.items()]


class TransactionMarkerChannelManager:
    """Queues and sends the markers of prepared transactions; ``run()`` is the sender task.

    ``coordinator`` provides ``is_current(pending) -> bool`` (still the owner, same coordinator
    epoch, same transaction) and ``complete_transaction(pending)`` (writes Complete*, raising
    KafkaError when the write fails)."""

    def __init__(
        self,
        coordinator: Any,
        *,
        node_id: int,
        leader_endpoint: LeaderEndpoint,
        send_local: Callable[[WriteTxnMarkersRequest], Awaitable[Any]],
        retry_backoff_ms: int = 100,
        request_timeout_ms: int = 30000,
        client_id: str = "txn-marker-sender",
        security: Any = None,
    ):
        self.coordinator = coordinator
        self.node_id = node_id
        self.leader_endpoint = leader_endpoint
        self.send_local = send_local
        self.retry_backoff_ms = retry_backoff_ms
        self.request_timeout_ms = request_timeout_ms
        self.client_id = client_id
        #: pykafkad.security.client.ClientSecurity of the inter-broker listener, or None
        self.security = security
        #: transactions with markers still to write, by transactional id
        self.pending: dict[str, PendingCompleteTxn] = {}
        self._queues: dict[int, list[_Queued]] = {}
        #: markers whose leader is known to exist but not reachable now (Node.noNode)
        self._unknown_destination: list[_Queued] = []
        self._endpoints: dict[int, tuple[str, int]] = {}
        self._clients: dict[int, NodeClient] = {}
        self._in_flight: set[int] = set()
        self._completion_retries: list[PendingCompleteTxn] = []
        self._wake = trio.Event()
        self._changed = trio.Event()
        self._nursery: trio.Nursery | None = None
        #: requests sent, by destination ("local" for this broker): what the tests look at
        self.requests_sent: dict[str, int] = {}

    # -- queueing ------------------------------------------------------------------------------
    def add_txn_markers_to_send(self, pending: PendingCompleteTxn) -> None:
        """Starts writing the markers of a transaction just prepared (or found prepared when
        its __transaction_state partition was loaded)."""
        previous = self.pending.get(pending.transactional_id)
        if previous is not None and previous is not pending:
            log.info("replacing the pending markers of %s", pending.transactional_id)
        self.pending[pending.transactional_id] = pending
        self._enqueue(pending, set(pending.txn.partitions))
        self.maybe_write_txn_completion(pending.transactional_id)
        if self._nursery is not None:
            self._send_queued(self._nursery)  # at once, not at the sender's next turn

    @property
    def running(self) -> bool:
        return self._nursery is not None

    def after_replication(self, pending: PendingCompleteTxn,
                          replicated: Callable[[], Awaitable[int]]) -> None:
        """``add_txn_markers_to_send`` once ``replicated()`` (the wait for the Prepare* record's
        acks=all) returns; a coordinator that lost the partition meanwhile sends nothing."""
        assert self._nursery is not None
        self.pending[pending.transactional_id] = pending

        async def wait() -> None:
            code = await replicated()
            if code not in (ErrorCode.NONE, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND):
                log.info("the prepared state of %s was not replicated (%s): its markers are "
                         "left to the next coordinator", pending.transactional_id, _name(code))
                self._remove(pending)
            elif self.pending.get(pending.transactional_id) is pending:
                if self.coordinator.is_current(pending):
                    self.add_txn_markers_to_send(pending)
                else:
                    self._remove(pending)

        self._nursery.start_soon(wait)

    def _enqueue(self, pending: PendingCompleteTxn, partitions: set[TopicPartition]) -> None:
        by_node: dict[int, set[TopicPartition]] = {}
        gone = []
        for tp in partitions:
            endpoint = self.leader_endpoint(*tp)
            if endpoint is None:
                gone.append(tp)
                continue
            node_id, host, port = endpoint
            if node_id < 0:
                self._unknown_destination.append(_Queued(pending, {tp}))
                continue
            self._endpoints[node_id] = (host, port)
            by_node.setdefault(node_id, set()).add(tp)
        for node_id, tps in by_node.items():
            self._queues.setdefault(node_id, []).append(_Queued(pending, tps))
        if gone:
            if self.coordinator.is_current(pending):
                log.info("no leader for %s while writing the markers of %s: deleted partitions "
                         "are skipped", sorted(gone), pending.transactional_id)
                for tp in gone:
                    pending.txn.partitions.discard(tp)
                self.maybe_write_txn_completion(pending.transactional_id)
            else:
                self._remove(pending)
        self._wake.set()

    def maybe_write_txn_completion(self, transactional_id: str) -> None:
        pending = self.pending.get(transactional_id)
        if pending is not None and not pending.txn.partitions:
            del self.pending[transactional_id]
            self._write_completion(pending)

    def _write_completion(self, pending: PendingCompleteTxn) -> None:
        if not self.coordinator.is_current(pending):
            log.info("not completing %s: its transaction moved on or this broker is no longer "
                     "its coordinator", pending.transactional_id)
            self._notify()
            return
        try:
            self.coordinator.complete_transaction(pending)
        except KafkaError as e:
            log.warning("writing the completion of %s failed (%s); retrying",
                        pending.transactional_id, e)
            self._completion_retries.append(pending)
            self._wake.set()
        self._notify()

    def _remove(self, pending: PendingCompleteTxn) -> None:
        if self.pending.get(pending.transactional_id) is pending:
            del self.pending[pending.transactional_id]
            self._notify()

    def remove_markers_for_txn_topic_partition(self, txn_topic_partition: int) -> None:
        """This broker stopped coordinating a __transaction_state partition: its transactions'
        markers are dropped (the new coordinator resumes them when it loads the partition)."""
        for node_id, queued in self._queues.items():
            self._queues[node_id] = [
                q for q in queued if q.pending.txn_topic_partition != txn_topic_partition]
        self._unknown_destination = [q for q in self._unknown_destination
                                     if q.pending.txn_topic_partition != txn_topic_partition]
        self._completion_retries = [p for p in self._completion_retries
                                    if p.txn_topic_partition != txn_topic_partition]
        for pending in list(self.pending.values()):
            if pending.txn_topic_partition == txn_topic_partition:
                self._remove(pending)
        self._notify()

    def _notify(self) -> None:
        event, self._changed = self._changed, trio.Event()
        event.set()

    @property
    def idle(self) -> bool:
        return not self.pending and not self._completion_retries

    async def wait_until_idle(self) -> None:
        """Until no transaction has markers or a completion left to write."""
        while not self.idle:
            await self._changed.wait()

    # -- sending ------------------------------------------------------------------------------
    async def run(self) -> None:
        """The sender: one request in flight per destination broker; completions whose write
        failed are tried again every ``retry.backoff.ms``."""
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                while True:
                    self._retry_completions()
                    self._send_queued(nursery)
                    timeout = (self.retry_backoff_ms / 1000
                               if self._completion_retries or self._unknown_destination
                               else math.inf)
                    with trio.move_on_after(timeout):
                        await self._wake.wait()
                    self._wake = trio.Event()
                    unknown, self._unknown_destination = self._unknown_destination, []
                    for q in unknown:
                        self._requeue(q.pending, q.partitions)
        finally:
            self._nursery = None
            clients, self._clients = self._clients, {}
            with trio.CancelScope(shield=True):
                for client in clients.values():
                    await client.aclose()

    def _retry_completions(self) -> None:
        retries, self._completion_retries = self._completion_retries, []
        for pending in retries:
            self._write_completion(pending)

    def _send_queued(self, nursery: trio.Nursery) -> None:
        for node_id, queued in self._queues.items():
            if queued and node_id not in self._in_flight:
                self._queues[node_id] = []
                self._in_flight.add(node_id)
                nursery.start_soon(self._send, node_id, queued)

    def _client(self, node_id: int) -> NodeClient:
        host, port = self._endpoints[node_id]
        client = self._clients.get(node_id)
        if client is None or (client.host, client.port) != (host, port):
            if client is not None and self._nursery is not None:
                self._nursery.start_soon(client.aclose)
            client = self._clients[node_id] = NodeClient(host, port, client_id=self.client_id,
                                                             security=self.security)
        return client

    async def _send(self, node_id: int, queued: list[_Queued]) -> None:
        try:
            request = WriteTxnMarkersRequest(markers=[
                WritableTxnMarker(
                    producer_id=q.pending.txn.producer_id,
                    producer_epoch=q.pending.txn.producer_epoch,
                    transaction_result=q.pending.committed,
                    topics=_topics(q.partitions),
                    coordinator_epoch=q.pending.coordinator_epoch,
                    transaction_version=q.pending.txn.client_transaction_version)
                for q in queued])
            where = "local" if node_id == self.node_id else str(node_id)
            self.requests_sent[where] = self.requests_sent.get(where, 0) + 1
            try:
                if node_id == self.node_id:
                    response = await self.send_local(request)
                else:
                    response = await self._client(node_id).request(
                        request, timeout_s=self.request_timeout_ms / 1000)
            except (NodeUnavailableError, UnsupportedVersionError, trio.TooSlowError) as e:
                log.info("sending transaction markers to broker %d failed (%s); retrying",
                         node_id, e or type(e).__name__)
                self._on_disconnect(queued)
                return
            except Exception:  # a bug must not lose the markers: logged, then retried
                log.exception("sending transaction markers to broker %d failed", node_id)
                self._on_disconnect(queued)
                return
            self._on_response(queued, response)
        finally:
            self._in_flight.discard(node_id)
            self._wake.set()

    # -- the completion handler ------------------------------------------------------------------
    def _on_disconnect(self, queued: list[_Queued]) -> None:
        for q in queued:
            if self.coordinator.is_current(q.pending):
                self._retry_later(q.pending, q.partitions)
            else:
                self._remove(q.pending)

    def _on_response(self, queued: list[_Queued], response) -> None:
        errors_by_pid: dict[int, dict[TopicPartition, int]] = {}
        for m in response.markers:
            errors = errors_by_pid.setdefault(m.producer_id, {})
            for t in m.topics:
                for p in t.partitions:
                    errors[(t.name, p.partition_index)] = p.error_code
        for q in queued:
            pending = q.pending
            if not self.coordinator.is_current(pending):
                log.info("the transaction %s moved on: its markers are no longer sent",
                         pending.transactional_id)
                self._remove(pending)
                continue
            errors = errors_by_pid.get(pending.txn.producer_id, {})
            retry: set[TopicPartition] = set()
            fenced = None
            for tp in q.partitions:
                code = errors.get(tp, ErrorCode.UNKNOWN_SERVER_ERROR)
                if code in _DONE:
                    pending.txn.partitions.discard(tp)
                elif code in _FENCED:
                    fenced = code
                else:
                    if code not in _RETRIABLE:
                        log.error("unexpected %s writing the marker of %s to %s-%d; retrying",
                                  _name(code), pending.transactional_id, *tp)
                    else:
                        log.info("the marker of %s for %s-%d failed with %s; retrying",
                                 pending.transactional_id, *tp, _name(code))
                    retry.add(tp)
            if fenced is not None:
                log.info("the markers of %s failed permanently with %s: no more are sent",
                         pending.transactional_id, _name(fenced))
                self._remove(pending)
            elif retry:
                self._retry_later(pending, retry)
            else:
                self.maybe_write_txn_completion(pending.transactional_id)

    def _retry_later(self, pending: PendingCompleteTxn, partitions: set[TopicPartition]) -> None:
        if self._nursery is None:  # not running: queued now, sent when the sender starts
            self._requeue(pending, partitions)
            return

        async def later() -> None:
            await trio.sleep(self.retry_backoff_ms / 1000)
            self._requeue(pending, partitions)

        self._nursery.start_soon(later)

    def _requeue(self, pending: PendingCompleteTxn, partitions: set[TopicPartition]) -> None:
        if self.pending.get(pending.transactional_id) is not pending:
            return  # completed, replaced or removed meanwhile
        if not self.coordinator.is_current(pending):
            self._remove(pending)
            return
        self._enqueue(pending, partitions)


def _name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return str(code)
