"""The transaction coordinator: Kafka's TransactionCoordinator as a synchronous state machine.

Every transition is first written to ``__transaction_state`` (TransactionLogKey/Value, see
transaction_log.py) with acks=all and applied in memory only once written, so replaying the
topic rebuilds exactly what clients were told; the request handlers answer once the record is
replicated (``replicated``).  As in Kafka, EndTxn answers once PrepareCommit/PrepareAbort is in
the log, and the markers are written asynchronously by the marker channel
(txn_marker_channel.py), which writes CompleteCommit/CompleteAbort once every partition has its
marker; meanwhile the transaction answers CONCURRENT_TRANSACTIONS.  A transaction found in
PrepareCommit/PrepareAbort when a partition of the log is loaded (at start, or when this broker
becomes its leader: ``on_election``) gets its markers sent again.

Transaction version 2 (KIP-890 part 2), per transaction as its client uses it: partitions come
from the brokers (AddPartitionsToTxn v5 on the client's Produce v12+ / TxnOffsetCommit v5+),
every EndTxn bumps the epoch (its markers carry the bumped one) and an exhausted epoch moves the
transactional id to a new producer id when the transaction completes.

Time comes from the broker's injected clock; ``abort_timed_out_transactions`` and
``expire_transactional_ids`` are the periodic timers (the server fires them, tests call them).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable

import trio

from pykafkad.coordinator.partitioning import GROUP_METADATA_TOPIC, partition_for
from pykafkad.coordinator.transaction_log import (
    FLEXIBLE_VALUE_VERSION,
    MAX_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    TRANSACTION_STATE_TOPIC,
    VALUE_VERSION,
    TransactionMetadata,
    TxnState,
    decode_key,
    decode_value,
    encode_key,
    encode_value,
)
from pykafkad.coordinator.txn_marker_channel import (
    PendingCompleteTxn,
    TransactionMarkerChannelManager,
)
from pykafkad.coordinator.txn_marker_writer import write_txn_markers
from pykafkad.security.client import inter_broker_security
from wire.errors import ErrorCode, KafkaError
from wire.records.batch import build_batch, compute_crc, decode_records, iter_batch_headers

log = logging.getLogger("pykafkad.txn")

#: a single node leads every partition of __transaction_state at epoch 0: its coordinator epoch
COORDINATOR_EPOCH = 0
#: transaction version 2 (KIP-890 part 2): the client's EndTxn bumps the epoch, partitions are
#: added by the broker on Produce v12+ / TxnOffsetCommit v5+
TV_2 = 2
#: how long a marker (or a completion) that failed waits before it is tried again
MARKER_RETRY_BACKOFF_MS = 100

_PREPARE = (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT)
_COMPLETE = (TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)

#: (producer id, producer epoch, committed, __consumer_offsets partitions) once markers are in
#: __consumer_offsets partitions this broker leads (WriteTxnMarkers, Kafka's
#: onTransactionCompleted)
OffsetsMarkerListener = Callable[[int, int, bool, list[int]], None]


class TransactionCoordinator:
    def __init__(self, broker):
        self.broker = broker
        self.clock: Callable[[], int] = broker.clock
        config = broker.config
        self.max_timeout_ms: int = config["transaction.max.timeout.ms"]
        self.id_expiration_ms: int = config["transactional.id.expiration.ms"]
        self.txns: dict[str, TransactionMetadata] = {}
        #: __transaction_state partitions whose load failed (logged at start)
        self.failed_partitions: set[int] = set()
        #: the __transaction_state partitions this broker coordinates (its leader); None: all
        #: (a single node).  A cluster broker starts with set() and follows on_election /
        #: on_resignation.
        self.owned_partitions: set[int] | None = None
        #: __transaction_state partitions led here whose load is under way: their ids
        #: answer COORDINATOR_LOAD_IN_PROGRESS
        self.loading_partitions: set[int] = set()
        self._by_pid: dict[int, str] = {}
        #: called when markers reach __consumer_offsets partitions (the group coordinator makes
        #: pending transactional offsets visible or drops them)
        self.offsets_marker_listeners: list[OffsetsMarkerListener] = []
        #: test hook: called after a Prepare* record is written, before any marker
        self.before_markers: Callable[[TransactionMetadata], None] | None = None
        #: __transaction_state partition -> the coordinator epoch this broker owns it at (the
        #: partition's leader epoch when it was elected; single node: COORDINATOR_EPOCH)
        self.coordinator_epochs: dict[int, int] = {}
        #: the last record written per transactional id: (partition, offset to replicate)
        self._last_write: dict[str, tuple[object, int]] = {}
        self.channel = TransactionMarkerChannelManager(
            self, node_id=broker.node_id,
            # looked up on each call: the cluster's metadata publisher replaces it
            leader_endpoint=lambda topic, index: broker.leader_endpoint(topic, index),
            send_local=lambda request: write_txn_markers(broker, request),
            retry_backoff_ms=MARKER_RETRY_BACKOFF_MS,
            request_timeout_ms=config["request.timeout.ms"],
            client_id=f"broker-{broker.node_id}-txn-marker-sender",
            security=inter_broker_security(config))

    # -- the state topic ----------------------------------------------------------------------
    def ensure_state_topic(self):
        """Creates __transaction_state on first use (Kafka does on the first FindCoordinator
        for a transactional id): compacted, transaction.state.log.* settings."""
        topic = self.broker.topics.get(TRANSACTION_STATE_TOPIC)
        if topic is None:
            config = self.broker.config
            topic = self.broker.create_topic(
                TRANSACTION_STATE_TOPIC,
                config["transaction.state.log.num.partitions"],
                {
                    "cleanup.policy": "compact",
                    "compression.type": "uncompressed",
                    "segment.bytes": str(config["transaction.state.log.segment.bytes"]),
                },
            )
        return topic

    def partition_for(self, transactional_id: str) -> int:
        topic = self.ensure_state_topic()
        return partition_for(transactional_id, topic.num_partitions)

    def is_unavailable(self, transactional_id: str) -> bool:
        """Whether the id's __transaction_state partition failed to load, is loading, or is
        not coordinated here (its transactions are unknown: the id answers NOT_COORDINATOR
        rather than start afresh)."""
        return self.unavailable_error(transactional_id) != ErrorCode.NONE

    def unavailable_error(self, transactional_id: str) -> int:
        """NONE when the id is coordinated here; COORDINATOR_LOAD_IN_PROGRESS while its
        partition loads; else NOT_COORDINATOR."""
        if not self.failed_partitions and self.owned_partitions is None \
                and not self.loading_partitions:
            return ErrorCode.NONE
        p = self.partition_for(transactional_id)
        if p in self.loading_partitions:
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        if p in self.failed_partitions or (
                self.owned_partitions is not None and p not in self.owned_partitions):
            return ErrorCode.NOT_COORDINATOR
        return ErrorCode.NONE

    def coordinator_epoch(self, txn_topic_partition: int) -> int:
        return self.coordinator_epochs.get(txn_topic_partition, COORDINATOR_EPOCH)

    def _write(self, txn: TransactionMetadata, *, tombstone: bool = False) -> None:
        """Appends the record for ``txn`` with acks=all (NOT_ENOUGH_REPLICAS when the ISR is
        below min.insync.replicas); only then may the caller apply the transition."""
        p = self.partition_for(txn.transactional_id)
        partition = self.broker.partition(TRANSACTION_STATE_TOPIC, p)
        old = self.txns.get(txn.transactional_id)
        value = None if tombstone else encode_value(
            txn, self.log_value_version(),
            old.producer_id if old is not None else txn.producer_id)
        batch = build_batch([(encode_key(txn.transactional_id), value, (), self.clock())])
        info = partition.append_as_leader(batch, required_acks=-1)
        self._last_write[txn.transactional_id] = (partition, info.last_offset + 1)

    async def replicated(self, transactional_id: str, timeout_ms: int | None = None) -> int:
        """After a transition was written: waits until its record is replicated to the ISR
        (acks=all; at once with no followers).  The error the client gets, as Kafka's
        TransactionStateManager maps a failed append: NONE when replicated."""
        written = self._last_write.pop(transactional_id, None)
        if written is None:
            return ErrorCode.NONE
        partition, offset = written
        if timeout_ms is None:
            timeout_ms = self.broker.config["request.timeout.ms"]
        deadline = trio.current_time() + timeout_ms / 1000
        code = await self.broker.replicas.wait_for_acks(partition, offset, deadline)
        return log_append_error(code)

    def transaction_version(self) -> int:
        """The finalized transaction.version (Kafka's TransactionStateManager reads the
        metadata image's on every write)."""
        from pykafkad.features import finalized_levels

        _, levels = finalized_levels(self.broker)
        return dict(levels).get("transaction.version", 0)

    def log_value_version(self) -> int:
        """TransactionLogValue v1 (flexible) from transaction.version 1 on, v0 at 0 (Kafka's
        TransactionVersion.transactionLogValueVersion)."""
        return FLEXIBLE_VALUE_VERSION if self.transaction_version() >= 1 else VALUE_VERSION

    def _apply(self, txn: TransactionMetadata) -> TransactionMetadata:
        old = self.txns.get(txn.transactional_id)
        if old is not None and old.producer_id != txn.producer_id:
            self._by_pid.pop(old.producer_id, None)
        self.txns[txn.transactional_id] = txn
        self._by_pid[txn.producer_id] = txn.transactional_id
        return txn

    def _commit(self, txn: TransactionMetadata) -> TransactionMetadata:
        self._write(txn)
        return self._apply(txn)

    def load(self) -> None:
        """Single-node start: replays every partition of __transaction_state, then resumes
        the markers of the transactions left in prepare."""
        self.txns = {}
        self._by_pid = {}
        topic = self.broker.topics.get(TRANSACTION_STATE_TOPIC)
        if topic is None:
            return
        for p in range(topic.num_partitions):
            self._load_partition(p)

    def _load_partition(self, p: int) -> None:
        """Replays one partition of the log (Kafka's loadTransactionsForTxnTopicPartition);
        a partition that fails to read (a corrupt batch) is skipped with an error line."""
        plog = self.broker.logs.get(TRANSACTION_STATE_TOPIC, p)
        if plog is None:
            return
        try:
            records = _read_transaction_log(plog)
        except Exception as e:  # noqa: BLE001 - one bad partition must not stop the broker
            self.failed_partitions.add(p)
            log.error("Failed to load metadata from %s-%d: %s", TRANSACTION_STATE_TOPIC, p, e)
            return
        self._replay_partition(p, records)

    def _replay_partition(self, p: int, records: list[tuple[str, bytes | None]]) -> None:
        self.failed_partitions.discard(p)
        txns: dict[str, TransactionMetadata] = {}
        for txn_id, value in records:
            if value is None:
                txns.pop(txn_id, None)
                continue
            try:
                txns[txn_id] = decode_value(txn_id, value)
            except (ValueError, KafkaError) as e:
                log.warning("skipping a bad transaction log record: %s", e)
        for txn in txns.values():
            if txn.state != TxnState.DEAD:
                self._apply(txn)
        for txn in txns.values():
            if txn.state in _PREPARE and self.txns.get(txn.transactional_id) is txn:
                log.info("resuming the markers of transaction %s left in %s",
                         txn.transactional_id, txn.state.kafka_name)
                self._send_markers(txn)

    def on_election(self, txn_topic_partition: int, coordinator_epoch: int) -> None:
        """This broker became the leader of a __transaction_state partition (Kafka's
        TransactionCoordinator.onElection): its transactions are loaded at
        ``coordinator_epoch`` (the partition's leader epoch) and prepared ones resumed."""
        self.on_resignation(txn_topic_partition)
        self.coordinator_epochs[txn_topic_partition] = coordinator_epoch
        if self.owned_partitions is None:
            self.owned_partitions = set()
        self.owned_partitions.add(txn_topic_partition)
        self._load_partition(txn_topic_partition)

    def begin_election(self, txn_topic_partition: int, coordinator_epoch: int):
        """``on_election`` in two steps, for a load read off the request loop: returns what
        reads the partition (run it in a worker thread, then ``finish_election``), or None
        when there is no log; meanwhile its ids answer COORDINATOR_LOAD_IN_PROGRESS."""
        self.on_resignation(txn_topic_partition)
        self.coordinator_epochs[txn_topic_partition] = coordinator_epoch
        plog = self.broker.logs.get(TRANSACTION_STATE_TOPIC, txn_topic_partition)
        if plog is None:
            self.on_election(txn_topic_partition, coordinator_epoch)
            return None
        self.loading_partitions.add(txn_topic_partition)
        return lambda: _read_transaction_log(plog)

    def finish_election(self, txn_topic_partition: int, records=None,
                        error: Exception | None = None) -> None:
        """The partition was read (``records``) or could not be (``error``)."""
        self.loading_partitions.discard(txn_topic_partition)
        if self.owned_partitions is None:
            self.owned_partitions = set()
        self.owned_partitions.add(txn_topic_partition)
        if error is not None:
            self.failed_partitions.add(txn_topic_partition)
            log.error("Failed to load metadata from %s-%d: %s", TRANSACTION_STATE_TOPIC,
                      txn_topic_partition, error)
            return
        self._replay_partition(txn_topic_partition, records)

    def on_resignation(self, txn_topic_partition: int, coordinator_epoch: int | None = None
                       ) -> None:
        """This broker no longer leads a __transaction_state partition: its transactions are
        forgotten and their pending markers dropped (the new coordinator resumes them)."""
        if coordinator_epoch is not None and self.coordinator_epochs.get(
                txn_topic_partition, coordinator_epoch) > coordinator_epoch:
            return  # a stale resignation: a newer election already happened
        self.channel.remove_markers_for_txn_topic_partition(txn_topic_partition)
        topic = self.broker.topics.get(TRANSACTION_STATE_TOPIC)
        if topic is not None:
            for txn in list(self.txns.values()):
                if partition_for(txn.transactional_id, topic.num_partitions) == \
                        txn_topic_partition:
                    del self.txns[txn.transactional_id]
                    if self._by_pid.get(txn.producer_id) == txn.transactional_id:
                        del self._by_pid[txn.producer_id]
        self.coordinator_epochs.pop(txn_topic_partition, None)
        self.loading_partitions.discard(txn_topic_partition)
        if self.owned_partitions is None:
            self.owned_partitions = set()
        self.owned_partitions.discard(txn_topic_partition)

    # -- InitProducerId -----------------------------------------------------------------------
    def init_producer_id(
        self, transactional_id: str, timeout_ms: int, expected_pid: int = -1,
        expected_epoch: int = -1,
    ) -> tuple[int, int, int]:
        """(error, producer id, epoch) for a transactional InitProducerId (Kafka's
        handleInitProducerId): a new id starts at epoch 0; a re-init bumps the epoch, which
        fences the previous instance; an open transaction is aborted first and the caller
        is told CONCURRENT_TRANSACTIONS, to retry."""
        if not transactional_id:
            return ErrorCode.INVALID_REQUEST, -1, -1
        if not 0 < timeout_ms <= self.max_timeout_ms:
            return ErrorCode.INVALID_TRANSACTION_TIMEOUT, -1, -1
        code = self.unavailable_error(transactional_id)
        if code:
            return code, -1, -1
        now = self.clock()
        txn = self.txns.get(transactional_id)
        if txn is None:
            txn = TransactionMetadata(
                transactional_id, self.broker.producer_ids.next_id(), NO_PRODUCER_EPOCH,
                timeout_ms, TxnState.EMPTY, txn_last_update_timestamp=now)
        if expected_pid >= 0 and not (
            txn.producer_epoch == NO_PRODUCER_EPOCH
            or expected_pid == txn.producer_id
            or (expected_pid == txn.last_producer_id and expected_epoch >= 0x7FFF - 1)
        ):
            return ErrorCode.PRODUCER_FENCED, -1, -1
        state = txn.state
        if state in _PREPARE or state in (TxnState.DEAD, TxnState.PREPARE_EPOCH_FENCE):
            return ErrorCode.CONCURRENT_TRANSACTIONS, -1, -1
        if state == TxnState.ONGOING:
            self._fence_and_abort(txn)
            return ErrorCode.CONCURRENT_TRANSACTIONS, -1, -1
        new = txn.copy()
        if txn.epoch_exhausted and (expected_epoch < 0 or expected_epoch == txn.producer_epoch):
            new.last_producer_id = txn.producer_id
            new.last_producer_epoch = txn.producer_epoch
            new.producer_id = self.broker.producer_ids.next_id()
            new.producer_epoch = 0
        else:
            bumped = txn.producer_epoch + 1
            if expected_epoch < 0:
                new.producer_epoch, new.last_producer_epoch = bumped, NO_PRODUCER_EPOCH
            elif txn.producer_epoch == NO_PRODUCER_EPOCH or expected_epoch == txn.producer_epoch:
                new.producer_epoch, new.last_producer_epoch = bumped, txn.producer_epoch
            elif expected_epoch == txn.last_producer_epoch:
                pass  # a retry of a call that succeeded: same epoch again
            else:
                return ErrorCode.PRODUCER_FENCED, -1, -1
        new.txn_timeout_ms = timeout_ms
        new.state = TxnState.EMPTY
        new.partitions = set()
        new.txn_start_timestamp = -1
        new.txn_last_update_timestamp = now
        self._commit(new)
        return ErrorCode.NONE, new.producer_id, new.producer_epoch

    # -- AddPartitionsToTxn / AddOffsetsToTxn ---------------------------------------------------
    def _check_producer(
        self, transactional_id: str | None, pid: int, epoch: int
    ) -> tuple[int, TransactionMetadata | None]:
        if not transactional_id:
            return ErrorCode.INVALID_REQUEST, None
        code = self.unavailable_error(transactional_id)
        if code:
            return code, None
        txn = self.txns.get(transactional_id)
        if txn is None or txn.producer_id != pid:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING, None
        if txn.producer_epoch != epoch:
            return ErrorCode.PRODUCER_FENCED, None
        return ErrorCode.NONE, txn

    def add_partitions(
        self, transactional_id: str, pid: int, epoch: int, partitions: Iterable[tuple[str, int]],
        *, verify_only: bool = False, client_transaction_version: int = 0,
    ) -> int:
        """AddPartitionsToTxn (v5+ from a broker serving Produce v12+ or TxnOffsetCommit v5+:
        ``client_transaction_version`` 2, recorded on the transaction as Kafka's
        prepareAddPartitions does)."""
        err, txn = self._check_producer(transactional_id, pid, epoch)
        if err:
            return err
        assert txn is not None
        wanted = set(partitions)
        if txn.state in _PREPARE or txn.state == TxnState.PREPARE_EPOCH_FENCE:
            return ErrorCode.CONCURRENT_TRANSACTIONS
        if txn.state == TxnState.ONGOING and wanted <= txn.partitions:
            return ErrorCode.NONE
        if verify_only:
            return ErrorCode.INVALID_TXN_STATE
        now = self.clock()
        new = txn.copy()
        if txn.state != TxnState.ONGOING:
            new.txn_start_timestamp = now
            new.partitions = set()
        new.partitions |= wanted
        new.state = TxnState.ONGOING
        new.client_transaction_version = client_transaction_version
        new.txn_last_update_timestamp = now
        self._commit(new)
        return ErrorCode.NONE

    def offsets_partition(self, group_id: str) -> tuple[str, int]:
        n = self.broker.config["offsets.topic.num.partitions"]
        topic = self.broker.topics.get(GROUP_METADATA_TOPIC)
        if topic is not None:
            n = topic.num_partitions
        return GROUP_METADATA_TOPIC, partition_for(group_id, n)

    def add_offsets(self, transactional_id: str, pid: int, epoch: int, group_id: str,
                    client_transaction_version: int = 0) -> int:
        return self.add_partitions(
            transactional_id, pid, epoch, [self.offsets_partition(group_id)],
            client_transaction_version=client_transaction_version)

    def check_txn_offset_commit(
        self, transactional_id: str, pid: int, epoch: int, group_id: str
    ) -> int:
        """Whether TxnOffsetCommit may stage offsets: the group's offsets partition must be in
        the producer's ongoing transaction (AddOffsetsToTxn), at the producer's epoch."""
        if not transactional_id:
            return ErrorCode.INVALID_REQUEST
        txn = self.txns.get(transactional_id)
        if txn is None or txn.producer_id != pid:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING
        if epoch < txn.producer_epoch:
            return ErrorCode.PRODUCER_FENCED
        if (
            epoch != txn.producer_epoch
            or txn.state != TxnState.ONGOING
            or self.offsets_partition(group_id) not in txn.partitions
        ):
            return ErrorCode.INVALID_TXN_STATE
        return ErrorCode.NONE

    def verify_partition(self, pid: int, epoch: int, topic: str, partition: int) -> int:
        """transaction.partition.verification.enable: a transactional batch that starts a
        transaction in a partition needs that partition added to the producer's ongoing
        transaction (what Kafka asks the coordinator with AddPartitionsToTxn verify_only)."""
        txn_id = self._by_pid.get(pid)
        txn = self.txns.get(txn_id) if txn_id is not None else None
        if txn is None:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING
        if epoch < txn.producer_epoch:
            return ErrorCode.INVALID_PRODUCER_EPOCH
        if (
            epoch != txn.producer_epoch
            or txn.state != TxnState.ONGOING
            or (topic, partition) not in txn.partitions
        ):
            return ErrorCode.INVALID_TXN_STATE
        return ErrorCode.NONE

    # -- EndTxn --------------------------------------------------------------------------------
    def end_txn(self, transactional_id: str, pid: int, epoch: int, commit: bool) -> int:
        """EndTxn below v5 (transaction version 1): the error code."""
        return self.end_transaction(transactional_id, pid, epoch, commit)[0]

    def end_transaction(self, transactional_id: str, pid: int, epoch: int, commit: bool,
                        client_transaction_version: int = 0) -> tuple[int, int, int]:
        """(error, producer id, epoch) for EndTxn (Kafka's endTransaction).  With
        ``client_transaction_version`` 2 (EndTxn v5) the prepare bumps the epoch (markers go
        out with it) and the answer carries the id and epoch the transaction completes with; an
        exhausted epoch moves to a new producer id once the transaction completes.  A
        transaction whose client uses version 2 takes the previous epoch only as a retry of
        the last EndTxn, and may be aborted with nothing added (the broker adds partitions, so
        the client cannot know)."""
        if not transactional_id:
            return ErrorCode.INVALID_REQUEST, -1, -1
        code = self.unavailable_error(transactional_id)
        if code:
            return code, -1, -1
        txn = self.txns.get(transactional_id)
        if txn is None:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING, -1, -1
        state = txn.state
        v2 = txn.client_transaction_version >= TV_2 and state != TxnState.PREPARE_EPOCH_FENCE
        retry_on_overflow = (v2 and txn.last_producer_id == pid and epoch == MAX_EPOCH - 1
                             and txn.producer_epoch == 0)
        retry_on_bump = v2 and txn.producer_epoch == epoch + 1
        if v2:
            if state in _PREPARE:
                valid = retry_on_bump
            elif state in (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT):
                valid = retry_on_bump or retry_on_overflow or epoch == txn.producer_epoch
            else:
                valid = epoch == txn.producer_epoch
        else:
            valid = epoch == txn.producer_epoch
        if txn.producer_id != pid and not retry_on_overflow:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING, -1, -1
        if not valid:
            return ErrorCode.PRODUCER_FENCED, -1, -1
        is_retry = not v2 or retry_on_bump or retry_on_overflow
        bumps = client_transaction_version >= TV_2
        # a version 2 abort of a transaction with nothing added: always so for Empty (the id
        # was just initialised, whatever version its last transaction used: franz-go aborts
        # when a produce failed before reaching a partition), else unless it is a retry
        empty_abort = bumps and not commit and (
            state == TxnState.EMPTY or (not is_retry and state in _COMPLETE))
        if state == TxnState.ONGOING or empty_abort:
            prepared = self._prepare_and_complete(
                txn, TxnState.PREPARE_COMMIT if commit else TxnState.PREPARE_ABORT,
                client_transaction_version=client_transaction_version,
                nothing_added=state != TxnState.ONGOING)
            if prepared.next_producer_id != NO_PRODUCER_ID:
                return ErrorCode.NONE, prepared.next_producer_id, 0
            return ErrorCode.NONE, prepared.producer_id, prepared.producer_epoch
        done = ErrorCode.NONE, txn.producer_id, txn.producer_epoch
        if state == TxnState.COMPLETE_COMMIT and commit and is_retry:
            return done
        if state == TxnState.COMPLETE_ABORT and not commit and is_retry:
            return done
        if state == TxnState.PREPARE_COMMIT and commit:
            return ErrorCode.CONCURRENT_TRANSACTIONS, -1, -1
        if state == TxnState.PREPARE_ABORT and not commit:
            return ErrorCode.CONCURRENT_TRANSACTIONS, -1, -1
        return ErrorCode.INVALID_TXN_STATE, -1, -1

    def _fence_and_abort(self, txn: TransactionMetadata) -> None:
        """Kafka's prepareFenceProducerEpoch + abort: the epoch is bumped (fencing the current
        instance) and the transaction aborted with markers at the new epoch."""
        fenced = txn.copy()
        if fenced.producer_epoch < 0x7FFF:
            fenced.producer_epoch += 1
        fenced.last_producer_epoch = NO_PRODUCER_EPOCH
        self._prepare_and_complete(fenced, TxnState.PREPARE_ABORT)

    def _prepare_and_complete(self, txn: TransactionMetadata, prepare: TxnState, *,
                              client_transaction_version: int | None = None,
                              nothing_added: bool = False) -> TransactionMetadata:
        """Writes PrepareCommit/PrepareAbort, then hands the markers to the channel (which
        writes CompleteCommit/CompleteAbort once they are all in).  Transaction version 2
        (Kafka's prepareAbortOrCommit): the epoch is bumped, and an exhausted one names the
        producer id the transaction completes with (NextProducerId)."""
        new = txn.copy()
        now = self.clock()
        new.state = prepare
        new.txn_last_update_timestamp = now
        new.next_producer_id = NO_PRODUCER_ID
        if client_transaction_version is not None:
            new.client_transaction_version = client_transaction_version
            if client_transaction_version >= TV_2:
                if txn.epoch_exhausted:
                    new.next_producer_id = self.broker.producer_ids.next_id()
                new.last_producer_epoch = txn.producer_epoch
                new.producer_epoch = txn.producer_epoch + 1
        if nothing_added:  # a version 2 abort with no partition: it starts now
            new.partitions = set()
            new.txn_start_timestamp = now
        self._commit(new)
        if self.before_markers is not None:
            self.before_markers(new)
        self._send_markers(new)
        return new

    def _send_markers(self, txn: TransactionMetadata) -> None:
        p = self.partition_for(txn.transactional_id)
        pending = PendingCompleteTxn(txn.transactional_id, self.coordinator_epoch(p), p, txn)
        written = self._last_write.get(txn.transactional_id)
        if written is not None and self.channel.running:
            partition, offset = written
            if partition.high_watermark < offset:  # markers only once Prepare* is replicated
                self.channel.after_replication(
                    pending, lambda: self.broker.replicas.wait_for_acks(
                        partition, offset, math.inf))
                return
        self.channel.add_txn_markers_to_send(pending)

    def is_current(self, pending: PendingCompleteTxn) -> bool:
        """Whether this coordinator still owns ``pending``'s transaction in the same state
        and coordinator epoch (else its markers are no longer its business)."""
        owned = self.owned_partitions
        return (self.txns.get(pending.transactional_id) is pending.txn
                and pending.txn.state in _PREPARE
                and pending.txn_topic_partition not in self.failed_partitions
                and (owned is None or pending.txn_topic_partition in owned)
                and self.coordinator_epoch(pending.txn_topic_partition)
                == pending.coordinator_epoch)

    def complete_transaction(self, pending: PendingCompleteTxn) -> None:
        """Every marker is in: writes CompleteCommit/CompleteAbort (raises KafkaError when the
        write fails; the channel tries again)."""
        txn = pending.txn
        done = txn.copy()
        done.state = (TxnState.COMPLETE_COMMIT if txn.state == TxnState.PREPARE_COMMIT
                      else TxnState.COMPLETE_ABORT)
        done.partitions = set()
        done.txn_last_update_timestamp = self.clock()
        if txn.client_transaction_version >= TV_2 and txn.next_producer_id != NO_PRODUCER_ID:
            # the epoch overflowed: the client already has the new id at epoch 0
            done.last_producer_id = txn.producer_id
            done.producer_id, done.producer_epoch = txn.next_producer_id, 0
        done.next_producer_id = NO_PRODUCER_ID
        self._commit(done)
        self._last_write.pop(txn.transactional_id, None)

    # -- timers --------------------------------------------------------------------------------
    def abort_timed_out_transactions(self, now: int | None = None) -> list[str]:
        """Aborts (and fences) every transaction open longer than its timeout."""
        now = self.clock() if now is None else now
        aborted = []
        for txn in list(self.txns.values()):
            if (
                txn.state == TxnState.ONGOING
                and txn.txn_start_timestamp + txn.txn_timeout_ms < now
            ):
                log.info("aborting transaction %s: open longer than its timeout of %d ms",
                         txn.transactional_id, txn.txn_timeout_ms)
                self._fence_and_abort(txn)
                aborted.append(txn.transactional_id)
        return aborted

    def expire_transactional_ids(self, now: int | None = None) -> list[str]:
        """Removes ids idle for transactional.id.expiration.ms (a tombstone in the log)."""
        now = self.clock() if now is None else now
        expired = []
        for txn in list(self.txns.values()):
            if (
                txn.state in _COMPLETE
                and txn.txn_last_update_timestamp + self.id_expiration_ms <= now
            ):
                self._write(txn, tombstone=True)
                self._last_write.pop(txn.transactional_id, None)
                del self.txns[txn.transactional_id]
                self._by_pid.pop(txn.producer_id, None)
                expired.append(txn.transactional_id)
        return expired

    # -- admin ---------------------------------------------------------------------------------
    def describe(self, transactional_id: str) -> TransactionMetadata | None:
        return self.txns.get(transactional_id)

    def list(
        self, states: Iterable[str], producer_ids: Iterable[int], duration_ms: int = -1
    ) -> tuple[list[str], list[TransactionMetadata]]:
        """(unknown state filters, matching transactions) for ListTransactions."""
        states = list(states)
        wanted: set[TxnState] = set()
        unknown = []
        for name in states:
            s = TxnState.from_name(name)
            if s is None:
                unknown.append(name)
            else:
                wanted.add(s)
        pids = set(producer_ids)
        now = self.clock()
        out = []
        for txn in self.txns.values():
            if states and txn.state not in wanted:
                continue
            if pids and txn.producer_id not in pids:
                continue
            if duration_ms >= 0 and now - txn.txn_start_timestamp <= duration_ms:
                continue
            out.append(txn)
        return unknown, out


def log_append_error(code: int) -> int:
    """Kafka's TransactionStateManager mapping of a failed __transaction_state append."""
    if code in (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.NOT_ENOUGH_REPLICAS,
                ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, ErrorCode.REQUEST_TIMED_OUT):
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if code in (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.KAFKA_STORAGE_ERROR):
        return ErrorCode.NOT_COORDINATOR
    if code in (ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.RECORD_LIST_TOO_LARGE):
        return ErrorCode.UNKNOWN_SERVER_ERROR
    return code


def _read_transaction_log(plog) -> list[tuple[str, bytes | None]]:
    """(transactional id, value or None for a tombstone) of every record, in offset order;
    raises on a batch whose CRC does not match (the partition cannot be trusted)."""
    data = plog.read(plog.log_start_offset, 1 << 62).to_bytes()
    out: list[tuple[str, bytes | None]] = []
    for pos, header in iter_batch_headers(data):
        if compute_crc(data, pos, header.size) != header.crc:
            raise ValueError(f"the batch at offset {header.base_offset} of {plog.dir.name} is "
                             "corrupt (CRC mismatch)")
        if header.is_control:
            continue
        for rec in decode_records(data, pos):
            if rec.key is None:
                continue
            txn_id = decode_key(rec.key)
            if txn_id is not None:
                out.append((txn_id, rec.value))
    return out
