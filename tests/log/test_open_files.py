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
    # a segment being appended to holds its file (a region in flight would be read into memory)
    writing = files[0].get()
    assert all(lazy.is_open for lazy in files)
    fresh = LazyFile(tmp_path / "fresh.index", FLAGS)
    with no_descriptors_left():
        created = SegmentFile(tmp_path / "new.log", FLAGS)  # a roll: the retry succeeds
        assert fresh.get().fd >= 0
    assert not any(lazy.is_open for lazy in files[1:])  # the idle ones were let go
    assert files[0].is_open and writing.pread(6, 0) == b"record"  # the one in use was not
    # the files let go reopen on their next use
    assert files[3].get().pread(15, 0) == b"record batch 3"
    created.close()
    fresh.release(close=True)


def test_regions_in_flight_are_read_into_memory_when_nothing_is_idle(files, tmp_path):
    """A Fetch response over many partitions holds one file per partition until it is sent."""
    regions = [FileRegion(lazy.get(), 7, 7) for lazy in files]
    with no_descriptors_left():
        created = SegmentFile(tmp_path / "new.log", FLAGS)
    assert created.fd >= 0
    assert [region.file for region in regions] == [None] * len(files)
    assert not any(lazy.is_open for lazy in files)
    assert [bytes(region) for region in regions] == [b"batch %d" % i for i in range(len(files))]
    created.close()


def test_open_fails_when_nothing_can_be_let_go(files, tmp_path):
    writing = [lazy.get() for lazy in files]  # every file in use, no region to read instead
    with no_descriptors_left():
        with pytest.raises(OSError) as refused:
            SegmentFile(tmp_path / "new.log", FLAGS)
        assert refused.value.errno == errno.EMFILE
        assert "Too many open files" in str(refused.value)
    assert all(lazy.is_open for lazy in files)  # nothing in use was closed
    assert [file.pread(1, 0) for file in writing] == [b"r"] * len(files)
    assert not (tmp_path / "new.log").exists()
