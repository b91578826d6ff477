"""Authorization with Kafka's StandardAuthorizer (pykafkad/security/authorizer.py): stock
clients create, list and delete ACLs, and a DENY for this host (127.0.0.1, the principal
User:ANONYMOUS of a PLAINTEXT connection) makes Produce answer TOPIC_AUTHORIZATION_FAILED
and Metadata hide the topic, until the ACL is deleted; an ACL for another host changes
nothing.  The same scenario runs against Apache Kafka 4.4 with the StandardAuthorizer."""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewPartitions,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)
from kafka.admin import ACL, ACLFilter, ACLOperation, ACLPermissionType, KafkaAdminClient
from kafka.admin import ResourcePattern as KResourcePattern
from kafka.admin import ResourceType as KResourceType

from pykafkad.config import BrokerConfig, ConfigError
from pykafkad.security.authorizer import STANDARD_AUTHORIZER, authorizer_from_config
from pykafkad.testing import run_broker
from tests.integration.clients import WAIT_S, create_topic, needs_java

#: everything allowed until an ACL names a resource, so the test's own client (and Kafka's
#: inter-node connections, also User:ANONYMOUS) may create ACLs
OPEN = {"authorizer.class.name": STANDARD_AUTHORIZER, "allow.everyone.if.no.acl.found": "true"}


@pytest.fixture(scope="module")
def kafka_with_authorizer():
    from compat.kafka_broker import run_kafka

    with run_kafka("4.4.0", config=OPEN) as kafka:
        yield f"127.0.0.1:{kafka.port}"


#: a filter every ACL matches
EVERY_ACL = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None,
                             AclOperation.ANY, AclPermissionType.ANY)


def _delete_every_acl(admin: AdminClient) -> None:
    """Each scenario leaves the broker (shared, on Kafka's side) with no ACL."""
    for f in admin.delete_acls([EVERY_ACL]).values():
        f.result(WAIT_S)


def _with_acls(admin: AdminClient, bindings: list) -> None:
    """Creates ``bindings`` and waits until the broker lists them (ACLs reach a broker's
    authorizer through the metadata log, on Kafka as here)."""
    for f in admin.create_acls(bindings).values():
        f.result(WAIT_S)
    _until(lambda: len(admin.describe_acls(EVERY_ACL).result(WAIT_S)), len(bindings),
           "the ACLs on the broker")


def _binding(topic: str, host: str, op=AclOperation.WRITE,
             permission=AclPermissionType.DENY) -> AclBinding:
    return AclBinding(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, "User:ANONYMOUS",
                      host, op, permission)


def _produce_error(bootstrap: str, topic: str) -> str | None:
    """One record's delivery: None, or the error's name."""
    result = []
    p = Producer({"bootstrap.servers": bootstrap, "message.timeout.ms": 10000})
    p.produce(topic, b"v", on_delivery=lambda err, msg: result.append(err))
    p.flush(WAIT_S)
    err = result[0] if result else "undelivered"
    return None if err is None else (err.name() if isinstance(err, KafkaError) else err)


def _until(fn, want, what: str):
    """Polls ``fn()`` until it gives ``want`` (ACL changes reach a Kafka broker a little
    after CreateAcls answers), with a deadline."""
    deadline = time.monotonic() + WAIT_S
    while True:
        got = fn()
        if got == want or time.monotonic() > deadline:
            return got
        time.sleep(0.2)


