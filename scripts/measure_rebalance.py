#!/usr/bin/env python3
"""Measures consumer-group rebalances with real clients: three confluent-kafka consumers
joining one group over six partitions, then one of them leaving (close() sends LeaveGroup).

Usage: python scripts/measure_rebalance.py [--initial-delay-ms 0]

Reports the time from the first subscribe until the three members together own all six
partitions, and from the close until the remaining two do.  The broker's
``group.initial.rebalance.delay.ms`` (Kafka's default: 3000) dominates the first number.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import Consumer  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

from pykafkad.testing import run_broker  # noqa: E402

PARTITIONS = 6


class Member(threading.Thread):
    def __init__(self, bootstrap: str, topic: str):
        super().__init__(daemon=True)
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "measure",
                                  "partition.assignment.strategy": "range",
                                  "auto.offset.reset": "earliest"})
        self.topic = topic
        self.owned: set[int] = set()
        self.stop = threading.Event()

    def run(self) -> None:
        def on_assign(c, parts):
            self.owned = {p.partition for p in parts}

        def on_revoke(c, parts):
            self.owned = set()

        self.consumer.subscribe([self.topic], on_assign=on_assign, on_revoke=on_revoke)
        while not self.stop.is_set():
            self.consumer.poll(0.05)
        self.consumer.close()


def until_covered(members: list[Member], t0: float, timeout: float = 60) -> float:
    """Seconds from ``t0`` until the members own every partition exactly once."""
    while time.monotonic() - t0 < timeout:
        owned = [m.owned for m in members]
        if sum(len(o) for o in owned) == PARTITIONS and set().union(*owned) == set(range(PARTITIONS)):
            return time.monotonic() - t0
        time.sleep(0.005)
    raise TimeoutError("the group never covered every partition")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--initial-delay-ms", default="3000")
    args = ap.parse_args()
    with run_broker(config={"group.initial.rebalance.delay.ms": args.initial_delay_ms}) as b:
        admin = AdminClient({"bootstrap.servers": b.bootstrap_servers})
        admin.create_topics([NewTopic("measure", PARTITIONS, 1)])["measure"].result(30)
        members = [Member(b.bootstrap_servers, "measure") for _ in range(3)]
        t0 = time.monotonic()
        for m in members:
            m.start()
        joined = until_covered(members, t0)
        leaving = members.pop()
        t1 = time.monotonic()
        leaving.stop.set()
        leaving.join(30)
        close_s = time.monotonic() - t1
        left = until_covered(members, t1 + close_s)
        for m in members:
            m.stop.set()
        for m in members:
            m.join(30)
    print(f"group.initial.rebalance.delay.ms={args.initial_delay_ms}")
    print(f"three consumers join, six partitions covered: {joined * 1000:.0f} ms")
    print(f"one leaves (close took {close_s * 1000:.0f} ms), the two cover all six: "
          f"{left * 1000:.0f} ms after the close returned")
    return 0


if __name__ == "__main__":
    sys.exit(main())
