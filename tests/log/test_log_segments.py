from __future__ import annotations

import struct

from tests.log.batches import make_batch, parse_batches


def index_entries(path, base):
    data = path.read_bytes()
    assert len(data) % 8 == 0
    return [(base + rel, pos) for rel, pos in struct.iter_unpack(">ii", data)]


def time_index_entries(path, base):
    data = path.read_bytes()
    assert len(data) % 12 == 0
    return [(ts, base + rel) for ts, rel in struct.iter_unpack(">qi", data)]


def test_roll_by_size_uses_kafka_file_names(open_log):
    log = open_log(segment_bytes=500)
    batch = make_batch(3, pad=30)
    for _ in range(10):
        log.append(batch, 0)
    bases = [s.base_offset for s in log.segments]
    assert len(bases) > 2
    assert bases[0] == 0
    for seg in log.segments:
        assert seg.size <= 500
        assert seg.log_path.name == f"{seg.base_offset:020d}.log"
        assert seg.index_path.exists() and seg.time_index_path.exists()
        batches = parse_batches(seg.log_path.read_bytes())
        assert batches[0].base_offset == seg.base_offset
    names = sorted(p.name for p in log.dir.iterdir())
    assert "00000000000000000000.log" in names
    assert f"{bases[1]:020d}.index" in names
    assert log.log_end_offset == 30


def test_roll_by_time_uses_first_batch_timestamp(open_log, clock):
    log = open_log(segment_ms=1000)
    log.append(make_batch(1, timestamp=10_000), 0)
    log.append(make_batch(1, timestamp=10_900), 0)
    assert len(log.segments) == 1
    # The record timestamps, not the wall clock, decide (Kafka's rollingBasedTimestamp).
    clock.advance(1_000_000)
    log.append(make_batch(1, timestamp=10_950), 0)
    assert len(log.segments) == 1
    log.append(make_batch(1, timestamp=11_001), 0)
    assert [s.base_offset for s in log.segments] == [0, 3]


def test_roll_by_time_falls_back_to_creation_time(open_log, clock):
    log = open_log(segment_ms=1000)
    log.append(make_batch(1, timestamp=-1), 0)
    clock.advance(999)
    log.append(make_batch(1, timestamp=-1), 0)
    assert len(log.segments) == 1
    clock.advance(2)
    log.append(make_batch(1, timestamp=-1), 0)
    assert [s.base_offset for s in log.segments] == [0, 2]


def test_roll_when_index_full(open_log):
    log = open_log(index_interval_bytes=1, segment_index_bytes=8 * 3)
    for _ in range(8):
        log.append(make_batch(1), 0)
    assert len(log.segments) > 1
    for seg in log.segments:
        assert len(index_entries(seg.index_path, seg.base_offset)) <= 3


def test_sparse_index_entries_match_batches(open_log):
    log = open_log(index_interval_bytes=300)
    for i in range(30):
        log.append(make_batch(2, pad=i % 7 * 10, timestamp=1000 + i), 0)
    seg = log.segments[0]
    batches = parse_batches(seg.log_path.read_bytes())
    entries = index_entries(seg.index_path, 0)
    assert 3 < len(entries) < 30
    by_pos = {b.position: b for b in batches}
    since = 0
    expected = []
    for b in batches:
        if since > 300:
            expected.append((b.last_offset, b.position))
            since = 0
        since += b.size
    assert entries == expected
    for offset, pos in entries:
        # Kafka's DumpLogSegments check: the batch at the position ends at the entry's offset.
        assert by_pos[pos].last_offset == offset
    log.roll()
    tentries = time_index_entries(seg.time_index_path, 0)
    assert [t for t, _ in tentries] == sorted({t for t, _ in tentries})
    assert tentries[-1] == (1029, 59)  # final entry on roll: the segment's max timestamp


def test_index_lookup_against_brute_force(open_log):
    log = open_log(index_interval_bytes=100, segment_bytes=3000)
    for i in range(60):
        log.append(make_batch(1 + i % 4, pad=i % 5), 0)
    all_batches = parse_batches(log.read(0, 1 << 30).to_bytes())
    for offset in range(log.log_end_offset):
        first = parse_batches(log.read(offset, 1).to_bytes())
        assert len(first) == 1
        want = next(b for b in all_batches if b.last_offset >= offset)
        assert first[0].base_offset == want.base_offset


def test_indexes_rebuilt_when_missing(open_log, tmp_path):
    log = open_log(index_interval_bytes=50, segment_bytes=1500)
    for i in range(40):
        log.append(make_batch(2, timestamp=1000 + i), 0)
    log.close()
    segs = [(s.index_path, s.time_index_path) for s in log.segments]
    saved = [(i.read_bytes(), t.read_bytes()) for i, t in segs]
    assert len(segs) > 1
    for i, _ in segs:
        i.unlink()
    segs[0][1].unlink()
    segs[-1][1].unlink()
    log = open_log(index_interval_bytes=50, segment_bytes=1500)
    assert [(i.read_bytes(), t.read_bytes()) for i, t in segs] == saved
    assert log.log_end_offset == 80
    assert parse_batches(log.read(37, 1).to_bytes())[0].base_offset == 36
    assert log.offset_for_timestamp(1020) == (40, 1020)


def test_corrupt_index_is_rebuilt(open_log):
    log = open_log(index_interval_bytes=50)
    for _ in range(20):
        log.append(make_batch(2), 0)
    log.close()
    seg = log.segments[0]
    good = seg.index_path.read_bytes()
    seg.index_path.write_bytes(struct.pack(">ii", 5, 999_999) + b"\x01\x02\x03")
    log = open_log(index_interval_bytes=50)
    assert seg.index_path.read_bytes() == good
    assert [b.base_offset for b in parse_batches(log.read(11, 1).to_bytes())] == [10]


def test_clean_reopen_keeps_everything(open_log):
    log = open_log(segment_bytes=400, index_interval_bytes=64)
    for i in range(15):
        log.append(make_batch(2, timestamp=500 + i), 3)
    before = log.read(0, 1 << 30).to_bytes()
    leo, bases = log.log_end_offset, [s.base_offset for s in log.segments]
    log.close()
    log = open_log(segment_bytes=400, index_interval_bytes=64)
    assert log.log_end_offset == leo
    assert [s.base_offset for s in log.segments] == bases
    assert log.read(0, 1 << 30).to_bytes() == before
    assert log.max_timestamp() == (28, 514)  # first record carrying it
    info = log.append(make_batch(1), 3)
    assert info.base_offset == leo
