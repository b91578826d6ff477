"""The consume run of scripts/bench.py, built so that the broker rather than the client is
what is measured.

A topic of ``PARTITIONS`` partitions is filled (uncompressed, so that no client decompresses),
then read from the beginning to the end twice:

* ``kcat``: one kcat (librdkafka, C, no Python per record) per partition, all in parallel,
  with large fetches (fetch.max.bytes 50 MiB, max.partition.fetch.bytes 8 MiB). librdkafka
  still parses every record, so with small records the readers are the limit, not the broker.
* ``fetch``: ``FETCHERS`` processes that send plain Fetch requests (v12, 8 MiB per partition,
  50 MiB per response) and only walk batch headers to move their offsets: no per-record work
  on the client, so the broker's Fetch path is what limits the rate. (No stock client reads
  without parsing records, hence the project's own wire codec here.)

Reported per reader kind: records/s and MB/s over all readers, and the broker's CPU seconds
per GB served (user + system time of the broker process and its children, from /proc), which
does not depend on how fast the clients are.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import time
from pathlib import Path

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

PARTITIONS = 8
FETCHERS = 4
_LENGTH = struct.Struct(">i")
_LAST_OFFSET_DELTA = struct.Struct(">i")
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


def _next_offset(records: bytes, offset: int) -> int:
    """The offset after the last whole batch of a Fetch response's record set."""
    pos = 0
    while len(records) - pos >= 61:
        size = _LENGTH.unpack_from(records, pos + 8)[0] + 12
        if pos + size > len(records):
            break
        base = struct.unpack_from(">q", records, pos)[0]
        offset = base + _LAST_OFFSET_DELTA.unpack_from(records, pos + 23)[0] + 1
        pos += size
    return offset


def fetch_worker(bootstrap: str, topic: str, partitions: list[int], end: int) -> tuple[int, int]:
    """Fetches ``partitions`` of ``topic`` from offset 0 until each reaches ``end`` records'
    worth (the partition's log end offset); returns (records, bytes) read."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from compat.wire_client import WireClient
    from wire.messages.fetch_request import FetchPartition, FetchRequest, FetchTopic

    offsets = dict.fromkeys(partitions, 0)
    read_bytes = 0
    with WireClient(bootstrap, client_id="bench-fetch") as client:
        while any(o < end for o in offsets.values()):
            request = FetchRequest(
                replica_id=-1, max_wait_ms=100, min_bytes=1, max_bytes=50 << 20,
                topics=[FetchTopic(topic=topic, partitions=[
                    FetchPartition(partition=p, fetch_offset=o, partition_max_bytes=8 << 20)
                    for p, o in offsets.items() if o < end])])
            response = client.send(request, 12)
            for part in response.responses[0].partitions:
                assert part.error_code == 0, part.error_code
                records = part.records or b""
                read_bytes += len(records)
                offsets[part.partition_index] = _next_offset(
                    records, offsets[part.partition_index])
    return sum(offsets.values()), read_bytes


def _fetch_all(bootstrap: str, topic: str, per_partition: int) -> int:
    """FETCHERS processes, each fetching an equal share of the partitions."""
    shares = [list(range(PARTITIONS))[i::FETCHERS] for i in range(FETCHERS)]
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, "fetch", bootstrap, topic,
             ",".join(map(str, share)), str(per_partition)],
            stdout=subprocess.PIPE)
        for share in shares
    ]
    read = 0
    for proc in procs:
        out, _ = proc.communicate(timeout=600)
        assert proc.returncode == 0, f"fetcher exited with {proc.returncode}"
        read += int(out.split()[0])
    return read


def _timed(broker_pid: int, read, count: int, size: int, label: str) -> dict:
    cpu0 = cpu_seconds(broker_pid)
    t = time.perf_counter()
    got = read()
    elapsed = time.perf_counter() - t
    cpu = cpu_seconds(broker_pid) - cpu0
    assert got == count, f"read {got} of {count} records"
    return {
        f"{label} msgs/s": count / elapsed,
        f"{label} MB/s": count * size / 1e6 / elapsed,
        f"{label} broker CPU s/GB": cpu / (count * size / 1e9),
    }


def consume_run(
    bootstrap: str, broker_pid: int, count: int, size: int, label: str, tag: str = ""
) -> dict:
    topic = f"bench-consume-{size}-{tag}"
    count -= count % PARTITIONS  # the same number in every partition
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(60)
    _fill(bootstrap, topic, count, size)
    out = _timed(broker_pid, lambda: _read_all(bootstrap, topic), count, size,
                 f"consume {label} kcat")
    out.update(_timed(broker_pid, lambda: _fetch_all(bootstrap, topic, count // PARTITIONS),
                      count, size, f"consume {label} fetch"))
    return out


if __name__ == "__main__" and sys.argv[1:2] == ["fetch"]:
    _, _, server, name, parts, per = sys.argv
    records, nbytes = fetch_worker(server, name, [int(x) for x in parts.split(",")], int(per))
    print(records, nbytes)
