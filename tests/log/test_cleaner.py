"""Log compaction on PartitionLog directly (fake clock, tmp_path): Kafka's cleaner semantics."""

from __future__ import annotations

from itertools import pairwise

import pytest

from pykafkad.log.cleaner import CLEANER_OFFSET_CHECKPOINT, LogCleaner, log_to_clean
from pykafkad.log.config import LogConfig
from pykafkad.log.manager import LogManager
from pykafkad.log.partition import PartitionLog
from wire.records import codecs
from wire.records.batch import build_batch, compute_crc, decode_records, iter_batch_headers
from wire.records.control import ABORT, COMMIT, build_control_batch
from wire.records.header import DELETE_HORIZON_FLAG, BatchHeader

HOUR = 3_600_000
KEY = ("t", 0)


# -- helpers (also used by test_cleaner_recovery) -----------------------------------------------


def keyed_batch(records, *, timestamp: int, compression: int = 0, **kw) -> bytes:
    """``records``: [(key, value)]; record i gets ``timestamp + i``."""
    return build_batch(
        [(k, v, [], timestamp + i) for i, (k, v) in enumerate(records)],
        compression=compression,
        **kw,
    )


def produce(log: PartitionLog, recs, *, timestamp: int, **kw) -> list[tuple[int, bytes, bytes]]:
    """Appends one batch; returns its records as (offset, key, value)."""
    info = log.append(keyed_batch(recs, timestamp=timestamp, **kw), 0)
    return [(info.base_offset + i, k, v) for i, (k, v) in enumerate(recs)]


def produce_rounds(log: PartitionLog, clock, rounds: int, keys: int, *, per_batch: int = 1):
    """``rounds`` values for each of ``keys`` keys, ``per_batch`` records a batch."""
    appended = []
    pending = []
    for r in range(rounds):
        for k in range(keys):
            pending.append((b"key-%d" % k, b"value-%d-%d" % (r, k)))
            if len(pending) == per_batch:
                appended += produce(log, pending, timestamp=clock.now)
                clock.advance(len(pending))
                pending = []
    if pending:
        appended += produce(log, pending, timestamp=clock.now)
    return appended


def read_batches(log: PartitionLog, start: int | None = None) -> list[tuple[BatchHeader, bytes]]:
    data = log.read(log.log_start_offset if start is None else start, 1 << 30).to_bytes()
    out = []
    for pos, header in iter_batch_headers(data, strict=True):
        assert compute_crc(data, pos, header.size) == header.crc, "bad CRC"
        out.append((header, data[pos : pos + header.size]))
    return out


def read_records(log: PartitionLog, start: int | None = None):
    """(offset, key, value) of every record from ``start``, checking offsets on the way."""
    out = []
    prev = -1
    for header, data in read_batches(log, start):
        assert header.base_offset > prev
        recs = decode_records(data)
        assert header.record_count == len(recs)
        for r in recs:
            assert header.base_offset <= r.offset <= header.last_offset
            assert r.offset > prev
            prev = r.offset
            if not header.is_control:
                out.append((r.offset, r.key, r.value))
        prev = header.last_offset
    return out


def newest_per_key(appended):
    newest = {}
    for offset, key, value in appended:
        newest[key] = (offset, key, value)
    return sorted(newest.values())


def compacted_log(open_log, **overrides) -> PartitionLog:
    config = {"cleanup_policy": "compact", "segment_bytes": 1024, "index_interval_bytes": 128}
    config.update(overrides)
    return open_log(**config)


# -- the newest value per key -------------------------------------------------------------------


