"""Kafka's AclControlManager: the ACLs the metadata log holds, and CreateAcls / DeleteAcls as
the records that change them.

Every broker's StandardAuthorizer loads the ACLs of its metadata image, so an ACL created
through any broker (or a controller listener) applies on every node and survives restarts.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

from pykafkad.controller.result import ControllerResult
from pykafkad.security.authorizer import AclValidationError, filter_matches, validate_new_acl
from wire.errors import ErrorCode
from wire.messages.create_acls_response import AclCreationResult, CreateAclsResponse
from wire.messages.delete_acls_response import (
    DeleteAclsFilterResult,
    DeleteAclsMatchingAcl,
    DeleteAclsResponse,
)
from wire.metadata import AccessControlEntryRecord, RemoveAccessControlEntryRecord


def acl_fields(a) -> tuple:
    """What makes two ACLs the same ACL (Kafka's StandardAcl: all but the id)."""
    return (a.resource_type, a.resource_name, a.pattern_type, a.principal, a.host,
            a.operation, a.permission_type)


class AclControlManager:
    def __init__(self, new_id: Callable[[], bytes] = lambda: uuid.uuid4().bytes) -> None:
        self.acls: dict[bytes, AccessControlEntryRecord] = {}
        self._new_id = new_id

    def replay(self, record: AccessControlEntryRecord) -> None:
        self.acls[record.id] = record

    def replay_remove(self, record: RemoveAccessControlEntryRecord) -> None:
        self.acls.pop(record.id, None)

    def create_acls(self, request) -> ControllerResult:
        """One AccessControlEntryRecord per new ACL; an ACL that exists already (or twice in
        the request) succeeds without a record; an invalid one gets INVALID_REQUEST."""
        existing = {acl_fields(a) for a in self.acls.values()}
        records, results = [], []
        for c in request.creations:
            try:
                validate_new_acl(c.resource_type, c.resource_name, c.resource_pattern_type,
                                 c.principal, c.operation, c.permission_type)
            except AclValidationError as e:
                results.append(AclCreationResult(error_code=ErrorCode.INVALID_REQUEST,
                                                 error_message=str(e)))
                continue
            fields = (c.resource_type, c.resource_name, c.resource_pattern_type, c.principal,
                      c.host, c.operation, c.permission_type)
            if fields not in existing:
                existing.add(fields)
                records.append(AccessControlEntryRecord(self._fresh_id(), *fields))
            results.append(AclCreationResult(error_code=0, error_message=None))
        return ControllerResult(records, CreateAclsResponse(throttle_time_ms=0, results=results),
                                atomic=True)

    def delete_acls(self, request) -> ControllerResult:
        """Each filter lists every ACL it matches; an ACL several filters match is removed by
        one record."""
        removed: dict[bytes, RemoveAccessControlEntryRecord] = {}
        results = []
        for f in request.filters:
            matched = [(i, a) for i, a in self.acls.items() if filter_matches(a, f)]
            for acl_id, _ in matched:
                removed.setdefault(acl_id, RemoveAccessControlEntryRecord(acl_id))
            results.append(DeleteAclsFilterResult(error_code=0, error_message=None, matching_acls=[
                DeleteAclsMatchingAcl(
                    error_code=0, error_message=None, resource_type=a.resource_type,
                    resource_name=a.resource_name, pattern_type=a.pattern_type,
                    principal=a.principal, host=a.host, operation=a.operation,
                    permission_type=a.permission_type) for _, a in matched]))
        return ControllerResult(list(removed.values()),
                                DeleteAclsResponse(throttle_time_ms=0, filter_results=results),
                                atomic=True)

    def _fresh_id(self) -> bytes:
        while True:
            acl_id = self._new_id()
            if acl_id not in self.acls and acl_id != bytes(16):
                return acl_id
