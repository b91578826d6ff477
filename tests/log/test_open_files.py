"""Out of descriptors, an open through the LRU of segment files closes its idle files and
retries once: a broker whose connections took the descriptors degrades instead of failing.

The process's soft RLIMIT_NOFILE is lowered and the rest filled with /dev/null until EMFILE,
so the exhaustion is real; both are undone at the end.
"""

from __future__ import annotations

import contextlib
import errno
import os
import resource

import pytest

from pykafkad.log.region import OPEN_FILES, FileRegion, LazyFile, SegmentFile

FLAGS = os.O_RDWR | os.O_CREAT | os.O_APPEND


@contextlib.contextmanager
def no_descriptors_left():
    """Every descriptor the (lowered) limit allows is in use."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    fillers: list[int] = []
    highest = max(int(fd) for fd in os.listdir("/proc/self/fd"))
    resource.setrlimit(resource.RLIMIT_NOFILE, (highest + 32, hard))
    try:
        while True:
            try:
                fillers.append(os.open(os.devnull, os.O_RDONLY))
            except OSError as e:
                assert e.errno == errno.EMFILE
                break
        yield
    finally:
        for fd in fillers:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.setattr(OPEN_FILES, "capacity", 64)
    lazies = []
    for i in range(8):
        path = tmp_path / f"{i:020d}.log"
        path.write_bytes(b"record batch %d" % i)
        lazy = LazyFile(path, FLAGS)
        lazy.get()
        lazies.append(lazy)
    yield lazies
    for lazy in lazies:
        lazy.release(close=True)


def test_open_out_of_descriptors_closes_idle_files_and_retries(files, tmp_path):
    busy = FileRegion(files[0].get(), 0, 5)  # a Fetch response in flight holds its file
    assert all(lazy.is_open for lazy in files)
    fresh = LazyFile(tmp_path / "fresh.index", FLAGS)
    with no_descriptors_left():
        created = SegmentFile(tmp_path / "new.log", FLAGS)  # a roll: the retry succeeds
        assert fresh.get().fd >= 0
    assert not any(lazy.is_open for lazy in files[1:])  # the idle ones were let go
    assert files[0].is_open and bytes(busy) == b"recor"  # the busy one was not
    # the files let go reopen on their next use
    assert files[3].get().pread(15, 0) == b"record batch 3"
    created.close()
    fresh.release(close=True)


def test_open_fails_when_nothing_idle_is_left(files, tmp_path):
    busy = [FileRegion(lazy.get(), 0, 1) for lazy in files]  # every file in use
    with no_descriptors_left():
        with pytest.raises(OSError) as refused:
            SegmentFile(tmp_path / "new.log", FLAGS)
        assert refused.value.errno == errno.EMFILE
        assert "Too many open files" in str(refused.value)
    assert all(lazy.is_open for lazy in files)  # nothing in use was closed
    assert [bytes(region) for region in busy] == [b"r"] * len(files)
    assert not (tmp_path / "new.log").exists()
