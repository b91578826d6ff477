"""Out of file descriptors (EMFILE): an error code, nothing half done, a clear start failure.

A broker process runs with a low RLIMIT_NOFILE.  A CreateTopics that needs more descriptors
than are left answers KAFKA_STORAGE_ERROR (Kafka's answer when a log cannot be created) and the
topic is rolled back: not registered, no directories.  A start on a data dir with more
partitions than the limit allows exits with one line that names ``ulimit -n`` and the number
needed, and starting with that limit works.
"""

from __future__ import annotations

import re
import select
import socket
import subprocess
import sys
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


def test_start_with_too_few_descriptors_names_ulimit(tmp_path, topic_name):
    data = tmp_path / "data"
    with run_broker(data) as kafka:
        create_topic(kafka.bootstrap_servers, topic_name, partitions=300)
    cmd = [sys.executable, "-m", "pykafkad", "--host", "127.0.0.1", "--port", "0",
           "--data-dir", str(data)]
    failed = subprocess.run(cmd, preexec_fn=open_files_limit(100), capture_output=True,
                            text=True, timeout=60)
    assert failed.returncode == 2
    assert "Traceback" not in failed.stderr
    lines = [line for line in failed.stderr.splitlines() if "ulimit -n" in line]
    assert len(lines) == 1, failed.stderr
    needed = int(re.search(r"`ulimit -n (\d+)`", lines[0]).group(1))
    assert needed > 300
    kafka = BrokerProcess(data, preexec_fn=open_files_limit(needed)).start()
    try:
        topics = AdminClient({"bootstrap.servers": kafka.bootstrap_servers}).list_topics(
            timeout=WAIT_S).topics
        assert len(topics[topic_name].partitions) == 300
    finally:
        assert kafka.terminate() == 0
