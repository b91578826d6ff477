"""Transaction version 2 on the wire, as one scenario any broker can run (pykafkad or the
reference Kafka): what a TV2 producer does (Produce v12 to partitions never added,
TxnOffsetCommit v5 without AddOffsetsToTxn, EndTxn v5 bumping the epoch), answered request by
request.  The observations come back as a dict, so a test compares the two brokers' answers."""

from __future__ import annotations

import time

from compat.wire_client import WireClient, topic_metadata
from wire.messages.describe_producers_request import DescribeProducersRequest, TopicRequest
from wire.messages.describe_transactions_request import DescribeTransactionsRequest
from wire.messages.end_txn_request import EndTxnRequest
from wire.messages.find_coordinator_request import FindCoordinatorRequest
from wire.messages.init_producer_id_request import InitProducerIdRequest
from wire.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from wire.messages.txn_offset_commit_request import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitRequestPartition,
    TxnOffsetCommitRequestTopic,
)
from wire.records.batch import build_batch

WAIT_S = 60
#: what a coordinator answers while it cannot yet (clients retry these)
RETRIABLE = {14, 15, 16, 51}  # load in progress, not available, not coordinator, concurrent


def _retry(send, what: str):
    deadline = time.monotonic() + WAIT_S
    while True:
        r = send()
        if r.error_code not in RETRIABLE:
            return r
        assert time.monotonic() < deadline, f"{what}: still {r.error_code}"
        time.sleep(0.05)


def _produce(wc, version, txn_id, topic, partition, pid, epoch, seq, value):
    batch = build_batch([(None, value)], producer_id=pid, producer_epoch=epoch,
                        base_sequence=seq, is_transactional=True)
    r = wc.send(ProduceRequest(transactional_id=txn_id, acks=-1, timeout_ms=30000, topic_data=[
        TopicProduceData(name=topic, partition_data=[
            PartitionProduceData(index=partition, records=batch)])]), version)
    return r.responses[0].partition_responses[0].error_code


def _described(wc, txn_id):
    (s,) = wc.send(DescribeTransactionsRequest(transactional_ids=[txn_id]), 0).transaction_states
    return (s.error_code, s.transaction_state,
            sorted((t.topic, sorted(t.partitions)) for t in s.topics))


def _producer_epochs(wc, topic, partitions) -> dict[int, list[int]]:
    r = wc.send(DescribeProducersRequest(topics=[TopicRequest(
        name=topic, partition_indexes=list(partitions))]), 0)
    return {p.partition_index: [s.producer_epoch for s in p.active_producers]
            for p in r.topics[0].partitions}


def _wait_state(wc, txn_id, state):
    deadline = time.monotonic() + WAIT_S
    while (got := _described(wc, txn_id))[1] != state:
        assert time.monotonic() < deadline, f"{txn_id} still {got}"
        time.sleep(0.05)
    return got


