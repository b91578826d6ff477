"""Admin answers field by field as Apache Kafka 4.4 gives them: error messages, list-config
APPEND/SUBTRACT, authorized operations."""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import KafkaError, TopicCollection
from confluent_kafka.admin import (
    AclOperation,
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
)
from confluent_kafka.error import KafkaException
from kafka.admin import KafkaAdminClient

from compat.wire_client import WireClient
from tests.integration.clients import WAIT_S, create_topic, needs_java
from wire.messages import API_KEYS
from wire.messages import alter_configs_request as ac
from wire.messages import incremental_alter_configs_request as iac
from wire.messages.create_topics_request import CreatableTopic
from wire.messages.describe_configs_request import DescribeConfigsResource
from wire.messages.metadata_request import MetadataRequestTopic

TOPIC_OPERATIONS = {
    AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DELETE,
    AclOperation.ALTER, AclOperation.DESCRIBE, AclOperation.DESCRIBE_CONFIGS,
    AclOperation.ALTER_CONFIGS,
}
CLUSTER_OPERATIONS = {
    AclOperation.CREATE, AclOperation.ALTER, AclOperation.DESCRIBE, AclOperation.CLUSTER_ACTION,
    AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS, AclOperation.IDEMPOTENT_WRITE,
}


def test_create_topics_answers_a_null_error_message_on_success(broker, topic_name):
    """aiokafka's test_delete_topics reads CreateTopics' error_message: null, not ""."""
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
    try:
        result = admin.create_topics({topic_name: {"num_partitions": 1}})
        assert [(t["error_code"], t["error_message"]) for t in result["topics"]] == [(0, None)]
    finally:
        admin.close()


def _incremental(admin: AdminClient, topic: str, name: str, op, value: str) -> None:
    res = ConfigResource("topic", topic, incremental_configs=[
        ConfigEntry(name, value, incremental_operation=op)])
    admin.incremental_alter_configs([res])[res].result(WAIT_S)


def _describe(admin: AdminClient, topic: str, name: str):
    res = ConfigResource("topic", topic)
    return admin.describe_configs([res])[res].result(WAIT_S)[name]


def test_append_and_subtract_on_a_list_config_that_has_only_its_default(broker, topic_name):
    """confluent-kafka's test_incremental_alter_configs, librdkafka 0011: the list starts from
    the default ("delete"); the connection stays open."""
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    create_topic(broker.bootstrap_servers, topic_name)
    _incremental(admin, topic_name, "cleanup.policy", AlterConfigOpType.APPEND, "compact")
    entry = _describe(admin, topic_name, "cleanup.policy")
    assert (entry.value, entry.source) == ("delete,compact",
                                           ConfigSource.DYNAMIC_TOPIC_CONFIG.value)
    _incremental(admin, topic_name, "cleanup.policy", AlterConfigOpType.SUBTRACT, "delete")
    assert _describe(admin, topic_name, "cleanup.policy").value == "compact"

    other = f"{topic_name}-2"
    create_topic(broker.bootstrap_servers, other)
    _incremental(admin, other, "cleanup.policy", AlterConfigOpType.SUBTRACT, "delete")
    assert _describe(admin, other, "cleanup.policy").value == ""

    with pytest.raises(KafkaException) as info:
        _incremental(admin, other, "retention.ms", AlterConfigOpType.APPEND, "5")
    err = info.value.args[0]
    assert err.name() == "INVALID_CONFIG"
    assert err.str() == "Can't APPEND to key retention.ms because its type is not LIST."


