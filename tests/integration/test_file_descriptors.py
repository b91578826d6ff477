"""Out of file descriptors (EMFILE): an error code, nothing half done.

A broker process runs with a low RLIMIT_NOFILE.  Logs open their files lazily and keep a
bounded number open, so partitions do not need descriptors of their own: a topic or a data dir
with more partitions than the limit is created, started and served.  A CreateTopics that finds
no descriptor left answers KAFKA_STORAGE_ERROR (Kafka's answer when a log cannot be created)
and the topic is rolled back: not registered, no directories.
"""

from __future__ import annotations

import select
import socket
import time

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, NewTopic

from pykafkad.testing import run_broker
from tests.integration.broker_process import BrokerProcess, open_files_limit
from tests.integration.clients import (
    WAIT_S,
    confluent_consume,
    confluent_produce,
    create_topic,
)


def _wait_for_stderr(kafka: BrokerProcess, text: str, timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([kafka.proc.stderr], [], [], 0.1)
        if ready and text in kafka.proc.stderr.readline():
            return
    raise AssertionError(f"the broker never logged {text!r}")


def test_create_topics_out_of_descriptors_is_rolled_back(tmp_path, topic_name):
    """Logs open their files lazily and keep a bounded number open, so creating a topic needs
    a descriptor only for the topic registry; idle connections take every one the broker has
    left, and the CreateTopics of a connected client is refused and leaves nothing."""
    data = tmp_path / "data"
    kafka = BrokerProcess(data, preexec_fn=open_files_limit(64)).start()
    hogs: list[socket.socket] = []
    try:
        admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
        admin.create_topics([NewTopic(topic_name + "-warm", 1, 1)])[topic_name + "-warm"].result(
            WAIT_S)  # the admin client's connections are open
        # and the broker has made the new partition's directory (it holds a descriptor
        # meanwhile, which it would give back while the connections below hold the rest)
        deadline = time.monotonic() + WAIT_S
        while not (data / f"{topic_name}-warm-0" / "partition.metadata").exists():
            assert time.monotonic() < deadline, "the partition directory was never made"
            time.sleep(0.05)
        for _ in range(64):
            hogs.append(socket.create_connection(("127.0.0.1", kafka.port)))
        _wait_for_stderr(kafka, "Too many open files")  # accept() found no descriptor left
        with pytest.raises(KafkaException) as refused:
            admin.create_topics([NewTopic(topic_name, 200, 1)])[topic_name].result(WAIT_S)
        assert refused.value.args[0].name() == "KAFKA_STORAGE_ERROR"
        assert "Too many open files" in refused.value.args[0].str()
        assert topic_name not in admin.list_topics(timeout=WAIT_S).topics
        assert not list(data.glob(f"{topic_name}-[0-9]*"))
        for hog in hogs:
            hog.close()
        # the broker keeps serving: a topic with more partitions than descriptors is created,
        # written and read
        create_topic(kafka.bootstrap_servers, topic_name + "-big", partitions=200)
        confluent_produce(kafka.bootstrap_servers, topic_name + "-big",
                          [{"value": b"still here", "partition": p} for p in range(0, 200, 10)])
        got = confluent_consume(kafka.bootstrap_servers, topic_name + "-big", 20,
                                partitions=range(0, 200, 10))
        assert [m.value() for m in got] == [b"still here"] * 20
    finally:
        for hog in hogs:
            hog.close()
        assert kafka.terminate() == 0
    with run_broker(data) as restarted:  # a consistent data dir
        topics = AdminClient({"bootstrap.servers": restarted.bootstrap_servers}).list_topics(
            timeout=WAIT_S).topics
        assert topic_name not in topics
        assert len(topics[topic_name + "-big"].partitions) == 200


def test_start_with_more_partitions_than_descriptors_serves_them(tmp_path, topic_name):
    data = tmp_path / "data"
    with run_broker(data) as kafka:
        create_topic(kafka.bootstrap_servers, topic_name, partitions=300)
        confluent_produce(kafka.bootstrap_servers, topic_name,
                          [{"value": b"v%d" % p, "partition": p} for p in range(0, 300, 30)])
    kafka = BrokerProcess(data, preexec_fn=open_files_limit(100)).start()
    try:
        topics = AdminClient({"bootstrap.servers": kafka.bootstrap_servers}).list_topics(
            timeout=WAIT_S).topics
        assert len(topics[topic_name].partitions) == 300
        got = confluent_consume(kafka.bootstrap_servers, topic_name, 10,
                                partitions=range(0, 300, 30))
        assert sorted(m.value() for m in got) == sorted(b"v%d" % p for p in range(0, 300, 30))
    finally:
        assert kafka.terminate() == 0
