"""A follower's log: append_as_follower replays a leader's batches as they are, truncate_to /
truncate_fully_and_start_at cut it back (Kafka's appendAsFollower / truncateTo /
truncateFullyAndStartAt). The oracle is a leader log built by the same appends."""

from __future__ import annotations

import pytest

from compat.kafka_tools import run_tool
from pykafkad.log.errors import (
    CorruptRecordError,
    OffsetsOutOfOrderError,
    UnexpectedAppendOffsetError,
)
from pykafkad.log.partition import PartitionLog
from tests.integration.clients import needs_java
from tests.log.batches import make_batch, parse_batches
from wire.records.control import ABORT, COMMIT, build_control_batch
from wire.records.header import BatchHeader

#: small segments and a dense index: every scenario crosses segment and index boundaries
SMALL = {"segment_bytes": 600, "index_interval_bytes": 100}
TXN_PID, IDEM_PID = 7, 9


def _produce(log: PartitionLog, n: int, epoch: int, **kw) -> int:
    data = make_batch(n, pad=20, **kw)
    return log.append_produced(data, BatchHeader(data), epoch).base_offset


def _marker(log: PartitionLog, kind: int, pid: int, epoch: int) -> int:
    batch = build_control_batch(kind, pid, 0, 3, 0, epoch, 5_000)
    return log.append_marker(batch, kind, pid, 0, 3, epoch).base_offset


def build_leader(log: PartitionLog) -> dict[str, int]:
    """Plain, idempotent and transactional batches over three leader epochs, one committed and
    one aborted transaction and one left open; returns named offsets of interest."""
    at: dict[str, int] = {}
    seq = 0
    for i in range(4):
        _produce(log, 3, 0, timestamp=1_000 + i)
    at["epoch2"] = log.log_end_offset
    for i in range(3):
        _produce(log, 2, 2, producer_id=IDEM_PID, producer_epoch=0, base_sequence=seq,
                 timestamp=2_000 + i)
        seq += 2
    at["txn1"] = log.log_end_offset
    tseq = 0
    for _ in range(2):
        _produce(log, 2, 2, producer_id=TXN_PID, producer_epoch=0, base_sequence=tseq,
                 attributes=0x10, timestamp=3_000)
        tseq += 2
    at["commit"] = _marker(log, COMMIT, TXN_PID, 2)
    at["epoch5"] = log.log_end_offset
    at["txn2"] = log.log_end_offset
    for _ in range(3):
        _produce(log, 2, 5, producer_id=TXN_PID, producer_epoch=0, base_sequence=tseq,
                 attributes=0x10, timestamp=4_000)
        tseq += 2
        _produce(log, 1, 5, timestamp=4_001)
    at["abort"] = _marker(log, ABORT, TXN_PID, 5)
    at["after_abort"] = log.log_end_offset
    for i in range(3):
        _produce(log, 2, 5, timestamp=6_000 + i)
    at["txn3"] = log.log_end_offset
    _produce(log, 2, 5, producer_id=TXN_PID, producer_epoch=0, base_sequence=tseq,
             attributes=0x10, timestamp=7_000)
    _produce(log, 2, 5, timestamp=7_001)
    return at


def batches_of(log: PartitionLog) -> list[bytes]:
    return [b.data for b in parse_batches(log.read(log.log_start_offset, 1 << 30).to_bytes())]


def files(log: PartitionLog, suffixes=(".log", ".index", ".timeindex", ".txnindex")) -> dict:
    """Every segment and index file's bytes and the epoch checkpoint, by name."""
    out = {p.name: p.read_bytes() for p in sorted(log.dir.iterdir()) if p.suffix in suffixes}
    out["leader-epoch-checkpoint"] = (log.dir / "leader-epoch-checkpoint").read_bytes()
    return out


def producers(log: PartitionLog) -> dict:
    return {pid: (e.producer_epoch, e.last_seq, e.last_offset, e.coordinator_epoch,
                  e.current_txn_first_offset)
            for pid, e in log.producer_state.producers.items()}


def state(log: PartitionLog) -> tuple:
    return (log.log_start_offset, log.log_end_offset, log.last_stable_offset,
            log.leader_epochs.entries, producers(log),
            log.aborted_transactions(0, log.log_end_offset))


def close_files(log: PartitionLog) -> dict:
    """The files as a clean shutdown leaves them (final time-index entries written)."""
    log.close()
    return files(log)


@pytest.fixture
def leader(open_log, tmp_path):
    log = open_log(dir=tmp_path / "leader" / "t-0", **SMALL)
    at = build_leader(log)
    assert len(log.segments) >= 4
    return log, at


def test_follower_replaying_each_batch_is_byte_identical(leader, open_log, tmp_path):
    lead, _ = leader
    follower = open_log(dir=tmp_path / "follower" / "t-0", **SMALL)
    for batch in batches_of(lead):
        follower.append_as_follower(batch)
    assert state(follower) == state(lead)
    assert follower.high_watermark == follower.log_end_offset  # not set: follows the log end
    assert close_files(follower) == close_files(lead)


