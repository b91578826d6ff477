"""Kafka's ScramControlManager: the SCRAM credentials the metadata log holds, and
AlterUserScramCredentials as the records that change them (with Kafka 4.4's errors and
messages).

Every broker's SASL listeners check logins against the credentials of its metadata image, so
a user added through any broker (or ``pykafkad format --add-scram``) can log in on every node.
"""

from __future__ import annotations

from pykafkad.controller.result import ControllerResult
from pykafkad.security.scram import (
    MAX_ITERATIONS,
    MECHANISM_TYPES,
    MIN_ITERATIONS,
    credential_from_salted,
)
from wire.errors import ErrorCode
from wire.messages.alter_user_scram_credentials_response import (
    AlterUserScramCredentialsResponse,
    AlterUserScramCredentialsResult,
)
from wire.metadata import RemoveUserScramCredentialRecord, UserScramCredentialRecord

MECHANISM_NAMES = {v: k for k, v in MECHANISM_TYPES.items()}


def refusal(mechanism: int, name: str, iterations: int | None = None):
    """(error code, message) Kafka refuses one alteration with, or None."""
    if mechanism not in MECHANISM_NAMES:
        return ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"
    if not name:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must be set"
    if iterations is not None and iterations < MIN_ITERATIONS:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations"
    if iterations is not None and iterations > MAX_ITERATIONS:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations"
    return None


class ScramControlManager:
    def __init__(self) -> None:
        #: (user, mechanism type) -> the record that set it
        self.credentials: dict[tuple[str, int], UserScramCredentialRecord] = {}

    def replay(self, record: UserScramCredentialRecord) -> None:
        self.credentials[(record.name, record.mechanism)] = record

    def replay_remove(self, record: RemoveUserScramCredentialRecord) -> None:
        self.credentials.pop((record.name, record.mechanism), None)

    def alter(self, request) -> ControllerResult:
        """Deletions then upsertions; a user with any refused alteration (or named twice)
        gets that error and none of its alterations are written."""
        errors: dict[str, tuple[int, str]] = {}
        ops = [(d.name, d.mechanism, None) for d in request.deletions]
        ops += [(u.name, u.mechanism, u) for u in request.upsertions]
        seen: set[str] = set()
        for name, mechanism, upsert in ops:
            if name in seen:  # Kafka: one operation per user and request, whatever the mechanism
                errors.setdefault(name, (ErrorCode.DUPLICATE_RESOURCE,
                                         "A user credential cannot be altered twice in the "
                                         "same request"))
            seen.add(name)
            refused = refusal(mechanism, name, upsert.iterations if upsert else None)
            if refused:
                errors.setdefault(name, refused)
            elif upsert is None and (name, mechanism) not in self.credentials:
                errors.setdefault(name, (ErrorCode.RESOURCE_NOT_FOUND,
                                         "Attempt to delete a user credential that does not "
                                         "exist"))
        records: list = []
        for name, mechanism, upsert in ops:
            if name in errors:
                continue
            if upsert is None:
                records.append(RemoveUserScramCredentialRecord(name=name, mechanism=mechanism))
            else:
                c = credential_from_salted(MECHANISM_NAMES[mechanism], bytes(upsert.salt),
                                           bytes(upsert.salted_password), upsert.iterations)
                records.append(UserScramCredentialRecord(
                    name=name, mechanism=mechanism, salt=c.salt, stored_key=c.stored_key,
                    server_key=c.server_key, iterations=c.iterations))
        users = list(dict.fromkeys(name for name, _, _ in ops))
        results = [AlterUserScramCredentialsResult(
            user=u, error_code=errors.get(u, (0, None))[0],
            error_message=errors.get(u, (0, None))[1]) for u in users]
        return ControllerResult(records, AlterUserScramCredentialsResponse(
            throttle_time_ms=0, results=results), atomic=True)
