"""Kafka's own command-line tools (compat/kafka_tools.py, kafka-tools from Maven Central)
against pykafkad, and the same commands against Apache Kafka: the output must match."""

from __future__ import annotations

import re
import uuid

import pytest

from compat.kafka_tools import MAIN_CLASSES, run_tool
from tests.integration.clients import confluent_produce, needs_java

pytestmark = needs_java


def tool(bootstrap: str, name: str, *args: str):
    return run_tool(name, ["--bootstrap-server", bootstrap, *args])


def new_topic() -> str:
    return f"tools-{uuid.uuid4().hex[:10]}"


def test_kafka_topics_create_and_describe(broker):
    bs, topic = broker.bootstrap_servers, new_topic()
    created = tool(bs, "kafka-topics", "--create", "--topic", topic, "--partitions", "3",
                   "--replication-factor", "1", "--config", "retention.ms=86400000")
    assert (created.returncode, created.stdout) == (0, f"Created topic {topic}.\n"), created.stderr

    described = tool(bs, "kafka-topics", "--describe", "--topic", topic)
    assert described.returncode == 0, described.stderr
    head, *partitions = described.stdout.splitlines()
    assert re.fullmatch(rf"Topic: {topic}\tTopicId: [A-Za-z0-9_-]{{22}}\tPartitionCount: 3\t"
                        r"ReplicationFactor: 1\tConfigs: min\.insync\.replicas=1,retention\.ms=86400000",
                        head), head  # min.insync.replicas: a cluster-level dynamic default, as on Kafka
    assert partitions == [
        f"\tTopic: {topic}\tPartition: {p}\tLeader: 1\tReplicas: 1\tIsr: 1\tElr: \tLastKnownElr: "
        for p in range(3)]

    again = tool(bs, "kafka-topics", "--create", "--topic", topic)
    assert again.returncode == 1
    assert again.stdout == (f"Error while executing topic command : Topic '{topic}' already "
                            "exists.\n")


def test_kafka_configs_describe_and_alter(broker):
    bs, topic = broker.bootstrap_servers, new_topic()
    tool(bs, "kafka-topics", "--create", "--topic", topic, "--config", "cleanup.policy=compact")

    def describe() -> list[str]:
        out = tool(bs, "kafka-configs", "--describe", "--entity-type", "topics",
                   "--entity-name", topic)
        assert out.returncode == 0, out.stderr
        return out.stdout.splitlines()

    assert describe() == [
        f"Dynamic configs for topic {topic} are:",
        "  cleanup.policy=compact sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:cleanup.policy="
        "compact, DEFAULT_CONFIG:log.cleanup.policy=delete}",
    ]
    altered = tool(bs, "kafka-configs", "--alter", "--entity-type", "topics", "--entity-name",
                   topic, "--add-config", "segment.bytes=1048576", "--delete-config",
                   "cleanup.policy")
    assert altered.stdout == f"Completed updating config for topic {topic}.\n", altered.stderr
    assert describe() == [
        f"Dynamic configs for topic {topic} are:",
        "  segment.bytes=1048576 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:segment.bytes="
        "1048576, DEFAULT_CONFIG:log.segment.bytes=1073741824}",
    ]


def test_perf_tests_then_the_group_and_offsets_tools(broker):
    bs, topic, group = broker.bootstrap_servers, new_topic(), f"g-{uuid.uuid4().hex[:8]}"
    tool(bs, "kafka-topics", "--create", "--topic", topic, "--partitions", "2")
    produced = run_tool("kafka-producer-perf-test", [
        "--topic", topic, "--num-records", "1000", "--record-size", "100", "--throughput", "-1",
        "--command-property", f"bootstrap.servers={bs}", "acks=all"])
    assert produced.returncode == 0, produced.stderr
    assert produced.stdout.startswith("1000 records sent, "), produced.stdout
    consumed = tool(bs, "kafka-consumer-perf-test", "--topic", topic, "--num-records", "1000",
                    "--group", group)
    assert consumed.returncode == 0, consumed.stderr

    ends = tool(bs, "kafka-get-offsets", "--topic", topic).stdout.split()
    assert sorted(e.rsplit(":", 2)[1] for e in ends) == ["0", "1"]
    assert sum(int(e.rsplit(":", 1)[1]) for e in ends) == 1000
    described = tool(bs, "kafka-consumer-groups", "--describe", "--group", group)
    rows = [line.split() for line in described.stdout.splitlines() if line.startswith(group)]
    # the perf consumer committed everything it read: no lag on either partition
    assert sorted((r[1], r[2], r[3] == r[4], r[5]) for r in rows) == [
        (topic, "0", True, "0"), (topic, "1", True, "0")]
    assert sum(int(r[3]) for r in rows) == 1000
    assert described.stderr.strip() == f"Consumer group '{group}' has no active members."


