from __future__ import annotations

import os

import pytest

from pykafkad.log.errors import (
    CorruptRecordError,
    OffsetOutOfRangeError,
    RecordBatchTooLargeError,
    RecordTooLargeError,
)
from pykafkad.log.region import FileRegion
from tests.log.batches import make_batch, parse_batches


def read_all(log, offset=0, max_bytes=1 << 30, **kw):
    result = log.read(offset, max_bytes, **kw)
    data = b"".join(bytes(r) for r in result.regions)
    assert len(data) == result.size == sum(len(r) for r in result.regions)
    return parse_batches(data)


def test_append_read_round_trip_patches_offsets_and_epoch(open_log):
    log = open_log()
    produced = [make_batch(3), make_batch(2), make_batch(5)]
    infos = [log.append(b, 7) for b in produced]
    assert [(i.base_offset, i.last_offset) for i in infos] == [(0, 2), (3, 4), (5, 9)]
    assert all(i.log_append_time == -1 and i.log_start_offset == 0 for i in infos)
    assert [i.record_count for i in infos] == [3, 2, 5]
    assert log.log_end_offset == log.high_watermark == 10

    batches = read_all(log)
    assert [b.base_offset for b in batches] == [0, 3, 5]
    assert all(b.leader_epoch == 7 and b.crc_ok for b in batches)
    # Only baseOffset and partitionLeaderEpoch changed: the producer's bytes from the CRC on
    # are stored as sent.
    assert [b.body() for b in batches] == [p[17:] for p in produced]


def test_append_several_batches_in_one_call(open_log):
    log = open_log()
    data = make_batch(2) + make_batch(4) + make_batch(1)
    info = log.append(memoryview(data), 0)
    assert (info.base_offset, info.last_offset, info.record_count) == (0, 6, 7)
    assert [b.base_offset for b in read_all(log)] == [0, 2, 6]


def test_empty_append_is_a_no_op(open_log):
    log = open_log()
    info = log.append(b"", 0)
    assert info.base_offset == -1 and log.log_end_offset == 0


def test_read_mid_batch_returns_containing_batch(open_log):
    log = open_log()
    for n in (5, 5, 5):
        log.append(make_batch(n), 0)
    for offset, expected in [(0, 0), (3, 0), (4, 0), (5, 5), (7, 5), (14, 10)]:
        batches = read_all(log, offset)
        assert batches[0].base_offset == expected


def test_read_bounds(open_log):
    log = open_log()
    log.append(make_batch(4), 0)
    assert log.read(4, 1000) == ([], 0)
    with pytest.raises(OffsetOutOfRangeError) as e:
        log.read(5, 1000)
    assert e.value.code == 1
    with pytest.raises(OffsetOutOfRangeError):
        log.read(-1, 1000)


def test_max_bytes_whole_batches_and_kip74(open_log):
    log = open_log()
    sizes = []
    for i in range(5):
        b = make_batch(2, pad=10 * (i + 1))
        sizes.append(len(b))
        log.append(b, 0)
    # Exactly two batches fit.
    assert [b.base_offset for b in read_all(log, 0, sizes[0] + sizes[1])] == [0, 2]
    # One byte short of two: only the first.
    assert [b.base_offset for b in read_all(log, 0, sizes[0] + sizes[1] - 1)] == [0]
    # KIP-74: the first batch comes whole even when larger than max_bytes ...
    assert [b.base_offset for b in read_all(log, 2, 10)] == [2]
    assert [b.base_offset for b in read_all(log, 2, 0)] == [2]
    # ... unless the caller has already filled its response.
    assert log.read(2, 10, min_one_batch=False) == ([], 0)


