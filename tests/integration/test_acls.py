"""ACL APIs without an authorizer, as Apache Kafka 4.4 answers them: advertised, and every
call SECURITY_DISABLED with Kafka's messages (pykafkad/handlers/acls.py).  kafka-python's own
test_create_describe_delete_acls fails the same way on both (it needs an authorizer); before,
kafka-python said the broker did not support DescribeAcls at all."""

from __future__ import annotations

import pytest
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)
from confluent_kafka.error import KafkaException
from kafka.admin import ACLFilter, ACLOperation, ACLPermissionType, KafkaAdminClient
from kafka.admin import ResourcePattern as KResourcePattern
from kafka.admin import ResourceType as KResourceType
from kafka.errors import SecurityDisabledError

from compat.wire_client import WireClient
from tests.integration.clients import WAIT_S, needs_java
from wire.messages.create_acls_request import AclCreation, CreateAclsRequest
from wire.messages.delete_acls_request import DeleteAclsFilter, DeleteAclsRequest
from wire.messages.describe_acls_request import DescribeAclsRequest

ANY_FILTER = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None,
                              AclOperation.ANY, AclPermissionType.ANY)
BINDING = AclBinding(ResourceType.TOPIC, "suites-acl-t", ResourcePatternType.LITERAL, "User:x",
                     "*", AclOperation.READ, AclPermissionType.ALLOW)


def _error(fn) -> tuple[int, str] | str:
    try:
        fn()
    except KafkaException as e:
        return e.args[0].code(), e.args[0].str()
    return "no error"


def _confluent_answers(bootstrap: str) -> dict:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    [create] = admin.create_acls([BINDING]).values()
    [delete] = admin.delete_acls([ANY_FILTER]).values()
    return {
        "create": _error(lambda: create.result(WAIT_S)),
        "delete": _error(lambda: delete.result(WAIT_S)),
        "describe": _error(lambda: admin.describe_acls(ANY_FILTER).result(WAIT_S)),
    }


def _raw(bootstrap: str, api_key: int, request) -> object:
    """The raw answer's error fields, or "closed" when the broker closes the connection."""
    try:
        with WireClient(bootstrap) as c:
            r = c.request(api_key, 3, request)
    except ConnectionError:
        return "closed"
    if api_key == 29:
        return r.error_code, r.error_message, r.resources
    rows = r.results if api_key == 30 else r.filter_results
    return [(x.error_code, x.error_message) for x in rows]


def _describe(**codes) -> DescribeAclsRequest:
    fields = dict(resource_type_filter=1, resource_name_filter=None, pattern_type_filter=1,
                  principal_filter=None, host_filter=None, operation=1, permission_type=1)
    return DescribeAclsRequest(**{**fields, **codes})


def _creation(**codes) -> AclCreation:
    fields = dict(resource_type=2, resource_name="t", resource_pattern_type=3,
                  principal="User:x", host="*", operation=3, permission_type=3)
    return AclCreation(**{**fields, **codes})


def _filter(**codes) -> DeleteAclsFilter:
    fields = dict(resource_type_filter=1, resource_name_filter=None, pattern_type_filter=1,
                  principal_filter=None, host_filter=None, operation=1, permission_type=1)
    return DeleteAclsFilter(**{**fields, **codes})


def _raw_answers(bootstrap: str) -> dict:
    """UNKNOWN (0) in any enum field closes the connection; codes Kafka does not know do not."""
    answers = {}
    for field in ("resource_type_filter", "pattern_type_filter", "operation", "permission_type"):
        for code in (0, 100):
            answers[("describe", field, code)] = _raw(bootstrap, 29, _describe(**{field: code}))
            answers[("delete", field, code)] = _raw(
                bootstrap, 31, DeleteAclsRequest(filters=[_filter(**{field: code})]))
    for field in ("resource_type", "resource_pattern_type", "operation", "permission_type"):
        for code in (0, 1, 100):
            answers[("create", field, code)] = _raw(
                bootstrap, 30, CreateAclsRequest(creations=[_creation(**{field: code})]))
    answers["create two"] = _raw(bootstrap, 30, CreateAclsRequest(creations=[_creation()] * 2))
    answers["create none"] = _raw(bootstrap, 30, CreateAclsRequest(creations=[]))
    answers["delete none"] = _raw(bootstrap, 31, DeleteAclsRequest(filters=[]))
    return answers


def test_acl_calls_are_security_disabled(broker):
    answers = _confluent_answers(broker.bootstrap_servers)
    assert answers["create"] == (54, "No Authorizer is configured.")
    assert answers["delete"] == (54, "No Authorizer is configured.")
    with KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers) as admin:
        with pytest.raises(SecurityDisabledError):
            admin.describe_acls(ACLFilter(
                principal=None, host="*", operation=ACLOperation.ANY,
                permission_type=ACLPermissionType.ANY,
                resource_pattern=KResourcePattern(KResourceType.TOPIC, "topic")))


@needs_java
def test_acl_answers_are_kafkas(broker, reference_kafka):
    ref = reference_kafka.bootstrap_servers
    assert _confluent_answers(broker.bootstrap_servers) == _confluent_answers(ref)
    assert _raw_answers(broker.bootstrap_servers) == _raw_answers(ref)
