"""Transactions: AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, TxnOffsetCommit, and the admin
views DescribeProducers, DescribeTransactions, ListTransactions.

The logic lives in pykafkad.coordinator.transaction_coordinator; these handlers map requests
and Kafka's per-version error codes (PRODUCER_FENCED is INVALID_PRODUCER_EPOCH below v2 of
AddPartitionsToTxn, AddOffsetsToTxn and EndTxn).  The transaction version follows what the
client sends, as in Kafka: EndTxn v5 and TxnOffsetCommit v5+ (and Produce v12+, in produce.py)
are transaction version 2, older versions version 1, whatever transaction.version is finalized.
"""

from __future__ import annotations

import re

from pykafkad.coordinator.coordinator import CommitPartition, CommitRequest
from pykafkad.coordinator.rebalance import append_error
from pykafkad.coordinator.storage import commit_replicated
from pykafkad.dispatch import RequestContext, handles
from wire.errors import ErrorCode, KafkaError
from wire.messages.add_offsets_to_txn_response import AddOffsetsToTxnResponse
from wire.messages.add_partitions_to_txn_response import (
    AddPartitionsToTxnPartitionResult,
    AddPartitionsToTxnResponse,
    AddPartitionsToTxnResult,
    AddPartitionsToTxnTopicResult,
)
from wire.messages.describe_producers_response import (
    DescribeProducersResponse,
    PartitionResponse,
    ProducerState,
    TopicResponse,
)
from wire.messages.describe_transactions_response import (
    DescribeTransactionsResponse,
    TopicData,
)
from wire.messages.describe_transactions_response import (
    TransactionState as DescribedTransaction,
)
from wire.messages.end_txn_response import EndTxnResponse
from wire.messages.list_transactions_response import (
    ListTransactionsResponse,
)
from wire.messages.list_transactions_response import (
    TransactionState as ListedTransaction,
)
from wire.messages.txn_offset_commit_response import (
    TxnOffsetCommitResponse,
    TxnOffsetCommitResponsePartition,
    TxnOffsetCommitResponseTopic,
)

#: the version that introduced PRODUCER_FENCED in AddPartitions/AddOffsets/EndTxn
PRODUCER_FENCED_VERSION = 2
#: AddPartitionsToTxn v4+: batched transactions (broker to broker), verify_only
BATCHED_VERSION = 4
#: the versions a transaction version 2 client or broker sends (KIP-890 part 2): AddPartitions
#: from a broker serving Produce v12+, EndTxn bumping the epoch, TxnOffsetCommit adding the
#: group's partition itself
TV2_ADD_PARTITIONS_VERSION = 5
TV2_END_TXN_VERSION = 5
TV2_TXN_OFFSET_COMMIT_VERSION = 5
#: TxnOffsetCommit v6 names topics by id (KIP-1319)
TXN_OFFSET_COMMIT_TOPIC_IDS_VERSION = 6


async def _logged(coordinator, transactional_id, fn, *args, **kwargs) -> int:
    """Runs a transaction-log write and waits for its replication (acks=all); a failed one
    (disk full, not enough replicas) is answered as Kafka's TransactionStateManager maps it
    (KAFKA_STORAGE_ERROR -> NOT_COORDINATOR; clients retry)."""
    try:
        code = fn(*args, **kwargs)
    except KafkaError as e:
        return append_error(e.code)
    replicated = await coordinator.replicated(transactional_id)
    return code if code else replicated


def _fenced(code: int, version: int) -> int:
    if code == ErrorCode.PRODUCER_FENCED and version < PRODUCER_FENCED_VERSION:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    return code


async def _add_partitions(broker, version: int, txn_id, pid, epoch, topics, verify_only: bool):
    """One transaction's AddPartitionsToTxn: a list of AddPartitionsToTxnTopicResult."""
    unknown = set()
    wanted = []
    for t in topics:
        topic = broker.topics.get(t.name)
        for p in t.partitions:
            if topic is None or not 0 <= p < topic.num_partitions:
                unknown.add((t.name, p))
            else:
                wanted.append((t.name, p))
    coordinator = broker.txn_coordinator
    codes: dict[tuple[str, int], int] = {}
    if unknown:
        for key in wanted:
            codes[key] = ErrorCode.OPERATION_NOT_ATTEMPTED
        for key in unknown:
            codes[key] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    elif verify_only:
        for key in wanted:
            codes[key] = _fenced(coordinator.add_partitions(
                txn_id, pid, epoch, [key], verify_only=True), version)
    else:
        err = _fenced(await _logged(
            coordinator, txn_id, coordinator.add_partitions, txn_id, pid, epoch, wanted,
            client_transaction_version=2 if version >= TV2_ADD_PARTITIONS_VERSION else 0),
            version)
        for key in wanted:
            codes[key] = err
    results = []
    for t in topics:
        results.append(AddPartitionsToTxnTopicResult(name=t.name, results_by_partition=[
            AddPartitionsToTxnPartitionResult(partition_index=p, partition_error_code=codes[
                (t.name, p)]) for p in t.partitions]))
    return results