def test_keeps_only_the_newest_value_per_key_with_original_offsets(open_log, clock):
    log = compacted_log(open_log)
    appended = produce_rounds(log, clock, rounds=20, keys=8)
    log.roll()
    leo = log.log_end_offset
    before = len(log.segments)
    assert before > 5
    result = LogCleaner(None).clean(KEY, log, clock.now)  # a first clean: dirty ratio 1.0
    assert result is not None and result.first_dirty_offset == 0 and result.end_offset == leo
    assert read_records(log) == newest_per_key(appended)
    assert (log.log_start_offset, log.log_end_offset) == (0, leo)
    # groups are sized before cleaning (as Kafka's): full segments are cleaned one by one...
    assert len(log.segments) == before
    assert log.segments[0].base_offset == 0
    # ...and the next cleaning merges what is left of them
    appended += produce(log, [(b"key-0", b"new")], timestamp=clock.now)
    assert appended[-1][0] == leo  # appends go on at the same log end offset
    log.roll()
    assert LogCleaner(None).clean(KEY, log, clock.now, force=True) is not None
    assert read_records(log) == newest_per_key(appended)
    assert len(log.segments) == 2
    assert [s.base_offset for s in log.segments] == [0, leo + 1]


def test_active_segment_is_never_cleaned(open_log, clock):
    log = compacted_log(open_log, segment_bytes=1 << 20)
    appended = produce_rounds(log, clock, rounds=5, keys=3)
    assert len(log.segments) == 1
    assert LogCleaner(None).clean(KEY, log, clock.now, force=True) is None
    assert read_records(log) == appended
    log.roll()
    more = produce_rounds(log, clock, rounds=2, keys=3)
    assert LogCleaner(None).clean(KEY, log, clock.now) is not None
    # the old segment keeps its newest values; the new active one is untouched
    assert read_records(log) == newest_per_key(appended) + more


def test_rewritten_batch_keeps_base_offset_and_last_offset_delta(open_log, clock):
    log = compacted_log(open_log, segment_bytes=1 << 20)
    t = clock.now
    produce(log, [(b"a", b"1"), (b"b", b"1"), (b"c", b"1")], timestamp=t)  # 0-2
    produce(log, [(b"a", b"2"), (b"c", b"2")], timestamp=t + 10)  # 3-4
    kept_as_is = keyed_batch([(b"d", b"1")], timestamp=t + 20)
    log.append(kept_as_is, 0)  # 5
    log.roll()
    original = [data for _, data in read_batches(log)]
    LogCleaner(None).clean(KEY, log, clock.now)
    got = read_batches(log)
    assert [(h.base_offset, h.last_offset_delta, h.record_count) for h, _ in got] == [
        (0, 2, 1),
        (3, 1, 2),
        (5, 0, 1),
    ]
    first = decode_records(got[0][1])
    assert [(r.offset, r.key, r.value, r.timestamp) for r in first] == [(1, b"b", b"1", t + 1)]
    assert got[0][0].base_timestamp == t + 1  # the first retained record's, as Kafka rebuilds
    # batches that lose nothing are copied byte for byte (leader epoch included)
    assert got[1][1] == original[1] and got[2][1] == original[2]


def test_fetch_from_any_offset_returns_the_next_surviving_batch(open_log, clock):
    log = compacted_log(open_log, segment_bytes=600)
    appended = produce_rounds(log, clock, rounds=12, keys=5, per_batch=3)
    log.roll()
    leo = log.log_end_offset
    LogCleaner(None).clean(KEY, log, clock.now)
    survivors = read_records(log)
    assert survivors == newest_per_key(appended)
    for fetch in range(leo):
        got = read_batches(log, fetch)
        assert got, fetch
        first = got[0][0]
        # the first batch is the one holding the next surviving offset at or above fetch
        assert first.last_offset >= fetch
        expected = [r for r in survivors if r[0] >= fetch]
        assert [r for r in read_records(log, fetch) if r[0] >= fetch] == expected
    assert log.read(leo, 1 << 20).size == 0
    # a consumer's walk: one batch per fetch, next offset = lastOffset + 1
    walked = []
    offset = 0
    while offset < leo:
        result = log.read(offset, 1)
        ((header, data),) = read_batches_from(result.to_bytes())
        walked += [(r.offset, r.key, r.value) for r in decode_records(data) if r.offset >= offset]
        offset = header.last_offset + 1
    assert walked == survivors


def read_batches_from(data: bytes):
    return [(h, data[p : p + h.size]) for p, h in iter_batch_headers(data, strict=True)]


