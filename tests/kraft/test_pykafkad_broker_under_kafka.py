"""A pykafkad broker under an Apache Kafka 4.4 controller (issue 14.1): next to a Kafka broker,
it registers with Kafka's controller and is unfenced, follows Kafka's metadata log, leads and
follows partitions, replicates both ways byte for byte, and takes over every leadership when the
Kafka broker dies (and the reverse), applies the records Kafka's controller writes, catches up
from Kafka's snapshots (FetchSnapshot) and shuts down under a controlled shutdown. Kafka's own
tools describe it as a healthy broker. Two JVMs (Kafka's controller and broker), one cluster."""

from __future__ import annotations

import re
import time

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
    ResourcePatternType,
    ResourceType,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)

from compat.kafka_tools import run_tool
from compat.mixed_cluster import run_pykafkad_broker_under_kafka
from pykafkad.metadata.batches import decode_batches
from tests.integration.clients import WAIT_S, confluent_consume, needs_java
from wire.metadata.broker_registration_change_record import BrokerRegistrationChangeRecord
from wire.records.batch import iter_batch_headers

pytestmark = needs_java

#: the Kafka controller fences a SIGKILLed broker after this long without heartbeats
SESSION_TIMEOUT_MS = 4000
KAFKA, PYKAFKAD = 2, 3

#: Kafka's controller snapshots its metadata often and drops the log the snapshots cover, so a
#: broker that was away must fetch a snapshot (FetchSnapshot) to catch up
SNAPSHOT_OFTEN = {
    "metadata.log.max.record.bytes.between.snapshots": "2000",
    # Kafka logs that this is for tests only; a segment must hold the largest batch (the 50
    # PartitionRecords of __consumer_offsets), or Kafka's controller stops writing
    "internal.metadata.log.segment.bytes": "16384",
    "metadata.max.retention.bytes": "1",
    "metadata.max.retention.ms": "1000",
    "internal.metadata.delete.delay.millis": "100",
}


#: every node runs Kafka's StandardAuthorizer, so ACLs go into the metadata log; clients (and
#: the nodes, over PLAINTEXT) are User:ANONYMOUS, a super user
AUTHORIZER = {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
              "super.users": "User:ANONYMOUS"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with run_pykafkad_broker_under_kafka(
            controller_config={"broker.session.timeout.ms": str(SESSION_TIMEOUT_MS),
                               **SNAPSHOT_OFTEN, **AUTHORIZER},
            broker_config=AUTHORIZER,
            data_dir=tmp_path_factory.mktemp("pykafkad-under-kafka")) as c:
        yield c


def wait_for(condition, what: str, timeout: float = 3 * WAIT_S):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)  # polling other processes' state: nothing to wait on


def partition_states(bootstrap: str, topic: str) -> dict | None:
    """partition -> (leader, replicas, isr), as the broker at ``bootstrap`` answers Metadata."""
    try:
        # (an admin client is a producer, which asks for a missing topic to be created)
        md = AdminClient({"bootstrap.servers": bootstrap, "allow.auto.create.topics": False}
                         ).list_topics(topic, timeout=5)
    except Exception:  # the broker is still starting: no answer yet
        return None
    t = md.topics.get(topic)
    if t is None or t.error is not None:
        return None
    return {i: (p.leader, sorted(p.replicas), sorted(p.isrs)) for i, p in t.partitions.items()}


def addr(node) -> str:
    return f"127.0.0.1:{node.port}"


def segment(node, topic: str, partition: int) -> bytes:
    return (node.props.parent / "logs" / f"{topic}-{partition}"
            / "00000000000000000000.log").read_bytes()


def metadata_batches(node) -> dict[int, bytes]:
    """base offset -> the bytes of each batch (control batches too) of a node's metadata log."""
    out = {}
    for f in (node.props.parent / "logs" / "__cluster_metadata-0").glob("*.log"):
        data = f.read_bytes()
        for pos, header in iter_batch_headers(data):
            out[header.base_offset] = data[pos:pos + header.size]
    return out


