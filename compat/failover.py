"""The kill loop: a three-node cluster loses, one at a time and many times over, the leader of
its busiest partition and then its active controller (SIGKILL), each restarted before the
next, while an idempotent acks=all producer and a committing consumer group keep going.

The same scenario runs on a pykafkad cluster (tests/failover/test_kill_loop.py,
scripts/chaos.py) and on an Apache Kafka cluster (``python -m compat --failover``), which is
what makes its numbers mean something: the time to elect a new leader, the records per second
acknowledged while a node is down, and the records lost and duplicated (Kafka: 0 and 0).

At the end every acknowledged record must be in the log exactly once, at the offset it was
acknowledged with, in the order it was produced; the group's committed offsets must be the
last ones it committed; and every replica's ``.log`` files must be byte for byte the same.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from compat.wire_client import WireClient
from wire.messages.metadata_request import MetadataRequest, MetadataRequestTopic

#: both clusters run with these: a dead broker is fenced after 3 s (Kafka's default is 9 s)
#: and a test group does not wait for more members
CLUSTER_CONFIG = {"broker.session.timeout.ms": "3000", "broker.heartbeat.interval.ms": "500",
                  "group.initial.rebalance.delay.ms": "0",
                  # auto leader rebalance checks every second (Kafka: every 300 s), so a
                  # restarted node takes its preferred leaderships back within the round
                  "leader.imbalance.check.interval.seconds": "1"}
#: upper bound for any one wait of the scenario; a working cluster is far quicker
WAIT_S = 90.0
POLL_S = 0.02


class FailoverTarget(Protocol):
    """The cluster under test: node ids 1..n, each a combined broker+controller."""

    node_ids: list[int]

    def bootstrap(self, node_id: int) -> str: ...

    def log_dir(self, node_id: int) -> Path: ...

    def running(self, node_id: int) -> bool: ...

    def kill_node(self, node_id: int) -> None: ...

    def start_node(self, node_id: int) -> None: ...


class PykafkadTarget:
    """Over pykafkad.testing.run_cluster's handle."""

    def __init__(self, handle):
        self.handle = handle
        self.node_ids = sorted(handle.nodes)

    def bootstrap(self, node_id: int) -> str:
        n = self.handle.nodes[node_id]
        return f"{n.host}:{n.port}"

    def log_dir(self, node_id: int) -> Path:
        return Path(self.handle.data_dir) / f"node-{node_id}" / "data"

    def running(self, node_id: int) -> bool:
        return self.handle.nodes[node_id].running

    def kill_node(self, node_id: int) -> None:
        self.handle.kill(node_id)

    def start_node(self, node_id: int) -> None:
        self.handle.start(node_id)


class KafkaTarget:
    """Over compat.kafka_broker.run_kafka_cluster's KafkaCluster."""

    def __init__(self, cluster):
        from compat.node_control import KafkaNodes

        self.cluster = cluster
        self.control = KafkaNodes(cluster)
        self.node_ids = list(range(1, len(cluster.nodes) + 1))

    def bootstrap(self, node_id: int) -> str:
        return self.cluster.nodes[node_id - 1].bootstrap_servers

    def log_dir(self, node_id: int) -> Path:
        return self.cluster.nodes[node_id - 1].data_dir / "logs"

    def running(self, node_id: int) -> bool:
        return self.cluster.nodes[node_id - 1].proc.poll() is None

    def kill_node(self, node_id: int) -> None:
        self.control.kill_node(node_id)

    def start_node(self, node_id: int) -> None:
        self.control.start_node(node_id)


@dataclass
class Round:
    """One kill: whom, why, and what the clients saw."""

    victim: int
    role: str  # "leader" (of the busiest partition) or "controller" (the active one)
    #: kill to every partition the victim led having a new leader in a survivor's Metadata
    election_s: float | None = None
    #: kill to a survivor's quorum-state naming a new active controller (controller rounds)
    controller_s: float | None = None
    #: records acknowledged per second from the kill until the victim is back in every ISR
    records_per_s: float = 0.0
    #: back in every ISR to every partition led by its preferred replica again (auto leader
    #: rebalance); None: not within WAIT_S
    preferred_back_s: float | None = None
    #: the longest time without any acknowledgement while the victim was down
    stall_s: float = 0.0
    #: CreateTopics through a survivor succeeded after the controller was killed
    create_topics_ok: bool | None = None
    #: kill to the first CreateTopics through a survivor that succeeded (controller rounds)
    create_topics_s: float | None = None
    #: partition -> its longest time without an acknowledgement while the victim was down
    partition_stall_s: dict[int, float] = field(default_factory=dict)


