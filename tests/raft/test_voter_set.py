"""The voter set of a dynamic quorum as a node reads it at start (the bootstrap checkpoint's
VotersRecord, kraft.version 1) and as it finds VotersRecord control batches in its log; the
whole quorum with Kafka's tools is in test_dynamic_quorum.py."""

from __future__ import annotations

from pathlib import Path

from pykafkad.metadata.bootstrap import BootstrapMetadata, write_bootstrap_snapshot
from pykafkad.metadata.dynamic_voters import parse_dynamic_voters, voters_record
from pykafkad.raft.records import data_batch
from pykafkad.raft.voter_records import (
    find_voters_records,
    replica_key,
    voter_keys,
    voters_batch,
)
from pykafkad.raft.voter_set import bootstrap_ids, read_voter_set


def at_offset(batch: bytes, offset: int) -> bytes:
    """The batch with base offset ``offset`` (the first 8 bytes, outside the CRC), as a log
    assigns it."""
    return offset.to_bytes(8, "big") + batch[8:]


DIRS = ("AAAAAAAAAAAAAAAAAAAAAQ", "AAAAAAAAAAAAAAAAAAAAAg")


def record():
    voters = parse_dynamic_voters(f"1@h1:9093:{DIRS[0]},2@h2:9094:{DIRS[1]}")
    return voters_record(voters, "CONTROLLER")


def test_the_bootstrap_checkpoint_gives_the_voters(tmp_path: Path) -> None:
    write_bootstrap_snapshot(tmp_path, BootstrapMetadata.from_versions(33, {}, "test"),
                             kraft_version=1, voters=record())
    vs = read_voter_set(tmp_path / "__cluster_metadata-0", "CONTROLLER")
    assert vs.kraft_version == 1
    assert vs.endpoints == {1: ("h1", 9093), 2: ("h2", 9094)}
    assert sorted(vs.directory_ids) == [1, 2]


def test_a_static_quorum_has_no_voter_set(tmp_path: Path) -> None:
    write_bootstrap_snapshot(tmp_path, BootstrapMetadata.from_versions(33, {}, "test"))
    assert read_voter_set(tmp_path / "__cluster_metadata-0", "CONTROLLER") is None


def test_voters_records_are_found_among_data_batches() -> None:
    data = at_offset(data_batch([b"x", b"y"], 3, 0), 10) + \
        at_offset(voters_batch(record(), 3, 0), 12)
    found = list(find_voters_records(data))
    assert [(offset, [v.voter_id for v in r.voters]) for offset, r in found] == [(12, [1, 2])]


def test_kafka_text_for_replica_keys() -> None:
    assert replica_key(2, bytes(15) + b"\x01") == \
        "ReplicaKey(id=2, directoryId=AAAAAAAAAAAAAAAAAAAAAQ)"
    assert replica_key(2, bytes(16)) == "ReplicaKey(id=2, directoryId=<undefined>)"
    assert voter_keys(record()).startswith("[ReplicaKey(id=1, directoryId=")


def test_bootstrap_servers_get_kafkas_negative_ids() -> None:
    assert bootstrap_ids([("a", 1), ("b", 2)]) == {-2: ("a", 1), -3: ("b", 2)}