def _scenario(bootstrap: str) -> dict:
    topic = f"authz-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    out: dict = {"before": _produce_error(bootstrap, topic)}

    def add(*bindings):
        for f in admin.create_acls(list(bindings)).values():
            f.result(WAIT_S)

    # once ACLs name the topic, allow.everyone.if.no.acl.found no longer applies to it: this
    # host is allowed everything, another host denied WRITE (which does not touch this one)
    add(_binding(topic, "127.0.0.1", AclOperation.ALL, AclPermissionType.ALLOW),
        _binding(topic, "10.9.9.9"))
    out["other_host_denied"] = _until(lambda: _produce_error(bootstrap, topic), None, "allowed")
    add(_binding(topic, "127.0.0.1"))  # DENY wins over the ALLOW ALL
    out["denied"] = _until(lambda: _produce_error(bootstrap, topic),
                           "TOPIC_AUTHORIZATION_FAILED", "deny")
    flt = AclBindingFilter(ResourceType.TOPIC, topic, ResourcePatternType.ANY, None, None,
                           AclOperation.ANY, AclPermissionType.ANY)
    out["listed"] = sorted(str(b).replace(topic, "T")
                           for b in admin.describe_acls(flt).result(WAIT_S))
    out["visible"] = topic in admin.list_topics(timeout=WAIT_S).topics  # the ALLOW ALL covers DESCRIBE
    add(_binding(topic, "127.0.0.1", AclOperation.DESCRIBE))
    out["hidden"] = _until(lambda: topic in admin.list_topics(timeout=WAIT_S).topics, False,
                           "hidden")
    [deleted] = admin.delete_acls([flt]).values()
    out["deleted"] = sorted(str(b).replace(topic, "T") for b in deleted.result(WAIT_S))
    out["after"] = _until(lambda: _produce_error(bootstrap, topic), None, "allowed again")
    return out


def test_deny_then_allow_with_stock_clients():
    with run_broker(config=OPEN) as b:
        got = _scenario(b.bootstrap_servers)
    assert got["before"] is None
    assert got["other_host_denied"] is None
    assert got["denied"] == "TOPIC_AUTHORIZATION_FAILED"
    assert len(got["listed"]) == 3 and len(got["deleted"]) == 4
    assert got["visible"] is True and got["hidden"] is False
    assert got["after"] is None


@needs_java
def test_same_answers_as_kafka(kafka_with_authorizer):
    with run_broker(config=OPEN) as b:
        ours = _scenario(b.bootstrap_servers)
    theirs = _scenario(kafka_with_authorizer)
    assert ours == theirs


def test_kafka_python_create_describe_delete_acls():
    """kafka-python's admin round trip (as its test_create_describe_delete_acls), with the
    client a super user."""
    config = {"authorizer.class.name": STANDARD_AUTHORIZER, "super.users": "User:ANONYMOUS"}
    with run_broker(config=config) as b:
        admin = KafkaAdminClient(bootstrap_servers=b.bootstrap_servers)
        try:
            acl = ACL(principal="User:test", host="*", operation=ACLOperation.READ,
                      permission_type=ACLPermissionType.ALLOW,
                      resource_pattern=KResourcePattern(KResourceType.TOPIC, "topic"))
            flt = ACLFilter(principal=None, host="*", operation=ACLOperation.ANY,
                            permission_type=ACLPermissionType.ANY,
                            resource_pattern=KResourcePattern(KResourceType.TOPIC, "topic"))
            assert admin.describe_acls(flt)[0] == []
            result = admin.create_acls([acl])
            assert len(result["succeeded"]) == 1 and not result["failed"]
            acls, _ = admin.describe_acls(flt)
            assert len(acls) == 1
            [(_, deleted, error)] = admin.delete_acls([flt])
            assert len(deleted) == 1 and error.errno == 0
            assert admin.describe_acls(flt)[0] == []
        finally:
            admin.close()


def test_acl_authorizer_is_refused_as_kafka_4_refuses_it():
    """Kafka 4 dropped kafka.security.authorizer.AclAuthorizer (ZooKeeper's): start-up fails."""
    config = BrokerConfig({"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer"})
    with pytest.raises(ConfigError, match="AclAuthorizer"):
        authorizer_from_config(config.ignored)
    assert authorizer_from_config(BrokerConfig({}).ignored) is None


