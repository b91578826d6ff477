"""Share-consumer throughput against classic-consumer throughput on the same broker, as a
ratio (wall-clock numbers depend on the machine; the ratio says how much the share path --
acquisition, acknowledgement, state writes -- costs next to a plain Fetch).

    python scripts/bench_share.py [--records N] [--kafka host:port]

Fills a one-partition topic with N small records, then times one librdkafka classic consumer
and one librdkafka share consumer (implicit acknowledgement: every record ACCEPTed) reading
all of them.  Without ``--kafka`` an in-process pykafkad is started; with it, that broker is
measured instead (topic and group names start with ``share-bench-``).
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import Consumer, Producer, ShareConsumer  # noqa: E402
from confluent_kafka.admin import (  # noqa: E402
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
)

TIMEOUT_S = 300


def fill(bootstrap: str, topic: str, n: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(60)
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.size": 1 << 20})
    for _ in range(n):
        while True:
            try:
                p.produce(topic, b"x" * 100, partition=0)
                break
            except BufferError:
                p.poll(0.1)
    assert p.flush(120) == 0


def classic(bootstrap: str, topic: str, n: int) -> float:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"share-bench-c-{uuid.uuid4().hex[:6]}",
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.subscribe([topic])
    got, start, deadline = 0, None, time.monotonic() + TIMEOUT_S
    while got < n and time.monotonic() < deadline:
        msgs = c.consume(10_000, 0.5)
        if msgs and start is None:
            start = time.monotonic()
        got += sum(1 for m in msgs if m.error() is None)
    elapsed = time.monotonic() - (start or time.monotonic())
    c.close()
    return got / elapsed if elapsed else 0.0


def share(bootstrap: str, topic: str, n: int) -> float:
    group = f"share-bench-s-{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    res = ConfigResource(ConfigResource.Type.GROUP, group, incremental_configs=[ConfigEntry(
        "share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)])
    for f in admin.incremental_alter_configs([res]).values():
        f.result(60)
    c = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group})
    c.subscribe([topic])
    seen: set[int] = set()
    start, deadline = None, time.monotonic() + TIMEOUT_S
    while len(seen) < n and time.monotonic() < deadline:
        msgs = c.poll(0.5)
        if len(msgs) and start is None:
            start = time.monotonic()
        seen.update(m.offset() for m in msgs if m.error() is None)
    elapsed = time.monotonic() - (start or time.monotonic())
    c.close()
    return len(seen) / elapsed if elapsed else 0.0


def measure(bootstrap: str, n: int) -> tuple[float, float]:
    topic = f"share-bench-{uuid.uuid4().hex[:8]}"
    fill(bootstrap, topic, n)
    return classic(bootstrap, topic, n), share(bootstrap, topic, n)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=50_000)
    ap.add_argument("--kafka", help="measure this broker instead of an in-process pykafkad")
    args = ap.parse_args()
    if args.kafka:
        name, (c, s) = "kafka", measure(args.kafka, args.records)
    else:
        from pykafkad.testing import run_broker

        with run_broker() as b:
            name, (c, s) = "pykafkad", measure(b.bootstrap_servers, args.records)
    print(f"{name}: classic {c:,.0f} records/s, share {s:,.0f} records/s, "
          f"share/classic {s / c if c else 0:.2f}")


if __name__ == "__main__":
    main()
