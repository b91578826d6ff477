"""What the client drivers share: the topics and records every client produces and reads, the
timeouts, the API sets that gate optional scenarios, and how one scenario step is run.

Records are few, small and have fixed keys, values and timestamps, so that a re-run captures
the same bytes wherever the broker and the clients do not make values up per run.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable

CLIENTS = ("kafka-python", "confluent-kafka", "kcat")
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
CODEC_NAMES = dict(enumerate(CODECS))
#: fixed record timestamps (2023-11-14T22:13:20Z) so produced batches repeat across runs
BASE_TS = 1_700_000_000_000
RECORDS_PER_BATCH = 3
WAIT_S = 30
KCAT = shutil.which("kcat") or shutil.which("kafkacat")

GROUP_APIS = {8, 9, 10, 11, 12, 13, 14}  # OffsetCommit/Fetch, FindCoordinator, Join..Sync
TXN_APIS = {10, 22, 24, 26}  # FindCoordinator, InitProducerId, AddPartitionsToTxn, EndTxn
TXN_OFFSET_APIS = {25, 28}  # AddOffsetsToTxn, TxnOffsetCommit


def log(msg: str) -> None:
    print(f"[capture] {msg}", file=sys.stderr, flush=True)


def codec_topic(codec: str) -> str:
    return f"golden-{codec}"


def admin_topic(client: str) -> str:
    return f"golden-admin-{client}"


def record_key(client: str, codec: str, i: int) -> bytes:
    """Keys name the producing client and codec, so the tests can check Fetch coverage."""
    return f"{client}/{codec}/{i}".encode()


def records_for(client: str, codec: str) -> list[tuple[bytes, bytes, list, int]]:
    """A few small records, compressible enough that librdkafka keeps the compressed batch
    (it sends a batch uncompressed when compression does not make it smaller)."""
    return [
        (record_key(client, codec, i), f"value-{i}-{'abc' * 16}".encode(),
         [("h", str(i).encode())] if i else [], BASE_TS + i)
        for i in range(RECORDS_PER_BATCH)
    ]


def expected_records() -> int:
    return len(CLIENTS if KCAT else CLIENTS[:2]) * len(CODECS) * RECORDS_PER_BATCH


def client_versions() -> dict[str, str]:
    """The versions index.json records, so a diff of golden files can be traced to a client."""
    import confluent_kafka
    import kafka

    ck = confluent_kafka.version()
    out = {
        "kafka-python": kafka.__version__,
        "confluent-kafka": f"{ck[0] if isinstance(ck, tuple) else ck} "
        f"(librdkafka {confluent_kafka.libversion()[0]})",
    }
    if KCAT:
        v = subprocess.run([KCAT, "-V"], capture_output=True, text=True).stdout
        m = re.search(r"Version (\S+) .*?librdkafka (\S+)", v)
        out["kcat"] = f"{m.group(1)} (librdkafka {m.group(2)})" if m else "unknown"
    return out


def step(name: str, fn: Callable[[], object]) -> None:
    """Runs one scenario; a failure is logged and the capture goes on with the next."""
    t0 = time.monotonic()
    try:
        fn()
        log(f"{name}: ok ({time.monotonic() - t0:.1f}s)")
    except Exception as e:
        log(f"{name}: FAILED {type(e).__name__}: {e}")


def poll_until(done: Callable[[], bool], poll: Callable[[], object], seconds: float = WAIT_S) -> None:
    """Polls a client until ``done()`` or for ``seconds`` (the clients do their I/O in poll,
    so waiting for a group assignment or heartbeats means polling)."""
    deadline = time.monotonic() + seconds
    while not done() and time.monotonic() < deadline:
        poll()


def poll_records(n: int, poll: Callable[[], int]) -> None:
    """Polls until ``n`` records came back (``poll`` says how many one call got); fails the
    step after WAIT_S, so a Fetch that returns too little shows in the log."""
    got = 0
    deadline = time.monotonic() + WAIT_S
    while got < n and time.monotonic() < deadline:
        got += poll()
    if got < n:
        raise RuntimeError(f"consumed {got} of {n} records")


class ClientDriver:
    """Drives one stock client through the scenarios, phase by phase (``drive`` in
    capture_golden.py calls admin, produce, consume, then groups and transactions when the
    broker serves their APIs, then read_committed)."""

    #: the client's name, also its ``client.id``, which is how the recorder tells clients apart
    name = ""

    def __init__(self, bootstrap: str, node_id: int, handlers: set[int]) -> None:
        self.bootstrap = bootstrap
        self.node_id = node_id
        #: the api keys the broker serves: optional scenarios run only when theirs are all here
        self.handlers = handlers

    def admin(self) -> None:
        raise NotImplementedError

    def produce(self) -> None:
        raise NotImplementedError

    def consume(self) -> None:
        raise NotImplementedError

    def groups(self) -> None:
        raise NotImplementedError

    def transactions(self) -> None:
        raise NotImplementedError

    def read_committed(self) -> None:
        raise NotImplementedError
