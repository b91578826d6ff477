#!/usr/bin/env python3
"""Measures what a user waits for: process start -> first answered request, and memory after.

Usage: python scripts/measure_startup.py [RUNS]

Starts ``python -m pykafkad`` on a free port with an empty data dir, sends ApiVersions as soon
as the port accepts, and reports the time to the answer and the broker's resident memory
(VmRSS) after start.  The reference in the same run is a bare ``python -c pass`` start, so the
ratio says how much of the wait is pykafkad rather than the interpreter.
"""

from __future__ import annotations

import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from wire.framing import RequestHeader, encode_request  # noqa: E402
from wire.messages.api_versions_request import ApiVersionsRequest  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def first_answer(port: int, deadline: float, host: str = "127.0.0.1") -> None:
    """Waits until the broker answers ApiVersions (what every client sends first)."""
    frame = encode_request(RequestHeader(18, 3, 1, "measure", 2),
                           ApiVersionsRequest(client_software_name="m", client_software_version="1"))
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=5) as s:
                s.sendall(frame)
                if len(s.recv(4)) == 4:
                    return
        except OSError:
            time.sleep(0.002)
    raise TimeoutError("broker never answered")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def one_run() -> tuple[float, float, float]:
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    bare = time.monotonic() - t0
    port = free_port()
    with tempfile.TemporaryDirectory() as d:
        t0 = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-m", "pykafkad", "--host", "127.0.0.1",
                                 "--port", str(port), "--data-dir", d],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            first_answer(port, t0 + 30)
            start = time.monotonic() - t0
            rss = rss_mib(proc.pid)
        finally:
            proc.terminate()
            proc.wait(30)
    return start, bare, rss


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    results = [one_run() for _ in range(runs)]
    start = statistics.median(r[0] for r in results)
    bare = statistics.median(r[1] for r in results)
    rss = statistics.median(r[2] for r in results)
    print(f"start to first answered request: {start * 1000:.0f} ms (median of {runs})")
    print(f"bare interpreter start:          {bare * 1000:.0f} ms  -> ratio {start / bare:.1f}x")
    print(f"resident memory after start:     {rss:.1f} MiB")


if __name__ == "__main__":
    main()
