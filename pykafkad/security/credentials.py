"""SCRAM credentials a node checks logins against, by user and mechanism.

Kafka keeps them as UserScramCredentialRecords in the metadata log; each node loads those of
its metadata image here (pykafkad/kraft/security_publisher.py)."""

from __future__ import annotations

from collections.abc import Mapping

from pykafkad.security.scram import MECHANISM_TYPES, ScramCredential

MECHANISM_NAMES = {v: k for k, v in MECHANISM_TYPES.items()}


class ScramCredentials:
    def __init__(self) -> None:
        self.users: dict[str, dict[str, ScramCredential]] = {}

    def load(self, records: Mapping) -> None:
        """Takes a metadata image's UserScramCredentialRecords (by user and mechanism type)."""
        users: dict[str, dict[str, ScramCredential]] = {}
        for (name, mechanism), r in records.items():
            if mechanism in MECHANISM_NAMES:
                users.setdefault(name, {})[MECHANISM_NAMES[mechanism]] = ScramCredential(
                    bytes(r.salt), bytes(r.stored_key), bytes(r.server_key), r.iterations)
        self.users = users

    def get(self, user: str) -> dict[str, ScramCredential] | None:
        return self.users.get(user)


def scram_credentials(broker) -> ScramCredentials:
    """The node's credential table (created on first use)."""
    store = getattr(broker, "scram_credentials", None)
    if store is None:
        store = ScramCredentials()
        broker.scram_credentials = store
    return store
