#!/usr/bin/env python3
"""Measures what a user waits for: process start -> first answered request, and memory after.

Usage::

    python scripts/measure_startup.py [RUNS]
    python scripts/measure_startup.py --partitions 10000 [--topics 100]

Without ``--partitions``: starts ``python -m pykafkad`` on a free port with an empty data dir,
sends ApiVersions as soon as the port accepts, and reports the time to the answer and the
broker's resident memory (VmRSS) after start.  The reference in the same run is a bare
``python -c pass`` start, so the ratio says how much of the wait is pykafkad rather than the
interpreter.

With ``--partitions N``: fills a data dir with N partitions (``--topics`` topics, ``--records``
records produced to every partition with confluent-kafka), then measures the start to the first
answered ApiVersions and to the first record fetched from a partition nobody touched since the
start, twice: after a clean stop (SIGTERM) and after a kill -9 (as many records again produced
to every partition first, so each active segment lies past its recovery point). It also reports
how many file descriptors the broker holds once it has started.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from wire.framing import RequestHeader, encode_request  # noqa: E402
from wire.messages.api_versions_request import ApiVersionsRequest  # noqa: E402

#: where the brokers' log lines go (--broker-log)
BROKER_LOG = subprocess.DEVNULL


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def first_answer(port: int, deadline: float, host: str = "127.0.0.1") -> None:
    """Waits until the broker answers ApiVersions (what every client sends first)."""
    frame = encode_request(RequestHeader(18, 3, 1, "measure", 2),
                           ApiVersionsRequest(client_software_name="m", client_software_version="1"))
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=5) as s:
                s.sendall(frame)
                if len(s.recv(4)) == 4:
                    return
        except OSError:
            time.sleep(0.002)
    raise TimeoutError("broker never answered")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def start_broker(data_dir: str, port: int, stderr) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "pykafkad", "--host", "127.0.0.1",
                             "--port", str(port), "--data-dir", data_dir],
                            stdout=subprocess.DEVNULL, stderr=stderr)


def one_run() -> tuple[float, float, float]:
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    bare = time.monotonic() - t0
    port = free_port()
    with tempfile.TemporaryDirectory() as d:
        t0 = time.monotonic()
        proc = start_broker(d, port, subprocess.DEVNULL)
        try:
            first_answer(port, t0 + 30)
            start = time.monotonic() - t0
            rss = rss_mib(proc.pid)
        finally:
            proc.terminate()
            proc.wait(30)
    return start, bare, rss


def empty_dir(runs: int) -> None:
    results = [one_run() for _ in range(runs)]
    start = statistics.median(r[0] for r in results)
    bare = statistics.median(r[1] for r in results)
    rss = statistics.median(r[2] for r in results)
    print(f"start to first answered request: {start * 1000:.0f} ms (median of {runs})")
    print(f"bare interpreter start:          {bare * 1000:.0f} ms  -> ratio {start / bare:.1f}x")
    print(f"resident memory after start:     {rss:.1f} MiB")


# -- many partitions --------------------------------------------------------------------------
def produce_everywhere(
    bootstrap: str, topics: list[str], per_topic: int, tag: str, records: int = 1
) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 50,
                         "queue.buffering.max.messages": 1_000_000})
    pad = b"x" * 100
    for r in range(records):
        for t in topics:
            for p in range(per_topic):
                producer.produce(t, value=f"{tag}-{t}-{p}-{r}".encode() + pad, partition=p)
                producer.poll(0)
    left = producer.flush(300)
    if left:
        raise RuntimeError(f"{left} records not delivered")


def fill(data_dir: str, topics: list[str], per_topic: int, records: int) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    port = free_port()
    proc = start_broker(data_dir, port, BROKER_LOG)
    try:
        first_answer(port, time.monotonic() + 60)
        bootstrap = f"127.0.0.1:{port}"
        admin = AdminClient({"bootstrap.servers": bootstrap})
        for i in range(0, len(topics), 10):
            futures = admin.create_topics(
                [NewTopic(t, per_topic, 1) for t in topics[i:i + 10]], operation_timeout=300)
            for f in futures.values():
                f.result(300)
        produce_everywhere(bootstrap, topics, per_topic, "first", records)
    finally:
        proc.terminate()
        proc.wait(300)


def first_record(bootstrap: str, topic: str, partition: int, deadline: float) -> None:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "measure",
                         "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, partition, 0)])
        while time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                return
        raise TimeoutError("no record fetched")
    finally:
        consumer.close()


def timed_start(data_dir: str, topic: str, partition: int) -> tuple[float, float, int, subprocess.Popen, int]:
    """(seconds to ApiVersions, seconds to a fetched record, fds after start, process, port)."""
    port = free_port()
    t0 = time.monotonic()
    proc = start_broker(data_dir, port, BROKER_LOG)
    first_answer(port, t0 + 600)
    ready = time.monotonic() - t0
    fds = open_fds(proc.pid)
    first_record(f"127.0.0.1:{port}", topic, partition, time.monotonic() + 600)
    fetched = time.monotonic() - t0
    return ready, fetched, fds, proc, port


def many_partitions(partitions: int, n_topics: int, records: int) -> None:
    per_topic = max(1, partitions // n_topics)
    topics = [f"measure-{i:04d}" for i in range(n_topics)]
    with tempfile.TemporaryDirectory() as d:
        t0 = time.monotonic()
        fill(d, topics, per_topic, records)
        print(f"filled {n_topics * per_topic} partitions with {records} records each "
              f"in {time.monotonic() - t0:.1f} s")
        ready, fetched, fds, proc, port = timed_start(d, topics[-1], per_topic - 1)
        print(f"after a clean stop: ready in {ready:.2f} s, first record fetched at "
              f"{fetched:.2f} s, {fds} fds open after start")
        produce_everywhere(f"127.0.0.1:{port}", topics, per_topic, "second", records)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        ready, fetched, fds, proc, port = timed_start(d, topics[-2], per_topic - 1)
        print(f"after kill -9:      ready in {ready:.2f} s, first record fetched at "
              f"{fetched:.2f} s, {fds} fds open after start")
        proc.terminate()
        proc.wait(600)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("runs", nargs="?", type=int, default=5)
    p.add_argument("--partitions", type=int, default=0)
    p.add_argument("--topics", type=int, default=100)
    p.add_argument("--records", type=int, default=1,
                   help="records (of ~130 bytes) produced to every partition before each stop")
    p.add_argument("--broker-log", default=None, help="append the brokers' stderr to this file")
    args = p.parse_args()
    if args.broker_log:
        global BROKER_LOG
        BROKER_LOG = open(args.broker_log, "a")  # noqa: SIM115 - lives as long as the run
    if args.partitions:
        many_partitions(args.partitions, args.topics, args.records)
    else:
        empty_dir(args.runs)


if __name__ == "__main__":
    main()
