#!/usr/bin/env python3
"""Times two of librdkafka's consumer-group test patterns with confluent-kafka, on pykafkad
and on an Apache Kafka broker, phase by phase, to find where pykafkad is slower.

Usage: python scripts/measure_group_patterns.py [--kafka HOST:PORT] [--pattern NAME] [--runs N]

* ``strategy-ordering`` (librdkafka 0132): create a 4-partition topic, produce 100 records,
  two consumers with the same assignment strategy list subscribe; time until each has its
  assignment, then the closes.
* ``subscribe-updates`` (librdkafka 0045 subscribe_many_updates): one consumer re-subscribes
  to a sliding window of five topics, unsubscribing now and then; time until the expected
  assignments arrive.
* ``create-delete``: one CreateTopics of 100 topics of 4 partitions, then one DeleteTopics of
  them (0045's set-up and tear-down alone), each timed until its answer.

pykafkad runs as its own process with ``group.initial.rebalance.delay.ms=0`` (as the test
brokers do); ``--kafka`` points at a running Kafka with the same setting (topics and groups
get a unique prefix). Prints seconds per phase: the median and the spread over ``--runs``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from confluent_kafka import Consumer, Producer  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402
from measure_startup import first_answer, free_port  # noqa: E402

DEADLINE_S = 60


def _create(admin: AdminClient, topics: list[str], partitions: int) -> None:
    futures = admin.create_topics([NewTopic(t, partitions, 1) for t in topics])
    for f in futures.values():
        f.result(DEADLINE_S)


def _wait_assigned(consumers: list[Consumer], want: int | None = None) -> None:
    """Polls every consumer until each has an assignment (or the group holds ``want``)."""
    deadline = time.monotonic() + DEADLINE_S
    while True:
        sizes = [len(c.assignment()) for c in consumers]
        done = sum(sizes) == want if want is not None else all(sizes)
        if done:
            return
        assert time.monotonic() < deadline, f"no assignment: {sizes}"
        for c in consumers:
            c.poll(0.01)


def strategy_ordering(bootstrap: str, prefix: str) -> dict[str, float]:
    out: dict[str, float] = {}
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for assignor in ("roundrobin,range", "range,roundrobin"):
        name = assignor.split(",")[0]
        topic = f"{prefix}-0132-{name}"
        t = time.monotonic()
        _create(admin, [topic], 4)
        out[f"{name}: create topic"] = time.monotonic() - t
        t = time.monotonic()
        p = Producer({"bootstrap.servers": bootstrap})
        for i in range(100):
            p.produce(topic, b"%d" % i)
        assert p.flush(DEADLINE_S) == 0
        out[f"{name}: produce 100"] = time.monotonic() - t
        t = time.monotonic()
        consumers = []
        for i in range(2):
            c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{prefix}-{assignor}",
                          "client.id": f"c{i}", "partition.assignment.strategy": assignor,
                          "session.timeout.ms": 30000, "auto.offset.reset": "earliest"})
            c.subscribe([topic])
            consumers.append(c)
        _wait_assigned(consumers)
        out[f"{name}: both assigned"] = time.monotonic() - t
        t = time.monotonic()
        for c in consumers:
            c.close()
        out[f"{name}: close both"] = time.monotonic() - t
    return out


def subscribe_updates(bootstrap: str, prefix: str, topic_count: int = 100) -> dict[str, float]:
    """0045's do_test_subscribe_many_updates: ``topic_count`` 4-partition topics; the
    consumer subscribes to a window of five of them, moving it one topic per step,
    unsubscribing at every 7th step; at every 5th step (and the last) it waits until its
    assignment is the expected one."""
    out: dict[str, float] = {}
    admin = AdminClient({"bootstrap.servers": bootstrap})
    topics = [f"{prefix}-0045-{i}" for i in range(topic_count)]
    t = time.monotonic()
    _create(admin, topics, 4)
    out["create topics"] = time.monotonic() - t
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{prefix}-0045",
                  "auto.offset.reset": "earliest"})
    waits = []
    total = time.monotonic()
    for i in range(topic_count):
        window = topics[i : i + 5]
        c.subscribe(window)
        unsubscribed = i % 7 == 0
        if unsubscribed:
            c.unsubscribe()
        if i % 5 == 0 or i == topic_count - 1:
            want = set() if unsubscribed else {(tp, p) for tp in window for p in range(4)}
            t = time.monotonic()
            deadline = t + DEADLINE_S
            while {(tp.topic, tp.partition) for tp in c.assignment()} != want:
                assert time.monotonic() < deadline, "the assignment never matched"
                c.poll(0.01)
            waits.append(time.monotonic() - t)
    out["all steps"] = time.monotonic() - total
    out["first wait for an assignment"] = waits[0]
    out["longest later wait"] = max(waits[1:])
    out["sum of later waits"] = sum(waits[1:])
    t = time.monotonic()
    c.close()
    out["close"] = time.monotonic() - t
    t = time.monotonic()
    for f in admin.delete_topics(topics).values():
        f.result(DEADLINE_S)
    out["delete topics"] = time.monotonic() - t
    return out


def create_delete(bootstrap: str, prefix: str, topic_count: int = 100) -> dict[str, float]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.list_topics(timeout=DEADLINE_S)  # connected before the clock starts
    topics = [f"{prefix}-cd-{i}" for i in range(topic_count)]
    t = time.monotonic()
    _create(admin, topics, 4)
    out = {f"create {topic_count} x 4": time.monotonic() - t}
    t = time.monotonic()
    for f in admin.delete_topics(topics).values():
        f.result(DEADLINE_S)
    out[f"delete {topic_count}"] = time.monotonic() - t
    return out


PATTERNS = {"strategy-ordering": strategy_ordering, "subscribe-updates": subscribe_updates,
            "create-delete": create_delete}


def start_pykafkad(data_dir: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "pykafkad", "--host", "127.0.0.1", "--port", str(port),
         "--data-dir", data_dir, "--set", "group.initial.rebalance.delay.ms=0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    first_answer(port, time.monotonic() + 60)
    return proc, f"127.0.0.1:{port}"


def measure(bootstrap: str, pattern: str, runs: int, tag: str) -> dict[str, list[float]]:
    results: dict[str, list[float]] = {}
    for _ in range(runs):
        prefix = f"{tag}-{uuid.uuid4().hex[:8]}"
        for k, v in PATTERNS[pattern](bootstrap, prefix).items():
            results.setdefault(k, []).append(v)
    return results


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kafka", help="bootstrap servers of a running Apache Kafka to compare with")
    ap.add_argument("--pattern", choices=sorted(PATTERNS), action="append")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tag", default="measure", help="prefix of topics and groups")
    args = ap.parse_args()
    for pattern in args.pattern or sorted(PATTERNS):
        with tempfile.TemporaryDirectory() as d:
            proc, bootstrap = start_pykafkad(d)
            try:
                ours = measure(bootstrap, pattern, args.runs, args.tag)
            finally:
                proc.terminate()
                proc.wait(60)
        ref = measure(args.kafka, pattern, args.runs, args.tag) if args.kafka else {}
        print(f"{pattern} (s, median [min-max] of {args.runs})")
        print(f"{'phase':34} {'pykafkad':>22} {'kafka':>22}")
        for phase, values in ours.items():
            cells = []
            for vs in (values, ref.get(phase)):
                cells.append(f"{statistics.median(vs):6.3f} [{min(vs):.3f}-{max(vs):.3f}]"
                             if vs else "-")
            print(f"{phase:34} {cells[0]:>22} {cells[1]:>22}")
        if pattern == "strategy-ordering":
            # the second consumer either joins the first generation (fast) or a second one,
            # which the first member only learns of from its next heartbeat (3 s)
            for name, results in (("pykafkad", ours), ("kafka", ref)):
                waits = [v for k, vs in results.items() if k.endswith("both assigned") for v in vs]
                if waits:
                    fast = sum(w < 1.0 for w in waits)
                    print(f"{name}: both consumers in the first generation in {fast} of "
                          f"{len(waits)} groups")
    return 0


if __name__ == "__main__":
    sys.exit(main())