def test_a_segment_that_loses_everything_stays_as_an_empty_gap(open_log, clock):
    probe = keyed_batch([(b"key-0", b"value-0-0")], timestamp=clock.now)
    log = compacted_log(open_log, segment_bytes=len(probe) * 4)
    appended = produce_rounds(log, clock, rounds=3, keys=4)
    log.roll()
    bases = [s.base_offset for s in log.segments]
    assert bases == [0, 4, 8, 12]
    LogCleaner(None).clean(KEY, log, clock.now)
    # each full segment is its own group: the first two are cleaned to nothing
    assert [s.base_offset for s in log.segments] == bases
    assert [s.size for s in log.segments[:2]] == [0, 0]
    assert read_records(log) == newest_per_key(appended) == appended[8:]
    for fetch in range(0, 9):
        assert read_batches(log, fetch)[0][0].base_offset == 8


# -- tombstones ---------------------------------------------------------------------------------


def test_tombstones_are_removed_only_after_delete_retention_ms(open_log, clock):
    log = compacted_log(
        open_log, delete_retention_ms=HOUR, segment_bytes=1 << 20, min_cleanable_dirty_ratio=0.01
    )
    cleaner = LogCleaner(None)
    t = clock.now
    produce(log, [(b"gone", b"v")], timestamp=t)  # 0
    produce(log, [(b"stay", b"v")], timestamp=t + 1)  # 1
    produce(log, [(b"gone", None)], timestamp=t + 2)  # 2: tombstone
    log.roll()
    first_clean = clock.now
    cleaner.clean(KEY, log, first_clean)
    assert read_records(log) == [(1, b"stay", b"v"), (2, b"gone", None)]
    header, data = read_batches(log, 2)[0]
    # Kafka marks the batch: delete-horizon bit, baseTimestamp = the horizon
    assert header.attributes & DELETE_HORIZON_FLAG
    assert header.base_timestamp == first_clean + HOUR
    assert header.max_timestamp == t + 2
    assert [r.timestamp for r in decode_records(data)] == [t + 2]  # the record's own time

    # before the horizon, later cleanings keep it
    clock.advance(HOUR - 1)
    produce(log, [(b"other", b"1")], timestamp=clock.now)  # 3
    log.roll()
    assert cleaner.clean(KEY, log, clock.now) is not None
    assert read_records(log) == [(1, b"stay", b"v"), (2, b"gone", None), (3, b"other", b"1")]
    # the horizon is set once, not moved
    assert read_batches(log, 2)[0][0].base_timestamp == first_clean + HOUR

    clock.advance(1)
    produce(log, [(b"other", b"2")], timestamp=clock.now)  # 4
    log.roll()
    assert cleaner.clean(KEY, log, clock.now) is not None
    assert read_records(log) == [(1, b"stay", b"v"), (4, b"other", b"2")]


def test_tombstone_in_the_dirty_section_removes_older_values(open_log, clock):
    log = compacted_log(open_log, segment_bytes=1 << 20)
    produce(log, [(b"k", b"1"), (b"j", b"1")], timestamp=clock.now)
    log.roll()
    LogCleaner(None).clean(KEY, log, clock.now)
    produce(log, [(b"k", None)], timestamp=clock.now)
    log.roll()
    cleaner = LogCleaner(None)
    cleaner.clean(KEY, log, clock.now)
    assert read_records(log) == [(1, b"j", b"1"), (2, b"k", None)]


# -- codecs and timestamp types -----------------------------------------------------------------


