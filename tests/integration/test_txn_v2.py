"""Transaction version 2 (KIP-890 part 2), finalized as Kafka 4.4 finalizes it: the Java
client's transactions (Produce v12+/TxnOffsetCommit v5+ add partitions, EndTxn v5 bumps the
epoch), librdkafka's and kafka-python's (version 1) transactions with it finalized, the wire
scenario compared with Apache Kafka, and a TV2 transaction completed after a restart."""

from __future__ import annotations

import uuid

from pykafkad.testing import run_broker
from tests.integration import txn_v2_wire
from tests.integration.clients import create_topic, needs_java
from tests.integration.test_transactions import (
    TXN_WAIT,
    kafka_python_read,
    read_all,
    txn_producer,
    wait_for,
)
from wire.errors import ErrorCode, KafkaError


def _unique(what: str) -> str:
    return f"tv2-{what}-{uuid.uuid4().hex[:8]}"


def _log_values(broker, txn_id):
    """The TransactionLogValue records written for ``txn_id``, decoded, in log order (with
    their version and tag-0 previous producer id)."""
    from pykafkad.coordinator.transaction_coordinator import _read_transaction_log
    from pykafkad.coordinator.transaction_log import TRANSACTION_STATE_TOPIC, decode_value

    coordinator = broker.broker.txn_coordinator
    plog = broker.broker.logs.get(TRANSACTION_STATE_TOPIC, coordinator.partition_for(txn_id))
    return [(int.from_bytes(v[:2], "big"), decode_value(txn_id, v))
            for k, v in _read_transaction_log(plog) if k == txn_id and v is not None]


@needs_java
def test_wire_scenario_answers_as_kafka(broker, reference_kafka):
    """Produce v12 to partitions never added is accepted and they appear in
    DescribeTransactions; TxnOffsetCommit v5 adds the group's partition; EndTxn v5 answers the
    bumped epoch, markers carry it (DescribeProducers), a retry and an empty abort are answered
    as Kafka answers them; so is a transaction aborted for its timeout."""
    seen = {}
    for name, bs in (("pykafkad", broker.bootstrap_servers),
                     ("kafka", reference_kafka.bootstrap_servers)):
        topic = _unique("wire")
        create_topic(bs, topic, 2)
        seen[name] = txn_v2_wire.run(bs, topic, _unique("txn"), _unique("group"))
        for key in ("described_ongoing", "offsets_partition_added"):
            seen[name][key] = str(seen[name][key]).replace(topic, "T")
        seen[name]["timed_out"] = txn_v2_wire.run_timed_out(bs, topic, _unique("timeout"))
        seen[name]["fresh_empty_abort"] = txn_v2_wire.run_fresh_empty_abort(bs, _unique("fresh"))
    ours = seen["pykafkad"]
    assert ours["produce_v12"] == [0, 0]
    assert ours["described_ongoing"] == str((0, "Ongoing", [("T", [0, 1])]))
    assert ours["end_commit"] == (0, True, 1)
    assert ours["partition_epochs"] == {0: [1], 1: [1]}
    assert ours["timed_out"]["end_abort_old_epoch"] == (0, 1)
    assert ours["fresh_empty_abort"] == FRESH_EMPTY_ABORT
    assert ours == seen["kafka"]


#: Apache Kafka 4.4's answers to run_fresh_empty_abort: a version 2 abort of a just-initialised
#: id bumps the epoch (and its retry at the old epoch gets the same answer); a commit is refused
FRESH_EMPTY_ABORT = {
    "abort_first": (0, (True, 1)),
    "abort_retry": (0, (True, 1)),
    "abort_state": (0, "CompleteAbort", []),
    "commit_first": (ErrorCode.INVALID_TXN_STATE, (-1, -1)),
    "commit_retry": (ErrorCode.INVALID_TXN_STATE, (-1, -1)),
}