def run(bootstrap: str, topic: str, txn_id: str, group: str) -> dict:
    """``topic`` has two partitions; ``group`` has no members.  Single-node brokers only (the
    bootstrap is every coordinator and every leader)."""
    seen: dict = {}
    with WireClient(bootstrap) as wc:
        _retry(lambda: wc.send(FindCoordinatorRequest(key=txn_id, key_type=1), 3),
               "FindCoordinator")
        init = _retry(lambda: wc.send(InitProducerIdRequest(
            transactional_id=txn_id, transaction_timeout_ms=60000), 5), "InitProducerId")
        pid, epoch = init.producer_id, init.producer_epoch
        seen["init"] = (init.error_code, epoch)
        # Produce v12 to partitions never added (no AddPartitionsToTxn): the broker adds them
        seen["produce_v12"] = [
            _produce(wc, 12, txn_id, topic, p, pid, epoch, 0, b"one") for p in (0, 1)]
        seen["described_ongoing"] = _described(wc, txn_id)
        # TxnOffsetCommit v5 without AddOffsetsToTxn: the group's partition is added too
        _retry(lambda: wc.send(FindCoordinatorRequest(key=group, key_type=0), 3),
               "FindCoordinator(group)")
        r = _retry(lambda: wc.send(TxnOffsetCommitRequest(
            transactional_id=txn_id, group_id=group, producer_id=pid, producer_epoch=epoch,
            topics=[TxnOffsetCommitRequestTopic(name=topic, partitions=[
                TxnOffsetCommitRequestPartition(partition_index=0, committed_offset=7)])]),
            5).topics[0].partitions[0], "TxnOffsetCommit")
        seen["txn_offset_commit_v5"] = r.error_code
        # v6 names topics by id: a known one is stored, an unknown one UNKNOWN_TOPIC_ID
        (md,) = topic_metadata(bootstrap, [topic])
        r = wc.send(TxnOffsetCommitRequest(
            transactional_id=txn_id, group_id=group, producer_id=pid, producer_epoch=epoch,
            topics=[TxnOffsetCommitRequestTopic(topic_id=tid, partitions=[
                TxnOffsetCommitRequestPartition(partition_index=0, committed_offset=8)])
                for tid in (md.topic_id, bytes(15) + b"\x07")]), 6)
        seen["txn_offset_commit_v6"] = [
            (t.topic_id == md.topic_id, t.name, [p.error_code for p in t.partitions])
            for t in r.topics]
        _, state, parts = _described(wc, txn_id)
        seen["offsets_partition_added"] = (state, [t for t, _ in parts])
        # EndTxn v5: the epoch is bumped, the answer carries it
        end = wc.send(EndTxnRequest(transactional_id=txn_id, producer_id=pid,
                                    producer_epoch=epoch, committed=True), 5)
        seen["end_commit"] = (end.error_code, end.producer_id == pid,
                              end.producer_epoch - epoch)
        new_epoch = end.producer_epoch
        seen["completed"] = _wait_state(wc, txn_id, "CompleteCommit")
        # the markers went in with the bumped epoch
        seen["partition_epochs"] = _producer_epochs(wc, topic, (0, 1))
        # a retry of the same EndTxn (the old epoch) is answered as it was
        again = wc.send(EndTxnRequest(transactional_id=txn_id, producer_id=pid,
                                      producer_epoch=epoch, committed=True), 5)
        seen["end_commit_retry"] = (again.error_code, again.producer_epoch - epoch)
        # a retry that switches to abort is refused
        switched = wc.send(EndTxnRequest(transactional_id=txn_id, producer_id=pid,
                                         producer_epoch=epoch, committed=False), 5)
        seen["end_retry_switched"] = switched.error_code
        # an abort with nothing added (a TV2 client cannot know) at the new epoch
        empty = wc.send(EndTxnRequest(transactional_id=txn_id, producer_id=pid,
                                      producer_epoch=new_epoch, committed=False), 5)
        seen["end_empty_abort"] = (empty.error_code, empty.producer_epoch - new_epoch
                                   if empty.error_code == 0 else None)
        if empty.error_code == 0:
            new_epoch = empty.producer_epoch
            seen["after_empty_abort"] = _wait_state(wc, txn_id, "CompleteAbort")
        # a second transaction at the new epoch, aborted: its batch is not visible
        seen["produce_second"] = _produce(wc, 12, txn_id, topic, 0, pid, new_epoch, 0, b"two")
        end = wc.send(EndTxnRequest(transactional_id=txn_id, producer_id=pid,
                                    producer_epoch=new_epoch, committed=False), 5)
        seen["end_abort"] = (end.error_code, end.producer_epoch - new_epoch)
        seen["aborted"] = _wait_state(wc, txn_id, "CompleteAbort")
        seen["partition_epochs_after_abort"] = _producer_epochs(wc, topic, (0,))
        # the old epoch (now two behind) is fenced for Produce as well
        seen["produce_fenced"] = _produce(wc, 12, txn_id, topic, 1, pid, epoch, 1, b"late")
        stale = wc.send(EndTxnRequest(transactional_id=txn_id, producer_id=pid,
                                      producer_epoch=epoch, committed=True), 5)
        seen["end_stale_epoch"] = stale.error_code
    return seen


