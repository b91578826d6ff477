"""pykafkad and Apache Kafka 4.4.0 asked the same questions: ApiVersions (every range, the
features, the v5 cluster check), requests below Kafka 4's minimum versions, the new versions'
answers, ListOffsets' special timestamps, ListConfigResources, and Kafka's own tools
(GetOffsetShell, FeatureCommand) printing the same against both.

One reference broker serves the whole session (the ``reference_kafka`` fixture); each test
makes its own uniquely named topics and groups on both brokers.
"""

from __future__ import annotations

import socket
import struct
import time
import uuid

import pytest

from compat.wire_client import WireClient
from pykafkad.dispatch import load_handlers
from tests.integration.clients import WAIT_S, confluent_produce, create_topic, needs_java
from wire.errors import ErrorCode
from wire.messages.api_versions_request import ApiVersionsRequest
from wire.messages.delete_groups_request import DeleteGroupsRequest
from wire.messages.describe_cluster_request import DescribeClusterRequest
from wire.messages.describe_groups_request import DescribeGroupsRequest
from wire.messages.find_coordinator_request import FindCoordinatorRequest
from wire.messages.list_offsets_request import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsTopic,
)
from wire.messages.list_transactions_request import ListTransactionsRequest
from wire.messages.metadata_request import MetadataRequest, MetadataRequestTopic
from wire.messages.metadata_request import MetadataRequestTopic as T
from wire.messages.offset_commit_request import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from wire.messages.offset_fetch_request import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopics,
)
from wire.messages.produce_request import (
    PartitionProduceData,
    ProduceRequest,
    TopicProduceData,
)

pytestmark = needs_java

#: features pykafkad supports only at level 0 (README: differences from Kafka)
LEVEL_ZERO_FEATURES: set[str] = set()


def unique(prefix: str) -> str:
    return f"codec-{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def both(broker, reference_kafka):
    """{"pykafkad": bootstrap, "kafka": bootstrap}."""
    return {"pykafkad": broker.bootstrap_servers, "kafka": reference_kafka.bootstrap_servers}


def wait_until(condition, what: str, timeout_s: float = WAIT_S):
    """Polls ``condition`` until it returns something truthy (Kafka's metadata propagates to
    its broker side a moment after the controller answered)."""
    deadline = time.monotonic() + timeout_s
    while True:
        got = condition()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def topic_ready(bootstrap: str, name: str) -> bytes:
    """Waits until Metadata lists ``name`` with its leaders; its topic id."""
    def ready():
        with WireClient(bootstrap) as c:
            md = c.request(3, 12, MetadataRequest(
                topics=[MetadataRequestTopic(name=name)], allow_auto_topic_creation=False))
        t = md.topics[0]
        ok = t.error_code == 0 and t.partitions and all(p.leader_id >= 0 for p in t.partitions)
        return t.topic_id if ok else None

    return wait_until(ready, f"topic {name} on {bootstrap}")


def coordinator_ready(bootstrap: str, group: str) -> None:
    """Waits until the group's coordinator answers (a fresh Kafka creates and loads
    __consumer_offsets first, answering COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR or
    COORDINATOR_LOAD_IN_PROGRESS meanwhile)."""
    def ready():
        with WireClient(bootstrap) as c:
            r = c.request(10, 4, FindCoordinatorRequest(key_type=0, coordinator_keys=[group]))
            if r.coordinators[0].error_code:
                return False
            return c.request(15, 5, DescribeGroupsRequest(groups=[group])).groups[0].error_code == 0

    wait_until(ready, f"the coordinator of {group} on {bootstrap}")


def raw_exchange(bootstrap: str, api_key: int, version: int, body: bytes = bytes(40)):
    """Sends one frame with a v1 request header; the response frame, or None when the broker
    closed the connection instead of answering."""
    host, _, port = bootstrap.rpartition(":")
    with socket.create_connection((host, int(port)), timeout=30) as s:
        client_id = b"codec-parity"
        frame = struct.pack(">hhih", api_key, version, 7, len(client_id)) + client_id + body
        s.sendall(struct.pack(">i", len(frame)) + frame)
        data = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
                if len(data) >= 4 and len(data) >= 4 + struct.unpack(">i", data[:4])[0]:
                    return data[4:]
        except ConnectionResetError:
            pass
        return None


