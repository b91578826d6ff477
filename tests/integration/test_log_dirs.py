"""DescribeLogDirs and AlterReplicaLogDirs: pykafkad answers as a Kafka 4.4 broker with one log
dir, seen through kafka-python's admin, Kafka's kafka-log-dirs tool and raw frames compared with
the reference broker (sizes differ by machine, so structure is compared and sizes are checked
against the files on each broker's disk)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from compat.wire_client import WireClient
from tests.integration.clients import confluent_produce, create_topic, needs_java
from tests.integration.test_kafka_parity import topic_ready, unique, wait_until
from wire.errors import ErrorCode
from wire.messages.alter_replica_log_dirs_request import (
    AlterReplicaLogDir,
    AlterReplicaLogDirsRequest,
    AlterReplicaLogDirTopic,
)
from wire.messages.describe_log_dirs_request import DescribableLogDirTopic, DescribeLogDirsRequest

RECORDS = [{"value": b"x" * 100, "partition": i % 2} for i in range(6)]


def on_disk_size(log_dir: str, topic: str, partition: int) -> int:
    """Kafka's UnifiedLog.size: the sum of the partition's segment (.log) files."""
    return sum(f.stat().st_size for f in Path(log_dir, f"{topic}-{partition}").glob("*.log"))


def _topic_with_records(bootstrap: str, topic: str) -> None:
    create_topic(bootstrap, topic, 3)
    topic_ready(bootstrap, topic)
    confluent_produce(bootstrap, topic, RECORDS)


def describe(bootstrap: str, version: int, topics):
    with WireClient(bootstrap) as c:
        return c.request(35, version, DescribeLogDirsRequest(topics=topics))


def _shape(resp, version: int, only: str | None) -> tuple:
    """What must equal Kafka's answer: errors, one dir, which partitions (sizes apart; of topic
    ``only`` when given), whether the v4+ space fields are filled."""
    (result,) = resp.results
    partitions = {(t.name, p.partition_index, p.offset_lag, p.is_future_key)
                  for t in result.topics if only in (None, t.name) for p in t.partitions}
    names = [t.name for t in result.topics]
    return (resp.throttle_time_ms, resp.error_code if version >= 3 else None, result.error_code,
            os.path.isabs(result.log_dir), len(names) == len(set(names)), partitions,
            (result.total_bytes > 0, 0 < result.usable_bytes <= result.total_bytes)
            if version >= 4 else (result.total_bytes, result.usable_bytes),
            result.is_cordoned)


@needs_java
def test_describe_log_dirs_answers_like_kafka(broker, reference_kafka):
    both = {"pykafkad": broker.bootstrap_servers, "kafka": reference_kafka.bootstrap_servers}
    topic = unique("logdirs")
    for bootstrap in both.values():
        _topic_with_records(bootstrap, topic)
    T = DescribableLogDirTopic
    queries = {
        "some partitions and an unknown one": [T(topic=topic, partitions=[0, 2, 7])],
        "every partition, in two entries": [T(topic=topic, partitions=[0]),
                                            T(topic=topic, partitions=[1, 2])],
        "no partitions": [T(topic=topic, partitions=[])],
        "unknown topic": [T(topic=unique("logdirs-none"), partitions=[0])],
        "illegal name": [T(topic="bad name!", partitions=[0])],
        "no topics": [],
        "all topics": None,
    }

    def answers(bootstrap: str) -> dict:
        # both brokers hold other tests' topics: of all topics, compare this test's one
        return {(name, v): _shape(describe(bootstrap, v, topics), v,
                                  topic if topics is None else None)
                for name, topics in queries.items() for v in range(1, 6)}

    ours, kafka = answers(both["pykafkad"]), answers(both["kafka"])
    assert {k: (ours[k], kafka[k]) for k in ours if ours[k] != kafka[k]} == {}
    assert {p[1] for p in kafka[("every partition, in two entries", 5)][5]} == {0, 1, 2}
    # sizes: each broker reports what its own files hold
    for side, bootstrap in both.items():
        (result,) = describe(bootstrap, 5, [T(topic=topic, partitions=[0, 1, 2])]).results
        sizes = {p.partition_index: p.partition_size for t in result.topics for p in t.partitions}
        assert sizes == {p: on_disk_size(result.log_dir, topic, p) for p in range(3)}, side
        assert sizes[0] > 0 and sizes[2] == 0
    (ours_result,) = describe(both["pykafkad"], 5, []).results
    assert ours_result.log_dir == str(Path(broker.data_dir).absolute())


def test_describe_log_dirs_reports_the_file_system(broker, topic_name):
    """v4+ total and usable bytes are the data dir's file system, as Java's FileStore sees it
    (usable space moves with other writers, so it is bracketed by two statvfs calls)."""
    create_topic(broker.bootstrap_servers, topic_name)
    before = os.statvfs(broker.data_dir)
    (result,) = describe(broker.bootstrap_servers, 4, None).results
    after = os.statvfs(broker.data_dir)
    assert result.total_bytes == before.f_blocks * before.f_frsize
    usable = sorted([before.f_bavail * before.f_frsize, after.f_bavail * after.f_frsize])
    assert usable[0] - 2**20 <= result.usable_bytes <= usable[1] + 2**20
    assert topic_name in {t.name for t in result.topics}


def test_kafka_python_describe_log_dirs(broker, topic_name):
    from kafka.admin import KafkaAdminClient

    _topic_with_records(broker.bootstrap_servers, topic_name)
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
    try:
        answer = admin.describe_log_dirs()
        only_ours = admin.describe_log_dirs({topic_name: [1, 2]})
    finally:
        admin.close()
    (node,) = answer
    assert node["broker"] == 1
    (log_dir,) = node["log_dirs"]
    assert log_dir["error_code"] == 0
    assert log_dir["log_dir"] == str(Path(broker.data_dir).absolute())
    sizes = {p["partition_index"]: (p["partition_size"], p["offset_lag"], p["is_future_key"])
             for t in log_dir["topics"] if t["name"] == topic_name for p in t["partitions"]}
    assert sizes == {p: (on_disk_size(log_dir["log_dir"], topic_name, p), 0, False)
                     for p in range(3)}
    (node,) = only_ours
    assert [(t["name"], sorted(p["partition_index"] for p in t["partitions"]))
            for t in node["log_dirs"][0]["topics"]] == [(topic_name, [1, 2])]


def _log_dirs_tool(bootstrap: str, topic: str) -> dict:
    """kafka-log-dirs --describe's JSON, partitions in index order (the tool prints them in
    its own map's order)."""
    from compat.kafka_tools import run_tool

    p = run_tool("kafka-log-dirs", ["--bootstrap-server", bootstrap, "--describe",
                                    "--topic-list", topic])
    assert p.returncode == 0, p.stderr[-2000:]
    lines = p.stdout.splitlines()
    assert lines[:2] == ["Querying brokers for log directories information",
                         "Received log directory information from brokers 1"]
    assert len(lines) == 3
    answer = json.loads(lines[2])
    for b in answer["brokers"]:
        for d in b["logDirs"]:
            d["partitions"].sort(key=lambda p: int(p["partition"].rpartition("-")[2]))
    return answer