def _consume_error(bootstrap: str, topic: str, group: str, **conf) -> str | None:
    """The first error a subscribed consumer of ``group`` meets, or None once it reads."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                  "auto.offset.reset": "earliest", **conf})
    try:
        c.subscribe([topic])
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            msg = c.poll(0.5)
            if msg is None:
                continue
            return msg.error().name() if msg.error() else None
        return "nothing read"
    finally:
        c.close()


def _group_and_create_scenario(bootstrap: str) -> dict:
    run = uuid.uuid4().hex[:8]
    topic, group, prefix = f"authz-g-{run}", f"authz-g-{run}", f"authz-c-{run}-"
    create_topic(bootstrap, topic)
    admin = AdminClient({"bootstrap.servers": bootstrap})

    def add(*bindings):
        for f in admin.create_acls(list(bindings)).values():
            f.result(WAIT_S)

    def create(name):
        [f] = admin.create_topics([NewTopic(name, 1, 1)]).values()
        try:
            f.result(WAIT_S)
        except KafkaException as e:
            return e.args[0].name(), e.args[0].str()
        return None

    out: dict = {}
    _produce_error(bootstrap, topic)
    add(_binding(topic, "127.0.0.1", AclOperation.ALL, AclPermissionType.ALLOW))
    group_acl = AclBinding(ResourceType.GROUP, group, ResourcePatternType.LITERAL,
                           "User:ANONYMOUS", "127.0.0.1", AclOperation.READ,
                           AclPermissionType.DENY)
    add(group_acl)
    out["group_denied"] = _until(lambda: _consume_error(bootstrap, topic, group),
                                 "GROUP_AUTHORIZATION_FAILED", "group denied")
    # READ on the topic denied, the group allowed (its own ALLOW READ)
    add(AclBinding(ResourceType.GROUP, group + "-ok", ResourcePatternType.LITERAL,
                   "User:ANONYMOUS", "*", AclOperation.READ, AclPermissionType.ALLOW),
        _binding(topic, "127.0.0.1", AclOperation.READ))
    out["topic_denied"] = _until(lambda: _consume_error(bootstrap, topic, group + "-ok"),
                                 "TOPIC_AUTHORIZATION_FAILED", "topic denied")
    # CREATE: the cluster's (no ACL: allowed) or the topic's; DENY both for this host
    add(AclBinding(ResourceType.TOPIC, prefix, ResourcePatternType.PREFIXED, "User:ANONYMOUS",
                   "127.0.0.1", AclOperation.CREATE, AclPermissionType.DENY))
    out["created_by_cluster_create"] = create(prefix + "1")
    add(AclBinding(ResourceType.BROKER, "kafka-cluster", ResourcePatternType.LITERAL,
                   "User:ANONYMOUS", "*", AclOperation.ALL, AclPermissionType.ALLOW),
        AclBinding(ResourceType.BROKER, "kafka-cluster", ResourcePatternType.LITERAL,
                   "User:ANONYMOUS", "127.0.0.1", AclOperation.CREATE, AclPermissionType.DENY))
    # a fresh name per try: a create that ran before the new ACLs reached the authorizer
    # (ACLs travel through the metadata log, on Kafka as here) made its topic
    tries = iter(range(1000))
    out["create_denied"] = _until(lambda: create(f"{prefix}2-{next(tries)}"),
                                  ("TOPIC_AUTHORIZATION_FAILED", "Authorization failed."),
                                  "create denied")
    for f in admin.delete_acls([AclBindingFilter(
            ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY,
            AclPermissionType.ANY)]).values():
        f.result(WAIT_S)
    return out


def test_group_topic_and_create_denials():
    with run_broker(config=OPEN) as b:
        got = _group_and_create_scenario(b.bootstrap_servers)
    assert got == {"group_denied": "GROUP_AUTHORIZATION_FAILED",
                   "topic_denied": "TOPIC_AUTHORIZATION_FAILED",
                   "created_by_cluster_create": None,
                   "create_denied": ("TOPIC_AUTHORIZATION_FAILED", "Authorization failed.")}


@needs_java
def test_group_topic_and_create_denials_as_kafka(kafka_with_authorizer):
    with run_broker(config=OPEN) as b:
        ours = _group_and_create_scenario(b.bootstrap_servers)
    assert ours == _group_and_create_scenario(kafka_with_authorizer)


def _kafka_acls_session(bootstrap: str) -> list[tuple[int, str]]:
    """kafka-acls --add, --list and --remove (with --force) of one ACL, as a person runs them;
    each run's exit status and output with the random topic name replaced."""
    from compat.kafka_tools import run_tool

    topic = f"authz-tool-{uuid.uuid4().hex[:8]}"
    acl = ["--allow-principal", "User:alice", "--allow-host", "10.0.0.1", "--operation", "Read",
           "--topic", topic]
    runs = [["--add", *acl], ["--list", "--topic", topic], ["--remove", "--force", *acl],
            ["--list", "--topic", topic]]
    out = []
    for args in runs:
        r = run_tool("kafka-acls", ["--bootstrap-server", bootstrap, *args])
        out.append((r.returncode, r.stdout.replace(topic, "T")))
    return out


