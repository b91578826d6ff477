"""AllocateProducerIds blocks, IncrementalAlterConfigs / AlterConfigs as ConfigRecords, and
UnregisterBroker."""

from __future__ import annotations

from tests.controller.support import MetadataLog
from tests.controller.test_replication_control import create_topic
from wire.errors import ErrorCode
from wire.messages.allocate_producer_ids_request import AllocateProducerIdsRequest
from wire.messages.alter_configs_request import AlterableConfig as LegacyConfig
from wire.messages.alter_configs_request import AlterConfigsRequest
from wire.messages.alter_configs_request import AlterConfigsResource as LegacyResource
from wire.messages.incremental_alter_configs_request import (
    AlterableConfig,
    AlterConfigsResource,
    IncrementalAlterConfigsRequest,
)
from wire.messages.unregister_broker_request import UnregisterBrokerRequest
from wire.metadata import ConfigRecord, ProducerIdsRecord, UnregisterBrokerRecord

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


def test_producer_id_blocks_of_1000():
    log = MetadataLog()
    log.start_brokers(1, 2)
    starts = []
    for broker in (1, 2, 1):
        response, records = log.handle(AllocateProducerIdsRequest(
            broker_id=broker, broker_epoch=log.epochs[broker]))
        assert response.error_code == 0 and response.producer_id_len == 1000
        assert [type(r) for r in records] == [ProducerIdsRecord]
        assert records[0].next_producer_id == response.producer_id_start + 1000
        starts.append(response.producer_id_start)
    assert starts == [0, 1000, 2000]
    response, records = log.handle(AllocateProducerIdsRequest(broker_id=1, broker_epoch=999))
    assert response.error_code == ErrorCode.STALE_BROKER_EPOCH and records == []
    response, records = log.handle(AllocateProducerIdsRequest(broker_id=7, broker_epoch=0))
    assert response.error_code == ErrorCode.STALE_BROKER_EPOCH and records == []


def alter(log, rtype, name, *ops, validate_only=False):
    response, records = log.handle(IncrementalAlterConfigsRequest(
        validate_only=validate_only,
        resources=[AlterConfigsResource(resource_type=rtype, resource_name=name, configs=[
            AlterableConfig(name=k, config_operation=op, value=v) for k, op, v in ops])]))
    r = response.responses[0]
    return (r.error_code, r.error_message), records


def test_incremental_alter_topic_configs():
    log = MetadataLog()
    log.start_brokers(1)
    create_topic(log, "t")
    assert alter(log, 2, "t", ("retention.ms", SET, "1000"))[0] == (0, None)
    assert log.controller.configs.get((2, "t")) == {"retention.ms": "1000"}
    # An unchanged topic value writes nothing.
    assert alter(log, 2, "t", ("retention.ms", SET, "1000"))[1] == []
    _, records = alter(log, 2, "t", ("cleanup.policy", APPEND, "compact"))
    assert [(r.name, r.value) for r in records] == [("cleanup.policy", "delete,compact")]
    alter(log, 2, "t", ("retention.ms", DELETE, None))
    assert log.controller.configs.get((2, "t")) == {"cleanup.policy": "delete,compact"}
    assert alter(log, 2, "t", ("retention.ms", APPEND, "1")) == (
        (ErrorCode.INVALID_CONFIG, "Can't APPEND to key retention.ms because its type is "
                                   "not LIST."), [])
    assert alter(log, 2, "nope", ("retention.ms", SET, "1")) == (
        (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "The topic 'nope' does not exist."), [])
    assert alter(log, 2, "", ("retention.ms", SET, "1")) == (
        (ErrorCode.INVALID_REQUEST, "Default topic resources are not allowed."), [])
    code, _ = alter(log, 2, "t", ("no.such.config", SET, "1"))[0]
    assert code == ErrorCode.INVALID_CONFIG
    assert alter(log, 2, "t", ("retention.ms", SET, "5"), validate_only=True) == ((0, None), [])
    assert log.controller.configs.get((2, "t"))["cleanup.policy"] == "delete,compact"


def test_broker_configs_always_write_a_record():
    log = MetadataLog()
    log.start_brokers(1)
    for _ in range(2):
        (code, _), records = alter(log, 4, "", ("log.retention.ms", SET, "1000"))
        assert code == 0 and [type(r) for r in records] == [ConfigRecord]
    assert alter(log, 4, "x", ("log.retention.ms", SET, "1"))[0] == (
        ErrorCode.INVALID_REQUEST, "Unable to parse broker name as a base 10 number.")
    assert alter(log, 4, "5", ("log.retention.ms", SET, "1"))[0] == (
        ErrorCode.BROKER_ID_NOT_REGISTERED, "No node with id 5 found.")
    assert alter(log, 4, "1", ("log.retention.ms", SET, "1"))[0] == (0, None)


def test_topic_min_insync_replicas_comes_from_the_cluster_default():
    log = MetadataLog()
    log.start_brokers(1, 2, 3)
    create_topic(log, "t", 1, 3)
    rc = log.controller.replication
    topic = rc.topics[log.topic_id("t")]
    assert rc.effective_min_isr(topic) == 1
    alter(log, 4, "", ("min.insync.replicas", SET, "2"))
    assert rc.effective_min_isr(topic) == 2
    alter(log, 2, "t", ("min.insync.replicas", SET, "5"))
    assert rc.effective_min_isr(topic) == 3      # capped by the replication factor


def test_legacy_alter_configs_replaces_every_override():
    log = MetadataLog()
    log.start_brokers(1)
    create_topic(log, "t", configs={"retention.ms": "1000", "segment.ms": "60000"})
    response, records = log.handle(AlterConfigsRequest(resources=[LegacyResource(
        resource_type=2, resource_name="t",
        configs=[LegacyConfig(name="retention.ms", value="2000")])]))
    assert response.responses[0].error_code == 0
    assert {(r.name, r.value) for r in records} == {("retention.ms", "2000"), ("segment.ms", None)}
    assert log.controller.configs.get((2, "t")) == {"retention.ms": "2000"}


def test_unregister_broker_removes_it_from_isrs():
    log = MetadataLog()
    log.start_brokers(1, 2)
    create_topic(log, "t", -1, -1, assignments=[[1, 2]])
    response, records = log.handle(UnregisterBrokerRequest(broker_id=1))
    assert response.error_code == 0 and isinstance(records[-1], UnregisterBrokerRecord)
    assert log.controller.cluster.registration(1) is None
    part = log.partition("t", 0)
    assert part.leader == 2 and part.isr == (2,)
    response, records = log.handle(UnregisterBrokerRequest(broker_id=1))
    assert response.error_code == ErrorCode.BROKER_ID_NOT_REGISTERED and records == []
