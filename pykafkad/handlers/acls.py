"""DescribeAcls (key 29), CreateAcls (30) and DeleteAcls (31).

With ``authorizer.class.name`` set to Kafka's StandardAuthorizer, DescribeAcls reads the ACLs
of the node's metadata image; CreateAcls and DeleteAcls go to the active controller (a
broker forwards them in an Envelope carrying the client's principal, and the controller
checks ALTER on the cluster), which writes AccessControlEntryRecords /
RemoveAccessControlEntryRecords (pykafkad/controller/acl_control.py) that every node loads.
Without an authorizer they answer as Apache Kafka 4.4.0 does when ``authorizer.class.name``
is unset:

Kafka advertises the three APIs (versions 1-3, on broker and controller listeners) even then,
and answers SECURITY_DISABLED: clients and tools (kafka-acls, AdminClient.describeAcls)
get "security is disabled" instead of "the broker does not support this API".  A filter or
creation with an UNKNOWN (code 0) resource type, pattern type, operation or permission type
fails Kafka's request validation, which closes the connection; any other code, even one
Kafka does not know, gets SECURITY_DISABLED.  (With no authorizer anywhere the controller's
answer is the same, so a broker gives it itself.)
"""

from __future__ import annotations

from pykafkad.controller.result import DEFAULT_MESSAGES
from pykafkad.dispatch import BROKER, CONTROLLER, RequestContext, handles
from pykafkad.handlers.forwarded import forwards, to_controller
from pykafkad.security.api_acls import authorized
from pykafkad.security.authorizer import ALTER, CLUSTER, DESCRIBE
from wire.errors import ErrorCode, RemoteProtocolError
from wire.messages.create_acls_response import AclCreationResult, CreateAclsResponse
from wire.messages.delete_acls_response import DeleteAclsFilterResult, DeleteAclsResponse
from wire.messages.describe_acls_response import (
    AclDescription,
    DescribeAclsResource,
    DescribeAclsResponse,
)

#: the code every ACL enum (ResourceType, PatternType, AclOperation, AclPermissionType) uses
#: for UNKNOWN
UNKNOWN = 0

#: Kafka's messages: DescribeAcls' differs from the other two
DESCRIBE_NO_AUTHORIZER = "No Authorizer is configured on the broker"
NO_AUTHORIZER = "No Authorizer is configured."
#: Kafka's ClusterAuthorizationException message for the ACL APIs
CLUSTER_DENIED = DEFAULT_MESSAGES[ErrorCode.CLUSTER_AUTHORIZATION_FAILED]


def _refuse_unknown(api: str, *codes: int) -> None:
    if UNKNOWN in codes:
        raise RemoteProtocolError(f"{api} contains UNKNOWN elements")


@handles(29, 1, 3, listeners=(BROKER, CONTROLLER))
async def handle_describe_acls(ctx: RequestContext, req) -> DescribeAclsResponse:
    """Versions 1-3 (v2 flexible, v3 USER resources)."""
    _refuse_unknown("DescribeAclsRequest", req.resource_type_filter, req.pattern_type_filter,
                    req.operation, req.permission_type)
    authorizer = getattr(ctx.broker, "authorizer", None)
    if authorizer is None:
        return DescribeAclsResponse(throttle_time_ms=0, error_code=ErrorCode.SECURITY_DISABLED,
                                    error_message=DESCRIBE_NO_AUTHORIZER, resources=[])
    if not authorized(ctx, CLUSTER, DESCRIBE):
        return DescribeAclsResponse(
            throttle_time_ms=0, error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
            error_message=CLUSTER_DENIED, resources=[])
    by_resource: dict[tuple, list[AclDescription]] = {}
    for a in authorizer.matching(req):
        by_resource.setdefault((a.resource_type, a.resource_name, a.pattern_type), []).append(
            AclDescription(principal=a.principal, host=a.host, operation=a.operation,
                           permission_type=a.permission_type))
    return DescribeAclsResponse(
        throttle_time_ms=0, error_code=0, error_message=None, resources=[
            DescribeAclsResource(resource_type=rt, resource_name=name, pattern_type=pt,
                                 acls=acls)
            for (rt, name, pt), acls in by_resource.items()])


@handles(30, 1, 3, listeners=(BROKER, CONTROLLER))
async def handle_create_acls(ctx: RequestContext, req) -> CreateAclsResponse:
    """Versions 1-3: the active controller writes the new ACLs (a broker forwards)."""
    for c in req.creations:
        _refuse_unknown("CreateAclsRequest", c.resource_type, c.resource_pattern_type,
                        c.operation, c.permission_type)
    authorizer = getattr(ctx.broker, "authorizer", None)
    if authorizer is None:
        return CreateAclsResponse(throttle_time_ms=0, results=[
            AclCreationResult(error_code=ErrorCode.SECURITY_DISABLED,
                              error_message=NO_AUTHORIZER)
            for _ in req.creations])
    if forwards(ctx):
        return await to_controller(ctx, req)
    if not authorized(ctx, CLUSTER, ALTER):
        return CreateAclsResponse(throttle_time_ms=0, results=[
            AclCreationResult(error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                              error_message=CLUSTER_DENIED) for _ in req.creations])
    return await to_controller(ctx, req)


@handles(31, 1, 3, listeners=(BROKER, CONTROLLER))
async def handle_delete_acls(ctx: RequestContext, req) -> DeleteAclsResponse:
    """Versions 1-3: the active controller removes the matching ACLs (a broker forwards)."""
    for f in req.filters:
        _refuse_unknown("DeleteAclsRequest", f.resource_type_filter, f.pattern_type_filter,
                        f.operation, f.permission_type)
    authorizer = getattr(ctx.broker, "authorizer", None)
    if authorizer is None:
        return DeleteAclsResponse(throttle_time_ms=0, filter_results=[
            DeleteAclsFilterResult(error_code=ErrorCode.SECURITY_DISABLED,
                                   error_message=NO_AUTHORIZER, matching_acls=[])
            for _ in req.filters])
    if forwards(ctx):
        return await to_controller(ctx, req)
    if not authorized(ctx, CLUSTER, ALTER):
        return DeleteAclsResponse(throttle_time_ms=0, filter_results=[
            DeleteAclsFilterResult(error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                                   error_message=CLUSTER_DENIED, matching_acls=[])
            for _ in req.filters])
    return await to_controller(ctx, req)
