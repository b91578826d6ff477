"""The broker as a separate process, started the way users start it (``python -m pykafkad``)."""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
from pathlib import Path

READY = re.compile(r"pykafkad listening on (\S+):(\d+)")


class BrokerProcess:
    def __init__(self, data_dir: Path, *args: str, preexec_fn=None):
        self.data_dir = data_dir
        self.args = args
        #: runs in the child before pykafkad starts (e.g. to lower a resource limit)
        self.preexec_fn = preexec_fn
        self.proc: subprocess.Popen | None = None
        self.port: int | None = None

    def start(self, timeout: float = 30) -> BrokerProcess:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pykafkad", "--host", "127.0.0.1", "--port", "0",
             "--data-dir", str(self.data_dir), *self.args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"}, preexec_fn=self.preexec_fn,
        )
        line = self.proc.stdout.readline()  # blocks until the ready line (or exit)
        m = READY.search(line)
        if not m:
            self.proc.kill()
            raise RuntimeError(f"broker did not start: {line!r} {self.proc.stderr.read()}")
        self.port = int(m.group(2))
        return self

    @property
    def bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.port}"

    def terminate(self, timeout: float = 30) -> int:
        self.proc.terminate()
        return self.proc.wait(timeout)

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(30)


def open_files_limit(n: int):
    """A preexec_fn that caps the child's open file descriptors (soft and hard) at ``n``."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))
    return limit