def test_the_pykafkad_broker_is_registered_and_unfenced(cluster):
    for node in (cluster.kafka, cluster.pykafkad):
        md = AdminClient({"bootstrap.servers": addr(node)}).list_topics(timeout=WAIT_S)
        assert sorted(md.brokers) == [KAFKA, PYKAFKAD] and md.cluster_id == cluster.cluster_id
        assert md.controller_id in (KAFKA, PYKAFKAD)  # a broker stands in for the controller
    for node in (cluster.kafka, cluster.pykafkad):
        admin = AdminClient({"bootstrap.servers": addr(node)})
        described = admin.describe_cluster().result(WAIT_S)
        assert {n.id: n.port for n in described.nodes} == {
            KAFKA: cluster.kafka.port, PYKAFKAD: cluster.pykafkad.port}
        assert described.cluster_id == cluster.cluster_id

    for via in (cluster.kafka, cluster.pykafkad):
        status = run_tool("kafka-metadata-quorum", ["--bootstrap-server", addr(via),
                                                    "describe", "--status"], check=True).stdout
        assert re.search(r"^LeaderId:\s+1$", status, re.M), status
        observers = re.search(r"^CurrentObservers:\s+(.*)$", status, re.M).group(1)
        assert sorted(map(int, re.findall(r'"id": (\d+), "directoryId": "[\w-]{22}"',
                                          observers))) == [KAFKA, PYKAFKAD], status
        replication = run_tool("kafka-metadata-quorum", ["--bootstrap-server", addr(via),
                                                         "describe", "--replication"],
                               check=True).stdout
        rows = {int(r.split()[0]): r.split()[-1] for r in replication.splitlines()[1:]
                if r.strip()}
        assert rows == {1: "Leader", KAFKA: "Observer", PYKAFKAD: "Observer"}, replication
    cluster_id = run_tool("kafka-cluster", ["cluster-id", "--bootstrap-server",
                                            addr(cluster.pykafkad)], check=True).stdout
    assert cluster_id.strip() == f"Cluster ID: {cluster.cluster_id}", cluster_id

    # the same supported ranges and finalized levels as the Kafka broker (the epoch is the
    # offset of the image each answered from)
    def features(node) -> list[str]:
        out = run_tool("kafka-features", ["--bootstrap-server", addr(node), "describe"],
                       check=True).stdout
        return [re.sub(r"\s+Epoch: \d+", "", line) for line in out.splitlines() if line]
    theirs = features(cluster.kafka)
    assert len(theirs) == 7 and features(cluster.pykafkad) == theirs

    # its copy of the metadata log holds the controller's batches byte for byte
    def same_batches():
        theirs, ours = metadata_batches(cluster.controller), metadata_batches(cluster.pykafkad)
        common = theirs.keys() & ours.keys()
        return len(common) > 5 and all(theirs[o] == ours[o] for o in common)
    wait_for(same_batches, "the controller's metadata batches in the pykafkad broker's log")