def test_version_2_abort_of_a_fresh_transactional_id(broker):
    """franz-go's TestTxnEtl: a transaction whose first produce failed before reaching a
    partition is aborted with EndTxn v5 right after InitProducerId.  Kafka bumps the epoch and
    answers NONE (pykafkad answered INVALID_TXN_STATE when the id's last transaction was not
    version 2, and franz-go's flush failed)."""
    assert txn_v2_wire.run_fresh_empty_abort(
        broker.bootstrap_servers, _unique("fresh")) == FRESH_EMPTY_ABORT


def test_transaction_log_records_carry_the_v2_fields_and_survive_a_restart(tmp_path):
    """The log values are version 1 with ClientTransactionVersion 2 once a TV2 producer ends a
    transaction, and the previous producer id; a TV2 transaction left in PrepareCommit
    completes after a restart, at the bumped epoch."""
    from compat.wire_client import WireClient
    from wire.messages.describe_producers_request import DescribeProducersRequest, TopicRequest
    from wire.messages.end_txn_request import EndTxnRequest

    data = tmp_path / "data"
    topic, txn_id = _unique("restart"), _unique("txn")
    with run_broker(data) as b:
        bs = b.bootstrap_servers
        create_topic(bs, topic, 2)
        with WireClient(bs) as wc:
            txn_v2_wire._retry(lambda: wc.send(txn_v2_wire.FindCoordinatorRequest(
                key=txn_id, key_type=1), 3), "FindCoordinator")
            init = txn_v2_wire._retry(lambda: wc.send(txn_v2_wire.InitProducerIdRequest(
                transactional_id=txn_id, transaction_timeout_ms=60000), 5), "InitProducerId")
            pid, epoch = init.producer_id, init.producer_epoch
            for p in (0, 1):
                assert txn_v2_wire._produce(wc, 12, txn_id, topic, p, pid, epoch, 0, b"x") == 0
            # the markers never go out: the broker stops with the transaction prepared (the
            # coordinator's crash hook, as tests/coordinator's restart test uses it)
            def crash(txn):
                raise KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE, "stopped before markers")

            b.broker.txn_coordinator.before_markers = crash
            wc.send(EndTxnRequest(transactional_id=txn_id, producer_id=pid,
                                  producer_epoch=epoch, committed=True), 5)
        values = _log_values(b, txn_id)
        assert [(v, t.state.kafka_name, t.producer_epoch, t.client_transaction_version)
                for v, t in values] == [
            (1, "Empty", epoch, 0), (1, "Ongoing", epoch, 2), (1, "Ongoing", epoch, 2),
            (1, "PrepareCommit", epoch + 1, 2)]
        assert all(t.last_producer_id == pid for _, t in values)
    with run_broker(data) as b:
        bs = b.bootstrap_servers
        with WireClient(bs) as wc:
            txn_v2_wire._wait_state(wc, txn_id, "CompleteCommit")
            r = wc.send(DescribeProducersRequest(topics=[TopicRequest(
                name=topic, partition_indexes=[0, 1])]), 0)
            assert [[s.producer_epoch for s in p.active_producers]
                    for p in r.topics[0].partitions] == [[epoch + 1], [epoch + 1]]
        assert read_all(bs, topic, (0, 1), "read_committed") == [b"x", b"x"]


