"""Out of file descriptors (EMFILE): an error code, nothing half done, a clear start failure.

A broker process runs with a low RLIMIT_NOFILE.  Logs open lazily and only recently used
segment files hold descriptors, so hundreds of partitions work under a limit far below their
file count.  When the connections have taken every descriptor, a CreateTopics is still taken
by the controller, and the partitions' logs are made once descriptors are free again: nothing
is lost or half made.  A start under a limit too low for the broker itself exits with
one line that names ``ulimit -n`` and the number needed, whatever the data dir holds, and
starting with that limit works.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from compat.wire_client import WireClient
from pykafkad.testing import run_broker
from tests.integration.broker_process import BrokerProcess, open_files_limit
from tests.integration.clients import (
    WAIT_S,
    confluent_consume,
    confluent_produce,
    create_topic,
)

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"),
                                reason="counts a process's descriptors in /proc")

#: the broker process's RLIMIT_NOFILE (above what a start needs, far below the files of the
#: partitions these tests create)
LIMIT = 128
QUIET = ("--log-level", "WARNING")  # the broker's stderr pipe is not read


def descriptors_of(proc: subprocess.Popen) -> int:
    return len(os.listdir(f"/proc/{proc.pid}/fd"))


@contextlib.contextmanager
def every_descriptor_taken(kafka: BrokerProcess):
    """Connects until the broker holds as many descriptors as its limit allows: each connection
    is known to be accepted (it answered ApiVersions), and no further one waits in the backlog."""
    held: list[WireClient] = []
    try:
        while descriptors_of(kafka.proc) < LIMIT:
            client = WireClient(kafka.bootstrap_servers, timeout=WAIT_S)
            held.append(client)
            assert client.api_versions()
        assert descriptors_of(kafka.proc) == LIMIT
        yield held
    finally:
        for client in held:
            client.close()


def test_create_topics_out_of_descriptors_loses_nothing(tmp_path, topic_name):
    """The controller takes the topic (its records need no new descriptor); the broker makes
    the partitions' logs as descriptors allow, as a Kafka broker makes them once the metadata
    reaches it, and none is lost or half made."""
    data = tmp_path / "data"
    kafka = BrokerProcess(data, *QUIET, preexec_fn=open_files_limit(LIMIT)).start()
    try:
        admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
        # the admin client's connections (bootstrap, controller) are open before the rest go
        admin.create_topics([NewTopic(topic_name, 200, 1)], validate_only=True)[topic_name].result(WAIT_S)
        with every_descriptor_taken(kafka) as held:
            admin.create_topics([NewTopic(topic_name, 200, 1)])[topic_name].result(WAIT_S)
            assert len(held) > LIMIT // 2
        # the connections gone, the broker serves: the topic is written and read
        confluent_produce(kafka.bootstrap_servers, topic_name,
                          [{"value": b"still here", "partition": 199}])
        got = confluent_consume(kafka.bootstrap_servers, topic_name, 1, partitions=(199,))
        assert [m.value() for m in got] == [b"still here"]
    finally:
        assert kafka.terminate() == 0
    with run_broker(data) as restarted:  # a consistent data dir
        topics = AdminClient({"bootstrap.servers": restarted.bootstrap_servers}).list_topics(
            timeout=WAIT_S).topics
        assert len(topics[topic_name].partitions) == 200
        got = confluent_consume(restarted.bootstrap_servers, topic_name, 1, partitions=(199,))
        assert [m.value() for m in got] == [b"still here"]


def produce_and_read_every_partition(bootstrap: str, topic: str, partitions: int) -> None:
    sent = [{"value": b"p%d" % p, "partition": p} for p in range(partitions)]
    confluent_produce(bootstrap, topic, sent)
    got = confluent_consume(bootstrap, topic, partitions, partitions=range(partitions))
    assert sorted((m.partition(), m.value()) for m in got) == [
        (p, b"p%d" % p) for p in range(partitions)]


def test_many_partitions_under_a_low_descriptor_limit(tmp_path, topic_name):
    """250 partitions have 750 segment and index files; a broker limited to 128 descriptors
    creates them, takes a record on each and serves them all back."""
    kafka = BrokerProcess(tmp_path / "data", *QUIET, preexec_fn=open_files_limit(LIMIT)).start()
    try:
        create_topic(kafka.bootstrap_servers, topic_name, partitions=250)
        produce_and_read_every_partition(kafka.bootstrap_servers, topic_name, 250)
        assert descriptors_of(kafka.proc) <= LIMIT
    finally:
        assert kafka.terminate() == 0


def test_start_with_too_few_descriptors_names_ulimit(tmp_path, topic_name):
    data = tmp_path / "data"
    with run_broker(data) as kafka:
        create_topic(kafka.bootstrap_servers, topic_name, partitions=300)
    cmd = [sys.executable, "-m", "pykafkad", "--host", "127.0.0.1", "--port", "0",
           "--data-dir", str(data)]
    needed = set()
    for limit in (8, 32):  # too low for trio and a listener; too low for the segment files
        failed = subprocess.run(cmd, preexec_fn=open_files_limit(limit), capture_output=True,
                                text=True, timeout=60)
        assert failed.returncode == 2
        assert "Traceback" not in failed.stderr
        lines = failed.stderr.splitlines()
        assert len(lines) == 1 and "ulimit -n" in lines[0], failed.stderr
        assert f"the limit is {limit}" in lines[0]
        needed.add(int(re.search(r"`ulimit -n (\d+)`", lines[0]).group(1)))
    [needed] = needed
    assert 32 < needed < 300  # not one per partition or segment any more
    kafka = BrokerProcess(data, *QUIET, preexec_fn=open_files_limit(needed)).start()
    try:
        topics = AdminClient({"bootstrap.servers": kafka.bootstrap_servers}).list_topics(
            timeout=WAIT_S).topics
        assert len(topics[topic_name].partitions) == 300
        produce_and_read_every_partition(kafka.bootstrap_servers, topic_name, 300)
    finally:
        assert kafka.terminate() == 0