@pytest.mark.parametrize("codec", [codecs.GZIP, codecs.SNAPPY, codecs.LZ4, codecs.ZSTD])
def test_compressed_batches_are_recompressed_with_their_codec(open_log, clock, codec):
    log = compacted_log(open_log, segment_bytes=1 << 20)
    t = clock.now
    big = b"x" * 200
    produce(
        log, [(b"a", big), (b"b", big), (b"c", big), (b"d", big)], timestamp=t, compression=codec
    )
    produce(log, [(b"b", b"2"), (b"d", None)], timestamp=t + 10, compression=codec)
    log.roll()
    LogCleaner(None).clean(KEY, log, clock.now)
    got = read_batches(log)
    assert [(h.base_offset, h.last_offset_delta, h.record_count) for h, _ in got] == [
        (0, 3, 2),
        (4, 1, 2),
    ]
    assert all(h.compression == codec for h, _ in got)
    # the tombstone's batch was rebuilt for its delete horizon, compressed again
    assert got[1][0].attributes & DELETE_HORIZON_FLAG
    assert read_records(log) == [(0, b"a", big), (2, b"c", big), (4, b"b", b"2"), (5, b"d", None)]


def test_log_append_time_batches_keep_their_timestamp(open_log, clock):
    log = compacted_log(open_log, segment_bytes=1 << 20, message_timestamp_type="LogAppendTime")
    appended_at = clock.now
    log.append(keyed_batch([(b"a", b"1"), (b"b", b"1")], timestamp=5), 0)
    clock.advance(100)
    log.append(keyed_batch([(b"a", b"2")], timestamp=6), 0)
    log.roll()
    LogCleaner(None).clean(KEY, log, clock.now)
    header, data = read_batches(log)[0]
    assert header.is_log_append_time and header.max_timestamp == appended_at
    assert [(r.offset, r.key, r.timestamp) for r in decode_records(data)] == [
        (1, b"b", appended_at)
    ]


# -- producers and transactions -----------------------------------------------------------------


def _produce_idempotent(log, recs, pid, seq, *, timestamp, epoch=0, transactional=False):
    data = keyed_batch(
        recs,
        timestamp=timestamp,
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=seq,
        is_transactional=transactional,
    )
    return log.append_produced(data, BatchHeader(data), 0)


def test_last_batch_of_an_active_producer_is_kept_empty(open_log, clock):
    log = compacted_log(open_log, segment_bytes=1 << 20)
    t = clock.now
    _produce_idempotent(log, [(b"a", b"1"), (b"b", b"1")], 42, 0, timestamp=t)  # 0-1
    _produce_idempotent(log, [(b"c", b"1"), (b"d", b"1")], 42, 2, timestamp=t)  # 2-3
    produce(log, [(b"a", b"2"), (b"b", b"2"), (b"c", b"2"), (b"d", b"2")], timestamp=t)  # 4-7
    log.roll()
    cleaner = LogCleaner(None)
    cleaner.clean(KEY, log, clock.now)
    got = read_batches(log)
    empty = got[0][0]
    # the producer's last batch keeps its offsets and sequence numbers, without records
    assert (empty.base_offset, empty.last_offset_delta, empty.record_count) == (2, 1, 0)
    assert (empty.producer_id, empty.producer_epoch, empty.base_sequence) == (42, 0, 2)
    assert empty.base_timestamp == -1 and empty.max_timestamp == t + 1
    assert read_records(log) == [(4, b"a", b"2"), (5, b"b", b"2"), (6, b"c", b"2"), (7, b"d", b"2")]
    # the producer can go on where it was (its state still knows sequence 3)
    assert _produce_idempotent(log, [(b"e", b"1")], 42, 4, timestamp=t).base_offset == 8

    # once the producer expired, its empty batch goes at the next cleaning
    clock.advance(HOUR)
    log.remove_expired_producers(clock.now, HOUR)
    produce(log, [(b"f", b"1")], timestamp=clock.now)
    log.roll()
    assert 42 not in log.producer_state.producers
    cleaner.clean(KEY, log, clock.now, force=True)
    assert [h.base_offset for h, _ in read_batches(log)] == [4, 8, 9]