def test_replication_both_ways_and_failover(cluster):
    topic = "mixed"
    admin = AdminClient({"bootstrap.servers": addr(cluster.pykafkad)})
    # partition 0 led by the Kafka broker, partition 1 by the pykafkad broker
    admin.create_topics([NewTopic(topic, 2, replica_assignment=[[KAFKA, PYKAFKAD],
                                                             [PYKAFKAD, KAFKA]])]
                        )[topic].result(WAIT_S)
    both = {0: (KAFKA, [2, 3], [2, 3]), 1: (PYKAFKAD, [2, 3], [2, 3])}
    for node in (cluster.kafka, cluster.pykafkad):
        wait_for(lambda n=node: partition_states(addr(n), topic) == both,
                 f"both replicas in sync, as node {node.node_id} sees them")
    for node in (cluster.kafka, cluster.pykafkad):
        described = run_tool("kafka-topics", ["--bootstrap-server", addr(node),
                                              "--describe", "--topic", topic], check=True).stdout
        assert "PartitionCount: 2\tReplicationFactor: 2" in described, described
        assert "Partition: 0\tLeader: 2\tReplicas: 2,3\tIsr: 2,3" in described, described
        assert "Partition: 1\tLeader: 3\tReplicas: 3,2\tIsr: 3,2" in described, described

    # one idempotent producer (acks=all) through both failovers: what it sends while a leader
    # is gone waits for the new leader and is delivered once
    delivered, errors = [], []
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all",
                         "enable.idempotence": True, "linger.ms": 5,
                         "allow.auto.create.topics": False})

    def produce(values: list[bytes]) -> None:
        for i, v in enumerate(values):
            producer.produce(topic, v, partition=i % 2, on_delivery=lambda err, msg: (
                errors if err else delivered).append(err or msg.value()))

    def flushed() -> None:
        assert producer.flush(3 * WAIT_S) == 0 and not errors, errors

    sent = [b"first-%d" % i for i in range(100)]
    produce(sent)
    flushed()
    got = confluent_consume(cluster.bootstrap_servers, topic, len(sent), partitions=(0, 1))
    assert sorted(m.value() for m in got) == sorted(sent)
    # the follower's log is the leader's, byte for byte (each way)
    for p in (0, 1):
        wait_for(lambda p=p: segment(cluster.kafka, topic, p)
                 == segment(cluster.pykafkad, topic, p) != b"", f"{topic}-{p} replicas equal")

    # the Kafka broker dies: the pykafkad broker leads both partitions, alone in the ISR; then
    # the reverse
    for dead, survivor, batch in ((cluster.kafka, cluster.pykafkad, b"second"),
                                  (cluster.pykafkad, cluster.kafka, b"third")):
        dead.kill()
        more = [b"%s-%d" % (batch, i) for i in range(50)]
        produce(more)  # sent at once: the dead leader's share is retried on the new one
        alone = {p: (survivor.node_id, [2, 3], [survivor.node_id]) for p in (0, 1)}
        wait_for(lambda s=survivor, a=alone: partition_states(addr(s), topic) == a,
                 f"node {survivor.node_id} leading both partitions alone")
        flushed()
        sent += more
        # back: it catches up and rejoins the ISR
        dead.start()
        wait_for(lambda s=survivor: (st := partition_states(addr(s), topic))
                 and all(st[p][2] == [2, 3] for p in (0, 1)),
                 f"node {dead.node_id} back in the ISR")
        got = confluent_consume(addr(dead), topic, len(sent), partitions=(0, 1))
        assert sorted(m.value() for m in got) == sorted(sent)  # each once: no duplicates
    assert sorted(delivered) == sorted(sent)
    for p in (0, 1):
        wait_for(lambda p=p: segment(cluster.kafka, topic, p)
                 == segment(cluster.pykafkad, topic, p), f"{topic}-{p} replicas equal at the end")

    # the Kafka broker leads both now; a preferred election asked of the pykafkad broker
    # (ElectLeaders forwarded to Kafka's controller) gives partition 1 back to it
    assert partition_states(addr(cluster.pykafkad), topic)[1][0] == KAFKA
    elected = run_tool("kafka-leader-election", ["--bootstrap-server", addr(cluster.pykafkad),
                                                 "--election-type", "PREFERRED", "--topic", topic,
                                                 "--partition", "1"], check=True).stdout
    assert f"Successfully completed leader election (PREFERRED) for partitions {topic}-1" \
        in elected, elected
    wait_for(lambda: partition_states(addr(cluster.kafka), topic) == both,
             "preferred leaders back")


