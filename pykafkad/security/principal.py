"""The authenticated identity of a connection (Kafka's KafkaPrincipal: what ACLs name,
"User:alice"), shared by the authorizer and quotas."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KafkaPrincipal:
    principal_type: str
    name: str

    def __str__(self) -> str:
        return f"{self.principal_type}:{self.name}"


#: the principal of an unauthenticated (PLAINTEXT) connection
ANONYMOUS = KafkaPrincipal("User", "ANONYMOUS")