def test_follower_fetch_sized_appends_keep_every_batch(leader, open_log, tmp_path):
    """Several batches per append (as a fetch response brings them): the same batches, the
    same state; only where segments roll may differ (as in Kafka)."""
    lead, _ = leader
    follower = open_log(dir=tmp_path / "follower" / "t-0", **SMALL)
    data = lead.read(0, 1 << 30).to_bytes()
    pos = 0
    while pos < len(data):
        info = follower.append_as_follower(memoryview(data)[pos : pos + 500])
        assert info.size > 0  # a partial trailing batch is left for the next fetch
        pos += info.size
    assert batches_of(follower) == batches_of(lead)
    assert state(follower) == state(lead)


def test_follower_append_checks(open_log):
    log = open_log()
    log.append_as_follower(make_batch(3, base_offset=0, leader_epoch=1))
    with pytest.raises(UnexpectedAppendOffsetError) as e:
        log.append_as_follower(make_batch(2, base_offset=2, leader_epoch=1))
    assert (e.value.first_offset, e.value.last_offset) == (2, 3)
    assert "First offset 2 is less than the next offset 3" in str(e.value)
    bad = bytearray(make_batch(2, base_offset=3, leader_epoch=1))
    bad[-1] ^= 1
    with pytest.raises(CorruptRecordError, match="Record is corrupt"):
        log.append_as_follower(bytes(bad))
    with pytest.raises(OffsetsOutOfOrderError):
        log.append_as_follower(make_batch(2, base_offset=5) + make_batch(2, base_offset=4))
    assert log.log_end_offset == 3  # nothing of a refused append was written
    # a gap (the leader's log was compacted) is kept, offsets and epochs as the leader's
    info = log.append_as_follower(make_batch(2, base_offset=10, leader_epoch=4))
    assert (info.base_offset, info.last_offset, log.log_end_offset) == (10, 11, 12)
    assert log.leader_epochs.entries == [(1, 0), (4, 10)]
    assert [(b.base_offset, b.leader_epoch) for b in parse_batches(log.read(0, 1 << 20)
                                                                   .to_bytes())] == [(0, 1), (10, 4)]
    assert log.append_as_follower(b"").size == 0


def _prefix_log(open_log, tmp_path, below: int) -> PartitionLog:
    """A leader log made of the same appends, stopped before ``below``."""
    log = open_log(dir=tmp_path / "prefix" / "t-0", **SMALL)
    stop = _Stop(below)
    try:
        build_leader(_Bounded(log, stop))
    except _Stop:
        pass
    assert log.log_end_offset == below
    return log


class _Stop(Exception):
    def __init__(self, at: int):
        self.at = at


class _Bounded:
    """A PartitionLog that refuses appends once its log end reaches ``stop.at``."""

    def __init__(self, log: PartitionLog, stop: _Stop):
        self._log, self._stop = log, stop

    def __getattr__(self, name):
        if name in ("append_produced", "append_marker") and self._log.log_end_offset >= self._stop.at:
            raise self._stop
        return getattr(self._log, name)


@pytest.mark.parametrize("where", [
    "mid_segment", "segment_boundary", "in_txn", "before_abort", "after_abort", "open_txn",
])
def test_truncate_to_equals_a_log_that_stopped_there(leader, open_log, tmp_path, where):
    lead, at = leader
    bases = [s.base_offset for s in lead.segments]
    target = {
        "mid_segment": next(b.base_offset for b in parse_batches(lead.read(0, 1 << 30).to_bytes())
                            if b.base_offset > bases[1] and b.base_offset < bases[2]),
        "segment_boundary": bases[2],
        "in_txn": at["txn1"] + 2,
        "before_abort": at["abort"],
        "after_abort": at["after_abort"],
        "open_txn": at["txn3"] + 2,
    }[where]
    expected = _prefix_log(open_log, tmp_path, target)
    lead.update_high_watermark(lead.log_end_offset)
    assert lead.truncate_to(target)
    assert state(lead) == state(expected)
    assert lead.high_watermark == target
    assert lead.recovery_point <= target
    assert all(s.base_offset <= target for s in lead.segments)
    mine = files(lead, (".log", ".index", ".txnindex"))
    if target in bases:  # Kafka keeps the segment that starts at the target, emptied
        assert (mine.pop(f"{target:020d}.log"), mine.pop(f"{target:020d}.index")) == (b"", b"")
    assert mine == files(expected, (".log", ".index", ".txnindex"))
    for s in lead.segments:
        last = s.time_index.last_entry()
        assert last is None or last[1] < target
    # the log goes on from there as a follower, and reopens as it was
    rest = [b for b in batches_of_from(tmp_path, at) if BatchHeader(b).base_offset >= target]
    for batch in rest:
        lead.append_as_follower(batch)
    before = state(lead)
    lead.close()
    reopened = open_log(dir=lead.dir, **SMALL)
    assert state(reopened) == before


