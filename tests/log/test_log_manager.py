from __future__ import annotations

import json

import pytest

from pykafkad.log.config import LogConfig
from pykafkad.log.errors import KafkaStorageError
from pykafkad.log.manager import LogManager, parse_partition_dir
from tests.log.batches import make_batch, parse_batches

CONFIG = LogConfig(segment_bytes=400, index_interval_bytes=64)


@pytest.fixture
def manager(tmp_path, clock):
    managers = []

    def _new(configs_for=lambda t, p: CONFIG):
        m = LogManager(tmp_path / "data", clock)
        m.load_all(configs_for)
        managers.append(m)
        return m

    yield _new
    for m in managers:
        m.close()


def test_parse_partition_dir():
    assert parse_partition_dir("orders-0") == ("orders", 0)
    assert parse_partition_dir("my-topic.v2-13") == ("my-topic.v2", 13)
    assert parse_partition_dir("__consumer_offsets-49") == ("__consumer_offsets", 49)
    assert parse_partition_dir("orders") is None
    assert parse_partition_dir("orders-x") is None
    assert parse_partition_dir("orders-0.abc123-delete") is None


def test_create_get_and_discover(manager, tmp_path):
    m = manager()
    a = m.create("my-topic.v2", 0, CONFIG)
    assert m.create("my-topic.v2", 0, CONFIG) is a
    m.create("my-topic.v2", 1, CONFIG)
    m.create("other", 0, CONFIG)
    a.append(make_batch(3), 0)
    assert a.dir == tmp_path / "data" / "my-topic.v2-0"
    assert m.get("nope", 0) is None
    m.close()
    (tmp_path / "data" / "not-a-partition").mkdir()
    m2 = manager(lambda t, p: None if t == "other" else CONFIG)
    assert m2.logs() == {}  # found, not loaded: a log loads on first use
    assert m2.partitions_of("my-topic.v2") == [0, 1] and not m2.has("other", 0)
    assert m2.get("my-topic.v2", 0).log_end_offset == 3
    assert sorted(m2.logs()) == [("my-topic.v2", 0)]
    assert m2.open_some(10) == 0
    assert sorted(m2.logs()) == [("my-topic.v2", 0), ("my-topic.v2", 1)]
    assert (tmp_path / "data" / "other-0").exists()  # unknown partitions are left alone


def test_close_writes_marker_and_checkpoints(manager, tmp_path):
    m = manager()
    log = m.create("t", 0, CONFIG)
    for _ in range(6):
        log.append(make_batch(3, pad=20), 0)
    m.close()
    data = tmp_path / "data"
    marker = data / ".kafka_cleanshutdown"
    assert json.loads(marker.read_text()) == {"version": "0", "broker_epoch": "-1"}
    assert (data / "recovery-point-offset-checkpoint").read_text() == "0\n1\nt 0 18\n"
    assert (data / "log-start-offset-checkpoint").read_text() == "0\n0\n"
    m2 = manager()
    assert m2.had_clean_shutdown
    assert not marker.exists()  # removed at start: a crash from now on is detected


def test_recovery_only_after_unclean_shutdown(manager, tmp_path):
    m = manager()
    log = m.create("t", 0, CONFIG)
    for _ in range(3):
        log.append(make_batch(2), 0)
    path = log.segments[-1].log_path
    last = parse_batches(path.read_bytes())[-1]
    m.close()

    def corrupt_last_batch():
        with open(path, "r+b") as f:
            f.seek(last.position + 66)
            f.write(b"\xee")

    corrupt_last_batch()
    m2 = manager()  # clean shutdown: no CRC validation, the batch stays
    assert m2.get("t", 0).log_end_offset == 6
    # Simulate a crash: drop the manager without close().
    m2._closed = True
    m3 = manager()
    assert not m3.had_clean_shutdown
    assert m3.get("t", 0).log_end_offset == 4
    assert path.stat().st_size == last.position


