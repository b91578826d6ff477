"""A full disk never leaves half an append: the batch is in the log whole or not at all.

Real files on a small tmpfs that a filler file fills up (no mocks).  A batch whose bytes do not
fit raises KafkaStorageError and leaves the log as it was; a batch that fits in the segment's
last page while its sparse index entry needs a new page stands whole, its index entry kept in
memory and written once space is back.
"""

from __future__ import annotations

import pytest

from pykafkad.log.errors import KafkaStorageError
from tests import full_disk
from tests.full_disk import fill
from tests.log.batches import make_batch, parse_batches

small_disk = full_disk.small_disk  # the fixture


def test_append_that_does_not_fit_changes_nothing(small_disk, open_log):
    log = open_log(dir=small_disk / "topic-0")
    log.append(make_batch(3), 0)
    size = log.segments[-1].size
    filler = fill(small_disk)
    with pytest.raises(KafkaStorageError, match="No space left on device"):
        log.append(make_batch(1, pad=20000), 0)
    assert (log.log_end_offset, log.segments[-1].size) == (3, size)
    assert (small_disk / "topic-0" / "00000000000000000000.log").stat().st_size == size
    filler.unlink()
    log.append(make_batch(2), 0)
    assert [b.base_offset for b in parse_batches(log.read(0, 1 << 20).to_bytes())] == [0, 3]


def test_index_entry_that_does_not_fit_is_written_later(small_disk, open_log):
    dir = small_disk / "topic-0"
    log = open_log(dir=dir, index_interval_bytes=0)  # an index entry for every batch but the first
    log.append(make_batch(1), 0)  # the .log gets its first page; the .index is still empty
    filler = fill(small_disk)
    log.append(make_batch(1), 0)  # fits the .log's page; its index entry needs a new page
    assert log.log_end_offset == 2
    assert (dir / "00000000000000000000.index").stat().st_size == 0
    filler.unlink()
    log.append(make_batch(1), 0)
    assert (dir / "00000000000000000000.index").stat().st_size == 2 * 8  # both entries, whole
    log.close()
    reopened = open_log(dir=dir, index_interval_bytes=0)
    assert reopened.log_end_offset == 3
    assert [b.base_offset for b in parse_batches(reopened.read(1, 1 << 20).to_bytes())] == [1, 2]