def test_authorized_operations_are_filled_in_when_asked(broker, topic_name):
    """librdkafka 0081: describe_cluster / describe_topics / describe_consumer_groups with
    include_authorized_operations."""
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    create_topic(broker.bootstrap_servers, topic_name)
    cluster = admin.describe_cluster(include_authorized_operations=True).result(WAIT_S)
    assert set(cluster.authorized_operations) == CLUSTER_OPERATIONS
    assert admin.describe_cluster().result(WAIT_S).authorized_operations is None
    topics = admin.describe_topics(TopicCollection([topic_name]),
                                   include_authorized_operations=True)
    assert set(topics[topic_name].result(WAIT_S).authorized_operations) == TOPIC_OPERATIONS
    group = admin.describe_consumer_groups(["admin-answers-group"],
                                           include_authorized_operations=True)
    assert set(group["admin-answers-group"].result(WAIT_S).authorized_operations) == {
        AclOperation.READ, AclOperation.DELETE, AclOperation.DESCRIBE,
        AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS}


def test_min_insync_replicas_is_a_cluster_level_dynamic_config(broker, topic_name):
    """Kafka 4.x (ELR) keeps min.insync.replicas as a cluster-level dynamic config."""
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    create_topic(broker.bootstrap_servers, topic_name)
    node = ConfigResource("broker", "1")
    entry = admin.describe_configs([node])[node].result(WAIT_S)["min.insync.replicas"]
    assert (entry.value, entry.source) == ("1", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value)
    entry = _describe(admin, topic_name, "min.insync.replicas")
    assert (entry.value, entry.source) == ("1", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value)

    alter = ConfigResource("broker", "1", incremental_configs=[ConfigEntry(
        "min.insync.replicas", "2", incremental_operation=AlterConfigOpType.SET)])
    with pytest.raises(KafkaException) as info:
        admin.incremental_alter_configs([alter])[alter].result(WAIT_S)
    assert info.value.args[0].name() == "INVALID_CONFIG"


def test_broker_configs_kafka_accepts_are_accepted(broker):
    """librdkafka 0081 sets sasl.kerberos.min.time.before.relogin on a broker."""
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    alter = ConfigResource("broker", "1", incremental_configs=[ConfigEntry(
        "sasl.kerberos.min.time.before.relogin", "58000",
        incremental_operation=AlterConfigOpType.SET)])
    admin.incremental_alter_configs([alter])[alter].result(WAIT_S)
    assert broker.broker.config.dynamic_broker_configs[
        "sasl.kerberos.min.time.before.relogin"] == "58000"


def test_cordoned_log_dirs_must_name_the_log_dir(broker):
    """KIP-1066: confluent-kafka sees Kafka's refusal of a dir the broker does not have, or of
    ``*`` with other values; the broker's own dir (or ``*``) is accepted and kept."""
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})

    def cordon(value: str) -> None:
        res = ConfigResource("broker", "1", incremental_configs=[ConfigEntry(
            "cordoned.log.dirs", value, incremental_operation=AlterConfigOpType.SET)])
        admin.incremental_alter_configs([res])[res].result(WAIT_S)

    data_dir = str(broker.data_dir.absolute())
    for value, message in (
        ("/elsewhere," + data_dir, "requirement failed: All entries in cordoned.log.dirs must "
         "be present in log.dirs or log.dir. Missing entries : /elsewhere"),
        (f"*,{data_dir}", "requirement failed: When cordoned.log.dirs is set to *, it must not "
         "contain other values"),
    ):
        with pytest.raises(KafkaException) as e:
            cordon(value)
        assert (e.value.args[0].code(), e.value.args[0].str()) == (
            KafkaError.INVALID_REQUEST, message)
        assert "cordoned.log.dirs" not in broker.broker.config.dynamic_broker_configs
    cordon(data_dir)
    assert broker.broker.config.dynamic_broker_configs["cordoned.log.dirs"] == data_dir


# --- the same requests against Apache Kafka 4.4 ------------------------------------------------

#: cordoned.log.dirs values (none names either broker's log dir): KIP-1066's refusals
CORDONED_VALUES = ["/admin-answers-nope", "/b,/a", "*,/admin-answers-nope", "/a,*", "*,*", "*",
                   " *", ""]

