"""DescribeUserScramCredentials (50) and AlterUserScramCredentials (51): the SCRAM users a
SASL listener checks, with the errors and messages of Kafka 4.4's ScramControlManager."""

from __future__ import annotations

from pykafkad.dispatch import handles
from pykafkad.security.credentials import scram_credentials
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
from wire.messages.describe_user_scram_credentials_response import (
    CredentialInfo,
    DescribeUserScramCredentialsResponse,
    DescribeUserScramCredentialsResult,
)

MECHANISM_NAMES = {v: k for k, v in MECHANISM_TYPES.items()}


@handles(50, 0, 0)
async def handle_describe_user_scram_credentials(ctx, request):
    store = scram_credentials(ctx.broker)
    results = []
    if request.users is None or not request.users:
        names = sorted(store.users)
        missing_error = False
    else:
        names = [u.name for u in request.users]
        missing_error = True
    seen: set[str] = set()
    duplicates = {n for n in names if n in seen or seen.add(n)}
    for name in dict.fromkeys(names):
        if name in duplicates:
            results.append(DescribeUserScramCredentialsResult(
                user=name, error_code=ErrorCode.DUPLICATE_RESOURCE,
                error_message="Cannot describe SCRAM credentials for the same user twice in a "
                              f"single request: {name}", credential_infos=[]))
            continue
        creds = store.get(name)
        if not creds:
            if missing_error:
                results.append(DescribeUserScramCredentialsResult(
                    user=name, error_code=ErrorCode.RESOURCE_NOT_FOUND,
                    error_message=f"Attempt to describe a user credential that does not exist: "
                                  f"{name}", credential_infos=[]))
            continue
        infos = [CredentialInfo(mechanism=MECHANISM_TYPES[m], iterations=c.iterations)
                 for m, c in sorted(creds.items(), key=lambda kv: MECHANISM_TYPES[kv[0]])]
        results.append(DescribeUserScramCredentialsResult(
            user=name, error_code=0, error_message=None, credential_infos=infos))
    return DescribeUserScramCredentialsResponse(throttle_time_ms=0, error_code=0,
                                                error_message=None, results=results)


def _refusal(mechanism: int, name: str, iterations: int | None = None):
    if mechanism not in MECHANISM_NAMES:
        return ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"
    if not name:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must be set"
    if iterations is not None and iterations < MIN_ITERATIONS:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations"
    if iterations is not None and iterations > MAX_ITERATIONS:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations"
    return None


@handles(51, 0, 0)
async def handle_alter_user_scram_credentials(ctx, request):
    store = scram_credentials(ctx.broker)
    errors: dict[str, tuple[int, str]] = {}
    ops = [(d.name, d.mechanism, None) for d in request.deletions]
    ops += [(u.name, u.mechanism, u) for u in request.upsertions]
    seen: set[str] = set()
    for name, mechanism, upsert in ops:
        if name in seen:  # Kafka: one operation per user and request, whatever the mechanism
            errors.setdefault(name, (ErrorCode.DUPLICATE_RESOURCE,
                                     "A user credential cannot be altered twice in the same "
                                     "request"))
        seen.add(name)
        refusal = _refusal(mechanism, name, upsert.iterations if upsert else None)
        if refusal:
            errors.setdefault(name, refusal)
        elif upsert is None and MECHANISM_NAMES[mechanism] not in (store.get(name) or {}):
            errors.setdefault(name, (ErrorCode.RESOURCE_NOT_FOUND,
                                     "Attempt to delete a user credential that does not exist"))
    for name, mechanism, upsert in ops:
        if name in errors:
            continue
        m = MECHANISM_NAMES[mechanism]
        if upsert is None:
            store.delete(name, m)
        else:
            store.upsert(name, m, credential_from_salted(
                m, bytes(upsert.salt), bytes(upsert.salted_password), upsert.iterations))
    users = list(dict.fromkeys(name for name, _, _ in ops))
    results = [AlterUserScramCredentialsResult(
        user=u, error_code=errors.get(u, (0, None))[0], error_message=errors.get(u, (0, None))[1])
        for u in users]
    return AlterUserScramCredentialsResponse(throttle_time_ms=0, results=results)