def run_timed_out(bootstrap: str, topic: str, txn_id: str) -> dict:
    """A transaction version 2 transaction left open past its timeout (1 s): the coordinator
    aborts it with the epoch bumped once; the client's abort at its old epoch is then answered
    as a retry (it goes on at the new epoch), a commit is refused, a Produce fenced."""
    seen: dict = {}
    with WireClient(bootstrap) as wc:
        _retry(lambda: wc.send(FindCoordinatorRequest(key=txn_id, key_type=1), 3),
               "FindCoordinator")
        init = _retry(lambda: wc.send(InitProducerIdRequest(
            transactional_id=txn_id, transaction_timeout_ms=1000), 5), "InitProducerId")
        pid, epoch = init.producer_id, init.producer_epoch
        seen["produce"] = _produce(wc, 12, txn_id, topic, 0, pid, epoch, 0, b"x")
        seen["state"] = _wait_state(wc, txn_id, "CompleteAbort")
        (s,) = wc.send(DescribeTransactionsRequest(transactional_ids=[txn_id]),
                       0).transaction_states
        seen["epoch_after_timeout"] = s.producer_epoch - epoch
        seen["partition_epochs"] = _producer_epochs(wc, topic, (0,))
        r = wc.send(EndTxnRequest(transactional_id=txn_id, producer_id=pid,
                                  producer_epoch=epoch, committed=False), 5)
        seen["end_abort_old_epoch"] = (r.error_code, r.producer_epoch - epoch
                                       if r.error_code == 0 else None)
        r = wc.send(EndTxnRequest(transactional_id=txn_id, producer_id=pid,
                                  producer_epoch=epoch, committed=True), 5)
        seen["end_commit_old_epoch"] = r.error_code
        seen["produce_old_epoch"] = _produce(wc, 12, txn_id, topic, 0, pid, epoch, 1, b"y")
    return seen


def run_fresh_empty_abort(bootstrap: str, txn_id: str) -> dict:
    """What franz-go does when a transaction's first produce fails before it reaches a
    partition: EndTxn v5 abort right after InitProducerId (the id is Empty, nothing added),
    then, once the abort is complete, the same abort again at the epoch it knew (a retry); and
    EndTxn v5 commit of another fresh id.  Epochs are relative to InitProducerId's."""
    seen: dict = {}

    def end(wc, tid, pid, epoch, commit):
        r = wc.send(EndTxnRequest(transactional_id=tid, producer_id=pid,
                                  producer_epoch=epoch, committed=commit), 5)
        return (r.error_code, (r.producer_id == pid, r.producer_epoch - epoch)
                if r.error_code == 0 else (r.producer_id, r.producer_epoch))

    with WireClient(bootstrap) as wc:
        for name, commit in (("abort", False), ("commit", True)):
            tid = f"{txn_id}-{name}"
            _retry(lambda t=tid: wc.send(FindCoordinatorRequest(key=t, key_type=1), 3),
                   "FindCoordinator")
            init = _retry(lambda t=tid: wc.send(InitProducerIdRequest(
                transactional_id=t, transaction_timeout_ms=60000), 5), "InitProducerId")
            pid, epoch = init.producer_id, init.producer_epoch
            seen[f"{name}_first"] = end(wc, tid, pid, epoch, commit)
            if seen[f"{name}_first"][0] == 0:
                seen[f"{name}_state"] = _wait_state(wc, tid, "CompleteAbort")
            seen[f"{name}_retry"] = end(wc, tid, pid, epoch, commit)
    return seen
