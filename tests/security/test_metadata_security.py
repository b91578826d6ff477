"""ACLs and SCRAM users live in the metadata log, as in Kafka: the controller writes them
(AccessControlEntryRecord, UserScramCredentialRecord), every node loads them, and they survive
a restart. Driven with confluent-kafka's admin client and each node's own answers."""

from __future__ import annotations

import uuid

from confluent_kafka import KafkaException
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)

from compat.wire_client import WireClient
from pykafkad.security.testkit import client_settings
from pykafkad.testing import run_broker, run_cluster
from tests.integration.clients import WAIT_S
from tests.kraft.quorum_helpers import wait_for
from tests.security.conftest import sasl_config
from tests.security.test_listeners import confluent_round_trip
from wire.messages.describe_acls_request import DescribeAclsRequest
from wire.messages.describe_user_scram_credentials_request import (
    DescribeUserScramCredentialsRequest,
)

AUTHORIZER = {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer"}
SHA512 = ScramMechanism.SCRAM_SHA_512
ALICE_ALTERS_THE_CLUSTER = AclBinding(
    ResourceType.BROKER, "kafka-cluster", ResourcePatternType.LITERAL, "User:alice", "*",
    AclOperation.ALTER, AclPermissionType.ALLOW)


def read_acl(topic: str) -> AclBinding:
    return AclBinding(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, "User:bob", "*",
                      AclOperation.READ, AclPermissionType.ALLOW)


def node_acls(address: str) -> list[tuple]:
    """DescribeAcls (v3, every ACL) answered by the node at ``address`` itself."""
    with WireClient(address) as client:
        resp = client.request(29, 3, DescribeAclsRequest(
            resource_type_filter=1, resource_name_filter=None, pattern_type_filter=1,
            principal_filter=None, host_filter=None, operation=1, permission_type=1))
    assert resp.error_code == 0, resp.error_message
    return sorted((r.resource_name, a.principal, a.operation)
                  for r in resp.resources for a in r.acls)


def node_scram_users(address: str) -> list[tuple]:
    with WireClient(address) as client:
        resp = client.request(50, 0, DescribeUserScramCredentialsRequest(users=None))
    return sorted((r.user, [(i.mechanism, i.iterations) for i in r.credential_infos])
                  for r in resp.results)


def test_acls_and_scram_users_survive_a_restart(tmp_path):
    """A super user (PLAIN) adds a SCRAM user and an ACL; after a restart on the same data dir
    the user logs in with SCRAM and the ACL is still there; another user is refused
    CreateAcls by the controller (with the principal the forwarded request carries)."""
    config = {**sasl_config("SASL_PLAINTEXT"), **AUTHORIZER, "super.users": "User:alice",
              "allow.everyone.if.no.acl.found": "true"}
    alice = client_settings("SASL_PLAINTEXT", mechanism="PLAIN", username="alice",
                            password="alice-secret")["confluent"]
    bob = client_settings("SASL_PLAINTEXT", mechanism="PLAIN", username="bob",
                          password="bob-secret")["confluent"]
    topic = f"persisted-{uuid.uuid4().hex[:6]}"
    data = tmp_path / "data"
    with run_broker(data, config=config, security_protocol="SASL_PLAINTEXT") as b:
        admin = AdminClient({"bootstrap.servers": b.bootstrap_servers, **alice})
        admin.alter_user_scram_credentials([UserScramCredentialUpsertion(
            "carol", ScramCredentialInfo(SHA512, 4096), b"carol-pw")])["carol"].result(WAIT_S)
        for acl in (read_acl(topic), ALICE_ALTERS_THE_CLUSTER):  # (bob no longer may)
            admin.create_acls([acl])[acl].result(WAIT_S)
        denied = AdminClient({"bootstrap.servers": b.bootstrap_servers, **bob})
        other = read_acl(topic + "-x")
        try:
            denied.create_acls([other])[other].result(WAIT_S)
            raise AssertionError("bob created an ACL")
        except KafkaException as e:
            assert e.args[0].name() == "CLUSTER_AUTHORIZATION_FAILED"
        # while alice still may: the controller sees each client's own principal
        assert list(admin.delete_acls([AclBindingFilter(
            ResourceType.TOPIC, "nothing-here", ResourcePatternType.LITERAL, None, None,
            AclOperation.ANY, AclPermissionType.ANY)]).values())[0].result(WAIT_S) == []
    with run_broker(data, config=config, security_protocol="SASL_PLAINTEXT") as b:
        carol = client_settings("SASL_PLAINTEXT", mechanism="SCRAM-SHA-512", username="carol",
                                password="carol-pw")["confluent"]
        assert confluent_round_trip(b.bootstrap_servers, carol) == b"over-sasl_plaintext"
        admin = AdminClient({"bootstrap.servers": b.bootstrap_servers, **alice})
        acls = admin.describe_acls(AclBindingFilter(
            ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY,
            AclPermissionType.ANY)).result(WAIT_S)
        assert sorted(acls) == sorted([read_acl(topic), ALICE_ALTERS_THE_CLUSTER])


def test_every_node_of_a_cluster_applies_the_acls_and_users_one_node_took(tmp_path):
    config = {**AUTHORIZER, "super.users": "User:ANONYMOUS"}
    topic = f"everywhere-{uuid.uuid4().hex[:6]}"
    with run_cluster(3, config=config, data_dir=tmp_path / "cluster") as c:
        addresses = {i: f"{n.host}:{n.port}" for i, n in c.nodes.items()}
        first, second, third = sorted(addresses)
        via_first = AdminClient({"bootstrap.servers": addresses[first]})
        via_first.create_acls([read_acl(topic)])[read_acl(topic)].result(WAIT_S)
        via_second = AdminClient({"bootstrap.servers": addresses[second]})
        via_second.alter_user_scram_credentials([UserScramCredentialUpsertion(
            "dave", ScramCredentialInfo(SHA512, 8192), b"dave-pw")])["dave"].result(WAIT_S)
        acl = [(topic, "User:bob", AclOperation.READ.value)]
        for node, address in addresses.items():
            wait_for(lambda a=address: node_acls(a) == acl, f"the ACL on node {node}")
            wait_for(lambda a=address: node_scram_users(a) == [("dave", [(2, 8192)])],
                       f"the SCRAM user on node {node}")
        via_third = AdminClient({"bootstrap.servers": addresses[third]})
        gone = via_third.delete_acls([AclBindingFilter(
            ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, None, None,
            AclOperation.ANY, AclPermissionType.ANY)])
        assert list(gone.values())[0].result(WAIT_S) == [read_acl(topic)]
        for node, address in addresses.items():
            wait_for(lambda a=address: node_acls(a) == [], f"no ACL on node {node}")