def test_aborted_transactions_are_removed_and_markers_expire(open_log, clock):
    log = compacted_log(
        open_log, segment_bytes=1 << 20, delete_retention_ms=HOUR, min_cleanable_dirty_ratio=0.01
    )
    cleaner = LogCleaner(None)
    t = clock.now
    pid = 7

    def marker(kind):
        batch = build_control_batch(kind, pid, 0, 0, 0, 0, clock.now)
        return log.append_marker(batch, kind, pid, 0, 0, 0).base_offset

    _produce_idempotent(log, [(b"a", b"aborted")], pid, 0, timestamp=t, transactional=True)  # 0
    assert marker(ABORT) == 1
    produce(log, [(b"b", b"x")], timestamp=t)  # 2
    _produce_idempotent(log, [(b"a", b"committed")], pid, 1, timestamp=t, transactional=True)
    assert marker(COMMIT) == 4
    produce(log, [(b"c", b"x")], timestamp=t)  # 5
    log.roll()
    assert [a.last_offset for a in log.aborted_transactions(0, 6)] == [1]

    cleaner.clean(KEY, log, clock.now)
    batches = read_batches(log)
    assert [(h.base_offset, h.is_control) for h, _ in batches] == [
        (1, True),
        (2, False),
        (3, False),
        (4, True),
        (5, False),
    ]
    assert read_records(log) == [(2, b"b", b"x"), (3, b"a", b"committed"), (5, b"c", b"x")]
    # the abort marker stays indexed while records of its transaction were just removed
    assert [a.last_offset for a in log.aborted_transactions(0, 6)] == [1]

    # next round: the marker's transaction has no record left: it gets a delete horizon
    produce(log, [(b"d", b"x")], timestamp=clock.now)
    log.roll()
    horizon = clock.now + HOUR
    cleaner.clean(KEY, log, clock.now)
    abort = read_batches(log)[0][0]
    assert abort.is_control and abort.attributes & DELETE_HORIZON_FLAG
    assert abort.base_timestamp == horizon
    assert log.aborted_transactions(0, 10) == []

    # past the horizon the marker goes; the commit marker stays (its record is still there)
    clock.advance(HOUR)
    produce(log, [(b"e", b"x")], timestamp=clock.now)
    log.roll()
    cleaner.clean(KEY, log, clock.now)
    assert [(h.base_offset, h.is_control) for h, _ in read_batches(log)] == [
        (2, False),
        (3, False),
        (4, True),
        (5, False),
        (6, False),
        (7, False),
    ]


# -- when to clean ------------------------------------------------------------------------------


def test_min_compaction_lag_keeps_young_segments_dirty(open_log, clock):
    log = compacted_log(open_log, min_compaction_lag_ms=HOUR)
    appended = produce_rounds(log, clock, rounds=4, keys=4)
    log.roll()
    cleaner = LogCleaner(None)
    assert cleaner.clean(KEY, log, clock.now, force=True) is None
    assert read_records(log) == appended
    clock.advance(HOUR)
    assert cleaner.clean(KEY, log, clock.now) is not None
    assert read_records(log) == newest_per_key(appended)


def test_min_cleanable_dirty_ratio_and_max_compaction_lag(open_log, clock):
    log = compacted_log(open_log, segment_bytes=1 << 20, max_compaction_lag_ms=HOUR)
    cleaner = LogCleaner(None)
    for i in range(20):
        produce(log, [(b"key-%d" % i, b"v" * 40)], timestamp=clock.now)
    log.roll()
    assert cleaner.clean(KEY, log, clock.now) is not None  # all dirty: ratio 1.0
    assert cleaner.checkpoints[KEY] == 20
    produce(log, [(b"key-0", b"w" * 40)], timestamp=clock.now)
    log.roll()
    ltc = log_to_clean(log, cleaner.checkpoints[KEY], clock.now)
    assert ltc.first_dirty_offset == 20 and ltc.first_uncleanable_offset == 21
    assert 0 < ltc.cleanable_ratio < 0.1 and not ltc.need_compaction_now
    assert cleaner.clean(KEY, log, clock.now) is None  # below min.cleanable.dirty.ratio
    clock.advance(HOUR + 1)
    # the dirty segment's first batch is now older than max.compaction.lag.ms
    assert log_to_clean(log, cleaner.checkpoints[KEY], clock.now).need_compaction_now
    assert cleaner.clean(KEY, log, clock.now) is not None
    assert read_records(log)[0][1] == b"key-1"
    assert cleaner.checkpoints[KEY] == 21


