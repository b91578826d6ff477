"""Kafka's KafkaMetadataLog.maybeClean on the metadata log: while the log and its snapshots
exceed metadata.max.retention.bytes (or the oldest snapshot is older than .ms), the oldest
snapshot goes and the log start moves to the next one, deleting the segments wholly before
it; the latest snapshot always stays, and nothing moves past the log end."""

from __future__ import annotations

from pykafkad.raft import records as raft_records
from pykafkad.raft import snapshots
from pykafkad.raft.log import MetadataLog, MetadataLogRetention, OffsetAndEpoch, metadata_log_config


def open_log(tmp_path, retention: MetadataLogRetention) -> MetadataLog:
    log = MetadataLog.open(tmp_path, lambda: 1_000, metadata_log_config(segment_bytes=512),
                           retention)
    for _ in range(60):
        log.append_as_leader(raft_records.data_batch([b"x" * 40], 1, 1_000), 1)
    return log


def snapshot(log: MetadataLog, offset: int, ts: int = 1_000) -> None:
    snapshots.path_of(log.dir, offset, 1).write_bytes(ts.to_bytes(8, "big") * 8)


def test_size_retention_keeps_the_latest_snapshot(tmp_path):
    log = open_log(tmp_path, MetadataLogRetention(max_bytes=1, max_ms=-1))
    segments_before = len(list(log.dir.glob("*.log")))
    snapshot(log, 20)
    assert not log.maybe_clean(2_000)            # one snapshot: nothing to clean
    snapshot(log, 45)
    assert log.maybe_clean(2_000)
    assert log.start_offset == 45
    assert snapshots.list_snapshots(log.dir) == [(45, 1)]
    assert len(list(log.dir.glob("*.log"))) < segments_before
    assert log.validate_offset_and_epoch(10, 1).kind == "SNAPSHOT"
    assert not log.delete_before_snapshot(OffsetAndEpoch(99, 1))


def test_nothing_goes_within_retention(tmp_path):
    log = open_log(tmp_path, MetadataLogRetention(max_bytes=1 << 30, max_ms=10_000,
                                                  snapshot_timestamp=lambda p: 1_000))
    snapshot(log, 20)
    snapshot(log, 45)
    assert not log.maybe_clean(5_000) and log.start_offset == 0
    assert log.maybe_clean(20_000)               # the oldest snapshot is now too old
    assert log.start_offset == 45
