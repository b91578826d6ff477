"""Several log dirs per KRaft broker (JBOD, KIP-858) on a 3-node cluster with 2 log dirs each:
every dir is formatted with its own directory.id, DescribeLogDirs (kafka-python's admin and
Kafka's kafka-log-dirs) lists both dirs of each broker with the replicas each holds, new
replicas are spread over the dirs (fewest partitions first), the broker tells the controller
where each replica is (AssignReplicasToDirs: the metadata log's PartitionChangeRecords carry
the dirs' ids, read with Kafka's kafka-dump-log), and a restart keeps each replica in its dir.
"""

from __future__ import annotations

import glob
import json
import time
import uuid
from pathlib import Path

import pytest
from kafka import KafkaAdminClient
from kafka.admin import NewTopic
from kafka.structs import TopicPartitionReplica

from compat.client_suites import CLUSTER_CONFIG
from pykafkad.metadata.properties import MetaProperties
from pykafkad.testing import run_cluster
from tests.integration.clients import WAIT_S, confluent_consume, confluent_produce, needs_java

PARTITIONS = 6


@pytest.fixture(scope="module")
def jbod_cluster(tmp_path_factory):
    with run_cluster(3, config=CLUSTER_CONFIG, data_dir=tmp_path_factory.mktemp("jbod"),
                     log_dirs=2) as cluster:
        yield cluster


def _wait(condition, what: str):
    deadline = time.monotonic() + WAIT_S
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def _replicas(admin: KafkaAdminClient, topic: str) -> dict[int, set[int]]:
    """Broker id -> the partitions of ``topic`` it holds a replica of."""
    out: dict[int, set[int]] = {}
    for p in admin.describe_topics([topic])[0]["partitions"]:
        for r in p["replica_nodes"]:
            out.setdefault(r, set()).add(p["partition_index"])
    return out


def _placement(admin: KafkaAdminClient, topic: str) -> dict[int, dict[str, set[int]]]:
    """Broker id -> log dir -> the partitions of ``topic`` in it (DescribeLogDirs)."""
    out: dict[int, dict[str, set[int]]] = {}
    for r in admin.describe_log_dirs():
        dirs = out.setdefault(r["broker"], {})
        for d in r["log_dirs"]:
            assert d["error_code"] == 0
            dirs[d["log_dir"]] = {p["partition_index"] for t in d["topics"] if t["name"] == topic
                                  for p in t["partitions"]}
    return out


def _new_topic(admin: KafkaAdminClient) -> str:
    topic = f"jbod-{uuid.uuid4().hex[:8]}"
    admin.create_topics([NewTopic(topic, PARTITIONS, 2)])

    def placed():
        replicas = _replicas(admin, topic)
        placement = _placement(admin, topic)
        held = {b: set().union(*dirs.values()) for b, dirs in placement.items()}
        return placement if sum(map(len, replicas.values())) == 2 * PARTITIONS \
            and all(held.get(b) == ps for b, ps in replicas.items()) else None

    _wait(placed, "every replica's log")
    return topic


def test_every_log_dir_is_formatted_and_described(jbod_cluster):
    dir_ids = set()
    for node in jbod_cluster._cluster.specs:
        assert len(node.log_dirs) == 2
        for d in node.log_dirs:
            meta = MetaProperties.read(d)
            assert meta.node_id == node.node_id
            dir_ids.add(meta.directory_id)
    assert len(dir_ids) == 6  # one id per dir, all different
    with KafkaAdminClient(bootstrap_servers=jbod_cluster.bootstrap_servers) as admin:
        topic = _new_topic(admin)
        placement = _placement(admin, topic)
        replicas = _replicas(admin, topic)
    specs = {s.node_id: s for s in jbod_cluster._cluster.specs}
    for broker, dirs in placement.items():
        assert sorted(dirs) == sorted(str(d.absolute()) for d in specs[broker].log_dirs)
        a, b = dirs.values()
        assert not a & b and a | b == replicas[broker]  # each replica in exactly one dir
        assert abs(len(a) - len(b)) <= 1                # the dir with fewest partitions first
        for log_dir, partitions in dirs.items():
            for p in partitions:
                assert (Path(log_dir) / f"{topic}-{p}").is_dir()


def test_a_restart_keeps_each_replica_in_its_dir(jbod_cluster):
    with KafkaAdminClient(bootstrap_servers=jbod_cluster.bootstrap_servers) as admin:
        topic = _new_topic(admin)
        before = _placement(admin, topic)
    jbod_cluster.stop(2)
    jbod_cluster.start(2)
    with KafkaAdminClient(bootstrap_servers=jbod_cluster.bootstrap_servers) as admin:
        assert _wait(lambda: _placement(admin, topic).get(2), "node 2's log dirs") == before[2]