def api_versions(bootstrap: str, version: int = 4, **fields):
    fields = {"client_software_name": "codec-parity", "client_software_version": "1", **fields}
    with WireClient(bootstrap) as c:
        return c.request(18, version, ApiVersionsRequest(**fields))


# ------------------------------------------------------------------------------ ApiVersions


def test_api_versions_ranges_are_kafkas(both):
    kafka = {k.api_key: (k.min_version, k.max_version) for k in api_versions(both["kafka"]).api_keys}
    ours = {k.api_key: (k.min_version, k.max_version)
            for k in api_versions(both["pykafkad"]).api_keys}
    # every API any broker serves, and those a KRaft broker forwards to the controller (the
    # single node is a one-voter KRaft node); the quorum's own are on controller listeners
    assert set(ours) >= {k for k, h in load_handlers().items() if h.available is None}
    assert set(ours) <= set(kafka)
    differing = {key: (ours[key], kafka[key]) for key in ours if ours[key] != kafka[key]}
    assert differing == {}


def test_kafka_python_infers_what_it_infers_from_kafka(both):
    """kafka-python 3.0.12 infers the broker's release from ApiVersions maxima (4.3 needs
    DescribeLogDirs v5): it must take pykafkad for the same release as Kafka 4.4."""
    from kafka import KafkaProducer

    from tests.integration.test_client_versions import KAFKA_PYTHON_INFERS_FROM_KAFKA_44

    inferred = {}
    for side, bootstrap in both.items():
        producer = KafkaProducer(bootstrap_servers=bootstrap)
        try:
            inferred[side] = producer.config["api_version"]
        finally:
            producer.close()
    assert inferred == {"pykafkad": KAFKA_PYTHON_INFERS_FROM_KAFKA_44,
                        "kafka": KAFKA_PYTHON_INFERS_FROM_KAFKA_44}


@pytest.mark.parametrize("api_key,version", [
    (0, 0), (0, 1), (0, 2), (0, 14),  # Produce: 0-2 advertised (KAFKA-18659) but refused
    (1, 0), (1, 3), (1, 19),           # Fetch
    (2, 0), (2, 12),                   # ListOffsets
    (3, 14),                           # Metadata
    (8, 0), (8, 1), (9, 0),            # OffsetCommit, OffsetFetch
    (19, 0), (19, 1), (20, 0),         # CreateTopics, DeleteTopics
    (23, 0), (23, 1), (32, 0),         # OffsetForLeaderEpoch, DescribeConfigs
    (34, 0), (35, 0),                  # AlterReplicaLogDirs, DescribeLogDirs
])
def test_versions_kafka_does_not_serve_close_the_connection(both, api_key, version):
    answers = {name: raw_exchange(b, api_key, version) for name, b in both.items()}
    assert answers == {"pykafkad": None, "kafka": None}


def test_unsupported_api_versions_version_answers_like_kafka(both):
    """ApiVersions v99: a v0 body with UNSUPPORTED_VERSION listing only key 18's range."""
    # a flexible (v2) request header: its empty tagged fields are the one byte sent
    answers = {name: raw_exchange(b, 18, 99, b"\x00") for name, b in both.items()}
    assert answers["pykafkad"] == answers["kafka"]
    assert answers["kafka"][4:6] == struct.pack(">h", ErrorCode.UNSUPPORTED_VERSION)


