"""The controller answers as Apache Kafka 4.4.0's does: the same CreateTopics /
CreatePartitions / ElectLeaders / AlterPartitionReassignments requests go to the reference
broker (a single KRaft node, id 1) through kafka-python's admin client and to a controller
with the same one broker; the error codes and messages must be the same."""

from __future__ import annotations

import pytest
from kafka.admin import KafkaAdminClient

from pykafkad.config.describe import ConfigSource
from tests.controller.support import MetadataLog
from tests.integration.clients import needs_java
from wire.messages.alter_partition_reassignments_request import (
    AlterPartitionReassignmentsRequest,
    ReassignablePartition,
    ReassignableTopic,
)
from wire.messages.create_partitions_request import (
    CreatePartitionsAssignment,
    CreatePartitionsRequest,
    CreatePartitionsTopic,
)
from wire.messages.create_topics_request import (
    CreatableReplicaAssignment,
    CreatableTopic,
    CreatableTopicConfig,
    CreateTopicsRequest,
)
from wire.messages.elect_leaders_request import ElectLeadersRequest, TopicPartitions

pytestmark = needs_java


def unique(name: str) -> str:
    """Topics these tests create on the session's shared reference get names of their own."""
    import uuid
    return f"controller-{name}-{uuid.uuid4().hex[:8]}"

# name -> (num_partitions, replication_factor, assignments, configs)
CREATE_CASES = {
    "rf-above-brokers": (1, 3, None, {}),
    "rf-zero": (1, 0, None, {}),
    "no-partitions": (0, 1, None, {}),
    "unknown-broker": (-1, -1, {0: [1, 9]}, {}),
    "broker-twice": (-1, -1, {0: [1, 1]}, {}),
    "empty-assignment": (-1, -1, {0: []}, {}),
    "gap": (-1, -1, {0: [1], 2: [1]}, {}),
    "assignment-with-rf": (-1, 1, {0: [1]}, {}),
    "assignment-with-count": (2, -1, {0: [1]}, {}),
    "bad config": (1, 1, None, {}),
    "bad-config-value": (1, 1, None, {"cleanup.policy": "nope"}),
    "__cluster_metadata": (1, 1, None, {}),
    "fine": (2, 1, None, {"retention.ms": "1000"}),
}
TOO_MANY = {"huge-1": (6_000, 1, None, {}), "huge-2": (4_001, 1, None, {})}


@pytest.fixture(scope="module")
def admin(reference_kafka):
    client = KafkaAdminClient(bootstrap_servers=reference_kafka.bootstrap_servers)
    yield client
    client.close()


@pytest.fixture
def ours():
    log = MetadataLog()
    log.start_brokers(1)
    return log


@pytest.mark.parametrize("cases", [CREATE_CASES, TOO_MANY], ids=["errors", "too-many"])
def test_create_topics_errors_are_kafkas(admin, ours, cases):
    theirs = admin.create_topics(
        {name: {"num_partitions": n, "replication_factor": rf,
                **({"assignments": a} if a else {}), "configs": c}
         for name, (n, rf, a, c) in cases.items()},
        validate_only=True, raise_errors=False)
    theirs = {t["name"]: (t["error_code"], t["error_message"]) for t in theirs["topics"]}
    request = CreateTopicsRequest(validate_only=True, topics=[
        CreatableTopic(name=name, num_partitions=n, replication_factor=rf,
                       assignments=[CreatableReplicaAssignment(partition_index=p, broker_ids=b)
                                    for p, b in (a or {}).items()],
                       configs=[CreatableTopicConfig(name=k, value=v) for k, v in c.items()])
        for name, (n, rf, a, c) in cases.items()])
    response, records = ours.handle(request)
    assert records == []
    mine = {t.name: (t.error_code, t.error_message) for t in response.topics}
    assert mine == theirs