def _other_dir(placement, broker: int, partition: int) -> tuple[str, str]:
    """(the dir holding the broker's replica of ``partition``, the broker's other dir)."""
    [current] = [d for d, ps in placement[broker].items() if partition in ps]
    [other] = [d for d in placement[broker] if d != current]
    return current, other


def _records(bootstrap: str, topic: str, partition: int, first: int, n: int) -> None:
    confluent_produce(bootstrap, topic, [{"value": f"r{i}".encode(), "partition": partition}
                                         for i in range(first, first + n)], acks="all")


def _values(bootstrap: str, topic: str, partition: int, n: int) -> list[bytes]:
    return [m.value() for m in confluent_consume(bootstrap, topic, n, partitions=(partition,))]


def test_kafka_python_moves_a_replica_to_its_other_dir(jbod_cluster):
    """kafka-python's alter_replica_log_dirs (its test_alter_replica_log_dirs' call): the
    leader's replica moves to the broker's other dir with every record, keeps taking writes,
    and stays there across a restart."""
    bootstrap = jbod_cluster.bootstrap_servers
    with KafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        topic = _new_topic(admin)
        leader = admin.describe_topics([topic])[0]["partitions"][0]["leader_id"]
        _records(bootstrap, topic, 0, 0, 50)
        current, other = _other_dir(_placement(admin, topic), leader, 0)
        answer = admin.alter_replica_log_dirs({TopicPartitionReplica(topic, 0, leader): other})
        assert [e.__name__ for e in answer.values()] == ["NoError"]
        _wait(lambda: 0 in _placement(admin, topic)[leader][other]
              and 0 not in _placement(admin, topic)[leader][current], "the move")
        assert not (Path(current) / f"{topic}-0").exists()
        assert not list(Path(other).glob("*-future"))
        _records(bootstrap, topic, 0, 50, 10)
        assert _values(bootstrap, topic, 0, 60) == [f"r{i}".encode() for i in range(60)]
        # to the dir it is in now: nothing to do
        answer = admin.alter_replica_log_dirs({TopicPartitionReplica(topic, 0, leader): other})
        assert [e.__name__ for e in answer.values()] == ["NoError"]
    jbod_cluster.stop(leader)
    jbod_cluster.start(leader)
    with KafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        _wait(lambda: 0 in _placement(admin, topic).get(leader, {}).get(other, ()),
              "the moved replica after a restart")
    assert _values(bootstrap, topic, 0, 60) == [f"r{i}".encode() for i in range(60)]


@needs_java
def test_kafka_reassign_partitions_with_log_dirs(jbod_cluster, tmp_path):
    """kafka-reassign-partitions --execute with ``log_dirs`` in the JSON moves a follower's
    replica to the named dir; --verify then reports the move complete."""
    from compat.kafka_tools import run_tool

    bootstrap = jbod_cluster.bootstrap_servers
    with KafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        topic = _new_topic(admin)
        _records(bootstrap, topic, 1, 0, 20)
        replicas = admin.describe_topics([topic])[0]["partitions"]
        [p1] = [p for p in replicas if p["partition_index"] == 1]
        broker = p1["replica_nodes"][1]
        current, other = _other_dir(_placement(admin, topic), broker, 1)
        plan = {"version": 1, "partitions": [{
            "topic": topic, "partition": 1, "replicas": p1["replica_nodes"],
            "log_dirs": ["any" if r != broker else other for r in p1["replica_nodes"]]}]}
        path = tmp_path / "plan.json"
        path.write_text(json.dumps(plan))
        proc = run_tool("kafka-reassign-partitions", ["--bootstrap-server", bootstrap,
                                                      "--reassignment-json-file", str(path),
                                                      "--execute"])
        assert proc.returncode == 0, proc.stdout + proc.stderr
        _wait(lambda: 1 in _placement(admin, topic)[broker][other], "the move")

        def verified():
            out = run_tool("kafka-reassign-partitions", [
                "--bootstrap-server", bootstrap, "--reassignment-json-file", str(path),
                "--verify"]).stdout
            return out if "is complete" in out and "still in progress" not in out else None

        out = _wait(verified, "--verify")
        assert f"Reassignment of replica {topic}-1-{broker} completed successfully" in out \
            or "is complete" in out
    assert _values(bootstrap, topic, 1, 20) == [f"r{i}".encode() for i in range(20)]


