"""A real Kafka Streams application (compat/java/StreamsWordCount.java) on the streams
rebalance protocol (KIP-1071): word count with a repartition topic and a state store, two
instances sharing the tasks, then one stopping and the other taking its tasks over.  The same
scenario runs against pykafkad and Apache Kafka, and the results are compared.

Kafka Streams 4.4.0 is not on Maven Central (checked 2026-11-23): the newest published
kafka-streams, 4.3.1, is used; it speaks StreamsGroupHeartbeat like 4.4's."""

from __future__ import annotations

import collections
import queue
import re
import shutil
import struct
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from compat import maven
from compat.wire_client import WireClient

STREAMS_VERSION = "4.3.1"
SOURCE = Path(__file__).resolve().parent / "java" / "StreamsWordCount.java"
BATCH_1 = ["the quick brown fox", "jumps over the lazy dog", "the dog sleeps",
           "a fox and a dog", "quick quick slow"] * 4
BATCH_2 = ["the end of the story", "fox dog fox", "slow and steady"] * 3


def jars_dir() -> Path:
    return maven.fetch(f"kafka-streams-{STREAMS_VERSION}",
                       [f"org.apache.kafka:kafka-streams:{STREAMS_VERSION}",
                        "org.slf4j:slf4j-simple:1.7.36"])


def unavailable() -> str | None:
    if shutil.which("java") is None:
        return "java is not installed"
    stamp = maven.CACHE / f"kafka-streams-{STREAMS_VERSION}" / maven.STAMP
    if shutil.which("mvn") is None and not stamp.exists():
        return "mvn is not installed and the kafka-streams jars are not cached"
    return None


def expected_counts(lines) -> dict[str, int]:
    return dict(collections.Counter(w for line in lines
                                    for w in re.split(r"\W+", line.lower()) if w))


class Instance:
    """One Kafka Streams JVM; its stdout lines go to a queue."""

    def __init__(self, bootstrap: str, app_id: str, source: str, sink: str, port: int):
        self.state_dir = tempfile.mkdtemp(prefix="pykafkad-streams-")
        cmd = ["java", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
               "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
               "-cp", maven.classpath(jars_dir()), str(SOURCE), bootstrap, app_id, source,
               sink, self.state_dir, str(port)]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self.stderr: list[str] = []
        threading.Thread(target=self._pump, args=(self.proc.stdout, self.lines),
                         daemon=True).start()
        threading.Thread(target=self._pump_err, daemon=True).start()

    @staticmethod
    def _pump(stream, q) -> None:
        for line in stream:
            q.put(line.strip())

    def _pump_err(self) -> None:
        for line in self.proc.stderr:
            self.stderr.append(line.rstrip())

    def wait_for(self, text: str, deadline: float) -> None:
        while text not in self.seen:
            left = deadline - time.monotonic()
            if left <= 0 or self.proc.poll() is not None and self.lines.empty():
                raise AssertionError(f"no {text!r} from Kafka Streams; saw {self.seen}; "
                                     f"stderr: {self.stderr[-15:]}")
            try:
                self.seen.append(self.lines.get(timeout=min(left, 1.0)))
            except queue.Empty:
                pass

    def stop(self, timeout: float = 60) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("stop\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=timeout)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.state_dir, ignore_errors=True)


def latest_counts(bootstrap: str, topic: str) -> dict[str, int]:
    """The newest count per word in the output topic (read up to its high watermark)."""
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused",
                  "enable.auto.commit": False, "isolation.level": "read_uncommitted"})
    try:
        _, high = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        out: dict[str, int] = {}
        if high <= 0:
            return out
        c.assign([TopicPartition(topic, 0, 0)])
        read = 0
        deadline = time.monotonic() + 30
        while read < high and time.monotonic() < deadline:
            for m in c.consume(500, timeout=1):
                if m.error():
                    continue
                read = m.offset() + 1
                out[m.key().decode()] = struct.unpack(">q", m.value())[0]
        return out
    finally:
        c.close()


def wait_counts(bootstrap: str, topic: str, want: dict[str, int], deadline: float) -> None:
    got: dict[str, int] = {}
    while time.monotonic() < deadline:
        got = latest_counts(bootstrap, topic)
        if got == want:
            return
        time.sleep(0.5)
    raise AssertionError(f"word counts never reached {want}; last {got}")


def describe(bootstrap: str, group_id: str):
    """StreamsGroupDescribe v0 (no client library exposes it; kafka-streams-groups does)."""
    from wire.messages.streams_group_describe_request import StreamsGroupDescribeRequest

    with WireClient(bootstrap) as c:
        return c.send(StreamsGroupDescribeRequest(group_ids=[group_id],
                                                  include_authorized_operations=False),
                      0).groups[0]