def test_the_pykafkad_broker_replays_what_kafkas_controller_writes(cluster):
    """Requests through the pykafkad broker, forwarded to Kafka's controller, come back as
    metadata records (ConfigRecord, ClientQuotaRecord, UserScramCredentialRecord,
    PartitionRecord, ProducerIdsRecord, AccessControlEntryRecord and its removal,
    RemoveTopicRecord) that it applies."""
    ours, theirs = addr(cluster.pykafkad), addr(cluster.kafka)
    admin = AdminClient({"bootstrap.servers": ours})
    topic = "records"
    admin.create_topics([NewTopic(topic, 1, 2)])[topic].result(WAIT_S)
    resource = ConfigResource("TOPIC", topic, incremental_configs=[ConfigEntry(
        "retention.ms", "86400000", incremental_operation=AlterConfigOpType.SET)])
    admin.incremental_alter_configs([resource])[resource].result(WAIT_S)
    run_tool("kafka-configs", ["--bootstrap-server", ours, "--alter", "--entity-type", "brokers",
                               "--entity-default", "--add-config", "log.cleaner.backoff.ms=12345"],
             check=True)

    admins = {n: AdminClient({"bootstrap.servers": n}) for n in (ours, theirs)}

    def config_of(bootstrap, kind, name, key):
        res = ConfigResource(kind, name)
        entry = admins[bootstrap].describe_configs([res])[res].result(WAIT_S)[key]
        return entry.value, entry.source
    for node in (ours, theirs):
        wait_for(lambda n=node: config_of(n, "TOPIC", topic, "retention.ms") == (
            "86400000", ConfigSource.DYNAMIC_TOPIC_CONFIG.value), "the topic config everywhere")
        wait_for(lambda n=node, b=3 if node == ours else 2: config_of(
            n, "BROKER", str(b), "log.cleaner.backoff.ms") == (
            "12345", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value),
            "the cluster-wide broker default everywhere")

    # a topic the controller has but this broker's image may not have yet: Kafka's broker
    # forwards its config change without checking it (the controller answers); a topic
    # nobody has: both brokers pass on the Kafka controller's refusal
    for i in range(5):
        fresh = f"fresh-{i}"
        admins[theirs].create_topics([NewTopic(fresh, 1, 2)])[fresh].result(WAIT_S)
        res = ConfigResource("TOPIC", fresh, incremental_configs=[ConfigEntry(
            "retention.ms", "3600000", incremental_operation=AlterConfigOpType.SET)])
        admin.incremental_alter_configs([res])[res].result(WAIT_S)
    refusals = []
    for node in (ours, theirs):
        res = ConfigResource("TOPIC", "nobody-has-it", incremental_configs=[ConfigEntry(
            "retention.ms", "1", incremental_operation=AlterConfigOpType.SET)])
        with pytest.raises(KafkaException) as refused:
            admins[node].incremental_alter_configs([res])[res].result(WAIT_S)
        refusals.append((refused.value.args[0].code(), refused.value.args[0].str()))
    assert refusals[0] == refusals[1], refusals
    assert refusals[0][0] == KafkaError.UNKNOWN_TOPIC_OR_PART, refusals

    # a client quota and a SCRAM user, described by each broker from its own metadata image
    run_tool("kafka-configs", ["--bootstrap-server", ours, "--alter", "--add-config",
                               "producer_byte_rate=1048576", "--entity-type", "clients",
                               "--entity-name", "quota-client"], check=True)
    admin.alter_user_scram_credentials([UserScramCredentialUpsertion(
        "alice", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 8192), b"alice-secret")]
    )["alice"].result(WAIT_S)
    for node in (ours, theirs):
        wait_for(lambda n=node: "producer_byte_rate=1048576.0" in run_tool(
            "kafka-configs", ["--bootstrap-server", n, "--describe", "--entity-type", "clients",
                              "--entity-name", "quota-client"], check=True).stdout,
            "the client quota everywhere")
        described = admins[node].describe_user_scram_credentials(["alice"])["alice"].result(
            WAIT_S)
        assert [(i.mechanism, i.iterations) for i in described.scram_credential_infos] == [
            (ScramMechanism.SCRAM_SHA_256, 8192)]

    # more partitions, then a transactional producer through the pykafkad broker alone:
    # producer ids come from Kafka's controller, __transaction_state is replicated over both
    admin.create_partitions([NewPartitions(topic, 3)])[topic].result(WAIT_S)
    wait_for(lambda: (st := partition_states(ours, topic)) and len(st) == 3
             and all(v[2] == [2, 3] for v in st.values()), "three partitions in sync")
    # (no auto-creation: its metadata requests would bring the topic back after the delete)
    p = Producer({"bootstrap.servers": ours, "transactional.id": "mixed-tx",
                  "allow.auto.create.topics": False})
    p.init_transactions(WAIT_S)
    p.begin_transaction()
    for i in range(30):
        p.produce(topic, b"tx-%d" % i, partition=i % 3)
    p.commit_transaction(WAIT_S)
    del p
    got = confluent_consume(theirs, topic, 30, partitions=(0, 1, 2),
                            **{"isolation.level": "read_committed"})
    assert sorted(m.value() for m in got) == sorted(b"tx-%d" % i for i in range(30))
    assert partition_states(theirs, "__transaction_state")[0][1] == [2, 3]

    # an ACL created through the pykafkad broker (AccessControlEntryRecord), then deleted
    # (RemoveAccessControlEntryRecord): each broker's authorizer loads it from its own image
    binding = AclBinding(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, "User:bob",
                         "*", AclOperation.READ, AclPermissionType.ALLOW)
    admin.create_acls([binding])[binding].result(WAIT_S)
    everything = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None,
                                  AclOperation.ANY, AclPermissionType.ANY)
    for node in (ours, theirs):
        wait_for(lambda n=node: admins[n].describe_acls(everything).result(WAIT_S) == [binding],
                 "the ACL everywhere")
    admin.delete_acls([everything])[everything].result(WAIT_S)
    for node in (ours, theirs):
        wait_for(lambda n=node: admins[n].describe_acls(everything).result(WAIT_S) == [],
                 "the ACL gone everywhere")

    # a deleted topic leaves both brokers' metadata and log dirs
    admin.delete_topics([topic])[topic].result(WAIT_S)
    for node in (cluster.kafka, cluster.pykafkad):
        wait_for(lambda n=node: partition_states(addr(n), topic) is None
                 and not any(d.name.startswith(f"{topic}-") and not d.name.endswith("-delete")
                             for d in (n.props.parent / "logs").iterdir()),
                 f"{topic} gone from node {node.node_id}")