@dataclass
class FailoverResult:
    target: str
    rounds: list[Round] = field(default_factory=list)
    offered_per_s: float = 0.0
    steady_per_s: float = 0.0
    acked: int = 0
    lost: int = 0
    duplicated: int = 0
    misplaced: int = 0
    #: acknowledged without an offset (librdkafka, after a request timeout), found once
    without_offset: int = 0
    out_of_order: int = 0
    not_consumed: int = 0
    committed_kept: bool = False
    replicas_identical: bool = False
    #: every replica's log the same in Kafka's DumpLogSegments listing (targets with
    #: ``compare_dumps``, compat/mixed_targets.py); None: not compared
    dumps_identical: bool | None = None
    producer_errors: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return (not self.problems and self.lost == 0 and self.duplicated == 0
                and self.misplaced == 0 and self.out_of_order == 0 and self.not_consumed == 0
                and self.committed_kept and self.replicas_identical
                and self.dumps_identical is not False)

    def election_times(self) -> list[float]:
        return [r.election_s for r in self.rounds if r.election_s is not None]

    def through_failure_per_s(self) -> float:
        rates = [r.records_per_s for r in self.rounds]
        return statistics.mean(rates) if rates else 0.0

    def summary(self) -> str:
        el = self.election_times()
        ctl = [r.controller_s for r in self.rounds if r.controller_s is not None]
        lines = [
            f"{self.target}: {len(self.rounds)} kills in {self.seconds:.0f} s, "
            f"{self.acked} records acknowledged",
            f"  new leader elected: median {_fmt(el, statistics.median)}, max {_fmt(el, max)}",
            f"  new active controller: median {_fmt(ctl, statistics.median)}, "
            f"max {_fmt(ctl, max)}",
            f"  records/s: offered {self.offered_per_s:.0f}, before the first kill "
            f"{self.steady_per_s:.0f}, while a node was down {self.through_failure_per_s():.0f}"
            f" (longest stall {max((r.stall_s for r in self.rounds), default=0):.2f} s)",
            f"  lost {self.lost}, duplicated {self.duplicated}, misplaced {self.misplaced}, "
            f"out of order {self.out_of_order}, not consumed {self.not_consumed}, "
            f"acknowledged without an offset {self.without_offset}",
            f"  committed offsets kept: {self.committed_kept}; replicas identical: "
            f"{self.replicas_identical}"
            + ("" if self.dumps_identical is None else
               f"; DumpLogSegments listings identical: {self.dumps_identical}"),
        ]
        for r in self.rounds:
            lines.append(f"  kill {r.role} {r.victim}: election {_s(r.election_s)}, controller "
                         f"{_s(r.controller_s)}, {r.records_per_s:.0f} rec/s, stall "
                         f"{r.stall_s:.2f} s {r.partition_stall_s}, preferred leaders back "
                         f"{_s(r.preferred_back_s)}" + ("" if r.create_topics_ok is None else
                                                 f", CreateTopics ok: {r.create_topics_ok} "
                                                 f"after {_s(r.create_topics_s)}"))
        lines += [f"  producer error: {e}" for e in self.producer_errors[:5]]
        lines += [f"  PROBLEM: {p}" for p in self.problems]
        return "\n".join(lines)


def _fmt(values, fn) -> str:
    return f"{fn(values):.2f} s" if values else "-"


def _s(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f} s"


def partition_states(bootstrap: str, topic: str) -> dict[int, tuple[int, int, list[int]]]:
    """partition -> (leader, leader epoch, isr) as the broker at ``bootstrap`` answers."""
    with WireClient(bootstrap, timeout=5) as client:
        resp = client.request(3, 12, MetadataRequest(
            topics=[MetadataRequestTopic(name=topic)], allow_auto_topic_creation=False))
    t = resp.topics[0]
    if t.error_code:
        return {}
    return {p.partition_index: (p.leader_id if not p.error_code else -1, p.leader_epoch,
                                sorted(p.isr_nodes)) for p in t.partitions}


def preferred_leaders(bootstrap: str, topic: str) -> bool:
    """Whether every partition of ``topic`` is led by its preferred (first) replica."""
    with WireClient(bootstrap, timeout=5) as client:
        resp = client.request(3, 12, MetadataRequest(
            topics=[MetadataRequestTopic(name=topic)], allow_auto_topic_creation=False))
    t = resp.topics[0]
    return not t.error_code and bool(t.partitions) and all(
        not p.error_code and p.replica_nodes and p.leader_id == p.replica_nodes[0]
        for p in t.partitions)


