"""The consume run of scripts/bench.py, built so that the broker rather than the client is
what is measured.

A topic of ``PARTITIONS`` partitions is filled (uncompressed, so that no client decompresses),
then one kcat (librdkafka, C, no Python per record) per partition reads its partition from the
beginning to the end at once, all in parallel, with large fetches (fetch.max.bytes 50 MiB,
max.partition.fetch.bytes 8 MiB). Reported: records/s and MB/s over all readers, and the
broker's own CPU seconds per GB served (from /proc: user + system time of the broker process
and its children), which does not depend on how fast the clients are.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

PARTITIONS = 8
_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` and its direct children's threads, in seconds."""
    pids = [pid]
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.exists():
        pids += [int(p) for p in children.read_text().split()]
    total = 0
    for p in pids:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / _TICKS


def _fill(bootstrap: str, topic: str, count: int, size: int) -> None:
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "acks": 1,
                  "batch.size": 1_000_000, "queue.buffering.max.messages": 1_000_000,
                  "compression.type": "none"})
    value = os.urandom(size)
    for i in range(count):
        while True:
            try:
                p.produce(topic, value, partition=i % PARTITIONS)
                break
            except BufferError:
                p.poll(0.005)
    assert p.flush(300) == 0


def _read_all(bootstrap: str, topic: str) -> int:
    """One kcat per partition, in parallel; returns how many records they read."""
    procs = [
        subprocess.Popen(
            ["kcat", "-C", "-b", bootstrap, "-t", topic, "-p", str(p), "-o", "beginning",
             "-e", "-q", "-f", "%o\n",
             "-X", "fetch.max.bytes=52428800", "-X", "max.partition.fetch.bytes=8388608",
             "-X", "fetch.wait.max.ms=10", "-X", "queued.max.messages.kbytes=262144"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        for p in range(PARTITIONS)
    ]
    read = 0
    for proc in procs:
        out, _ = proc.communicate(timeout=600)
        read += out.count(b"\n")
        assert proc.returncode == 0, f"kcat exited with {proc.returncode}"
    return read


def consume_run(
    bootstrap: str, broker_pid: int, count: int, size: int, label: str, tag: str = ""
) -> dict:
    topic = f"bench-consume-{size}-{tag}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(60)
    _fill(bootstrap, topic, count, size)
    cpu0 = cpu_seconds(broker_pid)
    t = time.perf_counter()
    read = _read_all(bootstrap, topic)
    elapsed = time.perf_counter() - t
    cpu = cpu_seconds(broker_pid) - cpu0
    assert read == count, f"read {read} of {count} records"
    gb = count * size / 1e9
    return {
        f"consume {label} msgs/s": count / elapsed,
        f"consume {label} MB/s": count * size / 1e6 / elapsed,
        f"consume {label} broker CPU s/GB": cpu / gb,
    }
