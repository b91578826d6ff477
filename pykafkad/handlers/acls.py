"""DescribeAcls (key 29), CreateAcls (30) and DeleteAcls (31): pykafkad has no authorizer, so
it answers them as Apache Kafka 4.4.0 does when ``authorizer.class.name`` is unset.

Kafka advertises the three APIs (versions 1-3, on broker and controller listeners) even then,
and answers SECURITY_DISABLED: clients and tools (kafka-acls, AdminClient.describeAcls)
get "security is disabled" instead of "the broker does not support this API".  A filter or
creation with an UNKNOWN (code 0) resource type, pattern type, operation or permission type
fails Kafka's request validation, which closes the connection; any other code, even one
Kafka does not know, gets SECURITY_DISABLED.  (A KRaft broker forwards CreateAcls and
DeleteAcls to the controller; with no authorizer anywhere the answer is the same, so the
broker gives it itself.)
"""

from __future__ import annotations

from pykafkad.dispatch import BROKER, CONTROLLER, RequestContext, handles
from wire.errors import ErrorCode, RemoteProtocolError
from wire.messages.create_acls_response import AclCreationResult, CreateAclsResponse
from wire.messages.delete_acls_response import DeleteAclsFilterResult, DeleteAclsResponse
from wire.messages.describe_acls_response import DescribeAclsResponse

#: the code every ACL enum (ResourceType, PatternType, AclOperation, AclPermissionType) uses
#: for UNKNOWN
UNKNOWN = 0

#: Kafka's messages: DescribeAcls' differs from the other two
DESCRIBE_NO_AUTHORIZER = "No Authorizer is configured on the broker"
NO_AUTHORIZER = "No Authorizer is configured."


def _refuse_unknown(api: str, *codes: int) -> None:
    if UNKNOWN in codes:
        raise RemoteProtocolError(f"{api} contains UNKNOWN elements")


@handles(29, 1, 3, listeners=(BROKER, CONTROLLER))
async def handle_describe_acls(ctx: RequestContext, req) -> DescribeAclsResponse:
    """Versions 1-3 (v2 flexible, v3 USER resources)."""
    _refuse_unknown("DescribeAclsRequest", req.resource_type_filter, req.pattern_type_filter,
                    req.operation, req.permission_type)
    return DescribeAclsResponse(throttle_time_ms=0, error_code=ErrorCode.SECURITY_DISABLED,
                                error_message=DESCRIBE_NO_AUTHORIZER, resources=[])


@handles(30, 1, 3, listeners=(BROKER, CONTROLLER))
async def handle_create_acls(ctx: RequestContext, req) -> CreateAclsResponse:
    """Versions 1-3: one SECURITY_DISABLED result per creation."""
    for c in req.creations:
        _refuse_unknown("CreateAclsRequest", c.resource_type, c.resource_pattern_type,
                        c.operation, c.permission_type)
    return CreateAclsResponse(throttle_time_ms=0, results=[
        AclCreationResult(error_code=ErrorCode.SECURITY_DISABLED, error_message=NO_AUTHORIZER)
        for _ in req.creations])


@handles(31, 1, 3, listeners=(BROKER, CONTROLLER))
async def handle_delete_acls(ctx: RequestContext, req) -> DeleteAclsResponse:
    """Versions 1-3: one SECURITY_DISABLED result, matching nothing, per filter."""
    for f in req.filters:
        _refuse_unknown("DeleteAclsRequest", f.resource_type_filter, f.pattern_type_filter,
                        f.operation, f.permission_type)
    return DeleteAclsResponse(throttle_time_ms=0, filter_results=[
        DeleteAclsFilterResult(error_code=ErrorCode.SECURITY_DISABLED,
                               error_message=NO_AUTHORIZER, matching_acls=[])
        for _ in req.filters])
