from __future__ import annotations

import os

import pytest

from tests.log.batches import make_batch, parse_batches


def fill(log, n, size=3, epoch=0, **kw):
    for i in range(n):
        log.append(make_batch(size, timestamp=1000 + i, **kw), epoch)


@pytest.mark.parametrize("recover", [True, False])
def test_torn_tail_is_truncated(open_log, recover):
    log = open_log(index_interval_bytes=100)
    fill(log, 10)
    seg = log.segments[-1]
    path = seg.log_path
    batches = parse_batches(path.read_bytes())
    log.close()
    # Tear the last batch in half and add garbage after it.
    cut = batches[-1].position + batches[-1].size // 2
    with open(path, "r+b") as f:
        f.truncate(cut)
        f.seek(cut)
        f.write(os.urandom(200))
    # Without the recover flag (clean shutdown claimed) the misaligned tail is still found.
    log = open_log(index_interval_bytes=100, recover=recover)
    assert log.log_end_offset == batches[-1].base_offset == 27
    assert path.stat().st_size == batches[-1].position
    assert [b.base_offset for b in parse_batches(log.read(0, 1 << 30).to_bytes())] == list(
        range(0, 27, 3)
    )
    info = log.append(make_batch(2), 0)
    assert info.base_offset == 27
    assert [b.base_offset for b in parse_batches(path.read_bytes())][-2:] == [24, 27]


def test_crc_corruption_truncates_from_the_bad_batch(open_log):
    log = open_log()
    fill(log, 8)
    path = log.segments[-1].log_path
    batches = parse_batches(path.read_bytes())
    log.close()
    with open(path, "r+b") as f:
        f.seek(batches[5].position + 70)  # inside the records, covered by the CRC
        byte = f.read(1)
        f.seek(batches[5].position + 70)
        f.write(bytes([byte[0] ^ 0xFF]))
    log = open_log(recover=True)
    assert log.log_end_offset == 15
    assert path.stat().st_size == batches[5].position


def test_bad_magic_and_zero_fill_are_cut(open_log):
    log = open_log()
    fill(log, 3)
    path = log.segments[-1].log_path
    size = path.stat().st_size
    log.close()
    with open(path, "ab") as f:
        f.write(b"\x00" * 4096)  # what a crash after preallocation/extension can leave
    log = open_log(recover=True)
    assert log.log_end_offset == 9 and path.stat().st_size == size


def test_corrupt_middle_segment_drops_later_segments(open_log):
    log = open_log(segment_bytes=400)
    fill(log, 12)
    segs = log.segments
    assert len(segs) >= 3
    mid = segs[1]
    later = [s.log_path for s in segs[2:]]
    batches = parse_batches(mid.log_path.read_bytes())
    log.close()
    with open(mid.log_path, "r+b") as f:
        f.seek(batches[1].position + 65)
        f.write(b"\xff\xff\xff")
    log = open_log(segment_bytes=400, recover=True, recovery_point=0)
    assert log.log_end_offset == batches[1].base_offset
    assert all(not p.exists() for p in later)
    assert [s.base_offset for s in log.segments] == [segs[0].base_offset, mid.base_offset]
    assert log.append(make_batch(1), 0).base_offset == batches[1].base_offset


def test_recovery_starts_at_recovery_point_segment(open_log):
    log = open_log(segment_bytes=400)
    fill(log, 12)
    segs = log.segments
    first = segs[0]
    batches = parse_batches(first.log_path.read_bytes())
    log.close()
    # Corruption below the recovery point is not looked at (as Kafka: those were flushed).
    with open(first.log_path, "r+b") as f:
        f.seek(batches[0].position + 65)
        f.write(b"\xff\xff\xff")
    log = open_log(segment_bytes=400, recover=True, recovery_point=segs[-1].base_offset)
    assert log.log_end_offset == 36


def test_recovery_rebuilds_indexes_and_epochs(open_log):
    log = open_log(index_interval_bytes=80)
    fill(log, 5, epoch=1)
    fill(log, 5, epoch=4)
    seg = log.segments[-1]
    good_index = seg.index_path.read_bytes()
    log.close()
    seg.index_path.write_bytes(b"garbage!" * 3)
    (log.dir / "leader-epoch-checkpoint").unlink()
    log = open_log(index_interval_bytes=80, recover=True)
    assert seg.index_path.read_bytes() == good_index
    assert log.leader_epochs.entries == [(1, 0), (4, 15)]
    assert log.end_offset_for_epoch(1) == (1, 15)


def test_recovery_truncates_epochs_past_the_log_end(open_log):
    log = open_log()
    fill(log, 3, epoch=0)
    fill(log, 3, epoch=2)
    path = log.segments[-1].log_path
    batches = parse_batches(path.read_bytes())
    log.close()
    with open(path, "r+b") as f:
        f.truncate(batches[3].position + 10)
    log = open_log(recover=True)
    assert log.log_end_offset == 9
    assert log.leader_epochs.entries == [(0, 0)]
    assert (log.dir / "leader-epoch-checkpoint").read_text() == "0\n1\n0 0\n"
