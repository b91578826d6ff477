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


def _read_all(bootstrap: str, topic: str, start) -> int:
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
    start()  # kcat starts fast (C); its connecting is part of the timing
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
    worth (the partition's log end offset); returns (records, bytes) read. Responses are
    received into one reused buffer, so the reader costs little per byte."""
    import socket

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from wire.framing import (
        RequestHeader,
        encode_request,
        read_response_header,
        request_header_version,
        response_header_version,
    )
    from wire.messages.fetch_request import FetchPartition, FetchRequest, FetchTopic
    from wire.messages.fetch_response import FetchResponse
    from wire.primitives import Reader

    version = 12
    host, _, port = bootstrap.rpartition(":")
    sock = socket.create_connection((host, int(port)))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    buf = bytearray(64 << 20)
    view = memoryview(buf)

    def recv_exact(n: int) -> memoryview:
        got = 0
        while got < n:
            k = sock.recv_into(view[got:n])
            if not k:
                raise ConnectionError("the broker closed the connection")
            got += k
        return view[:n]

    print("ready", flush=True)  # started and connected: the timing starts after this
    sys.stdin.readline()
    offsets = dict.fromkeys(partitions, 0)
    read_bytes = 0
    correlation_id = 0
    while any(o < end for o in offsets.values()):
        correlation_id += 1
        request = FetchRequest(
            replica_id=-1, max_wait_ms=100, min_bytes=1, max_bytes=50 << 20,
            topics=[FetchTopic(topic=topic, partitions=[
                FetchPartition(partition=p, fetch_offset=o, partition_max_bytes=8 << 20)
                for p, o in offsets.items() if o < end])])
        header = RequestHeader(1, version, correlation_id, "bench-fetch",
                               request_header_version(1, version))
        sock.sendall(encode_request(header, request))
        size = _LENGTH.unpack(recv_exact(4))[0]
        r = Reader(recv_exact(size))
        assert read_response_header(r, response_header_version(1, version)) == correlation_id
        response = FetchResponse.read(r, version)
        for part in response.responses[0].partitions:
            assert part.error_code == 0, part.error_code
            records = part.records or b""
            read_bytes += len(records)
            offsets[part.partition_index] = _next_offset(records, offsets[part.partition_index])
    sock.close()
    return sum(offsets.values()), read_bytes


def _fetch_all(bootstrap: str, topic: str, per_partition: int, start) -> int:
    """FETCHERS processes, each fetching an equal share of the partitions; ``start`` is
    called once they all are started and connected."""
    shares = [list(range(PARTITIONS))[i::FETCHERS] for i in range(FETCHERS)]
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, "fetch", bootstrap, topic,
             ",".join(map(str, share)), str(per_partition)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        for share in shares
    ]
    for proc in procs:
        assert proc.stdout.readline().strip() == b"ready"
    start()
    for proc in procs:
        proc.stdin.write(b"go\n")
        proc.stdin.flush()
    read = 0
    for proc in procs:
        out, _ = proc.communicate(timeout=600)
        assert proc.returncode == 0, f"fetcher exited with {proc.returncode}"
        read += int(out.split()[0])
    return read


def _timed(broker_pid: int, read, count: int, size: int, label: str) -> dict:
    mark: list[float] = []

    def start() -> None:
        mark[:] = [time.perf_counter(), cpu_seconds(broker_pid)]

    got = read(start)
    elapsed = time.perf_counter() - mark[0]
    cpu = cpu_seconds(broker_pid) - mark[1]
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
    out = _timed(broker_pid, lambda start: _read_all(bootstrap, topic, start), count, size,
                 f"consume {label} kcat")
    out.update(_timed(
        broker_pid, lambda start: _fetch_all(bootstrap, topic, count // PARTITIONS, start),
        count, size, f"consume {label} fetch"))
    return out


if __name__ == "__main__" and sys.argv[1:2] == ["fetch"]:
    _, _, server, name, parts, per = sys.argv
    records, nbytes = fetch_worker(server, name, [int(x) for x in parts.split(",")], int(per))
    print(records, nbytes)