def test_cleaned_groups_respect_segment_bytes(open_log, clock):
    log = compacted_log(open_log, segment_bytes=700)
    appended = produce_rounds(log, clock, rounds=3, keys=30)
    log.roll()
    cleaner = LogCleaner(None)
    cleaner.clean(KEY, log, clock.now)
    assert read_records(log) == newest_per_key(appended)
    assert all(s.size <= 700 for s in log.segments)
    appended += produce(log, [(b"key-0", b"again")], timestamp=clock.now)
    log.roll()
    cleaner.clean(KEY, log, clock.now, force=True)
    assert read_records(log) == newest_per_key(appended)
    cleaned = log.segments[:-1]
    assert len(cleaned) >= 3 and all(0 < s.size <= 700 for s in cleaned)
    # merging stops where the next segment would not fit
    assert all(a.size + b.size > 700 for a, b in pairwise(cleaned))


def test_config_from_topic_configs():
    config = LogConfig.from_topic_configs(
        {
            "cleanup.policy": ["compact", "delete"],
            "delete.retention.ms": "1000",
            "min.compaction.lag.ms": 5,
            "max.compaction.lag.ms": "60000",
            "min.cleanable.dirty.ratio": "0.25",
        }
    )
    assert config.compact_enabled and config.delete_enabled
    assert config.delete_retention_ms == 1000 and config.min_compaction_lag_ms == 5
    assert config.max_compaction_lag_ms == 60000 and config.min_cleanable_dirty_ratio == 0.25
    default = LogConfig()
    assert (default.delete_retention_ms, default.min_compaction_lag_ms) == (86400000, 0)
    assert default.max_compaction_lag_ms == 2**63 - 1 and default.min_cleanable_dirty_ratio == 0.5


# -- restart and the log manager ----------------------------------------------------------------


def test_restart_after_cleaning(open_log, clock, tmp_path):
    log = compacted_log(open_log, segment_bytes=600)
    appended = produce_rounds(log, clock, rounds=10, keys=6, per_batch=2)
    log.roll()
    LogCleaner(None).clean(KEY, log, clock.now)
    survivors = read_records(log)
    bases = [s.base_offset for s in log.segments]
    leo = log.log_end_offset
    log.close()
    for recover in (False, True):
        log = compacted_log(open_log, segment_bytes=600, recover=recover)
        assert [s.base_offset for s in log.segments] == bases
        assert read_records(log) == survivors == newest_per_key(appended)
        assert log.log_end_offset == leo
        for fetch in range(leo):
            assert read_batches(log, fetch)[0][0].last_offset >= fetch
        log.close()
    log = compacted_log(open_log, segment_bytes=600)
    assert produce(log, [(b"key-1", b"after")], timestamp=clock.now)[0][0] == leo
    names = {p.name for p in log.dir.iterdir()}
    assert not any(n.endswith((".cleaned", ".swap", ".deleted")) for n in names)


def test_log_manager_cleans_compacted_logs_and_checkpoints(tmp_path, clock):
    compact = LogConfig(cleanup_policy="compact", segment_bytes=1 << 20)
    delete = LogConfig(segment_bytes=1 << 20)
    manager = LogManager(tmp_path / "data", clock)
    manager.load_all(lambda t, p: None)
    logs = {
        "c": manager.create("c", 0, compact),
        "d": manager.create("d", 0, delete),
        "cd": manager.create("cd", 0, LogConfig(cleanup_policy="compact,delete")),
    }
    for plog in logs.values():
        for r in range(3):
            produce(plog, [(b"k", b"%d" % r)], timestamp=clock.now)
        plog.roll()
    cleaned = manager.clean_all(clock.now)
    assert sorted(cleaned) == [("c", 0), ("cd", 0)]
    assert [r[0] for r in read_records(logs["c"])] == [2]
    assert [r[0] for r in read_records(logs["d"])] == [0, 1, 2]
    checkpoint = (tmp_path / "data" / CLEANER_OFFSET_CHECKPOINT).read_text().split("\n")
    assert checkpoint[:4] == ["0", "2", "c 0 3", "cd 0 3"]
    assert manager.clean_all(clock.now) == {}  # nothing dirty any more
    manager.delete_topic("cd")
    checkpoint = (tmp_path / "data" / CLEANER_OFFSET_CHECKPOINT).read_text().split("\n")
    assert checkpoint[:3] == ["0", "1", "c 0 3"]
    manager.close()
    # the checkpoint survives a restart: only new data is dirty
    manager = LogManager(tmp_path / "data", clock)
    manager.load_all(lambda t, p: compact if t == "c" else delete)
    assert manager.cleaner.checkpoints == {("c", 0): 3}
    assert manager.clean_all(clock.now, force=True) == {}
    manager.close()


