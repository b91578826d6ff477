"""Group configs (config resource type 32): described, validated and stored as Kafka 4.4 does,
and kept across a restart."""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    ResourceType,
)
from confluent_kafka.error import KafkaException

from compat.wire_client import WireClient
from pykafkad.testing import run_broker
from tests.integration.clients import WAIT_S, needs_java
from tests.integration.test_admin_answers import wait_for_group_coordinator
from wire.messages import API_KEYS
from wire.messages import alter_configs_request as ac
from wire.messages import incremental_alter_configs_request as iac
from wire.messages.describe_configs_request import DescribeConfigsResource

GROUP = 32


def _alter(admin: AdminClient, group: str, name: str, value: str | None,
           op=AlterConfigOpType.SET) -> None:
    res = ConfigResource(ResourceType.GROUP, group, incremental_configs=[
        ConfigEntry(name, value, incremental_operation=op)])
    admin.incremental_alter_configs([res])[res].result(WAIT_S)


def _describe(admin: AdminClient, group: str) -> dict:
    res = ConfigResource(ResourceType.GROUP, group)
    return admin.describe_configs([res])[res].result(WAIT_S)


def test_group_configs_are_validated_stored_and_survive_a_restart(tmp_path):
    data = tmp_path / "data"
    with run_broker(data) as b:
        admin = AdminClient({"bootstrap.servers": b.bootstrap_servers})
        defaults = _describe(admin, "any-group")
        assert len(defaults) == 21  # every group config but the internal ones
        timeout = defaults["consumer.session.timeout.ms"]
        assert (timeout.value, timeout.source) == ("45000", ConfigSource.DEFAULT_CONFIG.value)
        assert defaults["streams.assignor.name"].value == "sticky"

        _alter(admin, "g1", "consumer.session.timeout.ms", "50000")
        _alter(admin, "g1", "share.auto.offset.reset", "by_duration:PT1H")
        with pytest.raises(KafkaException) as info:
            _alter(admin, "g1", "consumer.session.timeout.ms", "1000")
        err = info.value.args[0]
        assert (err.name(), err.str()) == (
            "INVALID_CONFIG",
            "consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive.")
        with pytest.raises(KafkaException) as info:
            _alter(admin, "g1", "no.such.config", "1")
        assert info.value.args[0].str() == "Unknown group config name: no.such.config"

    with run_broker(data) as b:
        admin = AdminClient({"bootstrap.servers": b.bootstrap_servers})
        configs = _describe(admin, "g1")
        timeout = configs["consumer.session.timeout.ms"]
        assert (timeout.value, timeout.source) == ("50000", ConfigSource.GROUP_CONFIG.value)
        assert configs["share.auto.offset.reset"].value == "by_duration:PT1H"
        _alter(admin, "g1", "consumer.session.timeout.ms", None, AlterConfigOpType.DELETE)
        assert _describe(admin, "g1")["consumer.session.timeout.ms"].value == "45000"


# --- the same requests against Apache Kafka 4.4 ------------------------------------------------

#: (operation, name, value) alterations (validate only) whose answers must be Kafka's
ALTERATIONS = [
    (0, "consumer.session.timeout.ms", "50000"),
    (0, "consumer.session.timeout.ms", "1000"),
    (0, "consumer.session.timeout.ms", "abc"),
    (0, "consumer.heartbeat.interval.ms", "0"),
    (0, "consumer.assignment.interval.ms", "20000"),
    (0, "share.delivery.count.limit", "11"),
    (0, "share.record.lock.duration.ms", "500"),
    (0, "share.auto.offset.reset", "bogus"),
    (0, "share.auto.offset.reset", "by_duration:PT1H"),
    (0, "share.isolation.level", "read_committed"),
    (0, "streams.num.standby.replicas", "3"),
    (0, "streams.task.offset.interval.ms", "100"),
    (0, "streams.assignor.name", "nope"),
    (0, "streams.rack.aware.assignment.tags", "a,a"),
    (0, "errors.deadletterqueue.topic.name", "__x"),
    (0, "no.such.config", "1"),
    (0, "consumer.assignor.offload.enable", "false"),
    (2, "streams.rack.aware.assignment.tags", "a"),
    (1, "consumer.session.timeout.ms", None),
]


