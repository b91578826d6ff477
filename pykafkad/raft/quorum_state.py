"""The ``quorum-state`` file: the election state a voter must never forget across restarts.

Kafka's FileQuorumStateStore writes one line of JSON (QuorumStateData) next to the metadata log,
in ``<metadata.log.dir>/__cluster_metadata-0/quorum-state``, through ``quorum-state.tmp``, an
fsync and a rename. Which version it writes follows the kraft.version: 0 (static
``controller.quorum.voters``) keeps ``clusterId`` (always ""), ``appliedOffset`` (0) and
``currentVoters``; 1 (KIP-853) drops them and adds ``votedDirectoryId``. Both are read.
Persisting the vote before answering a Vote request is what stops a voter from voting twice in
one epoch after a crash.
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass
from pathlib import Path

from pykafkad.log.checkpoint import atomic_write

FILE_NAME = "quorum-state"
NOT_VOTED = -1
NO_LEADER = -1
ZERO_UUID = bytes(16)
LOWEST_SUPPORTED_VERSION = 0
HIGHEST_SUPPORTED_VERSION = 1


def uuid_to_str(u: bytes) -> str:
    """Kafka's Uuid.toString: URL-safe base64 of the 16 bytes, no padding."""
    return base64.urlsafe_b64encode(u).decode().rstrip("=")


def uuid_from_str(s: str) -> bytes:
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


@dataclass(frozen=True)
class ElectionState:
    """What a replica knows of an epoch: its leader (if any) and whom it voted for (if any)."""

    epoch: int
    leader_id: int = NO_LEADER
    voted_id: int = NOT_VOTED
    voted_directory_id: bytes = ZERO_UUID
    voters: tuple[int, ...] = ()

    @property
    def has_leader(self) -> bool:
        return self.leader_id >= 0

    @property
    def has_voted(self) -> bool:
        return self.voted_id >= 0


class QuorumStateError(Exception):
    """The file exists but cannot be read: a voter must not start on a guess."""


class FileQuorumStateStore:
    def __init__(self, path: Path):
        self.path = path

    def read(self) -> ElectionState | None:
        """The persisted state, None when the file does not exist (a fresh node)."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        line = text.split("\n", 1)[0]
        if not line:
            raise QuorumStateError(
                f"Error while reading the Quorum status from the file {self.path}: "
                "File ended prematurely.")
        try:
            data = json.loads(line)
        except ValueError as e:
            raise QuorumStateError(
                f"Error while reading the Quorum status from the file {self.path}: {e}") from e
        if not isinstance(data, dict):
            raise QuorumStateError(f"Deserialized node {line} is not an object node")
        if "data_version" not in data:
            raise QuorumStateError(f"Deserialized node {line} does not have data_version field")
        version = data["data_version"]
        if not LOWEST_SUPPORTED_VERSION <= version <= HIGHEST_SUPPORTED_VERSION:
            raise QuorumStateError(
                f"data_version ({version}) is not within the min ({LOWEST_SUPPORTED_VERSION}) "
                f"and max ({HIGHEST_SUPPORTED_VERSION}) supported version")
        voted_dir = data.get("votedDirectoryId")
        return ElectionState(
            epoch=int(data.get("leaderEpoch", -1)),
            leader_id=int(data.get("leaderId", NO_LEADER)),
            voted_id=int(data.get("votedId", NOT_VOTED)),
            voted_directory_id=uuid_from_str(voted_dir) if voted_dir else ZERO_UUID,
            voters=tuple(v["voterId"] for v in data.get("currentVoters") or ()),
        )

    def write(self, state: ElectionState, version: int = 0) -> None:
        """Writes ``state`` as QuorumStateData ``version``, with Kafka's key order."""
        if version == 0:
            data = {
                "clusterId": "",
                "leaderId": state.leader_id,
                "leaderEpoch": state.epoch,
                "votedId": state.voted_id,
                "appliedOffset": 0,
                "currentVoters": [{"voterId": v} for v in state.voters],
            }
        elif version == 1:
            data = {
                "leaderId": state.leader_id,
                "leaderEpoch": state.epoch,
                "votedId": state.voted_id,
                "votedDirectoryId": uuid_to_str(state.voted_directory_id),
            }
        else:
            raise ValueError(
                f"Quorum state data version ({version}) is greater than the supported version "
                f"({HIGHEST_SUPPORTED_VERSION})")
        data["data_version"] = version
        line = json.dumps(data, separators=(",", ":"))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path, line.encode())

    def delete(self) -> None:
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
