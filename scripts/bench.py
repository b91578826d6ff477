#!/usr/bin/env python3
"""Benchmarks pykafkad against the official Apache Kafka broker, in the same run.

Usage: python scripts/bench.py [--messages N] [--skip-kafka]
       [--workloads throughput,latency,consume,cluster_start]
       [--produce-only] [--against DIR] [--rounds N] [--repeat N]

Both brokers run as their own processes on this machine (Kafka from Maven Central jars, see
compat/kafka_broker.py) and are driven by the same confluent-kafka (librdkafka) client, whose
C core keeps the client out of the measurement as far as possible.  Reported per workload:
pykafkad, Kafka, and the ratio pykafkad / Kafka (for rates above 1 is better, for times and
memory below 1 is better).  Numbers vary with the machine's load; the ratio is the result.
Kafka's start time includes formatting its log dir (``kafka-storage format``), which every
fresh Kafka data dir needs; pykafkad's includes creating its data dir.

``--produce-only`` measures only the produce workloads (uncompressed, lz4 and zstd batches of
100 B records, and 100 KB records: the produce path validates every record, after
decompressing), each with the broker's CPU time per message, and the record validation's own
CPU per message (C and Python walk) on the batches the client sent.  ``--against DIR``
also measures pykafkad run from another source tree (say ``git archive <rev> | tar -x -C DIR``)
in the same run, and adds its column and the ratio this tree / that one.

``consume`` reads a filled topic with one kcat per partition in parallel and large fetches, so
that the broker is the bottleneck, and also reports the broker's CPU seconds per GB served
(scripts/bench_consume.py). ``latency`` is a fixed-rate produce run with per-record delivery
latency (p50/p99/p99.9) while a compacted topic is being cleaned (scripts/bench_latency.py);
``--repeat`` runs it several times per broker to show the spread.  ``cluster_start`` starts a
3-node cluster of each (pykafkad's launcher, three Kafka JVMs) and reports the time until it is
ready and the nodes' total memory (scripts/bench_cluster.py).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_consume import consume_run  # noqa: E402
from bench_latency import BROKER_CONFIG as LATENCY_CONFIG  # noqa: E402
from bench_latency import latency_run  # noqa: E402
from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402
from measure_startup import first_answer, free_port  # noqa: E402

PARTITIONS = 4
KAFKA_VERSION = "4.4.0"
#: broker settings for every run (both brokers)
BROKER_SETTINGS = {**LATENCY_CONFIG}


def rss_mib(pid: int) -> float:
    """Resident memory of a process and its children (Kafka's JVM may be a child)."""
    total = 0
    pids = [pid]
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.exists():
        pids += [int(p) for p in children.read_text().split()]
    for p in pids:
        for line in Path(f"/proc/{p}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
    return total / 1024


def start_pykafkad(data_dir: str, src: Path = ROOT) -> tuple[subprocess.Popen, str, float]:
    port = free_port()
    t0 = time.monotonic()
    env = {**os.environ, "PYTHONPATH": str(src)}
    settings = [f"--set={k}={v}" for k, v in BROKER_SETTINGS.items()]
    proc = subprocess.Popen([sys.executable, "-m", "pykafkad", "--host", "127.0.0.1",
                             "--port", str(port), "--data-dir", data_dir, *settings],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                            cwd=src)
    first_answer(port, t0 + 60)
    return proc, f"127.0.0.1:{port}", time.monotonic() - t0


def cpu_s(pid: int) -> float:
    """CPU time a process's threads used so far: unlike wall time, it hardly moves when other
    work shares the machine. From each thread's schedstat (nanoseconds), since the clock ticks
    of /proc/<pid>/stat (10 ms) are too coarse for a workload of ~0.1 s of broker CPU (a thread
    that exits between two readings would take its time with it, but the broker runs on one
    thread); /proc/<pid>/stat where schedstat is missing."""
    total = 0
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(FileNotFoundError, ProcessLookupError):
                total += int((task / "schedstat").read_text().split()[0])
        return total / 1e9
    except (FileNotFoundError, ValueError, IndexError):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def workloads(bootstrap: str, n: int, produce_only: bool = False,
              pid: int | None = None) -> dict[str, float]:
    out: dict[str, float] = {}
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for name in ("small", "large", "none", "lz4", "zstd"):
        admin.create_topics([NewTopic(f"bench-{name}", PARTITIONS, 1)])[f"bench-{name}"].result(60)

    def produce(topic: str, count: int, size: int, **conf) -> float:
        p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all",
                      "queue.buffering.max.messages": 1_000_000, **conf})
        value = os.urandom(size // 2).hex().encode()
        t = time.perf_counter()
        for i in range(count):
            while True:
                try:
                    p.produce(topic, value=value, key=b"%d" % (i % 1024))
                    break
                except BufferError:
                    p.poll(0.001)
        assert p.flush(120) == 0
        return time.perf_counter() - t

    def consume(topic: str, count: int) -> float:
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench",
                      "enable.auto.commit": False, "fetch.wait.max.ms": 10})
        c.assign([TopicPartition(topic, p, -2) for p in range(PARTITIONS)])
        t = time.perf_counter()
        got = 0
        while got < count:
            got += len(c.consume(10_000, 5.0))
        dt = time.perf_counter() - t
        c.close()
        return dt

    out["produce 100 B msgs/s"] = n / produce("bench-small", n, 100)
    if produce_only:
        for codec in ("none", "lz4", "zstd"):
            cpu = cpu_s(pid) if pid else 0.0
            rate = n / produce(f"bench-{codec}", n, 100, **{"compression.codec": codec})
            if codec != "none":
                out[f"produce 100 B {codec} msgs/s"] = rate
            if pid:
                out[f"broker CPU us/msg, {codec}"] = (cpu_s(pid) - cpu) / n * 1e6
        big = max(n // 100, 100)
        cpu = cpu_s(pid) if pid else 0.0
        out["produce 100 KB MB/s"] = big * 0.1 / produce("bench-large", big, 100_000)
        if pid:
            out["broker CPU us/msg, 100 KB"] = (cpu_s(pid) - cpu) / big * 1e6
        return out
    out["consume 100 B msgs/s"] = n / consume("bench-small", n)
    big = max(n // 100, 100)
    out["produce 100 KB MB/s"] = big * 0.1 / produce("bench-large", big, 100_000)
    out["consume 100 KB MB/s"] = big * 0.1 / consume("bench-large", big)
    return out


def run_workloads(bootstrap: str, args: argparse.Namespace, pid: int) -> dict[str, float]:
    out: dict[str, float] = {}
    if "throughput" in args.workloads or args.produce_only:
        out.update(workloads(bootstrap, args.messages, args.produce_only, pid))
    if args.produce_only:
        return out
    if "consume" in args.workloads:
        for r in range(args.repeat):
            suffix = f" #{r + 1}" if args.repeat > 1 else ""
            small = consume_run(bootstrap, pid, args.messages, 100, "100 B", f"{r}")
            big = consume_run(bootstrap, pid, max(args.messages // 100, 100), 100_000,
                              "100 KB", f"{r}")
            out.update({f"{k}{suffix}": v for k, v in {**small, **big}.items()})
    if "latency" in args.workloads:
        for r in range(args.repeat):
            run = latency_run(bootstrap, args.latency_rate, args.latency_seconds, str(r))
            suffix = f" #{r + 1}" if args.repeat > 1 else ""
            out.update({f"{k}{suffix}": v for k, v in run.items()})
    return out


def validation_cpu(data_dir: Path, limit: int = 50_000) -> dict[str, float]:
    """The record validation's own CPU per message, C and Python walk, timed in this process
    on the first ``limit`` messages of the batches librdkafka sent to each produce workload
    (read back from the broker's segments): the part of the broker CPU figures that record
    validation adds, without the noise of a shared machine."""
    from pykafkad.log.record_validation import RecordPolicy, validate_records
    from wire.records import scan
    from wire.records.header import BatchHeader

    out = {}
    for codec in ("none", "lz4", "zstd"):
        batches = []
        for segment in sorted(data_dir.glob(f"bench-{codec}-*/*.log")):
            data = segment.read_bytes()
            pos = 0
            while pos + 61 <= len(data) and sum(h.record_count for _, h in batches) < limit:
                size = int.from_bytes(data[pos + 8:pos + 12], "big") + 12
                batch = data[pos:pos + size]
                batches.append((batch, BatchHeader(batch)))
                pos += size
        count = sum(h.record_count for _, h in batches)
        if not count:
            continue
        now = max(h.max_timestamp for _, h in batches)
        policy = RecordPolicy()
        walks = {"C": scan._accelerator, "Python": None} if scan._accelerator else {"Python": None}
        saved = scan._accelerator
        try:
            for walk, accelerator in walks.items():
                scan._accelerator = accelerator
                best = float("inf")
                for _ in range(3):
                    t = time.process_time()
                    for batch, header in batches:
                        validate_records(batch, header, policy, now, "bench-0")
                    best = min(best, time.process_time() - t)
                out[f"validation CPU us/msg, {codec}, {walk}"] = best / count * 1e6
        finally:
            scan._accelerator = saved
    return out


def cluster_start(args: argparse.Namespace) -> None:
    """``--workloads cluster_start``: a 3-node cluster's start time and memory (bench_cluster)."""
    from bench_cluster import kafka_cluster_start, pykafkad_cluster_start

    rounds = [pykafkad_cluster_start() for _ in range(args.rounds)]
    ours = {name: min(r[name] for r in rounds) for name in rounds[0]}
    theirs = {} if args.skip_kafka else kafka_cluster_start()
    print(f"{'cluster_start':38} {'pykafkad':>12} {'kafka':>12} {'ratio':>8}")
    for name in [*ours, *(n for n in theirs if n not in ours)]:
        a, b = ours.get(name), theirs.get(name)
        print(f"{name:38} " + (f"{a:12.3f}" if a is not None else f"{'-':>12}")
              + (f" {b:12.3f}" if b is not None else f" {'-':>12}")
              + (f" {a / b:8.2f}" if a is not None and b else f" {'-':>8}"))
    if args.rounds > 1:
        name = next(iter(ours))
        print(f"pykafkad {name} over {args.rounds} rounds: "
              f"{min(r[name] for r in rounds):.3f} .. {max(r[name] for r in rounds):.3f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=200_000)
    ap.add_argument("--skip-kafka", action="store_true", help="measure pykafkad only")
    ap.add_argument("--produce-only", action="store_true", help="only the produce workloads")
    ap.add_argument("--against", type=Path, help="also measure pykafkad from this source tree")
    ap.add_argument("--rounds", type=int, default=1,
                    help="pykafkad runs per tree, interleaved; each figure is the best round")
    ap.add_argument("--workloads", default="throughput,latency",
                    type=lambda v: set(v.split(",")),
                    help="throughput, latency, consume, cluster_start (comma-separated)")
    ap.add_argument("--latency-rate", type=int, default=20_000, help="records/s of the latency run")
    ap.add_argument("--latency-seconds", type=float, default=10.0)
    ap.add_argument("--repeat", type=int, default=1, help="latency and consume runs per broker")
    args = ap.parse_args()
    if "cluster_start" in args.workloads:
        cluster_start(args)
        args.workloads.discard("cluster_start")
        if not args.workloads:
            return 0
    results: dict[str, dict[str, float]] = {}
    rounds: dict[str, dict[str, list[float]]] = {}  # every round's figure, for the spread

    trees = {"pykafkad": ROOT}
    if args.against:
        trees["against"] = args.against.resolve()
    for _ in range(args.rounds):
        for label, src in trees.items():
            with tempfile.TemporaryDirectory() as d:
                proc, bootstrap, start = start_pykafkad(d, src)
                try:
                    got = {"start to first answer s": start,
                           "memory after start MiB": rss_mib(proc.pid)}
                    got.update(run_workloads(bootstrap, args, proc.pid))
                finally:
                    proc.terminate()
                    proc.wait(60)
                if args.produce_only and label == "pykafkad":
                    got.update(validation_cpu(Path(d)))
            for name, value in got.items():
                rounds.setdefault(label, {}).setdefault(name, []).append(value)
            best = results.setdefault(label, got)
            for name, value in got.items():
                lower_is_better = "CPU" in name or name.endswith((" s", "MiB"))
                best[name] = min(best[name], value) if lower_is_better else max(best[name], value)

    if not args.skip_kafka:
        from compat.kafka_broker import kafka_classpath, run_kafka

        kafka_classpath(KAFKA_VERSION)  # fetch the jars first, outside the timing
        t0 = time.monotonic()
        with run_kafka(KAFKA_VERSION, config=BROKER_SETTINGS) as kafka:
            host, port = kafka.bootstrap_servers.rsplit(":", 1)
            first_answer(int(port), t0 + 180, host)
            results["kafka"] = {"start to first answer s": time.monotonic() - t0,
                                "memory after start MiB": rss_mib(kafka.proc.pid)}
            results["kafka"].update(run_workloads(kafka.bootstrap_servers, args, kafka.proc.pid))

    names = list(results["pykafkad"])
    refs = [r for r in ("kafka", "against") if r in results]
    print(f"{'workload':38} {'pykafkad':>12}" + "".join(f" {r:>12} {'ratio':>8}" for r in refs))
    for name in names:
        ours = results["pykafkad"][name]
        line = f"{name:38} {ours:12.3f}"
        for r in refs:
            ref = results[r].get(name)
            line += f" {ref:12.3f} {ours / ref:8.2f}" if ref else f" {'-':>12} {'-':>8}"
        print(line)
    if args.rounds > 1:
        print(f"\nspread over {args.rounds} rounds (min .. max)")
        for name in names:
            print(f"{name:38}" + "".join(
                f" {label}: {min(v[name]):.3f} .. {max(v[name]):.3f}"
                for label, v in rounds.items() if name in v))
    return 0


if __name__ == "__main__":
    sys.exit(main())