@handles(24, 0, 5)
async def handle_add_partitions_to_txn(ctx: RequestContext, req) -> AddPartitionsToTxnResponse:
    """Versions 0-5.  v0-3 (what clients send) carry one transaction; v4-5 batch several with
    ``verify_only`` (Kafka's brokers use them to verify produce requests; v5 without
    verify_only adds the partitions of a transaction version 2 producer's Produce v12+).  Unknown partitions
    are UNKNOWN_TOPIC_OR_PARTITION and the rest OPERATION_NOT_ATTEMPTED; otherwise every
    partition gets the coordinator's answer."""
    broker = ctx.broker
    v = ctx.version
    if v < BATCHED_VERSION:
        results = await _add_partitions(
            broker, v, req.v3_and_below_transactional_id, req.v3_and_below_producer_id,
            req.v3_and_below_producer_epoch, req.v3_and_below_topics, False)
        return AddPartitionsToTxnResponse(
            throttle_time_ms=0, results_by_topic_v3_and_below=results)
    out = []
    for txn in req.transactions:
        out.append(AddPartitionsToTxnResult(
            transactional_id=txn.transactional_id,
            topic_results=await _add_partitions(
                broker, v, txn.transactional_id, txn.producer_id, txn.producer_epoch,
                txn.topics, txn.verify_only)))
    return AddPartitionsToTxnResponse(throttle_time_ms=0, error_code=0, results_by_transaction=out)


@handles(25, 0, 4)
async def handle_add_offsets_to_txn(ctx: RequestContext, req) -> AddOffsetsToTxnResponse:
    """Versions 0-4.  Adds the group's __consumer_offsets partition to the transaction."""
    coordinator = ctx.broker.txn_coordinator
    err = await _logged(coordinator, req.transactional_id, coordinator.add_offsets,
                        req.transactional_id, req.producer_id, req.producer_epoch, req.group_id)
    return AddOffsetsToTxnResponse(throttle_time_ms=0, error_code=_fenced(err, ctx.version))


@handles(26, 0, 5)
async def handle_end_txn(ctx: RequestContext, req) -> EndTxnResponse:
    """Versions 0-5.  Commits or aborts: PrepareCommit/PrepareAbort is logged (and
    replicated); the marker channel then writes the markers to every partition of the
    transaction (the LSO moves, pending transactional offsets become visible or are dropped),
    then CompleteCommit/CompleteAbort, as Kafka.  The answer comes right after the prepare,
    as Kafka's: until the completion is written, the transactional id's next InitProducerId,
    AddPartitionsToTxn, AddOffsetsToTxn or EndTxn answers CONCURRENT_TRANSACTIONS (clients
    retry).  v5 (transaction version 2, KIP-890 part 2) bumps the epoch on every end and
    answers the producer id and epoch to go on with."""
    coordinator = ctx.broker.txn_coordinator
    answer: list[tuple[int, int]] = [(-1, -1)]

    def end() -> int:
        code, pid, epoch = coordinator.end_transaction(
            req.transactional_id, req.producer_id, req.producer_epoch, req.committed,
            client_transaction_version=2 if ctx.version >= TV2_END_TXN_VERSION else 0)
        answer[0] = (pid, epoch)
        return code

    err = await _logged(coordinator, req.transactional_id, end)
    pid, epoch = answer[0] if err == ErrorCode.NONE else (-1, -1)
    return EndTxnResponse(throttle_time_ms=0, error_code=_fenced(err, ctx.version),
                          producer_id=pid, producer_epoch=epoch)