#: broker alterations (validate only) whose answers must be Kafka's; node id 1 on both brokers
BROKER_ALTERATIONS = [
    ("1", [("sasl.kerberos.min.time.before.relogin", 0, "60000")]),
    ("", [("sasl.kerberos.min.time.before.relogin", 0, "60000")]),
    ("1", [("sasl.kerberos.ticket.renew.jitter", 0, "x")]),
    ("", [("admin.answers.unknown", 0, "1")]),
    ("", [("log.retention.hours", 0, "1"), ("num.partitions", 0, "2")]),
    ("1", [("ssl.keystore.location", 0, "/k")]),
    ("1", [("listener.name.plaintext.ssl.keystore.location", 0, "/k")]),
    ("", [("min.insync.replicas", 0, "1")]),
    ("", [("min.insync.replicas", 1, None)]),
    ("1", [("min.insync.replicas", 0, "1")]),
    ("1", [("min.insync.replicas", 1, None)]),
    ("", [("log.retention.ms", 2, "5")]),
    ("", [("admin.answers.unknown", 2, "x")]),
    ("1", [("log.cleanup.policy", 2, "compact")]),
    ("", [("admin.answers.unknown", 1, None)]),
    ("", [("log.cleaner.threads", 0, "1")]),
    *[("1", [("cordoned.log.dirs", 0, v)]) for v in CORDONED_VALUES],
    ("", [("cordoned.log.dirs", 0, "/admin-answers-nope")]),
]


#: broker-logger alterations (validate only): Kafka's refusals; "root" exists on both brokers
LOGGER_ALTERATIONS = [
    [("root", 0, "INFO")], [("root", 0, "info")], [("root", 0, "")], [("root", 1, None)],
    [("admin-answers.nope", 0, "INFO")], [("admin-answers.nope", 1, None)],
    [("root", 2, "INFO")], [("root", 3, "INFO")], [("admin-answers.nope", 5, "INFO")],
    [("root", 0, "WARN"), ("admin-answers.nope", 1, None)],
    [("root", 0, "TRACE"), ("root", 1, None)],
]

#: broker and broker-logger resource names (node id 1 on both brokers), and an unknown type
RESOURCE_NAMES = [(4, "x"), (4, "2"), (4, "+1"), (8, ""), (8, "x"), (8, "2"), (99, "x")]


def _request(api_key: int, **fields):
    return API_KEYS[api_key].request_type()(**fields)


def _wait_for_topic(c: WireClient, topic: str) -> None:
    """Kafka's brokers learn of a new topic from the controller a moment later."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        r = c.request(3, 12, _request(3, topics=[MetadataRequestTopic(name=topic)],
                                      allow_auto_topic_creation=False))
        if r.topics[0].error_code == 0:
            return
    raise AssertionError(f"{topic} never appeared in Metadata")


def wait_for_group_coordinator(c: WireClient, key_type: int = 0) -> None:
    """A fresh Kafka answers COORDINATOR_NOT_AVAILABLE until __consumer_offsets (key type 1:
    __transaction_state) is ready."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        r = c.request(10, 3, _request(10, key="admin-answers", key_type=key_type))
        if r.error_code == 0:
            return
    raise AssertionError(f"no coordinator of key type {key_type}")


def _entries(result) -> tuple:
    """A DescribeConfigs result as compared: everything but the documentation's wording and
    the order (Kafka's follows a Java hash map)."""
    return result.error_code, result.error_message, sorted(
        (e.name, e.value, e.config_source, e.read_only, e.is_sensitive, e.config_type,
         [(y.name, y.value, y.source) for y in e.synonyms], bool(e.documentation))
        for e in result.configs)