def test_api_versions_v5_cluster_and_node_check(both):
    def codes(bootstrap: str) -> list[int]:
        with WireClient(bootstrap) as c:
            md = c.request(3, 12, MetadataRequest(topics=[], allow_auto_topic_creation=False))
        cluster, node = md.cluster_id, md.brokers[0].node_id
        cases = [(cluster, node), (cluster, node + 7), (cluster, -1), ("wrong", -1),
                 ("wrong", node), (None, node), ("", node), (None, -1)]
        out = []
        for cluster_id, node_id in cases:
            r = api_versions(bootstrap, 5, cluster_id=cluster_id, node_id=node_id)
            out.append((r.error_code, bool(r.api_keys), r.finalized_features_epoch >= 0))
        return out

    ours, kafka = codes(both["pykafkad"]), codes(both["kafka"])
    assert ours == kafka
    assert [c for c, _, _ in kafka] == [0, ErrorCode.REBOOTSTRAP_REQUIRED,
                                        ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST,
                                        ErrorCode.REBOOTSTRAP_REQUIRED,
                                        ErrorCode.INVALID_REQUEST,
                                        ErrorCode.REBOOTSTRAP_REQUIRED, 0]


def test_api_versions_checks_the_client_software_name_like_kafka(both):
    names = ["a", "a-", "a.b-c9", "A_b", "\u00fc", "a b", "1", "x..y", ".a", ""]

    def codes(bootstrap: str) -> list:
        out = []
        for name in names:
            for version in (3, 5):
                r = api_versions(bootstrap, version, client_software_name=name)
                out.append((r.error_code, len(r.api_keys) > 0))
            r = api_versions(bootstrap, 3, client_software_name="ok", client_software_version=name)
            out.append((r.error_code, len(r.api_keys) > 0))
        # the name is checked before the v5 cluster check
        r = api_versions(bootstrap, 5, client_software_name="bad name", cluster_id="wrong",
                         node_id=1)
        out.append((r.error_code, len(r.api_keys) > 0))
        return out

    assert codes(both["pykafkad"]) == codes(both["kafka"])


@pytest.mark.parametrize("version", [3, 4, 5])
def test_features_are_kafkas_but_for_the_level_zero_ones(both, version):
    def features(bootstrap):
        r = api_versions(bootstrap, version)
        return ({f.name: (f.min_version, f.max_version) for f in r.supported_features},
                {f.name: (f.min_version_level, f.max_version_level)
                 for f in r.finalized_features})

    (sup, fin), (ksup, kfin) = features(both["pykafkad"]), features(both["kafka"])
    assert set(sup) == set(ksup)
    for name in set(ksup) - LEVEL_ZERO_FEATURES:
        assert sup[name] == ksup[name], name
    for name in LEVEL_ZERO_FEATURES & set(ksup):
        assert sup[name] == (0, 0) and ksup[name][1] > 0
    assert {n: lv for n, lv in fin.items()} == {
        n: lv for n, lv in kfin.items() if n not in LEVEL_ZERO_FEATURES}
    assert "metadata.version" in fin


def test_feature_command_describe_prints_what_kafka_prints(both):
    from compat.kafka_tools import run_tool

    def described(bootstrap):
        p = run_tool("kafka-features", ["--bootstrap-server", bootstrap, "describe"])
        assert p.returncode == 0, p.stderr[-2000:]
        lines = {}
        for line in p.stdout.splitlines():
            fields = line.split()
            # "Feature: <name> SupportedMinVersion: a SupportedMaxVersion: b ... Epoch: n"
            lines[fields[1]] = " ".join(line.split("Epoch:")[0].split())
        return lines

    ours, kafka = described(both["pykafkad"]), described(both["kafka"])
    assert set(ours) == set(kafka)
    for name in set(kafka) - LEVEL_ZERO_FEATURES:
        assert ours[name] == kafka[name]
    for name in LEVEL_ZERO_FEATURES:
        assert ours[name].endswith("SupportedMaxVersion: 0 FinalizedVersionLevel: 0"), ours[name]


# --------------------------------------------------------------------------- new versions


def _topic_on_both(both, name: str, partitions: int = 1, records=()) -> dict[str, bytes]:
    """Creates ``name`` on both brokers with the same records; {broker: topic id}."""
    ids = {}
    for side, bootstrap in both.items():
        create_topic(bootstrap, name, partitions)
        ids[side] = topic_ready(bootstrap, name)
        if records:
            confluent_produce(bootstrap, name, list(records))
    return ids


