from __future__ import annotations

from pykafkad.log.epoch import LeaderEpochCache
from tests.log.batches import make_batch, parse_batches


def test_epochs_checkpoint_format_and_round_trip(open_log):
    log = open_log()
    log.append(make_batch(3), 0)
    log.append(make_batch(2), 0)
    log.append(make_batch(4), 2)
    log.append(make_batch(1), 5)
    path = log.dir / "leader-epoch-checkpoint"
    assert path.read_text() == "0\n3\n0 0\n2 5\n5 9\n"
    assert [b.leader_epoch for b in parse_batches(log.read(0, 1 << 20).to_bytes())] == [0, 0, 2, 5]
    log.close()
    log = open_log()
    assert log.leader_epochs.entries == [(0, 0), (2, 5), (5, 9)]
    assert log.latest_epoch == 5


def test_end_offset_for_epoch(open_log):
    log = open_log()
    log.append(make_batch(3), 1)
    log.append(make_batch(2), 3)
    log.append(make_batch(4), 4)
    assert log.log_end_offset == 9
    assert log.end_offset_for_epoch(4) == (4, 9)  # latest epoch: the log end offset
    assert log.end_offset_for_epoch(3) == (3, 5)
    assert log.end_offset_for_epoch(2) == (1, 3)  # largest epoch <= 2, ends where 3 starts
    assert log.end_offset_for_epoch(1) == (1, 3)
    assert log.end_offset_for_epoch(0) == (0, 0)  # below the first: Kafka's (requested, first)
    assert log.end_offset_for_epoch(7) == (-1, -1)
    assert log.end_offset_for_epoch(-1) == (-1, -1)


def test_unknown_epochs(open_log):
    log = open_log()
    assert log.end_offset_for_epoch(0) == (-1, -1)
    log.append(make_batch(1), -1)  # no epoch: nothing recorded
    assert log.leader_epochs.entries == []


def test_assign_epoch_on_leadership(open_log):
    log = open_log()
    log.append(make_batch(2), 0)
    log.assign_epoch(1)
    assert log.leader_epochs.entries == [(0, 0), (1, 2)]
    assert log.end_offset_for_epoch(0) == (0, 2)
    log.append(make_batch(2), 1)
    assert log.leader_epochs.entries == [(0, 0), (1, 2)]


def test_cache_drops_conflicting_entries(tmp_path):
    cache = LeaderEpochCache(tmp_path)
    cache.assign(0, 0)
    cache.assign(2, 10)
    cache.assign(3, 20)
    assert not cache.assign(3, 25)  # same epoch, later offset: nothing to do
    cache.assign(4, 15)  # an older start offset removes the entries it contradicts
    assert cache.entries == [(0, 0), (2, 10), (4, 15)]
    cache.truncate_from_start(12)
    assert cache.entries == [(2, 12), (4, 15)]
    cache.truncate_from_start(30)
    assert cache.entries == [(4, 30)]
    assert LeaderEpochCache(tmp_path).entries == [(4, 30)]
