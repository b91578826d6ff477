"""The controller's ACLs and SCRAM users (Kafka's AclControlManager, ScramControlManager):
what CreateAcls, DeleteAcls and AlterUserScramCredentials write to the metadata log, and the
state a standby builds by replaying it."""

from __future__ import annotations

import hashlib

from pykafkad.controller import QuorumController
from tests.controller.support import MetadataLog
from wire.messages.alter_user_scram_credentials_request import (
    AlterUserScramCredentialsRequest,
    ScramCredentialDeletion,
    ScramCredentialUpsertion,
)
from wire.messages.create_acls_request import AclCreation, CreateAclsRequest
from wire.messages.delete_acls_request import DeleteAclsFilter, DeleteAclsRequest
from wire.metadata import (
    AccessControlEntryRecord,
    RemoveAccessControlEntryRecord,
    RemoveUserScramCredentialRecord,
    UserScramCredentialRecord,
)

TOPIC, LITERAL, PREFIXED, READ, WRITE, ALLOW = 2, 3, 4, 3, 4, 3


def creation(name: str, operation: int = READ, pattern: int = LITERAL) -> AclCreation:
    return AclCreation(resource_type=TOPIC, resource_name=name, resource_pattern_type=pattern,
                       principal="User:bob", host="*", operation=operation,
                       permission_type=ALLOW)


def by_name(name: str | None, pattern: int = 1) -> DeleteAclsFilter:
    return DeleteAclsFilter(resource_type_filter=TOPIC, resource_name_filter=name,
                            pattern_type_filter=pattern, principal_filter=None, host_filter=None,
                            operation=1, permission_type=1)


def test_an_acl_is_written_once_however_often_it_is_created():
    log = MetadataLog()
    response, records = log.handle(CreateAclsRequest(creations=[
        creation("t"), creation("t"), creation("t", WRITE), creation("", READ)]))
    assert [(r.error_code, r.error_message) for r in response.results] == [
        (0, None), (0, None), (0, None), (42, "Resource name should not be empty")]
    assert [(type(r), r.resource_name, r.operation) for r in records] == [
        (AccessControlEntryRecord, "t", READ), (AccessControlEntryRecord, "t", WRITE)]
    _, again = log.handle(CreateAclsRequest(creations=[creation("t")]))
    assert again == []


def test_an_acl_two_filters_match_is_listed_by_both_and_removed_once():
    log = MetadataLog()
    log.handle(CreateAclsRequest(creations=[creation("t"), creation("t", WRITE),
                                            creation("u")]))
    response, records = log.handle(DeleteAclsRequest(filters=[by_name("t"), by_name(None)]))
    assert [sorted((a.resource_name, a.operation) for a in f.matching_acls)
            for f in response.filter_results] == [[("t", READ), ("t", WRITE)],
                                                   [("t", READ), ("t", WRITE), ("u", READ)]]
    assert len(records) == 3 and all(type(r) is RemoveAccessControlEntryRecord for r in records)
    assert log.controller.acls.acls == {}


def upsertion(user: str, mechanism: int = 2, iterations: int = 4096) -> ScramCredentialUpsertion:
    salt = b"s" * 16
    salted = hashlib.pbkdf2_hmac({1: "sha256", 2: "sha512"}[mechanism], b"pw", salt, iterations)
    return ScramCredentialUpsertion(name=user, mechanism=mechanism, iterations=iterations,
                                    salt=salt, salted_password=salted)


def test_scram_users_are_records_and_a_standby_replays_them():
    log = MetadataLog()
    response, records = log.handle(AlterUserScramCredentialsRequest(
        deletions=[], upsertions=[upsertion("carol"), upsertion("dave", 1, 8192)]))
    assert [r.error_code for r in response.results] == [0, 0]
    assert [(type(r), r.name, r.mechanism, r.iterations) for r in records] == [
        (UserScramCredentialRecord, "carol", 2, 4096),
        (UserScramCredentialRecord, "dave", 1, 8192)]
    response, records = log.handle(AlterUserScramCredentialsRequest(
        deletions=[ScramCredentialDeletion(name="carol", mechanism=1),
                   ScramCredentialDeletion(name="dave", mechanism=1)], upsertions=[]))
    assert [(r.user, r.error_code) for r in response.results] == [("carol", 91), ("dave", 0)]
    assert [type(r) for r in records] == [RemoveUserScramCredentialRecord]
    log.handle(CreateAclsRequest(creations=[creation("t", pattern=PREFIXED)]))

    standby = QuorumController(log.cluster_id)
    for offset, record in enumerate(log.records):
        standby.replay(record, offset)
    assert standby.scram.credentials == log.controller.scram.credentials
    assert list(standby.scram.credentials) == [("carol", 2)]
    assert standby.acls.acls == log.controller.acls.acls and len(standby.acls.acls) == 1