def test_create_partitions_elect_leaders_and_reassignment_errors_are_kafkas(admin, ours):
    topic = unique("grow-me")
    admin.create_topics({topic: {"num_partitions": 1, "replication_factor": 1}})
    ours.handle(CreateTopicsRequest(topics=[CreatableTopic(name=topic, num_partitions=1,
                                                           replication_factor=1)]))
    grow_cases = [(topic, 1, None), (topic, 0, None), (topic, 3, [[1]]), (topic, 2, [[9]]),
                  ("no-such-topic", 2, None), (topic, 10_002, None)]
    for name, count, assignments in grow_cases:
        spec = {"count": count, "assignments": assignments} if assignments else count
        theirs = admin.create_partitions({name: spec}, validate_only=True, raise_errors=False)
        response, records = ours.handle(CreatePartitionsRequest(validate_only=True, topics=[
            CreatePartitionsTopic(name=name, count=count, assignments=None if assignments is None
                                  else [CreatePartitionsAssignment(broker_ids=b)
                                        for b in assignments])]))
        t, m = theirs.results[0], response.results[0]
        assert (m.error_code, m.error_message) == (t.error_code, t.error_message), name

    for election_type in (0, 1):
        theirs = admin.elect_leaders(election_type, {topic: [0, 4]}, raise_errors=False)
        response, _ = ours.handle(ElectLeadersRequest(
            election_type=election_type,
            topic_partitions=[TopicPartitions(topic=topic, partitions=[0, 4])]))
        assert [(p.partition_id, p.error_code, p.error_message)
                for p in response.replica_election_results[0].partition_result] == \
            [(p.partition_id, p.error_code, p.error_message)
             for p in theirs.replica_election_results[0].partition_result]

    # An election type no client sends (raw frame): every partition fails with the message.
    from compat.wire_client import WireClient
    request = ElectLeadersRequest(election_type=7, topic_partitions=[
        TopicPartitions(topic=topic, partitions=[0, 1])])
    with WireClient(admin.config["bootstrap_servers"]) as kafka:
        theirs = kafka.request(43, 2, request)
    response, _ = ours.handle(request)
    assert response == theirs

    # AlterPartitionReassignments as raw frames, so the messages are compared too.
    cases = [((topic, 0), [9]), ((topic, 0), [1, 1]), ((topic, 0), None), ((topic, 5), [1]),
             (("no-such-topic", 0), [1]), ((topic, 0), [])]
    with WireClient(admin.config["bootstrap_servers"]) as kafka:
        for (name, partition), replicas in cases:
            for version, allow in ((0, True), (1, False)):
                request = AlterPartitionReassignmentsRequest(
                    allow_replication_factor_change=allow, topics=[ReassignableTopic(
                        name=name, partitions=[ReassignablePartition(
                            partition_index=partition, replicas=replicas)])])
                theirs = kafka.request(45, version, request)
                mine, records = ours.handle(request, version=version)
                assert records == []
                assert mine == theirs, (name, partition, replicas, version)


def test_created_topic_reports_kafkas_effective_configs(admin, ours):
    configs = {"retention.ms": "1000", "cleanup.policy": "compact"}
    theirs = admin.create_topics({"configured": {"num_partitions": 2, "replication_factor": 1,
                                                 "configs": configs}},
                                 validate_only=True, raise_errors=False)["topics"][0]
    response, _ = ours.handle(CreateTopicsRequest(validate_only=True, topics=[CreatableTopic(
        name="configured", num_partitions=2, replication_factor=1,
        configs=[CreatableTopicConfig(name=k, value=v) for k, v in configs.items()])]))
    mine = response.topics[0]
    assert (mine.num_partitions, mine.replication_factor) == (
        theirs["num_partitions"], theirs["replication_factor"])
    mine_configs = {c.name: (c.value, ConfigSource(c.config_source).name,
                             c.read_only, c.is_sensitive) for c in mine.configs}
    theirs_configs = {name: (c["value"], c["config_source"], c["read_only"], c["is_sensitive"])
                      for name, c in theirs["configs"].items()}
    assert mine_configs == theirs_configs


def test_incremental_alter_topic_config_errors_are_kafkas(reference_kafka, ours):
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import (
        AdminClient,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
        NewTopic,
        ResourceType,
    )

    from wire.messages.incremental_alter_configs_request import (
        AlterableConfig,
        AlterConfigsResource,
        IncrementalAlterConfigsRequest,
    )

    topic = unique("configured-later")
    admin = AdminClient({"bootstrap.servers": reference_kafka.bootstrap_servers})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    ours.handle(CreateTopicsRequest(topics=[CreatableTopic(name=topic, num_partitions=1,
                                                           replication_factor=1)]))
    cases = [(topic, "retention.ms", AlterConfigOpType.APPEND, "1"),
             (topic, "retention.ms", AlterConfigOpType.SET, "abc"),
             (topic, "no.such.config", AlterConfigOpType.SET, "1"),
             ("no-such-topic", "retention.ms", AlterConfigOpType.SET, "1"),
             (topic, "cleanup.policy", AlterConfigOpType.APPEND, "compact"),
             (topic, "retention.ms", AlterConfigOpType.DELETE, None)]
    for name, key, op, value in cases:
        resource = ConfigResource(ResourceType.TOPIC, name, incremental_configs=[
            ConfigEntry(key, value, incremental_operation=op)])
        try:
            admin.incremental_alter_configs([resource])[resource].result(30)
            theirs = (0, None)
        except KafkaException as e:
            theirs = (e.args[0].code(), e.args[0].str())
        response, _ = ours.handle(IncrementalAlterConfigsRequest(resources=[AlterConfigsResource(
            resource_type=2, resource_name=name,
            configs=[AlterableConfig(name=key, config_operation=op.value, value=value)])]))
        r = response.responses[0]
        assert (r.error_code, r.error_message) == theirs, (name, key, op)


