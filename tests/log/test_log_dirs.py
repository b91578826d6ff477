"""A LogManager over several log dirs (JBOD): new partitions go to the dir with the fewest,
a restart finds each log in its dir, a -future copy moved in replaces the current log with
all its records (pykafkad.log.dir_move), and a move cut short leaves its replica in place."""

from __future__ import annotations

from pykafkad.log.config import LogConfig
from pykafkad.log.dir_move import copy_files, future_dir
from pykafkad.log.manager import LogManager
from tests.log.batches import make_batch, parse_batches

CONFIG = LogConfig(segment_bytes=400, index_interval_bytes=64)


def _manager(tmp_path, clock) -> LogManager:
    m = LogManager(tmp_path / "a", clock, [tmp_path / "b"])
    m.load_all(lambda t, p: CONFIG)
    return m


def _base_offsets(plog) -> list[int]:
    return [b.base_offset for b in parse_batches(plog.read(plog.log_start_offset,
                                                           1 << 20).to_bytes())]


def test_new_partitions_go_to_the_dir_with_fewest(tmp_path, clock):
    m = _manager(tmp_path, clock)
    m.prepare("t", range(4), lambda d: None)
    m.create("u", 0, CONFIG)
    assert [m.dir_of("t", p).name for p in range(4)] + [m.dir_of("u", 0).name] \
        == ["a", "b", "a", "b", "a"]
    m.make_dirs()
    m.close()
    again = _manager(tmp_path, clock)
    assert [again.dir_of("t", p).name for p in range(4)] == ["a", "b", "a", "b"]
    again.close()


def test_a_future_copy_replaces_the_log(tmp_path, clock):
    m = _manager(tmp_path, clock)
    plog = m.create("t", 0, CONFIG)
    assert plog.dir.parent.name == "a"
    for _ in range(10):  # several segments
        plog.append(make_batch(3), 0)
    future = future_dir(tmp_path / "b", "t", 0)
    copy_files(plog.dir, future)
    plog.append(make_batch(2), 0)  # after the bulk copy: caught up at the swap
    before = _base_offsets(plog)
    moved = m.swap_in_future("t", 0, future)
    assert moved.dir == tmp_path / "b" / "t-0" and m.get("t", 0) is moved
    assert not (tmp_path / "a" / "t-0").exists() and not future.exists()
    assert _base_offsets(moved) == before and moved.log_end_offset == 32
    moved.append(make_batch(1), 0)
    m.close()
    again = _manager(tmp_path, clock)
    assert again.dir_of("t", 0).name == "b" and again.get("t", 0).log_end_offset == 33
    again.close()


def test_a_move_cut_short_leaves_the_replica_in_place(tmp_path, clock):
    m = _manager(tmp_path, clock)
    plog = m.create("t", 0, CONFIG)
    plog.append(make_batch(3), 0)
    future = future_dir(tmp_path / "b", "t", 0)
    copy_files(plog.dir, future)
    m.close()
    again = _manager(tmp_path, clock)
    assert not future.exists()
    assert again.dir_of("t", 0).name == "a" and again.get("t", 0).log_end_offset == 3
    again.close()