def test_new_versions_answer_like_kafka(both):
    topic, group, missing = unique("nv"), unique("nv-group"), unique("nv-missing")
    ids = _topic_on_both(both, topic)
    unknown_id = uuid.uuid4().bytes

    def answers(side: str) -> dict:
        tid = ids[side]
        out = {}
        for g in (group, missing):
            coordinator_ready(both[side], g)
        with WireClient(both[side]) as c:
            r = c.request(0, 13, ProduceRequest(acks=1, timeout_ms=5000, topic_data=[
                TopicProduceData(topic_id=unknown_id, partition_data=[
                    PartitionProduceData(index=0, records=b"")])]))
            p = r.responses[0].partition_responses[0]
            out["produce v13 unknown id"] = (r.responses[0].topic_id == unknown_id,
                                             p.error_code, p.base_offset, p.error_message)
            r = c.request(8, 10, OffsetCommitRequest(
                group_id=group, generation_id_or_member_epoch=-1, member_id="", topics=[
                    OffsetCommitRequestTopic(topic_id=tid, partitions=[
                        OffsetCommitRequestPartition(partition_index=0, committed_offset=0,
                                                     committed_metadata="m"),
                        OffsetCommitRequestPartition(partition_index=9, committed_offset=0)]),
                    OffsetCommitRequestTopic(topic_id=unknown_id, partitions=[
                        OffsetCommitRequestPartition(partition_index=0, committed_offset=0)])]))
            out["offset commit v10"] = sorted(
                (t.topic_id == tid, p.partition_index, p.error_code)
                for t in r.topics for p in t.partitions)
            for topics in (None, [OffsetFetchRequestTopics(topic_id=tid, partition_indexes=[0, 9]),
                                  OffsetFetchRequestTopics(topic_id=unknown_id,
                                                           partition_indexes=[0])]):
                r = c.request(9, 10, OffsetFetchRequest(require_stable=True, groups=[
                    OffsetFetchRequestGroup(group_id=group, topics=topics)]))
                g = r.groups[0]
                out[f"offset fetch v10 {topics is None}"] = (g.error_code, sorted(
                    (t.topic_id == tid, p.partition_index, p.committed_offset, p.metadata,
                     p.error_code) for t in g.topics for p in t.partitions))
            for v in (5, 6):
                r = c.request(15, v, DescribeGroupsRequest(groups=[missing]))
                g = r.groups[0]
                out[f"describe groups v{v}"] = (g.error_code, g.error_message is not None,
                                                g.group_state, g.members)
            r = c.request(42, 3, DeleteGroupsRequest(groups_names=[missing]))
            out["delete groups v3"] = [(x.error_code, x.error_message) for x in r.results]
            for pattern in (f"{topic}-.*", "["):
                r = c.request(66, 2, ListTransactionsRequest(transactional_id_pattern=pattern))
                out[f"list transactions {pattern!r}"] = (r.error_code, r.transaction_states)
            r = c.request(60, 2, DescribeClusterRequest(endpoint_type=1,
                                                        include_fenced_brokers=True))
            out["describe cluster v2"] = (r.error_code, [b.is_fenced for b in r.brokers])
        return out

    ours, kafka = answers("pykafkad"), answers("kafka")
    assert ours == kafka
    assert kafka["produce v13 unknown id"][1] == ErrorCode.UNKNOWN_TOPIC_ID


def test_metadata_by_topic_id_and_name_like_kafka(both):
    """Topic ids are refused at v10-11 and served from v12 (names then ignored); each topic is
    answered once; illegal names are INVALID_TOPIC_EXCEPTION even without auto-creation."""
    topic, missing = unique("md"), unique("md-none")
    ids = _topic_on_both(both, topic)
    other = b"\x07" * 16

    def answers(side: str) -> dict:
        tid = ids[side]
        cases = {
            "name and a wrong id": [T(name=topic, topic_id=other)],
            "another name and the id": [T(name=missing, topic_id=tid)],
            "an id and a name": [T(topic_id=tid, name=None), T(name=topic)],
            "two ids": [T(topic_id=other, name=None), T(topic_id=tid, name=None)],
            "the same id twice": [T(topic_id=tid, name=None), T(topic_id=tid, name=None)],
            "the same name twice": [T(name=topic), T(name=topic)],
            "a null name": [T(name=None)],
            "illegal names": [T(name="bad name!"), T(name=".."), T(name="a" * 250)],
        }
        out = {}
        with WireClient(both[side]) as c:
            for case, topics in cases.items():
                for v in (10, 11, 12, 13):
                    r = c.request(3, v, MetadataRequest(topics=topics,
                                                        allow_auto_topic_creation=False))
                    out[(case, v)] = sorted(
                        (t.error_code, t.name, "known" if t.topic_id == tid else t.topic_id.hex(),
                         len(t.partitions)) for t in r.topics)
        return out

    ours, kafka = answers("pykafkad"), answers("kafka")
    assert {k: a for k, a in ours.items() if a != kafka[k]} == {}