@needs_java
def test_kafka_acls_tool_prints_as_for_kafka(kafka_with_authorizer):
    with run_broker(config=OPEN) as b:
        ours = _kafka_acls_session(b.bootstrap_servers)
    assert ours[0][0] == 0 and "User:alice" in ours[1][1], ours
    assert ours == _kafka_acls_session(kafka_with_authorizer)


def _authorized_operations_scenario(bootstrap: str) -> dict:
    """KIP-430's authorized operations of the cluster and a topic, before and after ACLs."""
    from confluent_kafka import TopicCollection

    topic = f"authz-ops-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic)
    admin = AdminClient({"bootstrap.servers": bootstrap})

    def ops() -> tuple:
        cluster = admin.describe_cluster(include_authorized_operations=True).result(WAIT_S)
        [t] = admin.describe_topics(TopicCollection([topic]),
                                    include_authorized_operations=True).values()
        return (sorted(o.name for o in cluster.authorized_operations),
                sorted(o.name for o in t.result(WAIT_S).authorized_operations))

    out = {"open": ops()}
    for f in admin.create_acls([
            AclBinding(ResourceType.BROKER, "kafka-cluster", ResourcePatternType.LITERAL,
                       "User:ANONYMOUS", "*", AclOperation.ALL, AclPermissionType.ALLOW),
            AclBinding(ResourceType.BROKER, "kafka-cluster", ResourcePatternType.LITERAL,
                       "User:ANONYMOUS", "127.0.0.1", AclOperation.ALTER_CONFIGS,
                       AclPermissionType.DENY),
            _binding(topic, "*", AclOperation.READ, AclPermissionType.ALLOW)]).values():
        f.result(WAIT_S)
    deadline = time.monotonic() + WAIT_S
    while (got := ops()) == out["open"] and time.monotonic() < deadline:
        time.sleep(0.2)
    out["acls"] = got
    for f in admin.delete_acls([AclBindingFilter(
            ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY,
            AclPermissionType.ANY)]).values():
        f.result(WAIT_S)
    return out


def test_authorized_operations():
    with run_broker(config=OPEN) as b:
        got = _authorized_operations_scenario(b.bootstrap_servers)
    cluster, topic = got["acls"]
    assert "ALTER_CONFIGS" not in cluster and "ALTER" in cluster
    assert topic == ["DESCRIBE", "READ"]


@needs_java
def test_authorized_operations_as_kafka(kafka_with_authorizer):
    with run_broker(config=OPEN) as b:
        ours = _authorized_operations_scenario(b.bootstrap_servers)
    assert ours == _authorized_operations_scenario(kafka_with_authorizer)


def test_kafka_python_suite_acls_test_passes():
    """kafka-python's own test_create_describe_delete_acls (compat/client_suites.py harness)
    against a node with the StandardAuthorizer and the client a super user."""
    from compat.client_suites import kafka_python_suite_or_skip, run_kafka_python

    kafka_python_suite_or_skip()
    config = {"authorizer.class.name": STANDARD_AUTHORIZER, "super.users": "User:ANONYMOUS"}
    with run_broker(config=config) as b:
        rc, outcomes = run_kafka_python(b.bootstrap_servers,
                                        ["test_create_describe_delete_acls"], capture=True)
    assert outcomes == {"test_create_describe_delete_acls": "passed"}, (rc, outcomes)