#: client-metrics alterations (validate only): (name, [(config, operation, value)])
CLIENT_METRICS_ALTERATIONS = [
    ("s", [("interval.ms", 0, "50")]), ("s", [("interval.ms", 0, "x")]),
    ("s", [("interval.ms", 0, " +200 ")]), ("s", [("nope", 0, "1"), ("interval.ms", 0, "x")]),
    ("s", [("nope", 1, None)]), ("s", [("metrics", 2, "a")]), ("s", [("metrics", 5, "a")]),
    ("s", [("metrics", 0, "a,,b")]), ("s", [("metrics", 0, "*")]),
    ("s", [("match", 0, "client_id=a=b")]), ("s", [("match", 0, "client_id=")]),
    ("s", [("match", 0, " client_id = a.* , client_software_name=java")]),
    ("s", [("match", 0, "client_rack=a")]), ("s", [("match", 0, "client_id=a{2")]),
    ("s", [("match", 0, "client_id={2}")]), ("s", [("match", 0, "client_id=(?<n>a)")]),
    ("s", [("match", 0, "client_id=\\p{Alpha}+")]), ("s", [("match", 0, "client_id=[")]),
    ("s", [("match", 0, "bad"), ("interval.ms", 0, "5")]), ("", [("interval.ms", 0, "200")]),
]


def _client_metrics_answers(c: WireClient, name: str) -> list:
    out: list = []

    def describe(resource: str) -> tuple:
        r = c.request(32, 4, _request(32, resources=[DescribeConfigsResource(
            16, resource, None)], include_synonyms=True, include_documentation=True))
        return _entries(r.results[0])

    def settled(expected: dict[str, str]) -> tuple:
        """Kafka's broker learns of a change from its controller a moment later."""
        deadline = time.monotonic() + WAIT_S
        while True:
            d = describe(name)
            if {e[0]: e[1] for e in d[2] if e[2] == 7} == expected \
                    or time.monotonic() > deadline:
                return d

    for resource, ops in CLIENT_METRICS_ALTERATIONS:
        r = c.request(44, 1, _request(44, resources=[iac.AlterConfigsResource(
            resource_type=16, resource_name=resource and name, configs=[iac.AlterableConfig(
                name=n, config_operation=op, value=value) for n, op, value in ops])],
            validate_only=True))
        out.append((f"IncrementalAlterConfigs client metrics {resource!r} {ops}",
                    [(x.error_code, x.error_message) for x in r.responses]))
    out.append(("DescribeConfigs client metrics ''", describe("")))
    out.append(("DescribeConfigs client metrics, defaults", describe(name)))
    r = c.request(44, 1, _request(44, resources=[iac.AlterConfigsResource(
        resource_type=16, resource_name=name, configs=[
            iac.AlterableConfig(name="interval.ms", config_operation=0, value=" +1000 "),
            iac.AlterableConfig(name="metrics", config_operation=0, value=" a , b "),
            iac.AlterableConfig(name="match", config_operation=0, value="client_id=x")])],
        validate_only=False))
    out.append(("IncrementalAlterConfigs client metrics",
                [(x.error_code, x.error_message) for x in r.responses],
                settled({"interval.ms": "1000", "metrics": "a,b", "match": "client_id=x"})))
    r = c.request(33, 2, _request(33, resources=[ac.AlterConfigsResource(
        resource_type=16, resource_name=name, configs=[
            ac.AlterableConfig(name="metrics", value="")])], validate_only=False))
    out.append(("AlterConfigs client metrics",
                [(x.error_code, x.error_message) for x in r.responses],
                settled({"metrics": ""})))
    return out