@needs_java
def test_kafka_log_dirs_and_the_metadata_log_agree(jbod_cluster):
    """kafka-log-dirs lists both dirs of each broker; the controller recorded each replica's
    dir (its id in PartitionRecord/PartitionChangeRecord ``directories``), read back with
    kafka-dump-log's metadata decoder from a node's metadata log."""
    from compat.kafka_tools import run_tool

    with KafkaAdminClient(bootstrap_servers=jbod_cluster.bootstrap_servers) as admin:
        topic = _new_topic(admin)
        placement = _placement(admin, topic)
    proc = run_tool("kafka-log-dirs", ["--bootstrap-server", jbod_cluster.bootstrap_servers,
                                       "--describe", "--topic-list", topic], check=True)
    answer = json.loads(next(line for line in proc.stdout.splitlines()
                             if line.startswith("{")))
    tool = {b["broker"]: {d["logDir"]: {int(p["partition"].rsplit("-", 1)[1])
                                        for p in d["partitions"]}
                          for d in b["logDirs"]} for b in answer["brokers"]}
    assert tool == placement
    # where the metadata says each replica is ((broker, partition) -> directory id, in
    # Kafka's base64 text, as kafka-dump-log prints it and meta.properties holds it)
    specs = {s.node_id: s for s in jbod_cluster._cluster.specs}
    id_of = {str(d.absolute()): MetaProperties.read(d).directory_id
             for s in specs.values() for d in s.log_dirs}
    expected = {(b, p): id_of[d] for b, dirs in placement.items()
                for d, ps in dirs.items() for p in ps}

    def recorded():
        segments = sorted(glob.glob(str(specs[1].log_dirs[0] / "__cluster_metadata-0" / "*.log")))
        out = run_tool("kafka-dump-log", ["--cluster-metadata-decoder", "--files", *segments],
                       check=True).stdout
        topic_id, replicas, dirs = None, {}, {}
        for line in out.splitlines():
            if "payload: " not in line:
                continue
            record = json.loads(line.split("payload: ", 1)[1])
            data = record["data"]
            if record["type"] == "TOPIC_RECORD" and data["name"] == topic:
                topic_id = data["topicId"]
            elif data.get("topicId") == topic_id and topic_id is not None:
                if "replicas" in data:
                    replicas[data["partitionId"]] = data["replicas"]
                if "directories" in data:
                    dirs[data["partitionId"]] = data["directories"]
        got = {(b, p): d for p, rs in replicas.items()
               for b, d in zip(rs, dirs.get(p, []), strict=False)}
        return got if got == expected else None

    _wait(recorded, "the replicas' directories in the metadata log")



def _two_dir_scenario(bootstrap: str, dirs: list[str]) -> dict:
    """What a one-broker cluster with two log dirs answers, with the dirs' names replaced by
    their position in ``log.dirs``."""
    name = {d: i for i, d in enumerate(dirs)}
    with KafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        topic = f"jbod-cmp-{uuid.uuid4().hex[:8]}"
        admin.create_topics([NewTopic(topic, 4, 1)])

        def placement():
            got = {name[d]: ps for d, ps in _placement(admin, topic)[1].items()}
            return got if sum(map(len, got.values())) == 4 else None

        before = _wait(placement, "the new topic's logs")
        _records(bootstrap, topic, 0, 0, 30)
        [current] = [d for d, ps in before.items() if 0 in ps]
        target = dirs[1 - current]

        def alter(topic_name: str, partition: int, path: str) -> str:
            [code] = admin.alter_replica_log_dirs(
                {TopicPartitionReplica(topic_name, partition, 1): path}).values()
            return code.__name__

        answers = {"move": alter(topic, 0, target),
                   "trailing slash": alter(topic, 0, target + "/"),
                   "to where it is": alter(topic, 1, dirs[next(d for d, ps in before.items()
                                                              if 1 in ps)]),
                   "unknown partition": alter(topic, 9, target),
                   "unknown topic": alter(f"{topic}-none", 0, target)}
        after = _wait(lambda: (p := placement()) and 0 in p[1 - current] and p, "the move")
    return {"dirs listed": sorted(before), "sizes": sorted(map(len, before.values())),
            "answers": answers, "moved": 0 in after[1 - current] and 0 not in after[current],
            "records": _values(bootstrap, topic, 0, 30) == [f"r{i}".encode() for i in range(30)]}


@needs_java
def test_two_log_dirs_answer_like_kafka(tmp_path):
    """The same scenario on Apache Kafka 4.4.0 with two log dirs and on pykafkad: both dirs
    listed, the 4 partitions spread 2/2, the same AlterReplicaLogDirs answers, the replica
    moved with its records."""
    from compat.kafka_broker import run_kafka

    kafka_dirs = [str(tmp_path / "kafka" / "logs"), str(tmp_path / "kafka" / "logs2")]
    with run_kafka(config={"log.dirs": ",".join(kafka_dirs)}, data_dir=tmp_path / "kafka") as k:
        expected = _two_dir_scenario(f"127.0.0.1:{k.port}", kafka_dirs)
    with run_cluster(1, data_dir=tmp_path / "pykafkad", log_dirs=2) as cluster:
        dirs = [str(d) for d in cluster._cluster.specs[0].log_dirs]
        assert _two_dir_scenario(cluster.bootstrap_servers, dirs) == expected
    assert expected["answers"]["move"] == "NoError" and expected["moved"]