# ---------------------------------------------------------------------------- ListOffsets


LIST_OFFSETS_VERSIONS = (1, 2, 4, 6, 7, 8, 9, 10, 11)
SPECIAL_TIMESTAMPS = (-1, -2, -3, -4, -5, -6, -7, -8, -100)


def test_list_offsets_special_timestamps_answer_like_kafka(both):
    topic, missing = unique("lo"), unique("lo-none")
    base = (int(time.time() * 1000) // 1000 - 60) * 1000
    records = [{"value": f"v{i}".encode(), "timestamp": base + 10 * i} for i in range(3)]
    _topic_on_both(both, topic, records=records)
    timestamps = (*SPECIAL_TIMESTAMPS, base - 1, base + 5, base + 20, base + 1000)

    def answers(bootstrap: str) -> dict:
        out = {}
        with WireClient(bootstrap) as c:
            for v in LIST_OFFSETS_VERSIONS:
                for ts in timestamps:
                    r = c.request(2, v, ListOffsetsRequest(replica_id=-1, topics=[
                        ListOffsetsTopic(name=topic, partitions=[ListOffsetsPartition(
                            partition_index=0, current_leader_epoch=-1, timestamp=ts)])],
                        timeout_ms=5000))
                    p = r.topics[0].partitions[0]
                    out[(v, ts)] = (p.error_code, p.timestamp, p.offset, p.leader_epoch)
            # unknown topics and partitions; the current leader epoch check (v4+)
            for v, name, partition, epoch in (
                    (1, missing, 0, -1), (11, missing, 0, -1), (11, topic, 3, -1),
                    (4, topic, 0, 0), (4, topic, 0, 1), (11, topic, 0, 0), (11, topic, 0, 1)):
                r = c.request(2, v, ListOffsetsRequest(replica_id=-1, topics=[
                    ListOffsetsTopic(name=name, partitions=[ListOffsetsPartition(
                        partition_index=partition, current_leader_epoch=epoch, timestamp=-1)])],
                    timeout_ms=5000))
                p = r.topics[0].partitions[0]
                out[(v, name == topic, partition, epoch)] = (p.error_code, p.offset)
        return out

    ours, kafka = answers(both["pykafkad"]), answers(both["kafka"])
    assert {k: a for k, a in ours.items() if a != kafka[k]} == {}
    assert kafka[(11, -6)] == (0, -1, -1, -1)
    assert kafka[(11, -7)][0] == ErrorCode.UNSUPPORTED_VERSION


def test_get_offset_shell_prints_what_kafka_prints(both):
    """Kafka's GetOffsetShell (kafka-tools 4.3.1 on kafka-clients 4.4.0) for every special
    time it knows, -6 (earliest pending upload) among them."""
    from compat.kafka_tools import run_tool

    topic = unique("gos")
    base = (int(time.time() * 1000) // 1000 - 60) * 1000
    _topic_on_both(both, topic, partitions=2, records=[
        {"value": f"v{i}".encode(), "partition": i % 2, "timestamp": base + i}
        for i in range(5)])

    def printed(bootstrap: str) -> dict:
        out = {}
        for t in ("-1", "-2", "-3", "-4", "-5", "-6", "-7", str(base + 2)):
            p = run_tool("kafka-get-offsets", ["--bootstrap-server", bootstrap, "--topic", topic,
                                             "--time", t])
            out[t] = (p.returncode, p.stdout)
        return out

    ours, kafka = printed(both["pykafkad"]), printed(both["kafka"])
    assert ours == kafka
    assert kafka["-1"][1] == f"{topic}:0:3\n{topic}:1:2\n"


# -------------------------------------------------------------------- ListConfigResources


def test_list_config_resources_with_the_java_admin(both, tmp_path):
    import subprocess

    from compat import maven
    from compat.clients import java
    from compat.kafka_specs import SPECS_VERSION

    topic = unique("lcr")
    for bootstrap in both.values():
        create_topic(bootstrap, topic)
        topic_ready(bootstrap, topic)
    group, subscription = unique("lcr-group"), unique("lcr-metrics")
    for bootstrap in both.values():
        _configure_group_and_client_metrics(bootstrap, group, subscription)
    source = java.SOURCE.with_name("ConfigResourcesProbe.java")
    queries = ["ALL", "TOPIC", "BROKER,BROKER_LOGGER", "GROUP", "CLIENT_METRICS", "UNKNOWN",
               "TOPIC,GROUP"]

    def answers(bootstrap: str) -> dict[str, tuple[str, set[str]]]:
        p = subprocess.run(
            ["java", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp",
             maven.classpath(java.jars_dir(SPECS_VERSION)), str(source), bootstrap, *queries],
            capture_output=True, text=True, timeout=180)
        out = {}
        for line in p.stdout.splitlines():
            if line.startswith("##ANSWER "):
                _, query, status, *rest = line.split(" ")
                out[query] = (status, {r for r in rest if r})
        assert set(out) == set(queries), p.stderr[-2000:]
        return out

    ours, kafka = answers(both["pykafkad"]), answers(both["kafka"])
    for query in queries:
        assert ours[query][0] == kafka[query][0], query
    # this session's reference broker may hold other tests' topics and configured groups
    topic_set = {f"TOPIC:{topic}"}
    assert topic_set <= ours["TOPIC"][1] and topic_set <= kafka["TOPIC"][1]
    assert ours["BROKER,BROKER_LOGGER"] == kafka["BROKER,BROKER_LOGGER"]
    # groups and client-metrics subscriptions are listed once they have configs
    assert {f"GROUP:{group}"} <= ours["GROUP"][1] and {f"GROUP:{group}"} <= kafka["GROUP"][1]
    metrics = {f"CLIENT_METRICS:{subscription}"}
    assert metrics <= ours["CLIENT_METRICS"][1] and metrics <= kafka["CLIENT_METRICS"][1]
    assert kafka["UNKNOWN"] == ours["UNKNOWN"] == ("ERROR", {"UnsupportedVersionException"})
    with WireClient(both["pykafkad"]) as c:
        md = c.request(3, 12, MetadataRequest(topics=None, allow_auto_topic_creation=False))
    listed_topics = {f"TOPIC:{t.name}" for t in md.topics}
    assert ours["TOPIC"] == ("OK", listed_topics)
    assert ours["ALL"] == ("OK", listed_topics | {"BROKER:1", "BROKER_LOGGER:1"}
                           | ours["GROUP"][1] | ours["CLIENT_METRICS"][1])


def _configure_group_and_client_metrics(bootstrap: str, group: str, subscription: str) -> None:
    """One group config and one client-metrics subscription (raw IncrementalAlterConfigs: the
    Python clients cannot name these resource types)."""
    from wire.messages.incremental_alter_configs_request import (
        AlterableConfig,
        AlterConfigsResource,
        IncrementalAlterConfigsRequest,
    )

    with WireClient(bootstrap) as c:
        r = c.request(44, 1, IncrementalAlterConfigsRequest(validate_only=False, resources=[
            AlterConfigsResource(resource_type=32, resource_name=group, configs=[
                AlterableConfig("consumer.session.timeout.ms", 0, "50000")]),
            AlterConfigsResource(resource_type=16, resource_name=subscription, configs=[
                AlterableConfig("interval.ms", 0, "60000")]),
        ]))
    assert [x.error_code for x in r.responses] == [0, 0]