def test_kafka_dump_log_reads_pykafkad_segments(broker):
    topic = new_topic()
    tool(broker.bootstrap_servers, "kafka-topics", "--create", "--topic", topic)
    confluent_produce(broker.bootstrap_servers, topic,
                      [{"key": f"k{i}".encode(), "value": b"v"} for i in range(3)])
    segment = broker.data_dir / f"{topic}-0" / f"{0:020d}.log"
    dumped = run_tool("kafka-dump-log", ["--files", str(segment), "--print-data-log"])
    assert dumped.returncode == 0, dumped.stderr
    lines = dumped.stdout.splitlines()
    assert lines[:2] == [f"Dumping {segment}", "Log starting offset: 0"]
    assert "baseOffset: 0 lastOffset: 2 count: 3 " in lines[2] and "isvalid: true" in lines[2]
    assert [line.split("key: ")[1] for line in lines[3:]] == [f"k{i} payload: v" for i in range(3)]


#: commands whose whole output pykafkad and Apache Kafka 4.4 print alike ("{t}" = the topic)
SAME_ANSWER = [
    ["kafka-topics", "--create", "--topic", "{t}", "--partitions", "2", "--config",
     "retention.ms=86400000", "--config", "cleanup.policy=compact"],
    ["kafka-topics", "--create", "--topic", "{t}"],
    ["kafka-topics", "--alter", "--topic", "{t}", "--partitions", "3"],
    # not "2": the tool refuses a decrease itself when its metadata already shows 3
    # partitions, which on Kafka depends on how fast the new partition reached the broker
    ["kafka-topics", "--alter", "--topic", "{t}", "--partitions", "3"],
    ["kafka-topics", "--describe", "--topic", "{t}", "--under-replicated-partitions"],
    ["kafka-configs", "--describe", "--entity-type", "topics", "--entity-name", "{t}"],
    ["kafka-configs", "--alter", "--entity-type", "topics", "--entity-name", "{t}",
     "--add-config", "segment.bytes=1048576", "--delete-config", "cleanup.policy"],
    ["kafka-configs", "--describe", "--entity-type", "topics", "--entity-name", "{t}"],
    ["kafka-configs", "--alter", "--entity-type", "topics", "--entity-name", "{t}",
     "--add-config", "nonsense.config=1"],
    ["kafka-configs", "--describe", "--entity-type", "topics", "--entity-name", "{t}-missing"],
    ["kafka-get-offsets", "--topic", "{t}"],
    ["kafka-get-offsets", "--topic", "{t}", "--time", "-1"],
    ["kafka-topics", "--delete", "--topic", "{t}"],
]


def _answers(bootstrap: str, topic: str) -> list[tuple]:
    out = []
    for command in SAME_ANSWER:
        name, *args = (a.replace("{t}", topic) for a in command)
        if name == "kafka-get-offsets" and "--time" in args:
            confluent_produce(bootstrap, topic, [{"value": b"x", "partition": p % 2}
                                                 for p in range(5)])
        p = tool(bootstrap, name, *args)
        # a failing command prints the address it used and a Java stack trace: keep the cause
        causes = [line for line in p.stderr.splitlines() if line.startswith("Caused by: ")]
        out.append((" ".join(command), p.returncode, p.stdout.replace(bootstrap, "BOOTSTRAP"),
                    causes))
    return out


def test_tools_print_what_they_print_against_apache_kafka(broker, reference_kafka):
    topic = new_topic()
    theirs = _answers(reference_kafka.bootstrap_servers, f"reference-{topic}")
    ours = _answers(broker.bootstrap_servers, f"reference-{topic}")
    for kafka, pykafkad in zip(theirs, ours, strict=True):
        assert pykafkad == kafka


def test_an_unknown_tool_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="kafka-topics") as e:
        run_tool("kafka-topic", [])
    assert "unknown Kafka tool 'kafka-topic'" in str(e.value)
    assert set(MAIN_CLASSES) >= {"kafka-topics", "kafka-configs", "kafka-features",
                                 "kafka-consumer-groups", "kafka-get-offsets",
                                 "kafka-producer-perf-test", "kafka-consumer-perf-test"}
