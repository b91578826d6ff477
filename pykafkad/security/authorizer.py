"""Kafka's StandardAuthorizer: ACLs (AccessControlEntryRecords, as the metadata log holds
them) decide whether a principal, from a host, may do an operation on a resource.

Rules, as Kafka 4.4 applies them: a super user may do everything; a DENY that matches wins
over every ALLOW; an ALLOW of READ, WRITE, DELETE or ALTER implies DESCRIBE and one of
ALTER_CONFIGS implies DESCRIBE_CONFIGS; ALL matches every operation; an ACL matches the
resource by literal name, the literal wildcard "*" or a prefix; a resource that no ACL names
at all is allowed only with ``allow.everyone.if.no.acl.found``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from pykafkad.config import ConfigError
from wire.metadata.access_control_entry_record import AccessControlEntryRecord

STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"

# ResourceType codes
ANY_RESOURCE, TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID, DELEGATION_TOKEN, USER = 1, 2, 3, 4, 5, 6, 7
# PatternType codes
ANY_PATTERN, MATCH, LITERAL, PREFIXED = 1, 2, 3, 4
# AclOperation codes
ANY_OP, ALL, READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE = 1, 2, 3, 4, 5, 6, 7, 8
CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE = 9, 10, 11, 12
CREATE_TOKENS, DESCRIBE_TOKENS, TWO_PHASE_COMMIT = 13, 14, 15
# AclPermissionType codes
ANY_PERMISSION, DENY, ALLOW = 1, 2, 3

WILDCARD = "*"
CLUSTER_NAME = "kafka-cluster"

#: operations an ALLOW of another operation implies
_IMPLIED_BY = {DESCRIBE: (READ, WRITE, DELETE, ALTER), DESCRIBE_CONFIGS: (ALTER_CONFIGS,)}

#: the operations each resource type has (Kafka's AclEntry.supportedOperations)
SUPPORTED_OPERATIONS: dict[int, tuple[int, ...]] = {
    TOPIC: (READ, WRITE, CREATE, DESCRIBE, DELETE, ALTER, DESCRIBE_CONFIGS, ALTER_CONFIGS),
    GROUP: (READ, DESCRIBE, DELETE, DESCRIBE_CONFIGS, ALTER_CONFIGS),
    CLUSTER: (CREATE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, ALTER,
              DESCRIBE),
    TRANSACTIONAL_ID: (DESCRIBE, WRITE, TWO_PHASE_COMMIT),
    DELEGATION_TOKEN: (DESCRIBE,),
    USER: (CREATE_TOKENS, DESCRIBE_TOKENS),
}


class AclValidationError(ValueError):
    """An ACL creation Kafka refuses with INVALID_REQUEST; the text is Kafka's message."""


def authorizer_from_config(values: Mapping[str, str]) -> StandardAuthorizer | None:
    """The node's authorizer from its raw ``authorizer.class.name``, ``super.users`` and
    ``allow.everyone.if.no.acl.found``; None (no authorizer) when the class name is unset.
    Kafka 4 has no other built-in authorizer: AclAuthorizer left with ZooKeeper, so that
    name, like any other class, fails start-up."""
    name = str(values.get("authorizer.class.name", "") or "").strip()
    if not name:
        return None
    if name != STANDARD_AUTHORIZER:
        raise ConfigError(
            f"Invalid value {name} for configuration authorizer.class.name: "
            f"Class {name} cannot be found", "authorizer.class.name")
    supers = str(values.get("super.users", "") or "")
    allow = str(values.get("allow.everyone.if.no.acl.found", "false")).strip().lower() == "true"
    return StandardAuthorizer(
        super_users=frozenset(s.strip() for s in supers.split(";") if s.strip()),
        allow_everyone_if_no_acl_found=allow)


def validate_new_acl(resource_type: int, name: str, pattern_type: int, principal: str,
                     operation: int, permission_type: int) -> None:
    """Kafka's checks on a CreateAcls creation (AclApis, AclControlManager)."""
    if resource_type not in SUPPORTED_OPERATIONS:
        raise AclValidationError(f"Invalid resourceType {resource_type}")
    if pattern_type not in (LITERAL, PREFIXED):
        raise AclValidationError(f"Invalid patternType {pattern_type}")
    if operation < ALL or operation > TWO_PHASE_COMMIT:
        raise AclValidationError(f"Invalid operation {operation}")
    if permission_type not in (DENY, ALLOW):
        raise AclValidationError(f"Invalid permissionType {permission_type}")
    if not name:
        raise AclValidationError("Resource name should not be empty")
    if resource_type == CLUSTER and name != CLUSTER_NAME:
        raise AclValidationError("The only valid name for the CLUSTER resource is kafka-cluster")
    if ":" not in principal or principal.startswith(":"):
        raise AclValidationError(f"Could not parse principal from `{principal}` (no colon is "
                                 "present separating the principal type from the principal "
                                 "name)")
    if operation != ALL and operation not in SUPPORTED_OPERATIONS[resource_type]:
        raise AclValidationError(f"Invalid operation {operation} for resource type "
                                 f"{resource_type}")