@needs_java
def test_kafka_log_dirs_tool_prints_the_sizes_on_disk(broker, reference_kafka):
    """Kafka's own tool prints the same document for pykafkad as for Kafka but for the dir's
    path and the sizes, which are each broker's file sizes."""
    both = {"pykafkad": broker.bootstrap_servers, "kafka": reference_kafka.bootstrap_servers}
    topic = unique("logdirs-tool")
    printed = {}
    for side, bootstrap in both.items():
        _topic_with_records(bootstrap, topic)
        printed[side] = _log_dirs_tool(bootstrap, topic)
    for side, answer in printed.items():
        (node,) = answer["brokers"]
        (log_dir,) = node["logDirs"]
        assert log_dir["partitions"] == [
            {"partition": f"{topic}-{i}", "size": on_disk_size(log_dir["logDir"], topic, i),
             "offsetLag": 0, "isFuture": False} for i in range(3)], side
        log_dir["logDir"] = "<dir>"
        for p in log_dir["partitions"]:
            p["size"] = p["size"] > 0
    assert printed["pykafkad"] == printed["kafka"]
    assert printed["pykafkad"]["brokers"][0]["logDirs"][0]["partitions"][2]["size"] is False
    (ours,) = describe(broker.bootstrap_servers, 5, []).results
    assert ours.log_dir == str(Path(broker.data_dir).absolute())