def _summary(group) -> dict:
    tasks = []
    for m in group.members:
        tasks.append((sorted((t.subtopology_id, p) for t in m.assignment.active_tasks
                             for p in t.partitions),
                      sorted((t.subtopology_id, p) for t in m.assignment.standby_tasks
                             for p in t.partitions)))
    return {"state": group.group_state, "members": len(group.members),
            "active_tasks": sorted(a for a, _ in tasks),
            "standby_tasks": sorted(s for _, s in tasks),
            # per member: (active tasks, standby tasks, standbys of its own active tasks)
            "shape": sorted((len(a), len(s), len(set(a) & set(s))) for a, s in tasks),
            "warmup_tasks": sum(len(t.partitions) for m in group.members
                                for t in m.assignment.warmup_tasks),
            "subtopologies": sorted(s.subtopology_id for s in group.topology.subtopologies)
            if group.topology else []}


def wait_described(bootstrap: str, group_id: str, members: int, deadline: float) -> dict:
    last = None
    while time.monotonic() < deadline:
        last = _summary(describe(bootstrap, group_id))
        if last["state"] == "Stable" and last["members"] == members:
            return last
        time.sleep(0.5)
    raise AssertionError(f"group {group_id} never Stable with {members} members; last {last}")


def streams_groups_tool(bootstrap: str, group_id: str) -> dict[str, str]:
    """What kafka-streams-groups prints for the group: --describe (offsets), --describe
    --state, --describe --members (--list is ListGroups, compared elsewhere)."""
    from compat.kafka_tools import run_tool

    out = {}
    for name, args in (("offsets", ["--describe", "--group", group_id]),
                       ("state", ["--describe", "--state", "--group", group_id]),
                       ("members", ["--describe", "--members", "--verbose", "--group", group_id])):
        proc = run_tool("kafka-streams-groups", ["--bootstrap-server", bootstrap, *args])
        out[name] = proc.stdout + (f"\nexit {proc.returncode}: {proc.stderr[-500:]}"
                                   if proc.returncode else "")
    return out


def set_group_config(bootstrap: str, group_id: str, name: str, value: str) -> None:
    """IncrementalAlterConfigs SET on the group (what kafka-configs --entity-type groups
    sends), without a JVM."""
    from wire.messages.incremental_alter_configs_request import (
        AlterableConfig,
        AlterConfigsResource,
        IncrementalAlterConfigsRequest,
    )

    with WireClient(bootstrap) as c:
        r = c.send(IncrementalAlterConfigsRequest(resources=[AlterConfigsResource(
            resource_type=32, resource_name=group_id,
            configs=[AlterableConfig(name=name, config_operation=0, value=value)])],
            validate_only=False), 1)
    assert r.responses[0].error_code == 0, r.responses[0].error_message


def word_count_scenario(bootstrap: str, prefix: str, timeout: float = 180,
                        with_tools: bool = False, standby_replicas: int = 0) -> dict:
    """Runs the two-instance scenario; returns what it saw (counts and group views).
    ``standby_replicas``: the group's streams.num.standby.replicas (set with kafka-configs
    before the instances start)."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    source, sink, app_id = f"{prefix}-lines", f"{prefix}-counts", f"{prefix}-wordcount"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(source, 2, 1), NewTopic(sink, 1, 1)]).values():
        f.result()
    producer = Producer({"bootstrap.servers": bootstrap})

    def produce(lines):
        for i, line in enumerate(lines):
            producer.produce(source, key=str(i).encode(), value=line.encode())
        assert producer.flush(30) == 0

    if standby_replicas:
        set_group_config(bootstrap, app_id, "streams.num.standby.replicas",
                         str(standby_replicas))
    produce(BATCH_1)
    deadline = time.monotonic() + timeout
    result: dict = {}
    a = Instance(bootstrap, app_id, source, sink, 7071)
    b = Instance(bootstrap, app_id, source, sink, 7072)
    try:
        a.wait_for("STATE RUNNING", deadline)
        b.wait_for("STATE RUNNING", deadline)
        wait_counts(bootstrap, sink, expected_counts(BATCH_1), deadline)
        result["counts_1"] = latest_counts(bootstrap, sink)
        result["two_members"] = wait_described(bootstrap, app_id, 2, deadline)
        a.stop()
        produce(BATCH_2)
        wait_counts(bootstrap, sink, expected_counts(BATCH_1 + BATCH_2), deadline)
        result["counts_2"] = latest_counts(bootstrap, sink)
        result["one_member"] = wait_described(bootstrap, app_id, 1, deadline)
        if with_tools:
            result["tools"] = streams_groups_tool(bootstrap, app_id)
    finally:
        a.stop()
        b.stop()
    return result