def _controller_listener(reference_kafka) -> str:
    for line in (reference_kafka.data_dir / "server.properties").read_text().splitlines():
        if line.startswith("listeners="):
            for listener in line.split("=", 1)[1].split(","):
                if listener.startswith("CONTROLLER://"):
                    return listener.removeprefix("CONTROLLER://")
    raise AssertionError("the reference has no CONTROLLER listener")


def test_broker_lifecycle_errors_are_kafkas(reference_kafka):
    """BrokerRegistration / BrokerHeartbeat / AllocateProducerIds / AlterPartition refusals,
    sent as raw frames (no client sends them) to the reference's controller listener. Only
    requests Kafka refuses are sent, so the reference cluster is left as it was."""
    import uuid

    from compat.kafka_broker import formatted_cluster_id
    from compat.wire_client import WireClient
    from wire.messages.allocate_producer_ids_request import AllocateProducerIdsRequest
    from wire.messages.alter_partition_request import AlterPartitionRequest, TopicData
    from wire.messages.broker_heartbeat_request import BrokerHeartbeatRequest
    from wire.messages.broker_registration_request import (
        BrokerRegistrationRequest,
        Feature,
        Listener,
    )

    cluster_id = formatted_cluster_id(reference_kafka.data_dir)
    ours = MetadataLog(cluster_id=cluster_id)
    ours.start_brokers(1)
    mv = Feature(name="metadata.version", min_supported_version=7, max_supported_version=33)

    def registration(broker_id, *, cluster=cluster_id, features=(mv,), log_dirs=None):
        return BrokerRegistrationRequest(
            broker_id=broker_id, cluster_id=cluster, incarnation_id=uuid.uuid4().bytes,
            listeners=[Listener(name="PLAINTEXT", host="127.0.0.1", port=1,
                                security_protocol=0)],
            features=list(features), rack=None, previous_broker_epoch=-1,
            log_dirs=[uuid.uuid4().bytes] if log_dirs is None else log_dirs)

    old_mv = Feature(name="metadata.version", min_supported_version=7, max_supported_version=20)
    no_groups = Feature(name="group.version", min_supported_version=0, max_supported_version=0)
    cases = [
        (62, 4, registration(77, cluster="another-cluster")),
        (62, 4, registration(1)),                         # id 1 is alive: another incarnation
        (62, 4, registration(77, features=[old_mv])),
        (62, 4, registration(77, features=[])),
        (62, 4, registration(77, log_dirs=[])),
        (62, 4, registration(77, log_dirs=[(1).to_bytes(16, "big")])),
        (62, 4, registration(77, features=[mv, no_groups])),
        (63, 1, BrokerHeartbeatRequest(broker_id=77, broker_epoch=5, offline_log_dirs=[])),
        (63, 1, BrokerHeartbeatRequest(broker_id=1, broker_epoch=-5, offline_log_dirs=[])),
        (67, 0, AllocateProducerIdsRequest(broker_id=77, broker_epoch=5)),
        (56, 3, AlterPartitionRequest(broker_id=1, broker_epoch=-5, topics=[])),
        (56, 3, AlterPartitionRequest(broker_id=1, broker_epoch=-5, topics=[
            TopicData(topic_id=uuid.uuid4().bytes, partitions=[])])),
    ]
    fields = {62: ("error_code", "broker_epoch"),
              63: ("error_code", "is_caught_up", "is_fenced", "should_shut_down"),
              67: ("error_code", "producer_id_start", "producer_id_len"),
              56: ("error_code",)}
    with WireClient(_controller_listener(reference_kafka)) as kafka:
        for api_key, version, request in cases:
            theirs = kafka.request(api_key, version, request)
            mine, records = ours.handle(request, version=version)
            assert records == []
            assert [getattr(mine, f) for f in fields[api_key]] == \
                [getattr(theirs, f) for f in fields[api_key]], (api_key, request)