def _request(api_key: int, **fields):
    return API_KEYS[api_key].request_type()(**fields)


def _group_answers(bootstrap: str) -> list:
    group = f"admin-group-configs-{uuid.uuid4().hex[:8]}"
    out: list = []
    with WireClient(bootstrap) as c:
        wait_for_group_coordinator(c)

        def alter(name: str, ops: list, validate_only: bool = True):
            r = c.request(44, 1, _request(44, resources=[iac.AlterConfigsResource(
                resource_type=GROUP, resource_name=name,
                configs=[iac.AlterableConfig(name=n, config_operation=op, value=v)
                         for op, n, v in ops])], validate_only=validate_only))
            return [(x.error_code, x.error_message) for x in r.responses]

        def describe(name: str):
            r = c.request(32, 4, _request(32, resources=[DescribeConfigsResource(
                GROUP, name, None)], include_synonyms=True, include_documentation=False))
            x = r.results[0]
            return x.error_code, x.error_message, sorted(
                (e.name, e.value, e.config_source, e.read_only, e.is_sensitive, e.config_type,
                 [(y.name, y.value, y.source) for y in e.synonyms]) for e in x.configs)

        def settled(name: str, config: str):
            """Kafka's broker learns of an override from its controller a moment later."""
            deadline = time.monotonic() + WAIT_S
            while True:
                d = describe(name)
                if any(e[0] == config and e[2] == 8 for e in d[2]) or \
                        time.monotonic() > deadline:
                    return d

        for op in ALTERATIONS:
            out.append((op, alter(group, [op])))
        out.append(("empty name", alter("", [ALTERATIONS[0]]), describe("")[:2]))
        out.append(("defaults", describe(group)))
        out.append(("set", alter(group, [(0, "consumer.session.timeout.ms", " +50000 "),
                                         (0, "share.isolation.level", "read_committed")],
                                 validate_only=False)))
        out.append(("overridden", settled(group, "consumer.session.timeout.ms")))
        r = c.request(33, 2, _request(33, resources=[ac.AlterConfigsResource(
            resource_type=GROUP, resource_name=group,
            configs=[ac.AlterableConfig(name="share.delivery.count.limit", value="3")])],
            validate_only=False))
        out.append(("replaced", [(x.error_code, x.error_message) for x in r.responses],
                    settled(group, "share.delivery.count.limit")))
    return out


@needs_java
def test_group_config_answers_match_kafka(broker, reference_kafka):
    assert _group_answers(broker.bootstrap_servers) == \
        _group_answers(reference_kafka.bootstrap_servers)


def test_group_config_bounds_and_defaults_follow_server_properties():
    """The group.share.* broker configs pykafkad does not type are still the broker's own:
    confluent-kafka-python's suite lowers the lock-duration bounds to 1 s in server.properties
    and then sets a 5 s lock on a group, which Kafka's defaults (15 s to 60 s) would refuse."""
    config = {"group.share.record.lock.duration.ms": "2000",
              "group.share.min.record.lock.duration.ms": "2000"}
    with run_broker(config=config) as b:
        admin = AdminClient({"bootstrap.servers": b.bootstrap_servers})
        _alter(admin, "g1", "share.record.lock.duration.ms", "5000")
        assert _describe(admin, "g1")["share.record.lock.duration.ms"].value == "5000"
        with pytest.raises(KafkaException) as info:
            _alter(admin, "g1", "share.record.lock.duration.ms", "1500")
        assert info.value.args[0].str() == (
            "share.record.lock.duration.ms must be in the range 2000 to 60000 inclusive.")
