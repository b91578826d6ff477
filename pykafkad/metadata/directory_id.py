"""Kafka's reserved log-directory ids (org.apache.kafka.common.DirectoryId): the first 100 UUIDs
stand for states of an assignment rather than for a directory."""

from __future__ import annotations

MIGRATING = bytes(16)                       # Uuid(0, 0): not yet assigned (pre-JBOD brokers)
UNASSIGNED = (1).to_bytes(16, "big")        # Uuid(0, 1): pending assignment
LOST = (2).to_bytes(16, "big")              # Uuid(0, 2): an unspecified offline dir


def reserved(directory: bytes) -> bool:
    """Ids 0..99 (most significant half zero) are reserved for the markers above."""
    return directory[:8] == bytes(8) and int.from_bytes(directory[8:], "big") < 100


def is_online(directory: bytes, online_dirs: list[bytes]) -> bool:
    """A replica's directory is online when it is not a real id, or the broker lists it."""
    if directory in (UNASSIGNED, MIGRATING):
        return True
    return directory in online_dirs
