"""A small tmpfs that tests fill up, to run the broker out of disk space for real."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

#: small enough to fill in a blink, big enough for a broker with a few partitions
TMPFS_SIZE = "6m"


@pytest.fixture
def small_disk(tmp_path):
    """A tmpfs of TMPFS_SIZE at tmp_path/disk (mounting needs root, as in CI)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={TMPFS_SIZE}", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        # CI runs as root, where mounting works: there a refusal is a failure, never a skip
        if os.environ.get("CI"):
            pytest.fail(f"cannot mount a tmpfs to fill up: {done.stderr.strip()}")
        pytest.skip(f"cannot mount a tmpfs to fill up (needs root): {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path) -> Path:
    """Writes a filler file until the tmpfs is full; deleting it frees the space."""
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError:
            pass
    return filler
