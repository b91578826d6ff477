"""The fixed-rate latency run of scripts/bench.py: produce latency while compaction runs.

One confluent-kafka producer sends ``rate`` records/s (100 B, acks=all, linger.ms=5) to a
4-partition topic at a steady pace and takes each record's delivery latency (from the moment it
was due to its delivery report). Meanwhile a second stream keeps a compacted topic dirty (1 MiB
segments, a few thousand keys, pre-filled before the run), so the broker's cleaner (backoff 1 s
on both brokers) compacts it during the run. Reported: p50, p99, p99.9 and max in ms, and how
much of the rate was achieved.
"""

from __future__ import annotations

import struct
import time

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

#: the broker settings this run needs on both brokers
BROKER_CONFIG = {"log.cleaner.backoff.ms": "1000"}
PARTITIONS = 4
COMPACTED_KEYS = 5000
COMPACTED_PREFILL = 200_000
COMPACTED_VALUE = bytes(200)
_STAMP = struct.Struct(">q")


def _percentile(sorted_values: list[float], p: float) -> float:
    if not sorted_values:
        return float("nan")
    i = min(len(sorted_values) - 1, max(0, round(p / 100 * len(sorted_values)) - 1))
    return sorted_values[i]


def _prefill(bootstrap: str, topic: str) -> None:
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "acks": "all",
                  "queue.buffering.max.messages": 1_000_000})
    for i in range(COMPACTED_PREFILL):
        while True:
            try:
                p.produce(topic, COMPACTED_VALUE, b"key-%d" % (i % COMPACTED_KEYS))
                break
            except BufferError:
                p.poll(0.001)
    assert p.flush(120) == 0


def latency_run(bootstrap: str, rate: int, seconds: float, tag: str) -> dict[str, float]:
    """Creates the topics, pre-fills the compacted one, then one paced run."""
    topic, compacted = f"latency-{tag}", f"latency-{tag}-compacted"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([
        NewTopic(topic, PARTITIONS, 1),
        NewTopic(compacted, 1, 1, config={"cleanup.policy": "compact",
                                          "segment.bytes": str(1 << 20),
                                          "min.cleanable.dirty.ratio": "0.1"}),
    ])
    for f in futures.values():
        f.result(60)
    _prefill(bootstrap, compacted)

    latencies: list[float] = []
    errors = [0]

    def on_delivery(err, msg) -> None:
        if err is not None:
            errors[0] += 1
            return
        latencies.append(time.perf_counter_ns() - _STAMP.unpack_from(msg.value())[0])

    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all",
                  "queue.buffering.max.messages": 1_000_000})
    # warm up: metadata and connections
    p.produce(topic, bytes(100), on_delivery=lambda err, msg: None)
    p.flush(30)
    padding = bytes(100 - _STAMP.size)
    dirty_every = 4  # one compacted record per four latency records
    total = int(rate * seconds)
    start = time.perf_counter_ns()
    interval = 1e9 / rate
    i = 0
    while i < total:
        now = time.perf_counter_ns()
        due = min(total, int((now - start) / interval) + 1)
        while i < due:
            stamp = start + int(i * interval)  # when it was due: waiting here counts too
            p.produce(topic, _STAMP.pack(stamp) + padding, on_delivery=on_delivery)
            if i % dirty_every == 0:
                p.produce(compacted, COMPACTED_VALUE, b"key-%d" % (i % COMPACTED_KEYS))
            i += 1
        p.poll(0)
        time.sleep(0.0005)
    elapsed = (time.perf_counter_ns() - start) / 1e9
    assert p.flush(120) == 0
    values = sorted(v / 1e6 for v in latencies)
    return {
        "latency achieved rate/s": total / elapsed,
        "latency p50 ms": _percentile(values, 50),
        "latency p99 ms": _percentile(values, 99),
        "latency p99.9 ms": _percentile(values, 99.9),
        "latency max ms": values[-1] if values else float("nan"),
        "latency errors": float(errors[0]),
    }