def active_controller(target: FailoverTarget) -> tuple[int, int]:
    """(leader id, epoch) of the metadata quorum, from the running voters' quorum-state
    files (the newest epoch wins); (-1, -1) when none names a leader."""
    best = (-1, -1)
    for n in target.node_ids:
        if not target.running(n):
            continue
        try:
            state = json.loads((target.log_dir(n) / "__cluster_metadata-0" / "quorum-state")
                               .read_text())
        except (OSError, ValueError):
            continue
        leader, epoch = state.get("leaderId", -1), state.get("leaderEpoch", -1)
        if leader >= 0 and epoch > best[1]:
            best = (leader, epoch)
    return best


class Load:
    """The idempotent acks=all producer and the committing consumer, each on its thread."""

    def __init__(self, bootstrap: str, topic: str, rate: float):
        self.bootstrap, self.topic, self.rate = bootstrap, topic, rate
        self.group = f"{topic}-group"
        self.lock = threading.Lock()
        #: (monotonic time, partition, offset, value) per acknowledgement
        self.acked: list[tuple[float, int, int, int]] = []
        self.errors: list[str] = []
        self.consumed: list[tuple[int, int, int]] = []
        self.committed: dict[int, int] = {}
        self.commit_errors: list[str] = []
        self.produced = 0
        self.stop_producing = threading.Event()
        self.stop_consuming = threading.Event()
        #: partition -> end offset the consumer must have committed before it stops
        self.consume_until: dict[int, int] | None = None
        self.fatal: str | None = None
        self.threads = [threading.Thread(target=self._produce, daemon=True, name="producer"),
                        threading.Thread(target=self._consume, daemon=True, name="consumer")]

    def start(self) -> None:
        for t in self.threads:
            t.start()

    def acked_count(self) -> int:
        with self.lock:
            return len(self.acked)

    def _on_delivery(self, err, msg) -> None:
        if err is not None:
            with self.lock:
                self.errors.append(str(err))
            if err.fatal():
                self.fatal = str(err)
            return
        with self.lock:
            self.acked.append((time.monotonic(), msg.partition(), msg.offset(),
                               int(msg.value())))

    def _produce(self) -> None:
        p = Producer({"bootstrap.servers": self.bootstrap, "enable.idempotence": True,
                      "acks": "all", "linger.ms": 5, "message.timeout.ms": 300000,
                      "queue.buffering.max.messages": 100000})
        t0 = time.monotonic()
        n = 0
        while not self.stop_producing.is_set() and self.fatal is None:
            due = int((time.monotonic() - t0) * self.rate)
            while n < due:
                try:
                    p.produce(self.topic, key=b"%d" % n, value=b"%d" % n,
                              on_delivery=self._on_delivery)
                except BufferError:
                    break
                n += 1
            self.produced = n
            p.poll(0.01)  # serves delivery reports until the next records are due
        remaining = p.flush(WAIT_S)
        if remaining:
            with self.lock:
                self.errors.append(f"{remaining} records not delivered at the end")

    def _consume(self) -> None:
        c = Consumer({"bootstrap.servers": self.bootstrap, "group.id": self.group,
                      "auto.offset.reset": "earliest", "enable.auto.commit": False,
                      "enable.partition.eof": False, "isolation.level": "read_uncommitted"})
        c.subscribe([self.topic])
        last_commit = time.monotonic()
        dirty = False
        try:
            while not self.stop_consuming.is_set():
                m = c.poll(0.1)
                if m is not None and m.error() is None:
                    self.consumed.append((m.partition(), m.offset(), int(m.value())))
                    dirty = True
                if dirty and time.monotonic() - last_commit > 0.5:
                    last_commit = time.monotonic()
                    try:
                        for tp in c.commit(asynchronous=False) or []:
                            if tp.error is None and tp.offset >= 0:
                                self.committed[tp.partition] = tp.offset
                        dirty = False
                    except KafkaException as e:
                        self.commit_errors.append(str(e))
                target = self.consume_until
                if target is not None and not dirty and all(
                        self.committed.get(p, 0) >= end for p, end in target.items()):
                    return
        finally:
            c.close()


