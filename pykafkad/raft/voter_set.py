"""The voter set of a dynamic quorum (KIP-853, kraft.version 1), read from the log directory.

A node started with ``controller.quorum.bootstrap.servers`` and no ``controller.quorum.voters``
learns its voters from the VotersRecord that ``kafka-storage format --standalone`` or
``--initial-controllers`` wrote into the bootstrap checkpoint, or that a later snapshot carries
forward (Kafka's KRaftControlRecordStateMachine reads the newest one). A node formatted with
``--no-initial-controllers`` has none: it starts as an observer and finds the leader through the
bootstrap servers.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pykafkad.metadata.snapshot import (
    SnapshotError,
    list_snapshots,
    read_snapshot,
    snapshot_file_name,
)
from wire.messages.voters_record import VotersRecord

#: the ids a node gives its bootstrap servers before it knows their node ids (Kafka's
#: QuorumConfig: -2, -3, ... in the order configured)
FIRST_BOOTSTRAP_ID = -2


@dataclass
class VoterSet:
    """kraft.version and the voters (id -> (host, port) on the controller listener, id ->
    directory id) a node starts with; ``record`` is kept to carry into later snapshots."""

    kraft_version: int
    endpoints: dict[int, tuple[str, int]]
    directory_ids: dict[int, bytes]
    record: VotersRecord | None


def from_record(record: VotersRecord, listener_name: str, kraft_version: int = 1) -> VoterSet:
    """The voters of ``record``, reached on ``listener_name`` (else each voter's first
    endpoint)."""
    endpoints = {}
    directory_ids = {}
    for voter in record.voters:
        chosen = next((e for e in voter.endpoints if e.name == listener_name),
                      voter.endpoints[0] if voter.endpoints else None)
        if chosen is not None:
            endpoints[voter.voter_id] = (chosen.host, chosen.port)
        directory_ids[voter.voter_id] = voter.voter_directory_id
    return VoterSet(kraft_version, endpoints, directory_ids, record)


def read_voter_set(partition_dir: Path, listener_name: str) -> VoterSet | None:
    """The newest snapshot's VotersRecord in ``__cluster_metadata-0`` (``partition_dir``);
    a kraft.version 1 set without voters when the snapshots have none but say kraft.version 1;
    None for a static quorum's directory."""
    kraft_version = 0
    for end_offset, epoch in sorted(list_snapshots(partition_dir), reverse=True):
        try:
            snap = read_snapshot(partition_dir / snapshot_file_name(end_offset, epoch))
        except (OSError, SnapshotError, ValueError):
            continue
        kraft_version = max(kraft_version, snap.kraft_version)
        if snap.voters is not None:
            return from_record(snap.voters, listener_name, max(1, snap.kraft_version))
    if kraft_version > 0:
        return VoterSet(kraft_version, {}, {}, None)
    return None


def bootstrap_ids(servers: list[tuple[str, int]]) -> dict[int, tuple[str, int]]:
    """``controller.quorum.bootstrap.servers`` under the negative ids Kafka gives them."""
    return {FIRST_BOOTSTRAP_ID - i: hp for i, hp in enumerate(servers)}
