"""SCRAM credentials a node checks logins against, by user and mechanism.

Kafka keeps them as UserScramCredentialRecords in the metadata log; here they are held per
node (set by AlterUserScramCredentials on it, or by pykafkad.testing), not yet in the log."""

from __future__ import annotations

from pykafkad.security.scram import ScramCredential


class ScramCredentials:
    def __init__(self) -> None:
        self.users: dict[str, dict[str, ScramCredential]] = {}

    def get(self, user: str) -> dict[str, ScramCredential] | None:
        return self.users.get(user)

    def upsert(self, user: str, mechanism: str, credential: ScramCredential) -> None:
        self.users.setdefault(user, {})[mechanism] = credential

    def delete(self, user: str, mechanism: str) -> bool:
        mechs = self.users.get(user)
        if not mechs or mechanism not in mechs:
            return False
        del mechs[mechanism]
        if not mechs:
            del self.users[user]
        return True


def scram_credentials(broker) -> ScramCredentials:
    """The node's credential table (created on first use)."""
    store = getattr(broker, "scram_credentials", None)
    if store is None:
        store = ScramCredentials()
        broker.scram_credentials = store
    return store
