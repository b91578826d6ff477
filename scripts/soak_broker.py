"""pykafkad as a child process for the soak scripts (crash_loop.py, fuzz_frames.py).

Unlike tests/integration/broker_process.py, the broker's log goes to a file, not a pipe: a soak
run makes the broker log thousands of lines, and a pipe nobody drains would block it.  The port
is fixed, so clients keep their bootstrap address across kill -9 and restart.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from compat.kafka_broker import free_port

ROOT = Path(__file__).resolve().parents[1]
READY = re.compile(r"pykafkad listening on (\S+):(\d+)")
#: a line the broker logs when bytes that break the protocol close a connection
CLOSING_PROTOCOL = "closing connection from"


class SoakBroker:
    """``python -m pykafkad`` on ``data_dir`` and a fixed loopback port, logging to ``log_path``."""

    def __init__(self, data_dir: Path, log_path: Path, port: int | None = None,
                 settings: dict[str, str] | None = None) -> None:
        self.data_dir = data_dir
        self.log_path = log_path
        self.port = port or free_port()
        self.settings = settings or {}
        self.proc: subprocess.Popen | None = None

    @property
    def bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 60) -> float:
        """Starts the broker; returns the seconds until it printed its listening line."""
        args = [sys.executable, "-m", "pykafkad", "--host", "127.0.0.1", "--port", str(self.port),
                "--data-dir", str(self.data_dir)]
        for k, v in self.settings.items():
            args += ["--set", f"{k}={v}"]
        env = {**os.environ, "PYTHONUNBUFFERED": "1",
               "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        t0 = time.monotonic()
        with open(self.log_path, "a") as log:
            self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=log, text=True,
                                         env=env, cwd=ROOT)
        deadline = t0 + timeout
        line = ""
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()  # blocks until the ready line (or exit)
            if READY.search(line) or not line:
                break
        if not READY.search(line):
            self.proc.kill()
            self.proc.wait()
            raise RuntimeError(f"broker did not start: {line!r}; see {self.log_path}")
        return time.monotonic() - t0

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill9(self) -> None:
        """SIGKILL, as a crash: no shutdown code runs."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)
        self.proc.stdout.close()

    def stop(self, timeout: float = 30) -> int:
        """SIGTERM (a clean shutdown); kill -9 if it does not stop within ``timeout``."""
        if not self.alive():
            return self.proc.returncode
        self.proc.terminate()
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill9()
            return -9
        finally:
            self.proc.stdout.close()


def log_problems(text: str) -> tuple[int, list[str]]:
    """(protocol-error closing lines, problems) in a broker log: a problem is a traceback or an
    ERROR/CRITICAL line, with the lines around it."""
    lines = text.splitlines()
    closing = sum(1 for line in lines if CLOSING_PROTOCOL in line and "protocol error" in line)
    problems = []
    for i, line in enumerate(lines):
        if line.startswith("Traceback") or " ERROR " in line or " CRITICAL " in line:
            if problems and i <= problems[-1][0] + 1:  # the traceback of the line before
                continue
            problems.append((i, "\n".join(lines[max(0, i - 1): i + 25])))
    return closing, [p for _, p in problems]