@needs_java
def test_alter_replica_log_dirs_answers_like_kafka(broker, reference_kafka):
    """With one log dir: moving a replica to its own dir is NONE (nothing moves); any other
    path, even the same dir spelled with a trailing slash, is LOG_DIR_NOT_FOUND, which wins
    over an unknown partition; unknown partitions are UNKNOWN_TOPIC_OR_PARTITION."""
    both = {"pykafkad": broker.bootstrap_servers, "kafka": reference_kafka.bootstrap_servers}
    topic = unique("logdirs-alter")
    own = {}
    for side, bootstrap in both.items():
        _topic_with_records(bootstrap, topic)
        (result,) = describe(bootstrap, 5, []).results
        own[side] = result.log_dir
    D, T = AlterReplicaLogDir, AlterReplicaLogDirTopic
    missing = unique("logdirs-none")

    def requests(d: str) -> dict[str, list]:
        return {
            "own dir": [D(path=d, topics=[T(name=topic, partitions=[0, 1, 9])])],
            "unknown dir": [D(path="/nonexistent/dir", topics=[T(name=topic, partitions=[0])])],
            "trailing slash": [D(path=d + "/", topics=[T(name=topic, partitions=[0])])],
            "relative": [D(path="logs", topics=[T(name=topic, partitions=[0])])],
            "unknown topic": [D(path=d, topics=[T(name=missing, partitions=[0])])],
            "unknown topic, unknown dir": [D(path="/x", topics=[T(name=missing, partitions=[0])])],
            "last dir wins": [D(path="/x", topics=[T(name=topic, partitions=[0, 1])]),
                              D(path=d, topics=[T(name=topic, partitions=[1, 1, -1])])],
            "nothing": [],
        }

    def answers(side: str) -> dict:
        out = {}
        with WireClient(both[side]) as c:
            for name, dirs in requests(own[side]).items():
                for v in (1, 2):
                    r = c.request(34, v, AlterReplicaLogDirsRequest(dirs=dirs))
                    names = [t.topic_name for t in r.results]
                    assert len(names) == len(set(names)), (side, name)
                    out[(name, v)] = (r.throttle_time_ms, {
                        (t.topic_name, p.partition_index, p.error_code)
                        for t in r.results for p in t.partitions})
        return out

    ours, kafka = answers("pykafkad"), answers("kafka")
    assert {k: (ours[k], kafka[k]) for k in ours if ours[k] != kafka[k]} == {}
    none, unknown, not_found = (ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                ErrorCode.LOG_DIR_NOT_FOUND)
    assert kafka[("own dir", 2)] == (0, {(topic, 0, none), (topic, 1, none), (topic, 9, unknown)})
    assert kafka[("last dir wins", 2)][1] == {
        (topic, 0, not_found), (topic, 1, none), (topic, -1, unknown)}
    assert kafka[("unknown topic, unknown dir", 1)][1] == {(missing, 0, not_found)}
    # nothing moved: the data is still where it was
    (result,) = describe(both["pykafkad"], 5, [DescribableLogDirTopic(topic, [0, 1])]).results
    assert {p.partition_size for t in result.topics for p in t.partitions} == {
        on_disk_size(own["pykafkad"], topic, p) for p in (0, 1)}


def test_describe_log_dirs_sees_new_data(broker, topic_name):
    """A partition's size follows appends (no cached answer)."""
    _topic_with_records(broker.bootstrap_servers, topic_name)
    T = DescribableLogDirTopic

    def size() -> int:
        (result,) = describe(broker.bootstrap_servers, 5, [T(topic_name, [0])]).results
        return result.topics[0].partitions[0].partition_size

    first = size()
    confluent_produce(broker.bootstrap_servers, topic_name, [{"value": b"y" * 50, "partition": 0}])
    wait_until(lambda: size() > first, "the size to grow")
    assert size() == on_disk_size(str(broker.data_dir), topic_name, 0)


@pytest.mark.parametrize("version", [1, 5])
def test_describe_log_dirs_with_no_topics_on_the_broker(broker, version):
    resp = describe(broker.bootstrap_servers, version, [])
    (result,) = resp.results
    assert (resp.error_code, result.error_code, result.topics) == (0, 0, [])