def _answers(bootstrap: str) -> list:
    """Error codes, messages and authorized operations of a fixed set of admin requests, for
    fields no client shows as sent (null versus "")."""
    topic = f"admin-answers-{uuid.uuid4().hex[:8]}"
    out: list = []
    with WireClient(bootstrap) as c:
        wait_for_group_coordinator(c)
        r = c.request(19, 7, _request(19, topics=[CreatableTopic(
            name=topic, num_partitions=1, replication_factor=1, assignments=[], configs=[])],
            timeout_ms=WAIT_S * 1000, validate_only=False))
        out.append(("CreateTopics", [(t.error_code, t.error_message) for t in r.topics]))
        for v in (1, 3):
            r = c.request(10, v, _request(10, key="admin-answers", key_type=0))
            out.append((f"FindCoordinator v{v}", r.error_code, r.error_message))
        r = c.request(10, 4, _request(10, coordinator_keys=["admin-answers"], key_type=0))
        out.append(("FindCoordinator v4", [(x.error_code, x.error_message)
                                           for x in r.coordinators]))
        wait_for_group_coordinator(c, key_type=1)
        r = c.request(10, 3, _request(10, key="", key_type=1))
        out.append(("FindCoordinator empty transactional id v3", r.error_code, r.error_message))
        r = c.request(10, 4, _request(10, coordinator_keys=[""], key_type=1))
        out.append(("FindCoordinator empty transactional id v4",
                    [(x.error_code, x.error_message) for x in r.coordinators]))
        r = c.request(10, 4, _request(10, coordinator_keys=["admin-answers"], key_type=5))
        out.append(("FindCoordinator bad type", [(x.error_code, x.error_message)
                                                 for x in r.coordinators]))
        for key_type in (5, 99):
            r = c.request(32, 4, _request(32, resources=[
                DescribeConfigsResource(2, "admin-answers-nonexistent", None),
                DescribeConfigsResource(key_type, "x", None)],
                include_synonyms=False, include_documentation=False))
            out.append((f"DescribeConfigs type {key_type}",
                        [(x.error_code, x.error_message) for x in r.results]))
        for op, name, value in ((0, "retention.ms", "1000"), (2, "cleanup.policy", "compact"),
                                (2, "retention.ms", "5"), (2, "cleanup.policy", ""),
                                (3, "cleanup.policy", "delete"), (1, "no.such.config", None),
                                (0, "retention.ms", "abc"), (5, "retention.ms", "1"),
                                (2, "leader.replication.throttled.replicas", "0:1")):
            r = c.request(44, 1, _request(44, resources=[iac.AlterConfigsResource(
                resource_type=2, resource_name=topic,
                configs=[iac.AlterableConfig(name=name, config_operation=op, value=value)])],
                validate_only=True))
            out.append((f"IncrementalAlterConfigs {op} {name}",
                        [(x.error_code, x.error_message) for x in r.responses]))
        for resource, ops in BROKER_ALTERATIONS:
            r = c.request(44, 1, _request(44, resources=[iac.AlterConfigsResource(
                resource_type=4, resource_name=resource,
                configs=[iac.AlterableConfig(name=n, config_operation=op, value=value)
                         for n, op, value in ops])], validate_only=True))
            out.append((f"IncrementalAlterConfigs broker {resource!r} {ops}",
                        [(x.error_code, x.error_message) for x in r.responses]))
        for resource_type, name in RESOURCE_NAMES:
            r = c.request(32, 4, _request(32, resources=[DescribeConfigsResource(
                resource_type, name, ["root", "log.retention.ms"])], include_synonyms=False,
                include_documentation=False))
            out.append((f"DescribeConfigs {resource_type} {name!r}",
                        [(x.error_code, x.error_message) for x in r.results]))
            r = c.request(44, 1, _request(44, resources=[iac.AlterConfigsResource(
                resource_type=resource_type, resource_name=name, configs=[])],
                validate_only=True))
            out.append((f"IncrementalAlterConfigs {resource_type} {name!r}",
                        [(x.error_code, x.error_message) for x in r.responses]))
            r = c.request(33, 2, _request(33, resources=[ac.AlterConfigsResource(
                resource_type=resource_type, resource_name=name, configs=[])],
                validate_only=True))
            out.append((f"AlterConfigs {resource_type} {name!r}",
                        [(x.error_code, x.error_message) for x in r.responses]))
        for value in CORDONED_VALUES:
            r = c.request(33, 2, _request(33, resources=[ac.AlterConfigsResource(
                resource_type=4, resource_name="1", configs=[ac.AlterableConfig(
                    name="cordoned.log.dirs", value=value)])], validate_only=True))
            out.append((f"AlterConfigs broker cordoned.log.dirs={value!r}",
                        [(x.error_code, x.error_message) for x in r.responses]))
        for ops in LOGGER_ALTERATIONS:
            r = c.request(44, 1, _request(44, resources=[iac.AlterConfigsResource(
                resource_type=8, resource_name="1", configs=[iac.AlterableConfig(
                    name=n, config_operation=op, value=value) for n, op, value in ops])],
                validate_only=True))
            out.append((f"IncrementalAlterConfigs broker logger {ops}",
                        [(x.error_code, x.error_message) for x in r.responses]))
        r = c.request(32, 4, _request(32, resources=[DescribeConfigsResource(
            8, "1", ["root", "admin-answers.nope"])], include_synonyms=True,
            include_documentation=True))
        # the root logger's level is each broker's own
        out.append(("DescribeConfigs broker logger root", [
            (name, source, read_only, sensitive, config_type, syn, doc)
            for name, _, source, read_only, sensitive, config_type, syn, doc
            in _entries(r.results[0])[2]]))
        out += _client_metrics_answers(c, f"{topic}-metrics")
        for resource_type, name in ((2, "admin-answers-nonexistent"), (4, "1"), (32, "g")):
            r = c.request(44, 1, _request(44, resources=[iac.AlterConfigsResource(
                resource_type=resource_type, resource_name=name, configs=[iac.AlterableConfig(
                    name="retention.ms", config_operation=0, value=None)])], validate_only=True))
            out.append((f"IncrementalAlterConfigs null {resource_type}",
                        [(x.error_code, x.error_message) for x in r.responses]))
            r = c.request(33, 2, _request(33, resources=[ac.AlterConfigsResource(
                resource_type=resource_type, resource_name=name, configs=[ac.AlterableConfig(
                    name="retention.ms", value=None)])], validate_only=True))
            out.append((f"AlterConfigs null {resource_type}",
                        [(x.error_code, x.error_message) for x in r.responses]))
        _wait_for_topic(c, topic)
        r = c.request(32, 4, _request(32, resources=[DescribeConfigsResource(2, topic, None)],
                                      include_synonyms=True, include_documentation=True))
        out.append(("DescribeConfigs topic, every config", _entries(r.results[0])))
        r = c.request(32, 4, _request(32, resources=[DescribeConfigsResource(4, "1", None)],
                                      include_synonyms=False, include_documentation=True))
        # values and sources depend on each broker's own server.properties
        out.append(("DescribeConfigs broker, every config", r.results[0].error_code, sorted(
            (e.name, e.read_only, e.is_sensitive, e.config_type, bool(e.documentation))
            for e in r.results[0].configs)))
        for resource in ("", "1"):
            r = c.request(32, 4, _request(32, resources=[DescribeConfigsResource(
                4, resource, ["min.insync.replicas"])], include_synonyms=True,
                include_documentation=False))
            out.append((f"DescribeConfigs broker {resource!r}", [
                (e.name, e.value, e.config_source, e.read_only,
                 [(y.name, y.value, y.source) for y in e.synonyms])
                for e in r.results[0].configs]))
        r = c.request(60, 1, _request(60, include_cluster_authorized_operations=True,
                                      endpoint_type=1))
        out.append(("DescribeCluster", r.error_code, r.error_message,
                    r.cluster_authorized_operations))
        _wait_for_topic(c, topic)
        for v in (8, 10, 12):
            fields = {"include_cluster_authorized_operations": True} if v <= 10 else {}
            r = c.request(3, v, _request(
                3, topics=[MetadataRequestTopic(name=topic), MetadataRequestTopic(
                    name="admin-answers-nonexistent")],
                allow_auto_topic_creation=False, include_topic_authorized_operations=True,
                **fields))
            out.append((f"Metadata v{v}", r.cluster_authorized_operations,
                        [(t.error_code, t.topic_authorized_operations) for t in r.topics]))
    return out


@needs_java
def test_admin_answers_match_kafka(broker, reference_kafka):
    assert _answers(broker.bootstrap_servers) == _answers(reference_kafka.bootstrap_servers)