def _wait(cond: Callable[[], object], what: str, timeout: float = WAIT_S):
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = cond()
        except (OSError, KafkaException):
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(POLL_S)  # polling other processes' state: nothing to wait on


def _survivor_states(target: FailoverTarget, topic: str, skip: int | None = None):
    for n in target.node_ids:
        if n != skip and target.running(n):
            try:
                return partition_states(target.bootstrap(n), topic)
            except OSError:
                continue
    return {}


def _all_in_sync(target: FailoverTarget, topic: str, partitions: int) -> bool:
    full = sorted(target.node_ids)
    for n in target.node_ids:
        states = partition_states(target.bootstrap(n), topic)
        if len(states) != partitions or any(
                leader < 0 or isr != full for leader, _, isr in states.values()):
            return False
    return True


def read_logs(bootstrap: str, topic: str, partitions: int) -> dict[int, list[tuple[int, int]]]:
    """Every record of every partition, (offset, value), read from offset 0 up to the high
    watermark by a consumer outside any group."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic}-reader",
                  "enable.auto.commit": False, "enable.partition.eof": False,
                  "isolation.level": "read_uncommitted"})
    try:
        ends = {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1]
                for p in range(partitions)}
        c.assign([TopicPartition(topic, p, 0) for p in range(partitions) if ends[p] > 0])
        out: dict[int, list[tuple[int, int]]] = {p: [] for p in range(partitions)}
        done = {p for p in range(partitions) if ends[p] == 0}
        deadline = time.monotonic() + WAIT_S
        while len(done) < partitions and time.monotonic() < deadline:
            for m in c.consume(10000, 0.5):
                if m.error() is None:
                    out[m.partition()].append((m.offset(), int(m.value())))
                    if m.offset() >= ends[m.partition()] - 1:
                        done.add(m.partition())
        return out
    finally:
        c.close()


def committed_offsets(bootstrap: str, group: str, topic: str, partitions: int) -> dict[int, int]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                  "enable.auto.commit": False})
    try:
        return {tp.partition: tp.offset for tp in c.committed(
            [TopicPartition(topic, p) for p in range(partitions)], timeout=30)}
    finally:
        c.close()


def replica_logs(target: FailoverTarget, topic: str, p: int) -> list[dict[str, bytes]]:
    out = []
    for n in target.node_ids:
        d = target.log_dir(n) / f"{topic}-{p}"
        out.append({f.name: f.read_bytes() for f in sorted(d.glob("*.log"))} if d.is_dir()
                   else {})
    return out


def _identical(target: FailoverTarget, topic: str, partitions: int) -> bool:
    for p in range(partitions):
        logs = replica_logs(target, topic, p)
        if not logs[0] or any(log != logs[0] for log in logs[1:]):
            return False
    return True


def run_failover(target: FailoverTarget, name: str, *, rounds: int = 2, partitions: int = 3,
                 rate: float = 2000, log: Callable[[str], None] = lambda _: None,
                 topic_prefix: str = "failover",
                 roles: Sequence[str] = ("leader", "controller")) -> FailoverResult:
    """Runs the kill loop on ``target``: ``rounds`` kills, taking ``roles`` in turn (by
    default alternately the leader of the busiest partition and the active controller; a
    node kind such as "kafka" or "pykafkad" kills a broker of that kind, on targets with a
    ``kind(node_id)``), each node restarted and back in every ISR before the next kill; then
    checks everything and returns the measurements."""
    result = FailoverResult(name, offered_per_s=rate)
    started = time.monotonic()
    bootstrap = ",".join(target.bootstrap(n) for n in target.node_ids)
    topic = f"{topic_prefix}-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 3, config={
        "min.insync.replicas": "2"})])[topic].result(WAIT_S)
    _wait(lambda: _all_in_sync(target, topic, partitions), f"{topic} in sync on every broker")
    load = Load(bootstrap, topic, rate)
    load.start()
    # the first records wait for metadata and a producer id and go out in a burst: the
    # steady rate is measured over the two seconds after the first two seconds' worth
    _wait(lambda: load.acked_count() >= 2 * rate, "the first records")
    t_steady = time.monotonic()
    base = load.acked_count()
    _wait(lambda: time.monotonic() - t_steady >= 2.0 and load.acked_count() > base,
          "two seconds of steady load")
    result.steady_per_s = (load.acked_count() - base) / (time.monotonic() - t_steady)
    try:
        for i in range(rounds):
            if load.fatal:
                result.problems.append(f"the producer hit a fatal error: {load.fatal}")
                break
            result.rounds.append(_one_round(target, topic, partitions, load,
                                            roles[i % len(roles)], log))
    except TimeoutError as e:
        result.problems.append(str(e))
    load.stop_producing.set()
    load.threads[0].join(WAIT_S + 10)
    result.producer_errors = list(load.errors)
    if load.fatal:
        result.problems.append(f"the producer hit a fatal error: {load.fatal}")
    _check(target, topic, partitions, load, result, bootstrap)
    result.seconds = time.monotonic() - started
    log(result.summary())
    return result


def _one_round(target: FailoverTarget, topic: str, partitions: int, load: Load, role: str,
               log: Callable[[str], None]) -> Round:
    if role == "leader":
        with load.lock:
            counts = {}
            for _, p, _, _ in load.acked[-int(load.rate * 2) or -1:]:
                counts[p] = counts.get(p, 0) + 1
        busiest = max(counts, key=counts.get) if counts else 0
        victim = _survivor_states(target, topic)[busiest][0]
    elif role == "controller":
        victim = active_controller(target)[0]
    else:
        victim = _victim_of_kind(target, topic, load, role)
    rnd = Round(victim, role)
    before = _survivor_states(target, topic)
    led = {p: epoch for p, (leader, epoch, _) in before.items() if leader == victim}
    _, old_ctl_epoch = active_controller(target)
    log(f"round: kill {role} {victim} (leads {sorted(led)})")
    t0 = time.monotonic()
    target.kill_node(victim)

    def new_leaders():
        states = _survivor_states(target, topic, victim)
        return states and all(states[p][0] not in (-1, victim) and states[p][1] > e
                              for p, e in led.items())

    def new_controller():
        leader, epoch = active_controller(target)
        return leader not in (-1, victim) and epoch > old_ctl_epoch

    pending = {"leaders": new_leaders, **({"controller": new_controller}
                                          if role == "controller" else {})}
    deadline = t0 + WAIT_S
    while pending:
        for what, cond in list(pending.items()):
            try:
                done = cond()
            except OSError:
                done = False
            if done:
                took = time.monotonic() - t0
                if what == "leaders":
                    rnd.election_s = took
                else:
                    rnd.controller_s = took
                del pending[what]
        if time.monotonic() > deadline:
            raise TimeoutError(f"no new {', '.join(pending)} after killing {victim}")
        time.sleep(POLL_S)  # polling the survivors: nothing to wait on
    if role == "controller":
        rnd.create_topics_ok, rnd.create_topics_s = _create_topic_through_survivors(
            target, victim, f"{topic}-after-{victim}-{uuid.uuid4().hex[:4]}", t0, log)
    after = load.acked_count()
    _wait(lambda: load.acked_count() >= after + load.rate / 2, "records acknowledged by the "
          f"new leaders after killing {victim}")
    target.start_node(victim)
    _wait(lambda: _all_in_sync(target, topic, partitions), f"{victim} back in every ISR")
    t1 = time.monotonic()
    with load.lock:
        acked_window = [a for a in load.acked if t0 <= a[0] <= t1]
    times = [a[0] for a in acked_window]
    rnd.records_per_s = len(times) / (t1 - t0)
    edges = [t0, *times, t1]
    rnd.stall_s = max(b - a for a, b in zip(edges, edges[1:], strict=False))
    for p in range(partitions):
        pt = [t0, *(t for t, q, *_ in acked_window if q == p), t1]
        rnd.partition_stall_s[p] = round(max(b - a for a, b in zip(pt, pt[1:], strict=False)), 2)
    try:
        _wait(lambda: all(preferred_leaders(target.bootstrap(n), topic)
                          for n in target.node_ids), "every partition led by its preferred "
              f"replica after {victim} came back")
        rnd.preferred_back_s = time.monotonic() - t1
    except TimeoutError as e:
        log(str(e))
    log(f"  elected in {_s(rnd.election_s)}, {rnd.records_per_s:.0f} rec/s while down, "
        f"stall {rnd.stall_s:.2f} s, preferred leaders back after {_s(rnd.preferred_back_s)}")
    return rnd


def _victim_of_kind(target: FailoverTarget, topic: str, load: Load, kind: str) -> int:
    """The broker of ``kind`` leading the most of the last two seconds' records (one that
    leads nothing when none of that kind leads)."""
    with load.lock:
        counts: dict[int, int] = {}
        for _, p, _, _ in load.acked[-int(load.rate * 2) or -1:]:
            counts[p] = counts.get(p, 0) + 1
    of_kind = [n for n in target.node_ids if target.kind(n) == kind]
    if not of_kind:
        raise ValueError(f"no {kind} broker in {target.node_ids}")
    load_of = {n: 0 for n in of_kind}
    for p, (leader, _, _) in _survivor_states(target, topic).items():
        if leader in load_of:
            load_of[leader] += counts.get(p, 0) + 1
    return max(of_kind, key=lambda n: load_of[n])


def _create_topic_through_survivors(target: FailoverTarget, victim: int, name: str,
                                    t0: float, log: Callable[[str], None]):
    """CreateTopics through a new admin client that knows only the survivors (a client that
    knew the dead node may wait for it: librdkafka sends admin requests to the Metadata
    controller_id, which Kafka picks at random among the brokers); retried until it
    succeeds.  (ok, seconds from the kill)."""
    survivors = ",".join(target.bootstrap(n) for n in target.node_ids
                         if n != victim and target.running(n))
    admin = AdminClient({"bootstrap.servers": survivors})
    deadline = time.monotonic() + WAIT_S
    while True:
        try:
            admin.create_topics([NewTopic(name, 1, 2)], request_timeout=10)[name].result(15)
            return True, time.monotonic() - t0
        except KafkaException as e:
            log(f"CreateTopics after the controller died: {e}")
            if e.args[0].name() == "TOPIC_ALREADY_EXISTS":
                return True, time.monotonic() - t0
            if time.monotonic() > deadline:
                return False, None


def _check(target: FailoverTarget, topic: str, partitions: int, load: Load,
           result: FailoverResult, bootstrap: str) -> None:
    for n in target.node_ids:
        if not target.running(n):
            target.start_node(n)
    try:
        _wait(lambda: _all_in_sync(target, topic, partitions), "every replica in sync at the end")
    except TimeoutError as e:
        result.problems.append(str(e))
    logs = read_logs(bootstrap, topic, partitions)
    where: dict[int, list[tuple[int, int]]] = {}
    for p, records in logs.items():
        values = [v for _, v in records]
        result.out_of_order += sum(1 for a, b in zip(values, values[1:], strict=False) if b <= a)
        for off, v in records:
            where.setdefault(v, []).append((p, off))
    with load.lock:
        acked = list(load.acked)
    result.acked = len(acked)
    for _, p, off, v in acked:
        found = where.get(v, [])
        if not found:
            result.lost += 1
        elif off is None or off < 0:
            # librdkafka reports some records of a request that timed out and was retried
            # as delivered without an offset: found once, nothing more to compare
            result.without_offset += 1
        elif (p, off) not in found:
            result.misplaced += 1
            if result.misplaced <= 5:
                result.problems.append(f"record {v} acknowledged at {p}/{off}, found at {found}")
    result.duplicated = sum(len(locs) - 1 for locs in where.values())
    # the group: it must read everything and commit the end of every partition
    load.consume_until = {p: (records[-1][0] + 1 if records else 0)
                          for p, records in logs.items()}
    load.threads[1].join(WAIT_S)
    if load.threads[1].is_alive():
        load.stop_consuming.set()
        load.threads[1].join(WAIT_S)
        result.problems.append(f"the group did not commit the end of every partition: "
                               f"{load.committed} vs {load.consume_until}")
    consumed = {v for _, _, v in load.consumed}
    result.not_consumed = sum(1 for *_, v in acked if v not in consumed)
    final = dict(load.committed)
    got = committed_offsets(bootstrap, load.group, topic, partitions)
    result.committed_kept = got == final and final == load.consume_until
    if not result.committed_kept:
        result.problems.append(f"committed offsets {got}, last committed {final}, "
                               f"ends {load.consume_until}")
    try:
        result.replicas_identical = bool(_wait(lambda: _identical(target, topic, partitions),
                                               "identical replicas", timeout=60))
    except TimeoutError:
        for p in range(partitions):
            sizes = [{k: len(v) for k, v in log.items()} for log in replica_logs(target, topic, p)]
            result.problems.append(f"{topic}-{p} replicas differ: {sizes}")
    if getattr(target, "compare_dumps", False):
        from compat.mixed_targets import dump_differences

        try:
            differences = dump_differences(target, topic, partitions)
        except (OSError, subprocess.SubprocessError) as e:  # the tool failed: no comparison
            differences = [f"DumpLogSegments failed: {e}"]
        result.dumps_identical = not differences
        result.problems += differences