def _java_admin_answers(bootstrap: str, topic: str, partitions: int) -> list[str]:
    """compat/java/LogDirsProbe.java's ``##`` lines: the Java Admin's log-dir calls."""
    import subprocess

    from compat import maven
    from compat.clients import java
    from compat.kafka_specs import SPECS_VERSION

    source = java.SOURCE.with_name("LogDirsProbe.java")
    p = subprocess.run(
        ["java", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp",
         maven.classpath(java.jars_dir(SPECS_VERSION)), str(source), bootstrap, topic,
         str(partitions)], capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, p.stderr[-2000:]
    return [line for line in p.stdout.splitlines() if line.startswith("##")]


@needs_java
def test_java_admin_log_dirs_like_kafka(broker, reference_kafka):
    """describeLogDirs, describeReplicaLogDirs and alterReplicaLogDirs of the Java 4.4 Admin:
    the same lines from both brokers once each one's dir and sizes are checked against its
    files and masked; moving a replica to its own dir succeeds, to another dir fails with
    LogDirNotFoundException."""
    both = {"pykafkad": broker.bootstrap_servers, "kafka": reference_kafka.bootstrap_servers}
    topic = unique("logdirs-java")
    masked = {}
    for side, bootstrap in both.items():
        _topic_with_records(bootstrap, topic)
        lines = _java_admin_answers(bootstrap, topic, 3)
        (dir_line,) = [line for line in lines if line.startswith("##DIR ")]
        log_dir = dir_line.split(" ")[1]
        out = set()
        for line in lines:
            fields = line.split(" ")
            if fields[0] == "##SIZE":
                partition = int(fields[2].rpartition("-")[2])
                assert fields[3] == f"size={on_disk_size(log_dir, topic, partition)}", side
                fields[3] = "size=<on disk>"
            if fields[0] == "##DIR":
                total, usable = (int(f.split("=")[1]) for f in fields[3:5])
                assert 0 < usable <= total, side
                fields[3:5] = ["total=<fs>", "usable=<fs>"]
            out.add(" ".join(fields).replace(log_dir, "<dir>"))
        masked[side] = out
    assert masked["pykafkad"] == masked["kafka"]
    assert {f"##ALTER own-dir {topic}-0 OK",
            f"##ALTER unknown-dir {topic}-0 ERROR LogDirNotFoundException",
            f"##REPLICA {topic}-3 current=null future=null lag=-1"} <= masked["kafka"]


def _set_cordoned(bootstrap: str, value: str | None) -> int:
    """Sets (or with None deletes) the per-broker ``cordoned.log.dirs``; the error code."""
    from wire.messages.incremental_alter_configs_request import (
        AlterableConfig,
        AlterConfigsResource,
        IncrementalAlterConfigsRequest,
    )

    config = AlterableConfig(name="cordoned.log.dirs", config_operation=0 if value else 1,
                             value=value)
    with WireClient(bootstrap) as c:
        r = c.request(44, 1, IncrementalAlterConfigsRequest(resources=[AlterConfigsResource(
            resource_type=4, resource_name="1", configs=[config])], validate_only=False))
    return r.responses[0].error_code


def _cordoned(bootstrap: str) -> dict[int, bool]:
    return {v: describe(bootstrap, v, []).results[0].is_cordoned for v in (4, 5)}


@needs_java
def test_cordoned_log_dirs_show_in_v5_like_kafka(broker, reference_kafka):
    """KIP-1066: ``cordoned.log.dirs`` set to ``*`` or to the dir's own path makes v5's
    is_cordoned true (v4 has no such field); deleting it clears it.  Kafka applies a dynamic
    change a moment after answering, so its side is polled.  The reference broker is left
    uncordoned whatever happens."""
    both = {"pykafkad": broker.bootstrap_servers, "kafka": reference_kafka.bootstrap_servers}
    seen = {}
    try:
        for side, bootstrap in both.items():
            own = describe(bootstrap, 5, []).results[0].log_dir
            for label, value in (("all", "*"), ("own dir", own), ("deleted", None)):
                assert _set_cordoned(bootstrap, value) == ErrorCode.NONE
                expected = {4: False, 5: value is not None}
                seen[(side, label)] = wait_until(
                    lambda b=bootstrap, e=expected: _cordoned(b) if _cordoned(b) == e else None,
                    f"is_cordoned {expected} on {side}")
    finally:
        _set_cordoned(both["kafka"], None)
        wait_until(lambda: not _cordoned(both["kafka"])[5], "the reference to be uncordoned")
    assert seen[("pykafkad", "all")] == seen[("kafka", "all")] == {4: False, 5: True}
    assert seen[("pykafkad", "deleted")] == seen[("kafka", "deleted")] == {4: False, 5: False}


def test_cordoned_log_dirs_given_at_startup():
    from pykafkad.testing import run_broker

    with run_broker(config={"cordoned.log.dirs": "*"}) as b:
        assert _cordoned(b.bootstrap_servers) == {4: False, 5: True}