def _transactional_scenario(bootstrap: str) -> dict:
    """init_transactions with WRITE on the transactional id denied, then allowed."""
    txn = f"authz-tx-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})

    def init() -> str | None:
        p = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn})
        try:
            p.init_transactions(WAIT_S)
        except KafkaException as e:
            return e.args[0].name()
        return None

    deny = AclBinding(ResourceType.TRANSACTIONAL_ID, txn, ResourcePatternType.LITERAL,
                      "User:ANONYMOUS", "127.0.0.1", AclOperation.WRITE, AclPermissionType.DENY)
    for f in admin.create_acls([deny]).values():
        f.result(WAIT_S)
    out = {"denied": _until(init, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", "denied")}
    for f in admin.delete_acls([AclBindingFilter(
            ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY,
            AclPermissionType.ANY)]).values():
        f.result(WAIT_S)
    out["allowed"] = _until(init, None, "allowed")
    return out


def test_transactional_id_denied_then_allowed():
    with run_broker(config=OPEN) as b:
        got = _transactional_scenario(b.bootstrap_servers)
    assert got == {"denied": "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", "allowed": None}


@needs_java
def test_transactional_id_denied_as_kafka(kafka_with_authorizer):
    with run_broker(config=OPEN) as b:
        ours = _transactional_scenario(b.bootstrap_servers)
    assert ours == _transactional_scenario(kafka_with_authorizer)


def _consumer_protocol_denial(bootstrap: str) -> str | None:
    """A KIP-848 consumer (ConsumerGroupHeartbeat) denied READ on its group."""
    run = uuid.uuid4().hex[:8]
    topic, group = f"authz-848-{run}", f"authz-848-{run}"
    create_topic(bootstrap, topic)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_acls([AclBinding(
            ResourceType.GROUP, group, ResourcePatternType.LITERAL, "User:ANONYMOUS", "*",
            AclOperation.READ, AclPermissionType.DENY)]).values():
        f.result(WAIT_S)
    return _until(lambda: _consume_error(bootstrap, topic, group, **{"group.protocol": "consumer"}),
                  "GROUP_AUTHORIZATION_FAILED", "consumer-protocol group denied")


@needs_java
def test_consumer_protocol_group_denied_as_kafka(kafka_with_authorizer):
    with run_broker(config=OPEN) as b:
        ours = _consumer_protocol_denial(b.bootstrap_servers)
    assert ours == _consumer_protocol_denial(kafka_with_authorizer) == "GROUP_AUTHORIZATION_FAILED"


def _delete_and_alter_scenario(bootstrap: str) -> dict:
    """DeleteTopics and CreatePartitions, which a KRaft broker forwards and the controller
    authorizes: DELETE on the cluster would cover every topic, so the cluster gets an ACL (ALTER,
    which the ACL APIs need; no ACL may name DELETE on the cluster, only ALL); then a topic's
    DELETE, DESCRIBE or ALTER decides."""
    run = uuid.uuid4().hex[:8]
    undeletable, hidden, grown, fixed = (f"authz-d-{run}-{n}" for n in ("a", "b", "c", "d"))
    for name in (undeletable, hidden, grown, fixed):
        create_topic(bootstrap, name)
    admin = AdminClient({"bootstrap.servers": bootstrap})

    def outcome(futures):
        [f] = futures.values()
        try:
            f.result(WAIT_S)
        except KafkaException as e:
            return e.args[0].name(), e.args[0].str()
        return None

    bindings = [
        AclBinding(ResourceType.BROKER, "kafka-cluster", ResourcePatternType.LITERAL,
                   "User:ANONYMOUS", "*", AclOperation.ALTER, AclPermissionType.ALLOW),
        # brokers forward to the controller as User:ANONYMOUS too, which needs CLUSTER_ACTION
        AclBinding(ResourceType.BROKER, "kafka-cluster", ResourcePatternType.LITERAL,
                   "User:ANONYMOUS", "*", AclOperation.CLUSTER_ACTION, AclPermissionType.ALLOW),
        _binding(undeletable, "127.0.0.1", AclOperation.DELETE),
        _binding(hidden, "127.0.0.1", AclOperation.DESCRIBE),
        _binding(fixed, "127.0.0.1", AclOperation.ALTER)]
    try:
        _with_acls(admin, bindings)
        return {
            "delete_denied": outcome(admin.delete_topics([undeletable])),
            "delete_hidden": outcome(admin.delete_topics([hidden])),
            "delete_unknown": outcome(admin.delete_topics([f"authz-d-{run}-none"])),
            "partitions_denied": outcome(admin.create_partitions([NewPartitions(fixed, 2)])),
            "partitions_added": outcome(admin.create_partitions([NewPartitions(grown, 2)])),
        }
    finally:
        _delete_every_acl(admin)


def test_delete_topics_and_create_partitions_denied():
    with run_broker(config=OPEN) as b:
        got = _delete_and_alter_scenario(b.bootstrap_servers)
    assert got["delete_denied"][0] == got["delete_hidden"][0] == "TOPIC_AUTHORIZATION_FAILED"
    assert got["delete_unknown"][0] == "UNKNOWN_TOPIC_OR_PART"
    assert got["partitions_denied"][0] == "TOPIC_AUTHORIZATION_FAILED"
    assert got["partitions_added"] is None


@needs_java
def test_delete_topics_and_create_partitions_denied_as_kafka(kafka_with_authorizer):
    with run_broker(config=OPEN) as b:
        ours = _delete_and_alter_scenario(b.bootstrap_servers)
    assert ours == _delete_and_alter_scenario(kafka_with_authorizer)


def _cluster_describe_scenario(bootstrap: str) -> dict:
    """APIs whose one check is DESCRIBE on the cluster (kafka-python's admin calls), denied for
    this host; ALTER and CLUSTER_ACTION stay allowed, so brokers still forward and the ACLs can
    be deleted afterwards."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    tool = KafkaAdminClient(bootstrap_servers=bootstrap)

    def cluster(op, permission, host="*"):
        return AclBinding(ResourceType.BROKER, "kafka-cluster", ResourcePatternType.LITERAL,
                          "User:ANONYMOUS", host, op, permission)

    def outcome(call):
        try:
            call()
        except Exception as e:  # noqa: BLE001 - the error's type is the answer
            return type(e).__name__
        return None

    try:
        for f in admin.create_acls([
                cluster(AclOperation.ALTER, AclPermissionType.ALLOW),
                cluster(AclOperation.CLUSTER_ACTION, AclPermissionType.ALLOW),
                cluster(AclOperation.DESCRIBE, AclPermissionType.DENY, "127.0.0.1")]).values():
            f.result(WAIT_S)
        return {
            "reassignments": _until(lambda: outcome(tool.list_partition_reassignments),
                                    "ClusterAuthorizationFailedError", "reassignments denied"),
            "log_dirs": outcome(tool.describe_log_dirs),
            "quorum": outcome(tool.describe_metadata_quorum),
        }
    finally:
        tool.close()
        _delete_every_acl(admin)


def test_cluster_describe_denied():
    with run_broker(config=OPEN) as b:
        got = _cluster_describe_scenario(b.bootstrap_servers)
    assert got["reassignments"] == "ClusterAuthorizationFailedError"


@needs_java
def test_cluster_describe_denied_as_kafka(kafka_with_authorizer):
    with run_broker(config=OPEN) as b:
        ours = _cluster_describe_scenario(b.bootstrap_servers)
    assert ours == _cluster_describe_scenario(kafka_with_authorizer)


def _configs_scenario(bootstrap: str) -> dict:
    """DescribeConfigs (the broker checks DESCRIBE_CONFIGS) and IncrementalAlterConfigs (the
    controller checks ALTER_CONFIGS) of a topic whose config operations are denied for this
    host, next to one that is not."""
    run = uuid.uuid4().hex[:8]
    hidden, open_topic = f"authz-cfg-{run}-a", f"authz-cfg-{run}-b"
    for name in (hidden, open_topic):
        create_topic(bootstrap, name)
    admin = AdminClient({"bootstrap.servers": bootstrap})

    def outcomes(futures) -> dict:
        out = {}
        for resource, f in futures.items():
            try:
                value = f.result(WAIT_S)
                out[resource.name] = "ok" if not isinstance(value, dict) else \
                    value["retention.ms"].value
            except KafkaException as e:
                out[resource.name] = (e.args[0].name(), e.args[0].str())
        return out

    def resource(name, **entries):
        return ConfigResource(ConfigResource.Type.TOPIC, name, incremental_configs=[
            ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET)
            for k, v in entries.items()])

    bindings = [_binding(hidden, "127.0.0.1", AclOperation.DESCRIBE_CONFIGS),
                _binding(hidden, "127.0.0.1", AclOperation.ALTER_CONFIGS)]
    try:
        _with_acls(admin, bindings)
        altered = outcomes(admin.incremental_alter_configs(
            [resource(hidden, **{"retention.ms": "1000"}),
             resource(open_topic, **{"retention.ms": "2000"})]))
        described = outcomes(admin.describe_configs(
            [ConfigResource(ConfigResource.Type.TOPIC, n) for n in (hidden, open_topic)]))
        return {"altered": {k.replace(run, "R"): v for k, v in altered.items()},
                "described": {k.replace(run, "R"): v for k, v in described.items()}}
    finally:
        _delete_every_acl(admin)


def test_topic_configs_denied():
    with run_broker(config=OPEN) as b:
        got = _configs_scenario(b.bootstrap_servers)
    denied = ("TOPIC_AUTHORIZATION_FAILED", "Topic authorization failed.")
    assert got == {"altered": {"authz-cfg-R-a": denied, "authz-cfg-R-b": "ok"},
                   "described": {"authz-cfg-R-a": denied, "authz-cfg-R-b": "2000"}}


@needs_java
def test_topic_configs_denied_as_kafka(kafka_with_authorizer):
    with run_broker(config=OPEN) as b:
        ours = _configs_scenario(b.bootstrap_servers)
    assert ours == _configs_scenario(kafka_with_authorizer)


def _share_offsets_scenario(bootstrap: str) -> list[str]:
    """kafka-share-groups resetting and deleting a share group's offsets where the group's
    READ and DELETE are denied for this host, and describing one whose topic may not be
    described: what the tool prints."""
    from compat.kafka_tools import run_tool

    run = uuid.uuid4().hex[:8]
    topic, hidden, group = f"authz-sh-{run}-t", f"authz-sh-{run}-h", f"authz-sh-{run}-g"
    for name in (topic, hidden):
        create_topic(bootstrap, name)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    lines: list[str] = []

    def tool(*args: str) -> None:
        p = run_tool("kafka-share-groups", ["--bootstrap-server", bootstrap, *args])
        lines.append(f"$ {' '.join(args).replace(run, 'R')} -> {p.returncode}")
        lines.extend(" ".join(line.replace(run, "R").split())
                     for line in (p.stdout + p.stderr).splitlines() if line.strip())

    group_acl = AclBinding(ResourceType.GROUP, group, ResourcePatternType.LITERAL,
                           "User:ANONYMOUS", "127.0.0.1", AclOperation.READ,
                           AclPermissionType.DENY)
    bindings = [group_acl,
                AclBinding(ResourceType.GROUP, group, ResourcePatternType.LITERAL,
                           "User:ANONYMOUS", "127.0.0.1", AclOperation.DELETE,
                           AclPermissionType.DENY),
                # (FindCoordinator needs DESCRIBE on the group, which the DENYs would take)
                AclBinding(ResourceType.GROUP, group, ResourcePatternType.LITERAL,
                           "User:ANONYMOUS", "*", AclOperation.DESCRIBE,
                           AclPermissionType.ALLOW)]
    try:
        tool("--reset-offsets", "--group", group + "-ok", "--topic", topic, "--to-earliest",
             "--execute")
        _with_acls(admin, bindings)
        tool("--reset-offsets", "--group", group, "--topic", topic, "--to-earliest", "--execute")
        tool("--delete-offsets", "--group", group, "--topic", topic)
        return lines
    finally:
        _delete_every_acl(admin)


@needs_java
def test_share_group_offsets_denied_as_kafka(kafka_with_authorizer):
    with run_broker(config=OPEN) as b:
        ours = _share_offsets_scenario(b.bootstrap_servers)
    theirs = _share_offsets_scenario(kafka_with_authorizer)
    assert ours == theirs
    assert any("GroupAuthorizationException" in line or "authorization" in line.lower()
               for line in ours), ours