def test_max_offset_excludes_batches_at_or_after_it(open_log):
    log = open_log()
    for _ in range(4):
        log.append(make_batch(3), 0)
    assert [b.base_offset for b in read_all(log, 0, max_offset=6)] == [0, 3]
    assert [b.base_offset for b in read_all(log, 4, max_offset=9)] == [3, 6]
    assert log.read(6, 1 << 20, max_offset=6) == ([], 0)
    # A limit inside a batch excludes that batch (Kafka bounds by the batch's position).
    assert [b.base_offset for b in read_all(log, 0, max_offset=7)] == [0, 3]


def test_read_spans_segments(open_log):
    log = open_log(segment_bytes=300)
    for _ in range(12):
        log.append(make_batch(2, pad=20), 0)
    assert len(log.segments) > 3
    result = log.read(0, 1 << 20)
    assert len(result.regions) == len(log.segments)
    batches = read_all(log)
    assert [b.base_offset for b in batches] == list(range(0, 24, 2))
    # The byte limit still cuts at a batch boundary across segments.
    size = len(make_batch(2, pad=20))
    assert len(read_all(log, 0, size * 5 + 3)) == 5


def test_log_append_time_sets_attribute_timestamp_and_crc(open_log, clock):
    log = open_log(message_timestamp_type="LogAppendTime")
    produced = make_batch(3, timestamp=5)
    info = log.append(produced, 0, now_ms=123_456)
    assert info.log_append_time == 123_456
    assert info.max_timestamp == 123_456
    (batch,) = read_all(log)
    assert batch.attributes & 0x08
    assert batch.max_timestamp == 123_456
    assert batch.base_timestamp == 5
    assert batch.crc_ok
    assert batch.crc != parse_batches(produced)[0].crc


def test_create_time_keeps_producer_bytes(open_log):
    log = open_log()
    produced = make_batch(3, timestamps=[10, 30, 20])
    info = log.append(produced, 0)
    assert info.log_append_time == -1
    assert info.max_timestamp == 30
    assert read_all(log)[0].data[17:] == produced[17:]


def test_append_rejects_oversized_and_corrupt_input(open_log):
    log = open_log(max_message_bytes=200, segment_bytes=1000)
    with pytest.raises(RecordTooLargeError) as e:
        log.append(make_batch(2, pad=300), 0)
    assert e.value.code == 10
    with pytest.raises(RecordBatchTooLargeError) as e:
        log.append(make_batch(2) * 20, 0)
    assert e.value.code == 18
    good = make_batch(1)
    with pytest.raises(CorruptRecordError):
        log.append(good + good[:30], 0)
    bad_magic = bytearray(good)
    bad_magic[16] = 1
    with pytest.raises(CorruptRecordError):
        log.append(bytes(bad_magic), 0)
    assert log.log_end_offset == 0
    assert log.segments[0].size == 0


def test_input_buffer_is_not_modified(open_log):
    log = open_log()
    produced = bytearray(make_batch(2))
    before = bytes(produced)
    log.append(produced, 5)
    log.append(produced, 5)
    assert bytes(produced) == before


def test_file_region_reads_and_sendfile(open_log, tmp_path):
    log = open_log()
    log.append(make_batch(3), 0)
    (region,) = log.read(0, 1 << 20).regions
    assert isinstance(region, FileRegion)
    assert len(region) == region.length == log.segments[0].size
    out = tmp_path / "out"
    with open(out, "wb") as f:
        sent = os.sendfile(f.fileno(), region.fileno(), region.offset, region.length)
    assert sent == len(region)
    assert out.read_bytes() == bytes(region)


def test_regions_survive_segment_deletion(open_log, clock):
    log = open_log(segment_bytes=200, retention_ms=1000)
    for _ in range(4):
        log.append(make_batch(2, pad=40, timestamp=clock.now), 0)
    regions = log.read(0, 1 << 20).regions
    expected = [bytes(r) for r in regions]
    first_path = log.segments[0].log_path
    clock.advance(10_000)
    assert log.apply_retention() == 4
    assert not first_path.exists()
    assert [bytes(r) for r in regions] == expected
