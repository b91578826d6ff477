"""CreateTopics and DeleteTopics answer once the topic registry, the durable record, is written;
a new partition's log files are created on first use (as Kafka's brokers create logs after
the controller answered).  Clients produce and consume at once, as on Kafka; a kill -9 right
after either answer leaves a data dir where created topics have all their partitions and
deleted ones stay deleted."""

from __future__ import annotations

import shutil
import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from pykafkad.testing import run_broker
from tests.integration.broker_process import BrokerProcess
from tests.integration.clients import WAIT_S, create_topic, needs_java

TOPICS = 20
PARTITIONS = 4


def _outcome(futures: dict) -> dict[str, str]:
    out = {}
    for name, f in futures.items():
        try:
            f.result(WAIT_S)
            out[name] = "OK"
        except KafkaException as e:
            out[name] = e.args[0].name()
    return out


def _produce_everywhere(bootstrap: str, topics: list[str]) -> None:
    errors: list = []
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for t in topics:
        for part in range(PARTITIONS):
            p.produce(t, value=f"{t}/{part}".encode(), partition=part,
                      on_delivery=lambda err, msg: err and errors.append(err))
    assert p.flush(WAIT_S) == 0
    assert not errors, errors


def _consume_everything(bootstrap: str, topics: list[str]) -> dict[tuple[str, int], list[bytes]]:
    want = len(topics) * PARTITIONS
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False})
    c.assign([TopicPartition(t, p, 0) for t in topics for p in range(PARTITIONS)])
    got: dict[tuple[str, int], list[bytes]] = {}
    deadline = time.monotonic() + WAIT_S
    try:
        while sum(map(len, got.values())) < want and time.monotonic() < deadline:
            msg = c.poll(0.2)
            if msg is not None and msg.error() is None:
                got.setdefault((msg.topic(), msg.partition()), []).append(msg.value())
    finally:
        c.close()
    return got


def create_use_delete(bootstrap: str, prefix: str) -> dict:
    """One CreateTopics of TOPICS topics (with an existing name among them), a record produced
    to and read back from every partition at once, one DeleteTopics (with an unknown name)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    topics = [f"{prefix}-{i}" for i in range(TOPICS)]
    create_topic(bootstrap, topics[0], PARTITIONS)
    created = _outcome(admin.create_topics([NewTopic(t, PARTITIONS, 1) for t in topics]))
    _produce_everywhere(bootstrap, topics)
    consumed = _consume_everything(bootstrap, topics)
    read_back = sorted((t, p, v) for (t, p), vs in consumed.items() for v in vs)
    deleted = _outcome(admin.delete_topics(topics + [f"{prefix}-unknown"]))
    # Kafka's brokers learn of the deletion from the metadata log a moment after the answer
    deadline = time.monotonic() + WAIT_S
    while True:
        left = {t for t in admin.list_topics(timeout=WAIT_S).topics if t.startswith(prefix)}
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    return {
        "created": {t.removeprefix(prefix): r for t, r in created.items()},
        "read back": [(t.removeprefix(prefix), p, v.decode().removeprefix(prefix))
                      for t, p, v in read_back],
        "deleted": {t.removeprefix(prefix): r for t, r in deleted.items()},
        "left": left,
    }


def _expected_reads() -> list:
    return sorted((f"-{i}", p, f"-{i}/{p}") for i in range(TOPICS) for p in range(PARTITIONS))


def test_created_topics_serve_at_once_and_deletes_answer_per_topic(tmp_path, topic_name):
    with run_broker(tmp_path / "data") as kafka:
        got = create_use_delete(kafka.bootstrap_servers, topic_name)
    assert got["created"] == {"-0": "TOPIC_ALREADY_EXISTS",
                              **{f"-{i}": "OK" for i in range(1, TOPICS)}}
    assert got["read back"] == _expected_reads()
    assert got["deleted"] == {**{f"-{i}": "OK" for i in range(TOPICS)},
                              "-unknown": "UNKNOWN_TOPIC_OR_PART"}
    assert got["left"] == set()


@needs_java
def test_kafka_answers_create_use_delete_the_same(tmp_path, topic_name, reference_kafka):
    with run_broker(tmp_path / "data") as kafka:
        ours = create_use_delete(kafka.bootstrap_servers, topic_name)
    theirs = create_use_delete(reference_kafka.bootstrap_servers, "topicspeed-" + topic_name)
    assert ours == theirs


def test_kill_9_right_after_create_topics_keeps_every_partition(tmp_path, topic_name):
    data = tmp_path / "data"
    topics = [f"{topic_name}-{i}" for i in range(TOPICS)]
    kafka = BrokerProcess(data).start()
    try:
        admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
        created = _outcome(admin.create_topics([NewTopic(t, PARTITIONS, 1) for t in topics]))
        assert set(created.values()) == {"OK"}
    finally:
        kafka.kill()
    # the directories the broker had no time to make (it makes them as the metadata log's
    # records reach it) are made at the next start; here one is lost for sure
    shutil.rmtree(data / f"{topics[3]}-2", ignore_errors=True)
    kafka = BrokerProcess(data).start()
    try:
        meta = AdminClient({"bootstrap.servers": kafka.bootstrap_servers}).list_topics(
            timeout=WAIT_S).topics
        assert {t: len(meta[t].partitions) for t in topics} == {t: PARTITIONS for t in topics}
        _produce_everywhere(kafka.bootstrap_servers, topics)
        consumed = _consume_everything(kafka.bootstrap_servers, topics)
        assert {k: len(v) for k, v in consumed.items()} == {
            (t, p): 1 for t in topics for p in range(PARTITIONS)}
    finally:
        assert kafka.terminate() == 0
    # every partition has its directory, with Kafka's partition.metadata
    for t in topics:
        for p in range(PARTITIONS):
            assert (data / f"{t}-{p}" / "partition.metadata").is_file()


def test_kill_9_right_after_delete_topics_does_not_resurrect(tmp_path, topic_name):
    data = tmp_path / "data"
    topics = [f"{topic_name}-{i}" for i in range(TOPICS)]
    kafka = BrokerProcess(data).start()
    try:
        admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
        assert set(_outcome(admin.create_topics(
            [NewTopic(t, PARTITIONS, 1) for t in topics])).values()) == {"OK"}
        _produce_everywhere(kafka.bootstrap_servers, topics[:10])  # half of them have logs
        assert set(_outcome(admin.delete_topics(topics)).values()) == {"OK"}
    finally:
        kafka.kill()
    kafka = BrokerProcess(data).start()
    try:
        admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
        assert not [t for t in admin.list_topics(timeout=WAIT_S).topics if t in topics]
        assert not [d.name for d in data.iterdir() if d.name.startswith(topic_name)]
        # the same name makes a new, empty topic
        create_topic(kafka.bootstrap_servers, topics[0], PARTITIONS)
        c = Consumer({"bootstrap.servers": kafka.bootstrap_servers, "group.id": "unused"})
        try:
            ends = [c.get_watermark_offsets(TopicPartition(topics[0], p), timeout=WAIT_S)
                    for p in range(PARTITIONS)]
        finally:
            c.close()
        assert ends == [(0, 0)] * PARTITIONS
    finally:
        assert kafka.terminate() == 0