def test_a_restarted_pykafkad_broker_catches_up_from_a_snapshot(cluster):
    """Away while Kafka's controller snapshots and drops its log: the pykafkad broker's next
    Fetch is below the log start, so it loads the snapshot with FetchSnapshot."""
    controller_log = cluster.controller.props.parent / "logs" / "__cluster_metadata-0"
    ours = cluster.pykafkad.props.parent / "logs" / "__cluster_metadata-0"
    cluster.pykafkad.kill()
    # the offset its next Fetch asks for: its metadata log's end
    last_segment = max(ours.glob("*.log"), key=lambda f: int(f.stem))
    log_end = max(b.last_offset for b in decode_batches(last_segment.read_bytes())) + 1
    wait_for(lambda: sorted(AdminClient({"bootstrap.servers": addr(cluster.kafka)}).list_topics(
        timeout=WAIT_S).brokers) == [KAFKA], "the pykafkad broker fenced")
    admin = AdminClient({"bootstrap.servers": addr(cluster.kafka)})
    created = []

    def segments() -> list[int]:
        return sorted(int(f.stem) for f in controller_log.glob("*.log"))
    # records enough that the segment holding the pykafkad broker's end is rolled and covered by
    # a snapshot ...
    while segments()[-1] <= log_end or len(created) < 5:
        name = f"while-away-{len(created)}"
        admin.create_topics([NewTopic(name, 10, 1)])[name].result(WAIT_S)
        created.append(name)
        assert len(created) < 100, "the controller never rolled its log"
    # ... and dropped: Kafka's raft client cleans its log once a minute
    wait_for(lambda: segments()[0] > log_end, "the controller dropping its old log", 2 * 60)
    assert not any(f.name.endswith(".checkpoint") for f in ours.iterdir())  # none of its own
    cluster.pykafkad.start()
    wait_for(lambda: (md := partition_states(addr(cluster.pykafkad), created[-1]))
             and md[0][0] == KAFKA, "the pykafkad broker sees the last topic")
    names = set(AdminClient({"bootstrap.servers": addr(cluster.pykafkad)}).list_topics(
        timeout=WAIT_S).topics)
    assert set(created) <= names
    assert any(f.name.endswith(".checkpoint") for f in ours.iterdir()), sorted(ours.iterdir())
    wait_for(lambda: sorted(AdminClient({"bootstrap.servers": addr(cluster.kafka)}).list_topics(
        timeout=WAIT_S).brokers) == [KAFKA, PYKAFKAD], "the pykafkad broker unfenced again")


def test_a_stopped_pykafkad_broker_shuts_down_under_kafkas_controller(cluster):
    """SIGTERM: a controlled shutdown (Kafka's controller moves its leaderships away and
    records it in controlled shutdown), then back, unfenced, in the ISR again."""
    topic = "controlled"
    admin = AdminClient({"bootstrap.servers": addr(cluster.kafka)})
    admin.create_topics([NewTopic(topic, 1, replica_assignment=[[PYKAFKAD, KAFKA]])]
                        )[topic].result(WAIT_S)
    wait_for(lambda: partition_states(addr(cluster.kafka), topic) == {
        0: (PYKAFKAD, [2, 3], [2, 3])}, "the pykafkad broker leading, both in sync")
    cluster.pykafkad.stop()
    assert cluster.pykafkad.proc.returncode == 0
    # Kafka's controller took it through a controlled shutdown
    log = cluster.controller.props.parent / "logs" / "__cluster_metadata-0"
    changes = [(r.fenced, r.in_controlled_shutdown)
               for f in log.glob("*.log") for b in decode_batches(f.read_bytes())
               for r, _ in b.records
               if isinstance(r, BrokerRegistrationChangeRecord) and r.broker_id == PYKAFKAD]
    assert (0, 1) in changes, changes  # in controlled shutdown, as Kafka's controller writes it
    wait_for(lambda: partition_states(addr(cluster.kafka), topic) == {
        0: (KAFKA, [2, 3], [KAFKA])}, "the Kafka broker leading alone")
    cluster.pykafkad.start()
    wait_for(lambda: partition_states(addr(cluster.kafka), topic) == {
        0: (KAFKA, [2, 3], [2, 3])}, "the pykafkad broker back in the ISR")