def filter_matches(acl: AccessControlEntryRecord, f) -> bool:
    """Whether ``acl`` matches a DescribeAcls/DeleteAcls filter (``f`` has Kafka's
    ``*_filter`` fields): ANY matches all; MATCH matches the ACLs that apply to the named
    resource (its literal, the wildcard, and prefixes of it)."""
    rt, pt, name = f.resource_type_filter, f.pattern_type_filter, f.resource_name_filter
    if rt != ANY_RESOURCE and acl.resource_type != rt:
        return False
    if pt == MATCH:
        if name is not None and not _pattern_covers(acl, name):
            return False
    else:
        if pt != ANY_PATTERN and acl.pattern_type != pt:
            return False
        if name is not None and acl.resource_name != name:
            return False
    if f.principal_filter is not None and acl.principal != f.principal_filter:
        return False
    if f.host_filter is not None and acl.host != f.host_filter:
        return False
    if f.operation != ANY_OP and acl.operation != f.operation:
        return False
    return f.permission_type == ANY_PERMISSION or acl.permission_type == f.permission_type


def _pattern_covers(acl: AccessControlEntryRecord, name: str) -> bool:
    if acl.pattern_type == LITERAL:
        return acl.resource_name in (name, WILDCARD)
    return acl.pattern_type == PREFIXED and name.startswith(acl.resource_name)


class StandardAuthorizer:
    """The ACLs by id, and the decisions made from them."""

    def __init__(self, *, super_users: frozenset[str] = frozenset(),
                 allow_everyone_if_no_acl_found: bool = False) -> None:
        self.super_users = super_users
        self.allow_everyone_if_no_acl_found = allow_everyone_if_no_acl_found
        self.acls: dict[bytes, AccessControlEntryRecord] = {}

    # --- the metadata log's view

    def replay(self, record: AccessControlEntryRecord) -> None:
        self.acls[record.id] = record

    def remove(self, acl_id: bytes) -> None:
        self.acls.pop(acl_id, None)

    def load(self, acls: Mapping[bytes, AccessControlEntryRecord]) -> None:
        """Takes a metadata image's ACLs as they are."""
        self.acls = dict(acls)

    def matching(self, f) -> Iterator[AccessControlEntryRecord]:
        return (a for a in self.acls.values() if filter_matches(a, f))

    # --- decisions

    def authorize(self, principal: str, host: str, operation: int, resource_type: int,
                  name: str) -> bool:
        if principal in self.super_users:
            return True
        found = allowed = False
        for acl in self._on_resource(resource_type, name):
            found = True
            if acl.principal not in (principal, "User:*") or acl.host not in (host, WILDCARD):
                continue
            if acl.permission_type == DENY:
                if acl.operation in (operation, ALL):
                    return False
            elif acl.operation in (operation, ALL) or acl.operation in _IMPLIED_BY.get(
                    operation, ()):
                allowed = True
        return allowed or (not found and self.allow_everyone_if_no_acl_found)

    def authorize_any(self, principal: str, host: str, operation: int,
                      resource_type: int) -> bool:
        """Whether some resource of the type may get the operation (Kafka's
        authorizeByResourceType, for an idempotent producer's WRITE on any topic): first as
        for a resource no ACL names (super users, allow.everyone.if.no.acl.found, wildcard
        ACLs), then for each name an ACL gives."""
        if self.authorize(principal, host, operation, resource_type, "hardcode"):
            return True
        names = {a.resource_name for a in self.acls.values()
                 if a.resource_type == resource_type and a.permission_type == ALLOW}
        return any(self.authorize(principal, host, operation, resource_type, n) for n in names)

    def authorized_operations(self, principal: str, host: str, resource_type: int,
                              name: str) -> int:
        """KIP-430's bit field: ``1 << code`` for each supported operation allowed."""
        return sum(1 << op for op in SUPPORTED_OPERATIONS[resource_type]
                   if self.authorize(principal, host, op, resource_type, name))

    def _on_resource(self, resource_type: int, name: str) -> Iterable[AccessControlEntryRecord]:
        return (a for a in self.acls.values()
                if a.resource_type == resource_type and _pattern_covers(a, name))