def test_a_log_that_fails_to_clean_is_skipped(open_log, clock, monkeypatch):
    log = compacted_log(open_log)
    appended = produce_rounds(log, clock, rounds=4, keys=4)
    log.roll()
    cleaner = LogCleaner(None)

    def broken(*args, **kwargs):
        raise OSError("disk on fire")

    monkeypatch.setattr("pykafkad.log.cleaner_job._clean_into", broken)
    assert cleaner.clean_all({KEY: log}, clock.now) == {}
    assert KEY in cleaner.uncleanable
    assert read_records(log) == appended
    assert not any(p.name.endswith(".cleaned") for p in log.dir.iterdir())
    monkeypatch.undo()
    assert cleaner.clean_all({KEY: log}, clock.now) == {}  # until the next start


def test_records_without_a_key_go_but_the_rounds_last_batch_stays(open_log, clock):
    log = compacted_log(open_log, segment_bytes=1 << 20)
    t = clock.now
    produce(log, [(None, b"no key")], timestamp=t)  # 0
    produce(log, [(b"a", b"1")], timestamp=t)  # 1
    produce(log, [(None, b"no key"), (None, b"no key")], timestamp=t)  # 2-3
    log.roll()
    LogCleaner(None).clean(KEY, log, clock.now)
    got = [(h.base_offset, h.last_offset_delta, h.record_count) for h, _ in read_batches(log)]
    # Kafka keeps the batch that ends at the round's upper bound, empty, so that the log's
    # last offset before the active segment is not lost
    assert got == [(1, 0, 1), (2, 1, 0)]
    assert read_records(log) == [(1, b"a", b"1")]


def test_a_full_offset_map_cleans_in_several_rounds(open_log, clock):
    log = compacted_log(open_log, segment_bytes=1 << 20)
    appended = produce_rounds(log, clock, rounds=4, keys=6)
    log.roll()
    leo = log.log_end_offset
    cleaner = LogCleaner(None, dedupe_buffer_size=24 * 5)  # room for 4 keys
    assert cleaner.map_entries == 4
    ends = []
    while cleaner.checkpoints.get(KEY, 0) < leo:
        result = cleaner.clean(KEY, log, clock.now, force=True)
        assert result is not None
        ends.append(result.end_offset)
        # never anything but old records at their offsets, the newest ones always there
        got = read_records(log)
        assert set(newest_per_key(appended)) <= set(got) <= set(appended)
    assert ends == [4, 8, 12, 16, 20, 24]
    assert read_records(log) == newest_per_key(appended)


def test_timestamp_lookups_on_a_cleaned_log(open_log, clock):
    log = compacted_log(open_log, segment_bytes=500, index_interval_bytes=64)
    produce_rounds(log, clock, rounds=6, keys=4, per_batch=2)
    log.roll()
    LogCleaner(None).clean(KEY, log, clock.now)
    survivors = []
    for _, data in read_batches(log):
        survivors += [(r.offset, r.timestamp) for r in decode_records(data)]
    assert survivors
    # also the timestamps of removed records: the answer is the next surviving record
    for ts in range(survivors[0][1] - 50, survivors[-1][1] + 2):
        found = log.offset_for_timestamp(ts)
        first = next(((o, t) for o, t in survivors if t >= ts), None)
        assert (found and (found.offset, found.timestamp)) == first, ts