def test_restart_preserves_everything(manager, clock):
    m = manager()
    log = m.create("t", 0, CONFIG)
    for i in range(12):
        log.append(make_batch(3, pad=20, timestamp=5000 + i), i // 4)
    log.delete_records(log.segments[1].base_offset + 1)
    state = (
        log.log_start_offset,
        log.log_end_offset,
        log.leader_epochs.entries,
        log.read(log.log_start_offset, 1 << 20).to_bytes(),
        log.max_timestamp(),
        log.offset_for_timestamp(5005),
    )
    assert state[0] == log.segments[0].base_offset + 1
    m.close()
    m2 = manager()
    log2 = m2.get("t", 0)
    assert (
        log2.log_start_offset,
        log2.log_end_offset,
        log2.leader_epochs.entries,
        log2.read(log2.log_start_offset, 1 << 20).to_bytes(),
        log2.max_timestamp(),
        log2.offset_for_timestamp(5005),
    ) == state


def test_log_start_offset_persisted_without_clean_shutdown(manager):
    m = manager()
    log = m.create("t", 0, CONFIG)
    for _ in range(4):
        log.append(make_batch(3), 0)
    log.delete_records(5)
    m._closed = True  # crash
    m2 = manager()
    assert m2.get("t", 0).log_start_offset == 5


def test_delete_topic(manager, tmp_path):
    m = manager()
    m.create("a-b", 0, CONFIG).append(make_batch(1), 0)
    m.create("a-b", 1, CONFIG)
    m.create("a", 0, CONFIG)
    regions = m.get("a-b", 0).read(0, 1000).regions
    assert m.delete_topic("a-b") == 2
    assert m.get("a-b", 0) is None and m.get("a", 0) is not None
    assert sorted(p.name for p in (tmp_path / "data").iterdir() if p.is_dir()) == ["a-0"]
    assert len(bytes(regions[0])) == regions[0].length  # in-flight reads still work


def test_retention_and_config_update(manager, clock):
    m = manager()
    for p in range(2):
        log = m.create("t", p, CONFIG)
        for _ in range(5):
            log.append(make_batch(3, pad=20, timestamp=clock.now), 0)
    clock.advance(10_000)
    assert m.apply_retention() == 0
    m.update_config("t", LogConfig(segment_bytes=400, retention_ms=1000))
    deleted = m.apply_retention()
    assert deleted > 2
    assert all(m.get("t", p).log_start_offset == 15 for p in range(2))


def test_retention_can_leave_the_unlinking_to_the_caller(manager, clock, tmp_path):
    """The broker unlinks retention's segments off the request loop: the pass only renames
    them to .deleted (which a restart removes) and hands them over."""
    m = manager()
    log = m.create("t", 0, LogConfig(segment_bytes=400, retention_ms=1000))
    for _ in range(5):
        log.append(make_batch(3, pad=20, timestamp=clock.now), 0)
    clock.advance(10_000)
    retired = []
    deleted = m.apply_retention(retired=retired)
    assert deleted == len(retired) > 0
    assert log.log_start_offset == 15
    names = sorted(p.name for p in (tmp_path / "data" / "t-0").iterdir())
    doomed = [n for n in names if n.endswith(".deleted")]
    assert {n.split(".")[0] for n in doomed} == {f"{s.base_offset:020d}" for s in retired}
    assert all(s not in log.segments for s in retired)
    for seg in retired:
        seg.delete()
    assert not any(p.name.endswith(".deleted") for p in (tmp_path / "data" / "t-0").iterdir())


def test_flush_all_moves_recovery_points(manager, tmp_path):
    m = manager()
    log = m.create("t", 0, CONFIG)
    log.append(make_batch(2), 0)
    assert log.recovery_point == 0
    m.flush_all()
    assert log.recovery_point == 2
    text = (tmp_path / "data" / "recovery-point-offset-checkpoint").read_text()
    assert text == "0\n1\nt 0 2\n"


def test_logs_open_lazily_and_recover_before_serving(manager, tmp_path):
    """After a crash, a log nobody touched keeps its checkpointed recovery point, and is
    recovered (its torn tail cut) when first used, before anything is read from it."""
    m = manager()
    for p in range(3):
        m.create("t", p, CONFIG).append(make_batch(3), 0)
    m.flush_all()
    for p in range(3):
        m.get("t", p).append(make_batch(2), 0)
    m._closed = True  # crash: no marker, recovery points at 3
    tail = tmp_path / "data" / "t-2" / "00000000000000000000.log"
    size = tail.stat().st_size
    with open(tail, "ab") as f:
        f.write(b"\x00" * 8 + b"\x00\x00\x01\x00torn")

    m2 = manager()
    assert m2.unopened == 3 and m2.logs() == {}
    m2.checkpoint()  # unopened logs keep what the previous run checkpointed
    text = (tmp_path / "data" / "recovery-point-offset-checkpoint").read_text()
    assert text == "0\n3\nt 0 3\nt 1 3\nt 2 3\n"
    log2 = m2.get("t", 2)
    assert tail.stat().st_size == size and log2.log_end_offset == 5
    assert [b.base_offset for b in parse_batches(log2.read(0, 1 << 20).to_bytes())] == [0, 3]
    assert m2.unopened == 2
    m2.close()  # two logs were never recovered: no clean-shutdown marker
    assert not (tmp_path / "data" / ".kafka_cleanshutdown").exists()

    m3 = manager()
    assert not m3.had_clean_shutdown
    assert [m3.get("t", p).log_end_offset for p in range(3)] == [5, 5, 5]
    m3.close()
    assert (tmp_path / "data" / ".kafka_cleanshutdown").exists()


def test_idle_partitions_hold_no_file_descriptors(manager, monkeypatch):
    """Open descriptors stay bounded by the LRU of recently used files, whatever the number of
    partitions and segments."""
    import os

    from pykafkad.log.region import OPEN_FILES

    def open_fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    monkeypatch.setattr(OPEN_FILES, "capacity", 32)
    m = manager()
    before = open_fds()
    n = 3 * OPEN_FILES.capacity
    for p in range(n):
        log = m.create("many", p, CONFIG)
        for _ in range(3):
            log.append(make_batch(3, pad=100), 0)  # several segments, index entries
    assert open_fds() - before <= OPEN_FILES.capacity
    m.close()
    m2 = manager()
    assert m2.unopened == n and open_fds() - before <= 0
    for p in range(n):
        assert m2.get("many", p).read(0, 1 << 20).size > 0
    assert open_fds() - before <= OPEN_FILES.capacity


def _metadata_writer(dir):
    (dir / "partition.metadata").write_text("version: 0\ntopic_id: x\n")


def test_prepared_partitions_get_their_directory_and_log_later(manager, tmp_path):
    """A new topic's partitions are registered without touching the disk; make_dirs (the
    broker's worker thread) makes their directories, the first use their logs."""
    data = tmp_path / "data"
    m = manager()
    m.prepare("new", range(3), _metadata_writer)
    assert m.has("new", 2) and m.partitions_of("new") == [0, 1, 2]
    assert not list(data.glob("new-*")) and m.dirless == 3 and m.unopened == 0
    assert m.make_dirs() == 3 and m.dirless == 0
    assert sorted(p.name for p in data.glob("new-*/*")) == ["partition.metadata"] * 3
    assert m.logs() == {}
    m.prepare("other", [0], _metadata_writer)
    plog = m.get("other", 0)  # the first use makes the directory and the log
    plog.append(make_batch(2), 0)
    assert (data / "other-0" / "partition.metadata").is_file() and plog.log_end_offset == 2
    m.close()  # every directory made; a clean shutdown although "new" was never opened
    assert (data / ".kafka_cleanshutdown").exists()
    m2 = manager()
    assert m2.get("new", 1).log_end_offset == 0 and m2.get("other", 0).log_end_offset == 2


def test_prepared_partition_whose_log_cannot_be_created_is_a_storage_error(manager, tmp_path):
    """Kafka answers KAFKA_STORAGE_ERROR for a partition whose log dir is offline; a log that
    cannot be created yet (here a file where its directory goes) is tried again later."""
    data = tmp_path / "data"
    m = manager()
    m.prepare("t", [0], _metadata_writer)
    (data / "t-0").write_bytes(b"in the way")
    assert m.make_dirs() == 0 and m.dirless == 1
    with pytest.raises(KafkaStorageError):
        m.get("t", 0, storage_errors=True)
    assert m.get("t", 0) is None  # (without storage_errors: not served yet)
    assert m.has("t", 0)
    (data / "t-0").unlink()
    assert m.get("t", 0).log_end_offset == 0
    assert (data / "t-0" / "partition.metadata").is_file()


def test_delete_topics_of_prepared_partitions_leaves_nothing(manager, tmp_path):
    data = tmp_path / "data"
    m = manager()
    m.prepare("a", range(2), _metadata_writer)
    m.prepare("b", range(2), _metadata_writer)
    m.make_dirs()
    m.prepare("c", range(2), _metadata_writer)
    m.get("b", 1).append(make_batch(1), 0)
    assert m.delete_topics(["a", "b", "c"]) == 6
    assert not m.has("b", 1) and m.dirless == 0
    m.close()
    assert not [p.name for p in data.iterdir() if p.is_dir()]
