"""EndTxn as Kafka answers it: once PrepareCommit is in (replicated) ``__transaction_state``,
before any marker is written.  The markers then go out asynchronously, and until every one is
in and CompleteCommit is written, the transactional id's next InitProducerId,
AddPartitionsToTxn, AddOffsetsToTxn and EndTxn answer CONCURRENT_TRANSACTIONS (clients retry).

To hold the markers back without timing, every broker but the coordinator closes the
connection of each WriteTxnMarkers (a fault rule) until the rule is cleared: the coordinator
keeps retrying, the transaction stays in PrepareCommit, and completes once the rule is gone.
(Apache Kafka 4.4.0, asked the same sequence on one node, answers the AddPartitionsToTxn right
after EndTxn with CONCURRENT_TRANSACTIONS or NONE depending on whether its own markers were
already in: the answer races the markers there, so it is not compared here.)"""

from __future__ import annotations

import uuid

from confluent_kafka.admin import AdminClient, NewTopic

from compat.wire_client import WireClient
from pykafkad.testing import run_cluster
from tests.integration.clients import WAIT_S
from tests.kraft.test_broker_replication import node_bootstrap, wait_for
from wire.errors import ErrorCode
from wire.messages.add_offsets_to_txn_request import AddOffsetsToTxnRequest
from wire.messages.add_partitions_to_txn_request import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnTopic,
)
from wire.messages.describe_transactions_request import DescribeTransactionsRequest
from wire.messages.end_txn_request import EndTxnRequest
from wire.messages.find_coordinator_request import FindCoordinatorRequest
from wire.messages.init_producer_id_request import InitProducerIdRequest

CONFIG = {"transaction.state.log.replication.factor": "3", "transaction.state.log.min.isr": "2"}
CONCURRENT = ErrorCode.CONCURRENT_TRANSACTIONS


def _coordinator(bootstrap: str, txn_id: str) -> int:
    with WireClient(bootstrap) as c:
        r = c.send(FindCoordinatorRequest(key_type=1, coordinator_keys=[txn_id]), 4)
    key = r.coordinators[0]
    return key.node_id if key.error_code == 0 else -1


def test_end_txn_answers_before_the_markers_and_the_next_requests_wait(tmp_path):
    with run_cluster(3, config=CONFIG, data_dir=tmp_path / "c") as cluster:
        ids = sorted(cluster.nodes)
        bootstrap = ",".join(node_bootstrap(cluster, i) for i in ids)
        topic = f"async-markers-{uuid.uuid4().hex[:6]}"
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([NewTopic(topic, 3, 3)])[topic].result(WAIT_S)
        txn_id = f"tx-{uuid.uuid4().hex[:8]}"
        coordinator = wait_for(lambda: _coordinator(bootstrap, txn_id) + 1, "a coordinator") - 1
        others = [i for i in ids if i != coordinator]
        rules = {i: cluster.nodes[i].faults.add("WriteTxnMarkers", close=True, count=None)
                 for i in others}
        with WireClient(node_bootstrap(cluster, coordinator)) as c:
            init = wait_for(lambda: (lambda r: r if r.error_code == 0 else None)(c.send(
                InitProducerIdRequest(transactional_id=txn_id, transaction_timeout_ms=60000), 4)),
                "a producer id")
            pid, epoch = init.producer_id, init.producer_epoch

            def add_partitions() -> list[int]:
                r = c.send(AddPartitionsToTxnRequest(
                    v3_and_below_transactional_id=txn_id, v3_and_below_producer_id=pid,
                    v3_and_below_producer_epoch=epoch, v3_and_below_topics=[
                        AddPartitionsToTxnTopic(name=topic, partitions=[0, 1, 2])]), 3)
                return sorted({p.partition_error_code for t in r.results_by_topic_v3_and_below
                               for p in t.results_by_partition})

            def state() -> str:
                r = c.send(DescribeTransactionsRequest(transactional_ids=[txn_id]), 0)
                return r.transaction_states[0].transaction_state

            assert add_partitions() == [0]
            end = EndTxnRequest(transactional_id=txn_id, producer_id=pid, producer_epoch=epoch,
                                committed=True)
            # answered while the other brokers refuse every marker
            assert c.send(end, 3).error_code == 0
            assert state() == "PrepareCommit"
            assert add_partitions() == [CONCURRENT]
            assert c.send(AddOffsetsToTxnRequest(
                transactional_id=txn_id, producer_id=pid, producer_epoch=epoch,
                group_id="g"), 3).error_code == CONCURRENT
            assert c.send(end, 3).error_code == CONCURRENT
            assert c.send(InitProducerIdRequest(
                transactional_id=txn_id, transaction_timeout_ms=60000), 4).error_code \
                == CONCURRENT
            assert state() == "PrepareCommit"
            # the markers were tried (and refused) on the other brokers
            assert all(wait_for(lambda i=i: [r for r in cluster.nodes[i].faults.list()
                                             if r["fired"] > 0], f"a marker sent to {i}")
                       for i in others)
            for i in others:
                cluster.nodes[i].faults.clear(rules[i])
            wait_for(lambda: state() == "CompleteCommit", "the markers written")
            assert add_partitions() == [0]
