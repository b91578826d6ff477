"""Producer ids handed out in blocks whose end is made durable before any id of it is used,
so that no id repeats across restarts (Kafka's controller allocates blocks the same way)."""

from __future__ import annotations

import os
from pathlib import Path

BLOCK_SIZE = 1000
FILE_NAME = "pykafkad-producer-id-block"


class ProducerIdManager:
    def __init__(self, data_dir: Path):
        self.path = data_dir / FILE_NAME
        self.next = int(self.path.read_text().strip()) if self.path.exists() else 0
        self.block_end = self.next

    def _reserve(self) -> None:
        self.block_end = self.next + BLOCK_SIZE
        tmp = self.path.with_suffix(".tmp")
        with open(tmp, "w") as f:
            f.write(f"{self.block_end}\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)

    def next_id(self) -> int:
        if self.next >= self.block_end:
            self._reserve()
        pid = self.next
        self.next += 1
        return pid