def test_delete_topics_name_and_id_resolution_is_kafkas(admin, ours):
    """DeleteTopics v6 naming topics every way (raw frames: no client sends the odd ones);
    Kafka shuffles the results, so they are compared as sets."""
    from compat.wire_client import WireClient
    from wire.messages.delete_topics_request import DeleteTopicsRequest, DeleteTopicState

    doomed = unique("doomed")
    admin.create_topics({doomed: {"num_partitions": 1, "replication_factor": 1}})
    ours.handle(CreateTopicsRequest(topics=[CreatableTopic(name=doomed, num_partitions=1,
                                                           replication_factor=1)]))
    zero = bytes(16)
    request = DeleteTopicsRequest(topic_names=[], timeout_ms=5000, topics=[
        DeleteTopicState(name=None, topic_id=zero),
        DeleteTopicState(name="both", topic_id=b"\x05" * 16),
        DeleteTopicState(name="twice"), DeleteTopicState(name="twice"),
        DeleteTopicState(name=None, topic_id=b"\x06" * 16),
        DeleteTopicState(name=None, topic_id=b"\x06" * 16),
        DeleteTopicState(name=None, topic_id=b"\x07" * 16),
        DeleteTopicState(name="missing"), DeleteTopicState(name=doomed)])
    with WireClient(admin.config["bootstrap_servers"]) as kafka:
        theirs = kafka.request(20, 6, request)
    response, records = ours.handle(request, version=6)
    assert len(records) == 1

    def key(r):
        # the deleted topic's id is random on each side
        return (r.name, r.topic_id if r.name != doomed else None, r.error_code,
                r.error_message)

    assert sorted(map(key, response.responses), key=repr) == \
        sorted(map(key, theirs.responses), key=repr)


def _kafka_metadata_log(data_dir):
    """(offset, record) for every metadata record in the reference's __cluster_metadata log,
    decoded with Kafka's frame (frame version, api key, version as unsigned varints)."""
    from wire.metadata import RECORD_TYPES
    from wire.primitives import Reader
    from wire.records.batch import decode_records, iter_batch_headers

    for path in sorted((data_dir / "logs" / "__cluster_metadata-0").glob("*.log")):
        data = path.read_bytes()
        for pos, header in iter_batch_headers(data):
            if header.is_control:
                continue
            for rec in decode_records(data, pos):
                r = Reader(rec.value)
                r.uvarint()                    # frame version
                api_key, version = r.uvarint(), r.uvarint()
                yield rec.offset, RECORD_TYPES[api_key].read(r, version)


def test_replaying_kafkas_own_metadata_log_gives_kafkas_state(admin, reference_kafka):
    """Every record Apache Kafka 4.4.0 wrote replays, and the state built from them is the
    one Kafka reports: partitions, leaders, ISRs, topic configs, the broker's registration."""
    from confluent_kafka.admin import AdminClient

    from compat.kafka_broker import formatted_cluster_id
    from pykafkad.controller import QuorumController

    replayed = unique("replayed")
    admin.create_topics({replayed: {"num_partitions": 3, "replication_factor": 1,
                                    "configs": {"retention.ms": "12345"}}})
    metadata = AdminClient({"bootstrap.servers": reference_kafka.bootstrap_servers}) \
        .list_topics(timeout=30)
    controller = QuorumController(formatted_cluster_id(reference_kafka.data_dir))
    count = 0
    for offset, record in _kafka_metadata_log(reference_kafka.data_dir):
        controller.replay(record, offset)
        count += 1
    assert count > 0
    rc = controller.replication
    assert controller.configs.get((2, replayed)) == {"retention.ms": "12345"}
    assert controller.features.finalized["metadata.version"] == 33
    assert controller.cluster.is_active(1)
    for name, topic in metadata.topics.items():
        if name not in rc.topics_by_name:      # created after the log was read
            continue
        parts = rc.topics[rc.topics_by_name[name]].parts
        assert sorted(parts) == sorted(topic.partitions), name
        for pid, p in topic.partitions.items():
            assert (parts[pid].leader, list(parts[pid].replicas), sorted(parts[pid].isr)) == \
                (p.leader, p.replicas, sorted(p.isrs)), (name, pid)
    assert replayed in rc.topics_by_name


def test_bootstrap_batch_is_kafkas(reference_kafka):
    """A new cluster's first metadata batch: the same records Kafka 4.4.0 wrote."""
    from pykafkad.controller import QuorumController

    theirs = []
    for _, record in _kafka_metadata_log(reference_kafka.data_dir):
        theirs.append(record)
        if type(record).__name__ == "EndTransactionRecord":
            break
    assert QuorumController("x").bootstrap_records() == theirs