def test_epoch_overflow_moves_to_a_new_producer_id(broker, topic_name):
    """EndTxn v5 at epoch 32766 (exhausted): the answer is a new producer id at epoch 0, the
    markers go out under the old id at 32767, and a retry of that EndTxn gets the same
    answer (Kafka's prepareAbortOrCommit / prepareComplete)."""
    from compat.wire_client import WireClient
    from wire.messages.end_txn_request import EndTxnRequest

    bs = broker.bootstrap_servers
    create_topic(bs, topic_name, 1)
    txn_id = _unique("overflow")
    coordinator = broker.broker.txn_coordinator
    with WireClient(bs) as wc:
        txn_v2_wire._retry(lambda: wc.send(txn_v2_wire.FindCoordinatorRequest(
            key=txn_id, key_type=1), 3), "FindCoordinator")
        init = txn_v2_wire._retry(lambda: wc.send(txn_v2_wire.InitProducerIdRequest(
            transactional_id=txn_id, transaction_timeout_ms=60000), 5), "InitProducerId")
        pid = init.producer_id
        # the id has been used for 32766 transactions: its epoch is exhausted
        txn = coordinator.txns[txn_id].copy()
        txn.producer_epoch = 32766
        coordinator._commit(txn)
        assert txn_v2_wire._produce(wc, 12, txn_id, topic_name, 0, pid, 32766, 0, b"x") == 0
        end = wc.send(EndTxnRequest(transactional_id=txn_id, producer_id=pid,
                                    producer_epoch=32766, committed=True), 5)
        assert end.error_code == 0 and end.producer_id != pid and end.producer_epoch == 0
        txn_v2_wire._wait_state(wc, txn_id, "CompleteCommit")
        assert txn_v2_wire._producer_epochs(wc, topic_name, (0,)) == {0: [32767]}
        again = wc.send(EndTxnRequest(transactional_id=txn_id, producer_id=pid,
                                      producer_epoch=32766, committed=True), 5)
        assert (again.error_code, again.producer_id, again.producer_epoch) == (
            0, end.producer_id, 0)
        # the new id goes on
        assert txn_v2_wire._produce(
            wc, 12, txn_id, topic_name, 0, end.producer_id, 0, 0, b"y") == 0
        last = wc.send(EndTxnRequest(transactional_id=txn_id, producer_id=end.producer_id,
                                     producer_epoch=0, committed=True), 5)
        assert (last.error_code, last.producer_id, last.producer_epoch) == (
            0, end.producer_id, 1)
    assert read_all(bs, topic_name, (0,), "read_committed") == [b"x", b"y"]


def test_librdkafka_and_kafka_python_transactions_with_v2_finalized(broker, topic_name):
    """librdkafka (confluent-kafka) and kafka-python speak transaction version 1
    (AddPartitionsToTxn, EndTxn below v5): with version 2 finalized their commits and aborts,
    and the partition verification of part 1, work as before; the epoch stays."""
    bs = broker.bootstrap_servers
    create_topic(bs, topic_name, 2)
    p = txn_producer(bs, _unique("rdkafka"))
    for i, commit in enumerate((True, False, True)):
        p.begin_transaction()
        for part in (0, 1):
            p.produce(topic_name, f"r{i}".encode(), partition=part)
        assert p.flush(TXN_WAIT) == 0
        (p.commit_transaction if commit else p.abort_transaction)(TXN_WAIT)
    txns = broker.broker.txn_coordinator.txns
    (rd,) = [t for t in txns.values() if t.transactional_id.startswith("tv2-rdkafka")]
    assert rd.client_transaction_version == 0 and rd.producer_epoch == 0

    from kafka import KafkaProducer

    kp = KafkaProducer(bootstrap_servers=bs, transactional_id=_unique("kafka-python"))
    kp.init_transactions()
    kp.begin_transaction()
    kp.send(topic_name, b"k", partition=0)
    kp.commit_transaction()
    kp.close()
    want = sorted([b"r0", b"r0", b"r2", b"r2", b"k"])
    assert sorted(read_all(bs, topic_name, (0, 1), "read_committed")) == want
    got, _ = kafka_python_read(bs, topic_name, (0, 1), "read_committed", 5)
    assert sorted(got) == want


JAVA_SCENARIOS = ["transactions", "transactions-offsets", "transactions-v2"]


