"""kcat (librdkafka's command-line client) produces and consumes unchanged."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.integration.clients import create_topic, kafka_python_consume

KCAT = shutil.which("kcat") or shutil.which("kafkacat")
needs_kcat = pytest.mark.skipif(
    KCAT is None and not os.environ.get("CI"),
    reason="kcat is not installed (scripts/test installs it from Debian's packages)",
)


@needs_kcat
def test_kcat_produce_and_consume(broker, topic_name):
    assert KCAT, "kcat must be installed in CI"
    create_topic(broker.bootstrap_servers, topic_name)
    lines = "".join(f"key{i}:value{i}\n" for i in range(100))
    subprocess.run([KCAT, "-b", broker.bootstrap_servers, "-t", topic_name, "-P", "-K:",
                    "-z", "lz4"], input=lines.encode(), check=True, timeout=60)
    got = kafka_python_consume(broker.bootstrap_servers, topic_name, 100)
    assert [(r.key, r.value) for r in got] == [
        (f"key{i}".encode(), f"value{i}".encode()) for i in range(100)]
    out = subprocess.run([KCAT, "-b", broker.bootstrap_servers, "-t", topic_name, "-C", "-e",
                          "-o", "beginning", "-f", "%k=%s@%o\n"],
                         capture_output=True, check=True, timeout=60)
    assert out.stdout.decode().splitlines() == [f"key{i}=value{i}@{i}" for i in range(100)]
    meta = subprocess.run([KCAT, "-b", broker.bootstrap_servers, "-L"], capture_output=True,
                          check=True, timeout=60)
    assert topic_name in meta.stdout.decode()
