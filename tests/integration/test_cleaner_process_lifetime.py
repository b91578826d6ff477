"""The log cleaner's child process dies with the broker, as Kafka's cleaner thread dies with its
JVM. Found by scripts/crash_loop.py: after a kill -9 the child went on writing ``.cleaned``
files beside the restarted broker's own (and died later on a broken pipe)."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest
from confluent_kafka import Producer

from tests.integration.broker_process import BrokerProcess
from tests.integration.clients import WAIT_S, create_topic

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _cleaner_children(parent: int) -> list[int]:
    out = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == parent and b"cleaner_child" in (proc / "cmdline").read_bytes():
                fds = [os.readlink(fd) for fd in (proc / "fd").iterdir()]
                if any(f.endswith(".cleaned") for f in fds):  # mid-round, writing
                    out.append(int(proc.name))
        except (OSError, ValueError, IndexError):
            continue
    return out


def _gone(pid: int) -> bool:
    """Exited (a zombie not yet reaped by init counts as gone)."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_kill_9_of_the_broker_ends_its_cleaner_process(tmp_path, topic_name):
    broker = BrokerProcess(tmp_path / "data", "--set", "log.cleaner.backoff.ms=50").start()
    child = None
    try:
        create_topic(broker.bootstrap_servers, topic_name, config={
            "cleanup.policy": "compact", "segment.ms": "50", "min.cleanable.dirty.ratio": "0.01"})
        producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 5})
        deadline = time.monotonic() + WAIT_S
        while child is None:
            assert time.monotonic() < deadline, "no cleaner process was seen"
            for i in range(500):
                producer.produce(topic_name, bytes(1000), b"k%d" % (i % 20))
            producer.poll(0)
            for pid in _cleaner_children(broker.proc.pid):
                try:
                    os.kill(pid, signal.SIGSTOP)  # frozen mid-round: it cannot finish on its own
                    child = pid
                    break
                except ProcessLookupError:
                    continue
        producer.flush(WAIT_S)
        broker.kill()  # kill -9 of the broker while its cleaner is mid-round
        deadline = time.monotonic() + WAIT_S
        while not _gone(child):
            assert time.monotonic() < deadline, "the cleaner process outlived the broker"
            time.sleep(0.05)
    finally:
        if broker.proc.poll() is None:
            broker.kill()
        if child is not None and not _gone(child):
            os.kill(child, signal.SIGKILL)
