"""Consumer-group members for integration tests: stock consumers polling in a thread (or in a
subprocess that a test can kill -9), recording what they receive and what they are assigned.

Run as ``python -m tests.integration.groups_support <kind> <bootstrap> <group> <topic>
<session_ms> <strategy>`` it is a consumer process that prints one JSON line per assignment
change and per record (before committing it: at least once), until killed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from confluent_kafka import Consumer
from kafka import KafkaConsumer
from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

#: broker settings for fast, deterministic group tests (no initial delay, short sessions allowed)
GROUP_BROKER_CONFIG = {
    "group.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "500",
}
#: bounded wait for anything a group test waits for
WAIT_S = 30
HEARTBEAT_MS = 100

_KAFKA_PYTHON_ASSIGNORS = {
    "range": RangePartitionAssignor,
    "roundrobin": RoundRobinPartitionAssignor,
    "cooperative-sticky": CooperativeStickyAssignor,
}


def wait_until(predicate: Callable[[], bool], what: str, timeout: float = WAIT_S,
               members=()) -> float:
    """Polls a condition of the test's own state (not the broker's) until it holds; returns the
    seconds it took.  ``members`` are described in the failure message."""
    start = time.monotonic()
    while not predicate():
        if time.monotonic() - start > timeout:
            states = "; ".join(m.describe() for m in members)
            raise AssertionError(f"timed out after {timeout}s waiting for {what}. {states}")
        time.sleep(0.02)
    return time.monotonic() - start


def confluent_conf(bootstrap: str, group: str, *, session_ms: int = 6000,
                   strategy: str = "roundrobin", **extra) -> dict:
    return {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "enable.partition.eof": False,
        "session.timeout.ms": session_ms,
        "heartbeat.interval.ms": HEARTBEAT_MS,
        "partition.assignment.strategy": strategy,
        **extra,
    }


def kafka_python_conf(bootstrap: str, group: str, *, session_ms: int = 6000,
                      strategy: str = "roundrobin", **extra) -> dict:
    return {
        "bootstrap_servers": bootstrap,
        "group_id": group,
        "auto_offset_reset": "earliest",
        "enable_auto_commit": False,
        "session_timeout_ms": session_ms,
        "heartbeat_interval_ms": HEARTBEAT_MS,
        "partition_assignment_strategy": [_KAFKA_PYTHON_ASSIGNORS[strategy]],
        **extra,
    }


def kafka_python_consumer(topic: str, bootstrap: str, group: str, **conf) -> KafkaConsumer:
    """A subscribed kafka-python consumer whose metadata snapshot holds the topic before its
    first JoinGroup: subscribed first, then asked for the topic's partitions, so that the
    metadata answer reaches the coordinator's snapshot (asked before subscribing, the snapshot
    stays empty).

    Otherwise a leader assigns against an empty snapshot, sees the snapshot change afterwards
    and rejoins on its own (a second generation; it does so on Apache Kafka 4.4 too).  When a
    short poll() times out while that self-made join is in flight and the join completes
    before the next poll, kafka-python 3.0.12 never takes its result: the member stays
    REBALANCING with its heartbeats off, its commits fail with RebalanceInProgressError, it
    never hears of the next rebalance, and the group waits for it until its session expires,
    whatever the broker."""
    c = KafkaConsumer(**kafka_python_conf(bootstrap, group, **conf))
    c.subscribe([topic])
    c.partitions_for_topic(topic)
    return c


class GroupMember:
    """One stock consumer in a group, polling on its own thread.

    ``received`` holds (partition, offset, value) of every record delivered; each poll that
    delivered records is committed synchronously (unless auto-commit is configured), so a
    record is "processed" once it is in ``received``.
    """

    def __init__(self, kind: str, bootstrap: str, group: str, topic: str, *,
                 commit: bool = True, **conf):
        self.kind = kind
        self.bootstrap = bootstrap
        self.group = group
        self.topic = topic
        self.commit = commit
        self.conf = conf
        self.received: list[tuple[int, int, bytes]] = []
        self.assignment: frozenset[int] = frozenset()
        self.assignment_changes = 0
        self.error: BaseException | None = None
        self.commit_errors: list[str] = []
        self._stop = threading.Event()
        self._leave = True
        self._thread = threading.Thread(target=self._run, name=f"{kind}-{group}", daemon=True)

    def start(self) -> GroupMember:
        self._thread.start()
        return self

    def values(self) -> set[bytes]:
        return {v for _, _, v in self.received}

    def describe(self) -> str:
        return (f"{self.kind} member: assigned {sorted(self.assignment)} "
                f"({self.assignment_changes} changes), {len(self.received)} records, "
                f"error {self.error!r}, commit errors {self.commit_errors[-3:]}")

    def stop(self, *, leave: bool = True) -> None:
        self._leave = leave
        self._stop.set()
        self._thread.join(WAIT_S)
        assert not self._thread.is_alive(), f"{self.kind} consumer did not stop"
        if self.error is not None:
            raise self.error

    def _set_assignment(self, partitions) -> None:
        new = frozenset(partitions)
        if new != self.assignment:
            self.assignment = new
            self.assignment_changes += 1

    def _commit(self, commit: Callable[[], object]) -> None:
        """A commit racing a rebalance may be refused (ILLEGAL_GENERATION,
        REBALANCE_IN_PROGRESS), as on Kafka; the next commit covers it."""
        try:
            commit()
        except Exception as e:  # noqa: BLE001 - the clients raise their own error types
            self.commit_errors.append(str(e))

    def _run(self) -> None:
        try:
            if self.kind == "confluent":
                self._run_confluent()
            else:
                self._run_kafka_python()
        except BaseException as e:  # surfaced by stop()
            self.error = e

    def _run_confluent(self) -> None:
        c = Consumer(confluent_conf(self.bootstrap, self.group, **self.conf))
        c.subscribe([self.topic])
        try:
            while not self._stop.is_set():
                msg = c.poll(0.05)
                if msg is not None and msg.error() is None:
                    self.received.append((msg.partition(), msg.offset(), msg.value()))
                    if self.commit:
                        self._commit(lambda m=msg: c.commit(message=m, asynchronous=False))
                self._set_assignment(tp.partition for tp in c.assignment())
        finally:
            c.close()

    def _run_kafka_python(self) -> None:
        c = kafka_python_consumer(self.topic, self.bootstrap, self.group, **self.conf)
        try:
            while not self._stop.is_set():
                batches = c.poll(timeout_ms=50)
                for records in batches.values():
                    for r in records:
                        self.received.append((r.partition, r.offset, r.value))
                if batches and self.commit:
                    self._commit(c.commit)
                self._set_assignment(tp.partition for tp in c.assignment())
        finally:
            c.close(autocommit=False)


class MemberProcess:
    """A consumer in a subprocess (so a test can kill -9 it: no LeaveGroup, no commit)."""

    def __init__(self, kind: str, bootstrap: str, group: str, topic: str, *,
                 session_ms: int = 1000, strategy: str = "roundrobin"):
        root = Path(__file__).resolve().parents[2]
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.integration.groups_support", kind, bootstrap, group,
             topic, str(session_ms), strategy],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=root,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self.received: list[tuple[int, int, bytes]] = []
        self.assignment: frozenset[int] = frozenset()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            event = json.loads(line)
            if "assigned" in event:
                self.assignment = frozenset(event["assigned"])
            else:
                self.received.append((event["p"], event["o"], event["v"].encode()))

    def values(self) -> set[bytes]:
        return {v for _, _, v in self.received}

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(WAIT_S)


def _process_main(kind: str, bootstrap: str, group: str, topic: str, session_ms: str,
                  strategy: str) -> None:
    def emit(**event) -> None:
        print(json.dumps(event), flush=True)

    assigned: list[int] | None = None
    if kind == "confluent":
        c = Consumer(confluent_conf(bootstrap, group, session_ms=int(session_ms),
                                    strategy=strategy))
        c.subscribe([topic])
        while True:
            msg = c.poll(0.05)
            if msg is not None and msg.error() is None:
                emit(p=msg.partition(), o=msg.offset(), v=msg.value().decode())
                try:
                    c.commit(message=msg, asynchronous=False)
                except Exception:  # noqa: BLE001 - refused during a rebalance, as on Kafka
                    pass
            now = sorted(tp.partition for tp in c.assignment())
            if now != assigned:
                assigned = now
                emit(assigned=now)
    k = kafka_python_consumer(topic, bootstrap, group, session_ms=int(session_ms),
                              strategy=strategy)
    while True:
        batches = k.poll(timeout_ms=50)
        if batches:
            for records in batches.values():
                for r in records:
                    emit(p=r.partition, o=r.offset, v=r.value.decode())
            try:
                k.commit()
            except Exception:  # noqa: BLE001 - refused during a rebalance, as on Kafka
                pass
        now = sorted(tp.partition for tp in k.assignment())
        if now != assigned:
            assigned = now
            emit(assigned=now)


if __name__ == "__main__":
    _process_main(*sys.argv[1:])
