"""A full disk answers error codes, stores nothing half, and the broker keeps serving.

The data dir lives on a small tmpfs that a filler file fills up.  Kafka takes a log dir that
fails a write offline (and halts when it was its only one); pykafkad answers the failed write
with Kafka's error code and keeps the partition online, so clients retry once space is back:
Produce answers KAFKA_STORAGE_ERROR for that partition, an offset commit, a group join or a
transaction step NOT_COORDINATOR (the coordinators' mapping of a storage error), CreateTopics
and DeleteTopics KAFKA_STORAGE_ERROR with the topic left as it was when the metadata log cannot
take their records (when it can, the partitions' logs follow once space is back).  A restart on the same data dir finds exactly what clients were told.
"""

from __future__ import annotations

import logging
import time

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaProducer
from kafka.errors import KafkaStorageError

from pykafkad.testing import run_broker
from tests import full_disk
from tests.full_disk import fill
from tests.integration.clients import WAIT_S, confluent_produce, create_topic

small_disk = full_disk.small_disk  # the fixture
CONFIG = {"offsets.topic.num.partitions": "1"}


def wait_for(condition, what: str, timeout: float = WAIT_S):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def consume_all(bootstrap: str, topic: str, partitions: int) -> dict[int, list[tuple[int, bytes]]]:
    """(offset, value) of every record, by partition, read up to each partition's end."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "reader",
                  "enable.partition.eof": True, "isolation.level": "read_uncommitted"})
    c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    seen: dict[int, list] = {p: [] for p in range(partitions)}
    ended: set[int] = set()
    deadline = time.monotonic() + WAIT_S
    while len(ended) < partitions and time.monotonic() < deadline:
        msg = c.poll(0.5)
        if msg is None:
            continue
        if msg.error():
            ended.add(msg.partition())
            continue
        seen[msg.partition()].append((msg.offset(), msg.value()))
    c.close()
    assert len(ended) == partitions, "did not reach the end of every partition"
    return seen


def test_produce_on_full_disk_answers_storage_error_and_clients_retry(small_disk, topic_name, caplog):
    data = small_disk / "data"
    with run_broker(data, config=CONFIG) as kafka:
        create_topic(kafka.bootstrap_servers, topic_name, partitions=2)
        setup = Producer({"bootstrap.servers": kafka.bootstrap_servers})
        for p in (0, 1):
            setup.produce(topic_name, b"before", partition=p)
        assert setup.flush(WAIT_S) == 0
        filler = fill(small_disk)

        # a producer that does not retry sees Kafka's error code for the partition
        once = KafkaProducer(bootstrap_servers=kafka.bootstrap_servers, retries=0,
                             enable_idempotence=False)
        with pytest.raises(KafkaStorageError):
            once.send(topic_name, b"y" * 20000, partition=0).get(WAIT_S)
        once.close()

        # an idempotent producer retries KAFKA_STORAGE_ERROR until space is back
        caplog.set_level(logging.WARNING, logger="pykafkad.produce")
        retrying = Producer({"bootstrap.servers": kafka.bootstrap_servers,
                             "enable.idempotence": True, "linger.ms": 0})
        delivered = []
        for i in range(3):
            retrying.produce(topic_name, b"%d" % i * 10000, partition=1,
                             on_delivery=lambda err, msg: delivered.append(err))
        retrying.poll(0)
        wait_for(lambda: any(f"{topic_name}-1" in r.getMessage() and "No space left" in r.getMessage()
                             for r in caplog.records), "a refused append")
        # the broker keeps serving other clients meanwhile
        admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
        assert topic_name in admin.list_topics(timeout=WAIT_S).topics
        filler.unlink()
        assert retrying.flush(WAIT_S) == 0
        assert delivered == [None, None, None]
        seen = consume_all(kafka.bootstrap_servers, topic_name, 2)
    expected = {0: [(0, b"before")],
                1: [(0, b"before")] + [(i + 1, b"%d" % i * 10000) for i in range(3)]}
    assert seen == expected
    with run_broker(data, config=CONFIG) as kafka:  # a restart finds the same
        assert consume_all(kafka.bootstrap_servers, topic_name, 2) == expected


def test_offset_commit_on_full_disk_answers_not_coordinator(small_disk, topic_name):
    data = small_disk / "data"
    with run_broker(data, config=CONFIG) as kafka:
        create_topic(kafka.bootstrap_servers, topic_name)
        c = Consumer({"bootstrap.servers": kafka.bootstrap_servers, "group.id": "g",
                      "enable.auto.commit": False})
        tp = lambda offset: [TopicPartition(topic_name, 0, offset, metadata="m" * 500)]  # noqa: E731
        c.commit(offsets=tp(1), asynchronous=False)
        filler = fill(small_disk)
        # a commit fits while the offsets log's last page has room; then one is refused
        refused = None
        for offset in range(2, 200):
            try:
                c.commit(offsets=tp(offset), asynchronous=False)
            except KafkaException as e:
                refused = e.args[0]
                break
        assert refused is not None and refused.name() == "NOT_COORDINATOR"
        last_ok = offset - 1
        assert c.committed([TopicPartition(topic_name, 0)], timeout=WAIT_S)[0].offset == last_ok
        filler.unlink()
        c.commit(offsets=tp(1000), asynchronous=False)
        c.close()
    with run_broker(data, config=CONFIG) as kafka:
        c = Consumer({"bootstrap.servers": kafka.bootstrap_servers, "group.id": "g"})
        assert c.committed([TopicPartition(topic_name, 0)], timeout=WAIT_S)[0].offset == 1000
        c.close()


def _storage_error_or_none(future) -> bool:
    """True when the admin call was taken, False when refused with KAFKA_STORAGE_ERROR."""
    try:
        future.result(WAIT_S)
    except KafkaException as e:
        assert e.args[0].name() == "KAFKA_STORAGE_ERROR", e
        return False
    return True


def test_create_topics_on_full_disk_leaves_nothing_half_made(small_disk, topic_name):
    """The metadata log's records either fit (the topic is taken, and its partitions' logs are
    made once space is back) or not (KAFKA_STORAGE_ERROR, no trace of the topic)."""
    data = small_disk / "data"
    with run_broker(data, config=CONFIG) as kafka:
        admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
        filler = fill(small_disk)
        taken = _storage_error_or_none(admin.create_topics([NewTopic(topic_name, 8, 1)])[topic_name])
        if not taken:
            assert topic_name not in admin.list_topics(timeout=WAIT_S).topics
            assert not list(data.glob(f"{topic_name}-*"))
        filler.unlink()
        if not taken:
            admin.create_topics([NewTopic(topic_name, 8, 1)])[topic_name].result(WAIT_S)
        confluent_produce(kafka.bootstrap_servers, topic_name,
                          [{"value": b"v", "partition": p} for p in range(8)])
    with run_broker(data, config=CONFIG) as kafka:
        admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
        assert len(admin.list_topics(timeout=WAIT_S).topics[topic_name].partitions) == 8
        assert sorted(p.name for p in data.glob(f"{topic_name}-*")) == sorted(
            f"{topic_name}-{p}" for p in range(8))


def test_delete_topics_on_full_disk_deletes_all_or_nothing(small_disk, topic_name):
    data = small_disk / "data"
    with run_broker(data, config=CONFIG) as kafka:
        create_topic(kafka.bootstrap_servers, topic_name, partitions=2)
        admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
        filler = fill(small_disk)
        taken = _storage_error_or_none(admin.delete_topics([topic_name])[topic_name])
        if not taken:
            assert len(admin.list_topics(timeout=WAIT_S).topics[topic_name].partitions) == 2
        filler.unlink()
        if not taken:
            admin.delete_topics([topic_name])[topic_name].result(WAIT_S)
        wait_for(lambda: topic_name not in admin.list_topics(timeout=WAIT_S).topics,
                 "the topic to be gone")
    with run_broker(data, config=CONFIG) as kafka:
        admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
        assert topic_name not in admin.list_topics(timeout=WAIT_S).topics
        assert not list(data.glob(f"{topic_name}-*"))


def test_group_join_on_full_disk_is_retried_until_space_is_back(small_disk, topic_name, caplog):
    data = small_disk / "data"
    config = {**CONFIG, "group.initial.rebalance.delay.ms": "0"}
    with run_broker(data, config=config) as kafka:
        create_topic(kafka.bootstrap_servers, topic_name)
        setup = Producer({"bootstrap.servers": kafka.bootstrap_servers})
        setup.produce(topic_name, b"hello", partition=0)
        assert setup.flush(WAIT_S) == 0
        committer = Consumer({"bootstrap.servers": kafka.bootstrap_servers, "group.id": "c",
                              "enable.auto.commit": False})
        committer.commit(offsets=[TopicPartition(topic_name, 0, 0)], asynchronous=False)
        filler = fill(small_disk)
        # small commits until one is refused: what is left of the offsets log's last page is
        # too small for a group's metadata record
        for offset in range(1, 100):
            try:
                committer.commit(offsets=[TopicPartition(topic_name, 0, offset)],
                                 asynchronous=False)
            except KafkaException:
                break
        committer.close()
        caplog.set_level(logging.WARNING, logger="pykafkad.coordinator")
        joiner = Consumer({"bootstrap.servers": kafka.bootstrap_servers, "group.id": "joiner",
                           "auto.offset.reset": "earliest", "enable.auto.commit": False})
        joiner.subscribe([topic_name])
        refused = lambda: any("group joiner" in r.getMessage() for r in caplog.records)  # noqa: E731
        wait_for(lambda: joiner.poll(0.1) is None and refused(), "a refused group write")
        filler.unlink()

        def read():
            msg = joiner.poll(0.2)
            return msg is not None and not msg.error() and msg.value()

        assert wait_for(read, "the record after space is back") == b"hello"
        joiner.close()


def test_transactions_on_full_disk_resume_once_space_is_back(small_disk, topic_name):
    """AddPartitionsToTxn / EndTxn whose transaction-log write fails answer NOT_COORDINATOR
    (Kafka's mapping), Produce KAFKA_STORAGE_ERROR: the producer retries, and the commit
    completes once space is back, every record exactly once."""
    data = small_disk / "data"
    config = {**CONFIG, "transaction.state.log.num.partitions": "1"}
    with run_broker(data, config=config) as kafka:
        create_topic(kafka.bootstrap_servers, topic_name)
        p = Producer({"bootstrap.servers": kafka.bootstrap_servers, "transactional.id": "tx"})
        p.init_transactions(WAIT_S)
        committed = []
        filler = fill(small_disk)
        for i in range(100):  # small transactions until one cannot complete
            p.begin_transaction()
            p.produce(topic_name, b"%d" % i, partition=0)
            try:
                p.commit_transaction(2)
            except KafkaException as e:
                assert e.args[0].retriable() or e.args[0].name() == "_TIMED_OUT", e
                break
            committed.append(b"%d" % i)
        else:
            pytest.fail("the disk never filled up")
        filler.unlink()
        p.commit_transaction(WAIT_S)  # resumes the interrupted commit
        committed.append(b"%d" % i)
        seen = consume_all(kafka.bootstrap_servers, topic_name, 1)
    assert [v for _, v in seen[0]] == committed
    with run_broker(data, config=config) as kafka:
        again = consume_all(kafka.bootstrap_servers, topic_name, 1)
    assert [v for _, v in again[0]] == committed