def batches_of_from(tmp_path, at) -> list[bytes]:
    """The full leader's batches, built again in another directory."""
    log = PartitionLog.open(tmp_path / "again" / "t-0", _small_config(), lambda: 1_000_000)
    try:
        build_leader(log)
        return batches_of(log)
    finally:
        log.close()


def _small_config():
    from pykafkad.log.config import LogConfig
    return LogConfig(**SMALL)


def test_truncate_then_reopen_keeps_the_cut(leader, open_log):
    lead, at = leader
    lead.truncate_to(at["txn2"] + 2)  # inside an open transaction of epoch 5
    expected = state(lead)
    assert lead.leader_epochs.entries == [(0, 0), (2, at["epoch2"]), (5, at["epoch5"])]
    assert lead.last_stable_offset == at["txn2"]
    lead.close()
    reopened = open_log(dir=lead.dir, **SMALL)
    assert state(reopened) == expected
    assert reopened.end_offset_for_epoch(2) == (2, at["epoch5"])


def test_truncate_epoch_cache(open_log):
    log = open_log()
    log.append_as_follower(make_batch(2, base_offset=0, leader_epoch=1))
    log.append_as_follower(make_batch(2, base_offset=2, leader_epoch=3))
    log.append_as_follower(make_batch(2, base_offset=4, leader_epoch=4))
    log.assign_epoch(6)  # a leader that appended nothing in epoch 6
    assert not log.truncate_to(6)  # at the end: only the epoch cache is trimmed
    assert log.leader_epochs.entries == [(1, 0), (3, 2), (4, 4)]
    assert log.truncate_to(3)
    assert log.leader_epochs.entries == [(1, 0), (3, 2)]
    assert (log.log_end_offset, log.end_offset_for_epoch(3)) == (3, (3, 3))
    with pytest.raises(ValueError):
        log.truncate_to(-1)


def test_truncate_fully_and_start_at(leader):
    lead, _ = leader
    moved = []
    lead.on_log_start_offset_change = moved.append
    lead.update_high_watermark(20)
    lead.truncate_fully_and_start_at(500)
    assert [s.base_offset for s in lead.segments] == [500]
    assert sorted(p.name for p in lead.dir.iterdir()) == [
        f"{500:020d}.index", f"{500:020d}.log", f"{500:020d}.timeindex", "leader-epoch-checkpoint"]
    assert state(lead) == (500, 500, 500, [], {}, [])
    assert (lead.high_watermark, lead.recovery_point, moved) == (500, 500, [lead])
    lead.append_as_follower(make_batch(2, base_offset=500, leader_epoch=9))
    assert (lead.log_end_offset, lead.leader_epochs.entries) == (502, [(9, 500)])


def test_truncate_below_the_first_segment_starts_afresh(open_log):
    log = open_log()
    log.truncate_fully_and_start_at(100)
    log.append_as_follower(make_batch(2, base_offset=100, leader_epoch=1))
    assert log.truncate_to(50)
    assert (log.log_start_offset, log.log_end_offset, len(log.segments)) == (50, 50, 1)


def test_high_watermark_clamped(open_log):
    log = open_log()
    log.append_as_follower(make_batch(5, base_offset=0, leader_epoch=0))
    assert log.update_high_watermark(3) == 3
    assert log.update_high_watermark(99) == 5
    log.delete_records(2)
    assert log.update_high_watermark(0) == 2
    assert log.update_high_watermark(None) == 5


@needs_java
def test_kafka_dump_log_reads_the_follower_log(leader, open_log, tmp_path):
    lead, _ = leader
    follower = open_log(dir=tmp_path / "follower" / "t-0", **SMALL)
    for batch in batches_of(lead):
        follower.append_as_follower(batch)
    follower.close()
    paths = sorted(str(p) for p in follower.dir.iterdir()
                   if p.suffix in (".log", ".index", ".timeindex", ".txnindex"))
    dumped = run_tool("kafka-dump-log", ["--files", ",".join(paths), "--index-sanity-check"])
    assert dumped.returncode == 0, dumped.stderr
    assert "Mismatches" not in dumped.stdout and "isvalid: false" not in dumped.stdout
    for p in paths:
        if p.endswith(".index") or p.endswith(".timeindex"):
            assert (f"{p} passed sanity check." in dumped.stdout
                    or f"{p} is empty." in dumped.stdout), dumped.stdout
    dumped = run_tool("kafka-dump-log", ["--files", ",".join(p for p in paths if p.endswith(
        (".log", ".txnindex"))), "--print-data-log"])
    assert dumped.returncode == 0, dumped.stderr
    out = dumped.stdout
    assert out.count("isvalid: true") == len(batches_of(lead))
    assert "endTxnMarker: ABORT coordinatorEpoch: 3" in out
    assert "endTxnMarker: COMMIT coordinatorEpoch: 3" in out
    assert f"producerId: {TXN_PID}" in out