@needs_java
def test_java_client_transactions_use_version_2(broker):
    """kafka-clients 4.4 sees transaction.version 2 finalized: its transactions across
    partitions and a group's offsets (sendOffsetsToTransaction) commit and abort, and
    read_committed consumers see exactly the committed records (CompatClient scenarios); each
    EndTxn bumped the epoch (the coordinator's state) and no AddPartitionsToTxn /
    AddOffsetsToTxn came from the client (every transaction is marked version 2)."""
    from compat.clients.java import run_java

    results, stderr = run_java(broker.bootstrap_servers, JAVA_SCENARIOS)
    for name in JAVA_SCENARIOS:
        assert results[name].status == "pass", (name, results[name].reason, stderr[-2000:])
    txns = {t.transactional_id: t for t in broker.broker.txn_coordinator.txns.values()}
    mine = [t for tid, t in txns.items() if tid.startswith("compat-transactions")]
    assert len(mine) == 3
    for t in mine:
        assert t.client_transaction_version == 2, t
        assert t.producer_epoch >= 1, t


@needs_java
def test_transaction_version_downgrade_as_kafka(broker, reference_kafka, topic_name):
    """UpdateFeatures: Kafka lets transaction.version go down to 1 or 0 (kafka-features
    --dry-run says so on both brokers); once it is down, the coordinator writes what Kafka's
    writes at that level (value version 1 from level 1, 0 at level 0) and a version 1 client
    (librdkafka) keeps committing."""
    from compat.kafka_tools import run_tool

    def features(bs, *args):
        p = run_tool("kafka-features", ["--bootstrap-server", bs, *args])
        assert p.returncode == 0, p.stderr[-2000:]
        return p.stdout.strip()

    for level in ("1", "0"):
        args = ("downgrade", "--feature", f"transaction.version={level}", "--dry-run")
        assert features(broker.bootstrap_servers, *args) == features(
            reference_kafka.bootstrap_servers, *args)
    bs = broker.bootstrap_servers
    create_topic(bs, topic_name, 1)
    coordinator = broker.broker.txn_coordinator
    for level, value_version in (("1", 1), ("0", 0)):
        assert features(bs, "downgrade", "--feature", f"transaction.version={level}") == (
            f"transaction.version was downgraded to {level}.")
        wait_for(lambda want=int(level): coordinator.transaction_version() == want,
                 "the new level")
        txn_id = _unique(f"at-{level}")
        p = txn_producer(bs, txn_id)
        p.begin_transaction()
        p.produce(topic_name, level.encode(), partition=0)
        p.commit_transaction(TXN_WAIT)
        assert {v for v, _ in _log_values(broker, txn_id)} == {value_version}
    assert sorted(read_all(bs, topic_name, (0,), "read_committed")) == [b"0", b"1"]


def _java_empty_abort(bootstrap: str) -> list[str]:
    """compat/java/EmptyAbortProbe.java's ``##`` lines on a new one-partition topic."""
    import subprocess

    from compat import maven
    from compat.clients import java

    topic = _unique("empty-abort")
    create_topic(bootstrap, topic, 1)
    p = subprocess.run(
        ["java", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp",
         maven.classpath(java.jars_dir()), str(java.SOURCE.with_name("EmptyAbortProbe.java")),
         bootstrap, topic, _unique("empty-abort-txn")], capture_output=True, text=True,
        timeout=180)
    assert p.returncode == 0, p.stderr[-2000:]
    return [line for line in p.stdout.splitlines() if line.startswith("##")]


@needs_java
def test_java_client_aborts_a_transaction_whose_record_never_left_it(broker, reference_kafka):
    """kafka-clients 4.4 (transaction version 2): send() then abortTransaction() before the
    batch is drained sends EndTxn v5 abort for an id the coordinator has Empty.  Kafka accepts
    it and the next transaction commits; pykafkad answered INVALID_TXN_STATE (the abort threw
    InvalidTxnStateException and the producer was unusable), which also failed franz-go's
    TestTxnEtl."""
    ours = _java_empty_abort(broker.bootstrap_servers)
    assert ours == ["##ABORT OK", "##COMMIT OK"]
    assert ours == _java_empty_abort(reference_kafka.bootstrap_servers)
