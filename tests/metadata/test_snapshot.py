"""Snapshots as Kafka writes them: name, header/records/footer batches, atomic rename."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pykafkad.metadata.delta import MetadataDelta
from pykafkad.metadata.snapshot import (
    SnapshotError,
    build_snapshot,
    list_snapshots,
    parse_snapshot,
    parse_snapshot_file_name,
    read_snapshot,
    snapshot_file_name,
    write_snapshot,
)
from wire.messages.voters_record import Endpoint, KRaftVersionFeature, Voter, VotersRecord
from wire.metadata import FeatureLevelRecord, PartitionRecord, TopicRecord
from wire.records.batch import iter_batch_headers

T1 = bytes(range(1, 17))


def records(n_partitions: int = 3) -> list:
    out = [FeatureLevelRecord("metadata.version", 33), TopicRecord("orders", T1)]
    out += [PartitionRecord(partition_id=p, topic_id=T1, replicas=[1], isr=[1], removing_replicas=[],
                            adding_replicas=[], leader=1, leader_epoch=0, partition_epoch=0,
                            directories=[bytes(16)]) for p in range(n_partitions)]
    return out


def test_file_names() -> None:
    assert snapshot_file_name(1234, 5) == "00000000000000001234-0000000005.checkpoint"
    assert parse_snapshot_file_name("00000000000000001234-0000000005.checkpoint") == (1234, 5)
    assert parse_snapshot_file_name("00000000000000001234-0000000005.checkpoint.part") is None


def test_write_then_read(tmp_path: Path) -> None:
    path = write_snapshot(tmp_path, 42, 3, records(), last_contained_log_timestamp=1700)
    assert path.name == "00000000000000000042-0000000003.checkpoint"
    assert not list(tmp_path.glob("*.part"))
    assert os.stat(path).st_mode & 0o777 == 0o400  # read-only once frozen, as Kafka leaves it
    snap = read_snapshot(path)
    assert (snap.end_offset, snap.epoch, snap.last_contained_log_timestamp) == (42, 3, 1700)
    assert list(snap.records()) == records()
    assert list_snapshots(tmp_path) == [(42, 3)]
    image = MetadataDelta().replay_all(snap.records()).apply()
    assert sorted(image.topics.get("orders").partitions) == [0, 1, 2]


def test_batches_count_offsets_from_zero_with_the_epoch(tmp_path: Path) -> None:
    data = build_snapshot(records(), 7, last_contained_log_timestamp=1, max_batch_size=200)
    headers = [h for _, h in iter_batch_headers(data, strict=True)]
    assert headers[0].is_control and headers[-1].is_control
    assert len(headers) > 3  # the records were cut into several batches
    assert {h.partition_leader_epoch for h in headers} == {7}
    offsets = [(h.base_offset, h.last_offset) for h in headers]
    assert offsets[0][0] == 0
    assert all(b == prev_last + 1 for (_, prev_last), (b, _) in zip(offsets, offsets[1:], strict=False))


def test_kraft_version_and_voters_go_in_the_header_batch() -> None:
    voters = VotersRecord(0, [Voter(1, T1, [Endpoint("CONTROLLER", "localhost", 9093)],
                                    KRaftVersionFeature(0, 1))])
    data = build_snapshot(records(1), 0, last_contained_log_timestamp=5, kraft_version=1,
                          voters=voters)
    first = next(iter_batch_headers(data))[1]
    assert first.is_control and first.record_count == 3
    snap = parse_snapshot(data)
    assert (snap.kraft_version, snap.voters) == (1, voters)


def test_incomplete_snapshots_are_refused() -> None:
    data = build_snapshot(records(), 0, last_contained_log_timestamp=1)
    last_batch_pos = [pos for pos, _ in iter_batch_headers(data)][-1]
    with pytest.raises(SnapshotError, match="no footer"):
        parse_snapshot(data[:last_batch_pos])
    first_size = next(iter_batch_headers(data))[1].size
    with pytest.raises(SnapshotError, match="snapshot header"):
        parse_snapshot(data[first_size:])