@handles(28, 0, 6)
async def handle_txn_offset_commit(ctx: RequestContext, req) -> TxnOffsetCommitResponse:
    """Versions 0-6 (v2+: committed leader epoch; v3+: generation, member and instance ids,
    checked like OffsetCommit's; v5+: transaction version 2, the group's offsets partition is
    added to the transaction here, with no AddOffsetsToTxn before; v6: topics by id,
    UNKNOWN_TOPIC_ID when unknown).  The transaction coordinator checks that the group was added
    to the producer's ongoing transaction (AddOffsetsToTxn) at its epoch (on another broker:
    asked with AddPartitionsToTxn verify_only); the group coordinator
    then stores the offsets as pending records of the transaction, visible to OffsetFetch only
    once the commit marker reaches the group's partition (require_stable fetches answer
    UNSTABLE_OFFSET_COMMIT meanwhile)."""
    broker = ctx.broker
    v = ctx.version
    groups = getattr(broker, "groups", None)
    verification = getattr(broker, "txn_verification", None)
    if v >= TV2_TXN_OFFSET_COMMIT_VERSION:
        err = await _add_offsets_partition(broker, verification, req)
    elif verification is not None and req.transactional_id and verification.is_remote(
            req.transactional_id):
        # a cluster: the transactional id's coordinator is another broker, asked as Kafka's
        # group coordinator asks it (AddPartitionsToTxn verify_only)
        err = await verification.verify_offsets(
            req.transactional_id, req.producer_id, req.producer_epoch,
            *broker.txn_coordinator.offsets_partition(req.group_id))
    else:
        err = broker.txn_coordinator.check_txn_offset_commit(
            req.transactional_id, req.producer_id, req.producer_epoch, req.group_id)
    if err == ErrorCode.PRODUCER_FENCED:
        err = ErrorCode.INVALID_PRODUCER_EPOCH  # what a fenced write to the log answers
    if not err and groups is None:
        err = ErrorCode.COORDINATOR_NOT_AVAILABLE
    codes: dict[tuple[str, int], int] = {}
    partitions = []
    by_id = v >= TXN_OFFSET_COMMIT_TOPIC_IDS_VERSION
    unknown_topics: set[str] = set()
    for t in req.topics:
        topic = broker.topics.by_id.get(t.topic_id) if by_id else broker.topics.get(t.name)
        if by_id:
            t.name = topic.name if topic is not None else ""
        if topic is None:
            unknown_topics.add(t.name)
        for p in t.partitions:
            if topic is None:
                codes[(t.name, p.partition_index)] = (
                    ErrorCode.UNKNOWN_TOPIC_ID if by_id else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
                continue
            if not 0 <= p.partition_index < topic.num_partitions:
                codes[(t.name, p.partition_index)] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                continue
            partitions.append(CommitPartition(
                t.name, p.partition_index, p.committed_offset,
                p.committed_leader_epoch if v >= 2 else -1, p.committed_metadata))
    if err:
        for cp in partitions:
            codes[(cp.topic, cp.partition)] = err
    elif partitions:
        commit = CommitRequest(
            req.group_id, partitions,
            generation_id=req.generation_id_or_member_epoch if v >= 3 else -1,
            member_id=req.member_id if v >= 3 else "",
            group_instance_id=req.group_instance_id if v >= 3 else None,
            api_version=v)
        try:
            results = groups.call(
                groups.coordinator.commit_transactional_offsets, commit, req.producer_id,
                req.producer_epoch)
        except KafkaError as e:
            for cp in partitions:
                codes[(cp.topic, cp.partition)] = e.code
        else:
            replicated = await commit_replicated(broker, groups.coordinator.storage)
            for cp, code in results:
                codes[(cp.topic, cp.partition)] = code or replicated
    # Kafka answers the unknown topics first (its response builder starts with them), then
    # what the group coordinator answered
    return TxnOffsetCommitResponse(throttle_time_ms=0, topics=[
        TxnOffsetCommitResponseTopic(name=t.name, topic_id=t.topic_id, partitions=[
            TxnOffsetCommitResponsePartition(
                partition_index=p.partition_index,
                error_code=codes.get((t.name, p.partition_index), ErrorCode.NONE))
            for p in t.partitions])
        for t in sorted(req.topics, key=lambda t: t.name not in unknown_topics)])


async def _add_offsets_partition(broker, verification, req) -> int:
    """TxnOffsetCommit v5+ (transaction version 2): the group's __consumer_offsets partition
    is added to the producer's transaction (what AddOffsetsToTxn did), by this broker's
    coordinator or another's (AddPartitionsToTxn v5), as Kafka's group coordinator asks its
    AddPartitionsToTxnManager; then the offsets are checked as before."""
    coordinator = broker.txn_coordinator
    txn_id = req.transactional_id
    topic, partition = coordinator.offsets_partition(req.group_id)
    if verification is not None and txn_id and verification.is_remote(txn_id):
        err = await verification.add_offsets(
            txn_id, req.producer_id, req.producer_epoch, topic, partition)
        return err
    err = await _logged(coordinator, txn_id, coordinator.add_partitions, txn_id,
                        req.producer_id, req.producer_epoch, [(topic, partition)],
                        client_transaction_version=2)
    if err == ErrorCode.PRODUCER_FENCED:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    if err in (ErrorCode.CONCURRENT_TRANSACTIONS, ErrorCode.NOT_ENOUGH_REPLICAS):
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if err:
        return err
    return coordinator.check_txn_offset_commit(
        txn_id, req.producer_id, req.producer_epoch, req.group_id)


@handles(61, 0, 0)
async def handle_describe_producers(ctx: RequestContext, req) -> DescribeProducersResponse:
    """Version 0.  The active producers of each partition: epoch, last sequence and timestamp,
    coordinator epoch and the first offset of an open transaction."""
    broker = ctx.broker
    topics = []
    for t in req.topics:
        parts = []
        for p in t.partition_indexes:
            try:  # Kafka: the leader answers (activeProducerState of the leader's log)
                plog = broker.replicas.get_partition_or_error(t.name, p).local_log_with_epoch()
            except KafkaError as e:
                parts.append(PartitionResponse(
                    partition_index=p, error_code=e.code,
                    error_message=None, active_producers=[]))
                continue
            producers = [
                ProducerState(
                    producer_id=e.producer_id, producer_epoch=e.producer_epoch,
                    last_sequence=e.last_seq, last_timestamp=e.last_timestamp,
                    coordinator_epoch=e.coordinator_epoch,
                    current_txn_start_offset=e.current_txn_first_offset)
                for e in plog.producer_state.producers.values()
            ]
            parts.append(PartitionResponse(
                partition_index=p, error_code=0, error_message=None, active_producers=producers))
        topics.append(TopicResponse(name=t.name, partitions=parts))
    return DescribeProducersResponse(throttle_time_ms=0, topics=topics)


@handles(65, 0, 0)
async def handle_describe_transactions(ctx: RequestContext, req) -> DescribeTransactionsResponse:
    """Version 0.  TRANSACTIONAL_ID_NOT_FOUND for ids the coordinator does not know."""
    coordinator = ctx.broker.txn_coordinator
    states = []
    for txn_id in req.transactional_ids:
        txn = coordinator.describe(txn_id)
        if txn is None:
            states.append(DescribedTransaction(
                error_code=ErrorCode.TRANSACTIONAL_ID_NOT_FOUND, transactional_id=txn_id,
                transaction_state="", transaction_timeout_ms=0, transaction_start_time_ms=-1,
                producer_id=-1, producer_epoch=-1, topics=[]))
            continue
        by_topic: dict[str, list[int]] = {}
        for topic, p in sorted(txn.partitions):
            by_topic.setdefault(topic, []).append(p)
        states.append(DescribedTransaction(
            error_code=0, transactional_id=txn_id, transaction_state=txn.state.kafka_name,
            transaction_timeout_ms=txn.txn_timeout_ms,
            transaction_start_time_ms=txn.txn_start_timestamp,
            producer_id=txn.producer_id, producer_epoch=txn.producer_epoch,
            topics=[TopicData(topic=t, partitions=ps) for t, ps in by_topic.items()]))
    return DescribeTransactionsResponse(throttle_time_ms=0, transaction_states=states)


@handles(66, 0, 2)
async def handle_list_transactions(ctx: RequestContext, req) -> ListTransactionsResponse:
    """Versions 0-2 (v1: ``duration_filter``, transactions running longer than it; v2:
    ``transactional_id_pattern``, a regular expression the whole id must match, null or empty
    for all; one that does not compile is INVALID_REGULAR_EXPRESSION, as Kafka answers)."""
    duration = req.duration_filter if ctx.version >= 1 else -1
    pattern = req.transactional_id_pattern if ctx.version >= 2 else None
    matcher = None
    if pattern:
        try:
            matcher = re.compile(pattern)
        except re.error:
            return ListTransactionsResponse(
                throttle_time_ms=0, error_code=ErrorCode.INVALID_REGULAR_EXPRESSION,
                unknown_state_filters=[], transaction_states=[])
    unknown, txns = ctx.broker.txn_coordinator.list(
        req.state_filters, req.producer_id_filters, duration)
    if matcher is not None:
        txns = [t for t in txns if matcher.fullmatch(t.transactional_id)]
    return ListTransactionsResponse(
        throttle_time_ms=0, error_code=0, unknown_state_filters=unknown,
        transaction_states=[
            ListedTransaction(
                transactional_id=t.transactional_id, producer_id=t.producer_id,
                transaction_state=t.state.kafka_name)
            for t in txns
        ])
