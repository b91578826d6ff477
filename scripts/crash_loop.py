"""Kill -9 pykafkad again and again under idempotent producers; nothing acknowledged may be lost.

The broker runs as a child process on a fixed loopback port and one data dir.  While it runs,
one idempotent confluent-kafka producer (enable.idempotence, acks=all) writes numbered records
to a 6-partition topic and keyed ones to a 3-partition compacted topic (the cleaner runs every
half second), and a consumer group member reads the first topic and commits its offsets
synchronously.  At a random moment of each cycle (seeded) the broker gets SIGKILL and is started
again on the same data dir; the same clients carry on (librdkafka retries, the idempotent
producer's sequence numbers must then de-duplicate).  After the last cycle everything is read
back and checked:

- acknowledged records lost: a delivered record that is not at its offset (for the compacted
  topic: a key whose newest acknowledged value is gone without a newer one);
- duplicates: a record number found twice;
- out of order: within a partition, a record number not greater than the one before it;
- committed offsets lost: after a restart, a partition's committed offset below the highest
  commit acknowledged before the kill (or at the end, below the highest ever acknowledged);
- readiness: seconds from each restart to its listening line and to a Metadata answer with
  every partition led; a restart that does not get there within --ready-timeout fails.

- the killed broker's child processes (the log cleaner's) still running after the restart, and
  tracebacks or ERROR lines in the broker's log.

Exit status 1 on any loss, duplicate, reordering, commit going back, restart not ready,
surviving child process or traceback.

    python scripts/crash_loop.py --cycles 30 --seed 7 --seconds-per-cycle 4
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

from scripts.soak_broker import SoakBroker, log_problems  # noqa: E402

EVENTS, COMPACTED, GROUP = "soak-events", "soak-compacted", "soak-group"
EVENT_PARTITIONS, COMPACTED_PARTITIONS, KEYS = 6, 3, 200
BROKER_SETTINGS = {"log.cleaner.backoff.ms": "500", "offsets.topic.num.partitions": "5",
                   "group.initial.rebalance.delay.ms": "0"}
#: librdkafka logs each refused connection while the broker is down: those go nowhere
_RDKAFKA_LOG = logging.getLogger("crash_loop.rdkafka")
_RDKAFKA_LOG.addHandler(logging.NullHandler())
_RDKAFKA_LOG.propagate = False
QUIET = {"logger": _RDKAFKA_LOG}
COMPACTED_CONFIG = {"cleanup.policy": "compact", "segment.ms": "1000",
                    "min.cleanable.dirty.ratio": "0.01", "delete.retention.ms": "1000"}


class Producing(threading.Thread):
    """One idempotent producer, paced at ``rate`` records/s; keeps what was acknowledged."""

    def __init__(self, bootstrap: str, rate: int) -> None:
        super().__init__(daemon=True)
        self.bootstrap, self.rate = bootstrap, rate
        self.stop = threading.Event()
        self.next_id = 0
        self.acked: dict[int, tuple[str, int, int]] = {}  # id -> (topic, partition, offset)
        self.failed: Counter = Counter()  # delivery errors by name
        self.fatal: list[str] = []
        self.producers = 0

    def _producer(self) -> Producer:
        self.producers += 1

        def on_error(err: KafkaError) -> None:
            if err.fatal():
                self.fatal.append(err.str())
        return Producer({"bootstrap.servers": self.bootstrap, "enable.idempotence": True,
                         "acks": "all", "linger.ms": 5, "message.timeout.ms": 120_000,
                         "reconnect.backoff.max.ms": 500, "error_cb": on_error, **QUIET})

    def _on_delivery(self, err, msg) -> None:
        if err is not None:
            self.failed[err.name()] += 1
            return
        self.acked[int(msg.value().split(b":")[1])] = (msg.topic(), msg.partition(), msg.offset())

    def run(self) -> None:
        p = self._producer()
        per_tick = max(1, self.rate // 100)
        while not self.stop.is_set():
            if self.fatal and len(self.fatal) >= self.producers:  # the producer is unusable
                p.flush(5)
                p = self._producer()
            for _ in range(per_tick):
                i = self.next_id
                try:
                    if i % 3 == 2:
                        p.produce(COMPACTED, b"c:%d" % i, b"k%d" % (i % KEYS),
                                  on_delivery=self._on_delivery)
                    else:
                        p.produce(EVENTS, b"e:%d" % i, on_delivery=self._on_delivery)
                except BufferError:
                    break
                self.next_id += 1
            p.poll(0.01)
        remaining = p.flush(150)
        self.failed["not delivered at the end"] += remaining


class Committing(threading.Thread):
    """A consumer group member on EVENTS that commits synchronously every half second."""

    def __init__(self, bootstrap: str) -> None:
        super().__init__(daemon=True)
        self.bootstrap = bootstrap
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.acked: dict[int, int] = {}  # partition -> highest acknowledged commit
        self.commits = 0
        self.commit_errors: Counter = Counter()

    def run(self) -> None:
        c = Consumer({"bootstrap.servers": self.bootstrap, "group.id": GROUP,
                      "enable.auto.commit": False, "auto.offset.reset": "earliest",
                      "reconnect.backoff.max.ms": 500, **QUIET})
        c.subscribe([EVENTS])
        last = time.monotonic()
        while not self.stop.is_set():
            c.poll(0.1)
            if time.monotonic() - last < 0.5:
                continue
            last = time.monotonic()
            try:
                done = c.commit(asynchronous=False)
            except Exception as e:  # noqa: BLE001 - broker down, nothing to commit ...
                code = e.args[0].name() if e.args and hasattr(e.args[0], "name") else str(e)
                self.commit_errors[code] += 1
                continue
            with self.lock:
                for tp in done or ():
                    if tp.error is None and tp.offset >= 0:
                        self.commits += 1
                        self.acked[tp.partition] = max(self.acked.get(tp.partition, -1), tp.offset)
        c.close()

    def snapshot(self) -> dict[int, int]:
        with self.lock:
            return dict(self.acked)


def committed_offsets(bootstrap: str) -> dict[int, int]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP, **QUIET})
    try:
        got = c.committed([TopicPartition(EVENTS, p) for p in range(EVENT_PARTITIONS)], timeout=30)
        return {tp.partition: tp.offset for tp in got}
    finally:
        c.close()


def wait_ready(bootstrap: str, timeout: float) -> bool:
    """True once Metadata answers with every partition of both topics led."""
    admin = AdminClient({"bootstrap.servers": bootstrap, **QUIET})
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            md = admin.list_topics(timeout=2)
            topics = [md.topics.get(t) for t in (EVENTS, COMPACTED)]
            if all(t is not None and t.error is None and t.partitions
                   and all(p.leader >= 0 and p.error is None for p in t.partitions.values())
                   for t in topics):
                return True
        except Exception:  # noqa: BLE001 - not answering yet
            pass
        time.sleep(0.05)
    return False


def orphans(marker: str, broker_pid: int) -> list[int]:
    """Pids of processes started by a killed broker: those with the run's marker in their
    environment that are neither the running broker nor its children."""
    out = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == broker_pid:
            continue
        try:
            if marker.encode() not in (proc / "environ").read_bytes():
                continue
            ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid != broker_pid:
            out.append(int(proc.name))
    return out


def read_back(bootstrap: str) -> dict[str, dict[int, list[tuple[int, bytes | None, bytes]]]]:
    """Every record of both topics, per partition: (offset, key, value)."""
    out: dict[str, dict[int, list]] = {EVENTS: {}, COMPACTED: {}}
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "soak-readback",
                  "enable.auto.commit": False, "enable.partition.eof": True, **QUIET})
    try:
        ends = {}
        for topic, n in ((EVENTS, EVENT_PARTITIONS), (COMPACTED, COMPACTED_PARTITIONS)):
            for p in range(n):
                low, high = c.get_watermark_offsets(TopicPartition(topic, p), timeout=30)
                out[topic][p] = []
                if high > low:
                    ends[(topic, p)] = high
        c.assign([TopicPartition(t, p, -2) for t, p in ends])
        deadline = time.monotonic() + 120
        while ends and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                if m.error().code() != KafkaError._PARTITION_EOF:
                    raise RuntimeError(f"read back: {m.error()}")
                if m.offset() >= ends.get((m.topic(), m.partition()), 0):
                    ends.pop((m.topic(), m.partition()), None)
                continue
            out[m.topic()][m.partition()].append((m.offset(), m.key(), m.value()))
            if m.offset() + 1 >= ends.get((m.topic(), m.partition()), 0):
                ends.pop((m.topic(), m.partition()), None)
        if ends:
            raise RuntimeError(f"read back stopped short of {ends}")
    finally:
        c.close()
    return out


def check(records, acked: dict[int, tuple[str, int, int]]) -> dict:
    """Losses, duplicates and reorderings of what was read back against what was acknowledged."""
    seen: Counter = Counter()
    at: dict[tuple[str, int, int], int] = {}
    out_of_order = 0
    newest_by_key: dict[bytes, int] = {}
    for topic, parts in records.items():
        for p, recs in parts.items():
            prev = -1
            for offset, key, value in recs:
                i = int(value.split(b":")[1])
                seen[i] += 1
                at[(topic, p, offset)] = i
                out_of_order += i <= prev
                prev = max(prev, i)
                if topic == COMPACTED:
                    newest_by_key[key] = max(newest_by_key.get(key, -1), i)
    lost: list[int] = []
    newest_acked_by_key: dict[bytes, int] = {}
    for i, (topic, p, offset) in acked.items():
        if topic == EVENTS:
            if at.get((topic, p, offset)) != i:
                lost.append(i)
        else:
            key = b"k%d" % (i % KEYS)
            newest_acked_by_key[key] = max(newest_acked_by_key.get(key, -1), i)
            found = at.get((topic, p, offset))
            if found is not None and found != i:  # the offset now holds another record
                lost.append(i)
    for key, i in newest_acked_by_key.items():
        if newest_by_key.get(key, -1) < i:
            lost.append(i)
    return {"records_read": sum(seen.values()), "lost": len(lost), "lost_sample": sorted(lost)[:20],
            "duplicates": sum(n - 1 for n in seen.values() if n > 1),
            "out_of_order": out_of_order}


def run(cycles: int, seed: int, seconds_per_cycle: float, data_dir: Path, log_path: Path,
        rate: int = 2000, ready_timeout: float = 60, verbose: bool = True) -> dict:
    rng = random.Random(seed)
    marker = f"PYKAFKAD_SOAK_RUN={uuid.uuid4().hex}"
    key, _, value = marker.partition("=")
    os.environ[key] = value  # inherited by the broker and its children: finds orphans
    broker = SoakBroker(data_dir, log_path, settings=BROKER_SETTINGS)
    broker.start()
    result: dict = {"seed": seed, "cycles": cycles, "seconds_per_cycle": seconds_per_cycle,
                    "kill_after_s": [], "listening_s": [], "ready_s": [], "not_ready": 0,
                    "orphans_after_kill": 0, "commit_regressions": []}
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers, **QUIET})
    fs = admin.create_topics([NewTopic(EVENTS, EVENT_PARTITIONS, 1),
                              NewTopic(COMPACTED, COMPACTED_PARTITIONS, 1, config=COMPACTED_CONFIG)])
    for f in fs.values():
        f.result(30)
    del admin
    producing = Producing(broker.bootstrap_servers, rate)
    committing = Committing(broker.bootstrap_servers)
    producing.start()
    committing.start()
    t0 = time.monotonic()
    try:
        for cycle in range(1, cycles + 1):
            delay = round(rng.uniform(0.2, seconds_per_cycle), 3)
            result["kill_after_s"].append(delay)
            time.sleep(delay)  # the random moment of the kill (not a wait for a condition)
            commits_before = committing.snapshot()
            broker.kill9()
            listening = broker.start(ready_timeout)
            # the killed broker's children (its cleaner process) must be gone with it
            result["orphans_after_kill"] += len(orphans(marker, broker.proc.pid))
            t_start = time.monotonic() - listening
            ready = wait_ready(broker.bootstrap_servers, ready_timeout)
            result["listening_s"].append(round(listening, 3))
            result["ready_s"].append(round(time.monotonic() - t_start, 3) if ready else None)
            result["not_ready"] += not ready
            now = committed_offsets(broker.bootstrap_servers) if ready else {}
            for p, off in commits_before.items():
                if now.get(p, -1) < off:
                    result["commit_regressions"].append(
                        {"cycle": cycle, "partition": p, "acked": off, "after_restart": now.get(p)})
            if verbose:
                print(f"  cycle {cycle}/{cycles}: killed after {delay:.2f} s, listening in "
                      f"{listening:.2f} s, ready={ready}, acked {len(producing.acked)}, "
                      f"commits {committing.commits}", flush=True)
    finally:
        producing.stop.set()
        committing.stop.set()
        producing.join(180)
        committing.join(60)
    result["seconds"] = round(time.monotonic() - t0, 1)
    final = committed_offsets(broker.bootstrap_servers)
    for p, off in committing.snapshot().items():
        if final.get(p, -1) < off:
            result["commit_regressions"].append(
                {"cycle": "end", "partition": p, "acked": off, "at_end": final.get(p)})
    records = read_back(broker.bootstrap_servers)
    broker.stop()
    result.update({"records_sent": producing.next_id, "records_acked": len(producing.acked),
                   "delivery_errors": dict(producing.failed), "fatal_producer_errors":
                   producing.fatal[:5], "producers": producing.producers,
                   "commits_acked": committing.commits,
                   "commit_errors": dict(committing.commit_errors)})
    result.update(check(records, producing.acked))
    ready = [r for r in result["ready_s"] if r is not None]
    result["max_listening_s"] = max(result["listening_s"], default=None)
    result["max_ready_s"] = max(ready, default=None)
    _, problems = log_problems(log_path.read_text(errors="replace"))
    result["log_problems"] = len(problems)
    result["log_problem_samples"] = problems[:3]
    result["ok"] = (result["lost"] == 0 and result["duplicates"] == 0
                    and result["out_of_order"] == 0 and not result["commit_regressions"]
                    and result["not_ready"] == 0 and result["orphans_after_kill"] == 0
                    and result["log_problems"] == 0)
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cycles", type=int, default=30)
    ap.add_argument("--seed", type=int, default=None, help="default: random (printed)")
    ap.add_argument("--seconds-per-cycle", type=float, default=4.0,
                    help="the kill comes at a random moment up to this long after the start")
    ap.add_argument("--rate", type=int, default=2000, help="records per second produced")
    ap.add_argument("--ready-timeout", type=float, default=60)
    ap.add_argument("--data-dir", type=Path, default=None, help="default: a temporary directory")
    ap.add_argument("--json", type=Path, default=None, help="also write the result here")
    args = ap.parse_args(argv)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    print(f"crash_loop: seed {seed}, {args.cycles} cycles", flush=True)
    with tempfile.TemporaryDirectory(prefix="pykafkad-crash-") as tmp:
        data_dir = args.data_dir or Path(tmp) / "data"
        log_path = Path(tmp) / "broker.log"
        result = run(args.cycles, seed, args.seconds_per_cycle, data_dir, log_path,
                     rate=args.rate, ready_timeout=args.ready_timeout)
        if result["log_problems"]:
            kept = Path(tempfile.gettempdir()) / f"pykafkad-crash-{seed}.log"
            kept.write_text(log_path.read_text(errors="replace"))
            result["broker_log"] = str(kept)
    samples = result.pop("log_problem_samples")
    print(json.dumps(result, indent=2))
    for s in samples:
        print("---- broker log ----\n" + s)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    print("crash_loop: " + ("OK" if result["ok"] else "FAILED"))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
