"""DescribeUserScramCredentials (50) and AlterUserScramCredentials (51): the SCRAM users a
SASL listener checks, kept in the metadata log, with the errors and messages of Kafka 4.4's
ScramControlManager."""

from __future__ import annotations

from pykafkad.controller.result import DEFAULT_MESSAGES
from pykafkad.dispatch import BROKER, CONTROLLER, handles
from pykafkad.handlers.forwarded import forwards, to_controller
from pykafkad.kraft.error_responses import error_response
from pykafkad.security.api_acls import authorized
from pykafkad.security.authorizer import ALTER, CLUSTER, DESCRIBE
from pykafkad.security.credentials import scram_credentials
from pykafkad.security.scram import MECHANISM_TYPES
from wire.errors import ErrorCode
from wire.messages.describe_user_scram_credentials_response import (
    CredentialInfo,
    DescribeUserScramCredentialsResponse,
    DescribeUserScramCredentialsResult,
)


@handles(50, 0, 0)
async def handle_describe_user_scram_credentials(ctx, request):
    """The users of this node's metadata image, as Kafka's broker describes them."""
    if not authorized(ctx, CLUSTER, DESCRIBE):
        return DescribeUserScramCredentialsResponse(
            throttle_time_ms=0, error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
            error_message=None, results=[])
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


@handles(51, 0, 0, listeners=(BROKER, CONTROLLER))
async def handle_alter_user_scram_credentials(ctx, request):
    """The active controller writes the credentials (pykafkad/controller/scram_control.py);
    a broker forwards, and the controller checks ALTER on the cluster."""
    if not forwards(ctx) and not authorized(ctx, CLUSTER, ALTER):
        code = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        return error_response(request, code, DEFAULT_MESSAGES[code])
    return await to_controller(ctx, request)
