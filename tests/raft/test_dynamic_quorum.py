"""A dynamic controller quorum (KIP-853) on pykafkad nodes, driven by Kafka's own tools: one
controller formatted with ``--standalone``, two more formatted with ``--no-initial-controllers``
and added with ``kafka-metadata-quorum add-controller`` (run with the joining controller's
config), one removed with ``remove-controller``; a broker that only knows
``controller.quorum.bootstrap.servers`` keeps serving clients throughout, and a restart keeps
the voter set (the VotersRecord in the log)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer

from compat.kafka_broker import free_port
from compat.kafka_tools import run_tool
from pykafkad.kraft.broker_lifecycle import format_feature_flags
from tests.integration.clients import needs_java

pytestmark = needs_java

ROOT = Path(__file__).resolve().parents[2]
CLUSTER_ID = "OQyDbVTuRv6SLDRTnfTrPw"
WAIT_S = 30


class Node:
    def __init__(self, base: Path, node_id: int, roles: str, endpoint: str,
                 props: dict[str, str]):
        self.node_id = node_id
        #: its one listener's host:port
        self.endpoint = endpoint
        self.dir = base / f"n{node_id}"
        self.dir.mkdir()
        self.config = self.dir / "server.properties"
        self.config.write_text("".join(f"{k}={v}\n" for k, v in {
            "process.roles": roles, "node.id": str(node_id),
            "controller.listener.names": "CONTROLLER", "log.dirs": str(self.dir / "data"),
            "offsets.topic.replication.factor": "1", **props}.items()))
        self.proc: subprocess.Popen | None = None

    def format(self, *flags: str) -> None:
        features = [a for f in format_feature_flags() for a in ("--feature", f)]
        subprocess.run([sys.executable, "-m", "pykafkad", "format", "-t", CLUSTER_ID, "-c",
                        str(self.config), *flags, *features], cwd=ROOT, check=True,
                       capture_output=True, timeout=60)

    @property
    def directory_id(self) -> str:
        text = (self.dir / "data" / "meta.properties").read_text()
        return re.search(r"^directory\.id=(\S+)$", text, re.M).group(1)

    def start(self) -> None:
        log = open(self.dir / "node.log", "ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pykafkad", "--config", str(self.config)], cwd=ROOT,
            stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONPATH": str(ROOT)})
        log.close()
        wait_for(lambda: "listening on" in (self.dir / "node.log").read_text(),
                 f"node {self.node_id} to listen")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def wait_for(condition, what: str, timeout: float = WAIT_S):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def quorum_tool(*args: str) -> subprocess.CompletedProcess:
    return run_tool("kafka-metadata-quorum", list(args))


def voters(bootstrap: str) -> list[dict]:
    """CurrentVoters of ``describe --status`` once it answers."""
    import json

    def status():
        done = quorum_tool("--bootstrap-controller", bootstrap, "describe", "--status")
        m = re.search(r"^CurrentVoters:\s+(.*)$", done.stdout, re.M)
        return json.loads(m.group(1)) if done.returncode == 0 and m else None
    return wait_for(status, "describe --status")


def produce_and_consume(bootstrap: str, topic: str, n: int = 10) -> list[bytes]:
    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(n):
        producer.produce(topic, f"m{i}".encode())
    assert producer.flush(WAIT_S) == 0
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"g-{topic}",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    got: list[bytes] = []
    deadline = time.monotonic() + WAIT_S
    try:
        while len(got) < n and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                got.append(msg.value())
    finally:
        consumer.close()
    return got


@pytest.fixture
def nodes(tmp_path: Path):
    ports = {i: free_port() for i in (1, 2, 3, 4)}
    bootstrap = f"127.0.0.1:{ports[1]}"
    made = {i: Node(tmp_path, i, "controller", f"127.0.0.1:{ports[i]}", {
        "listeners": f"CONTROLLER://127.0.0.1:{ports[i]}",
        "controller.quorum.bootstrap.servers": bootstrap}) for i in (1, 2, 3)}
    made[4] = Node(tmp_path, 4, "broker", f"127.0.0.1:{ports[4]}", {
        "listeners": f"PLAINTEXT://127.0.0.1:{ports[4]}",
        "controller.quorum.bootstrap.servers": bootstrap})
    made[1].format("--standalone")
    for i in (2, 3, 4):
        made[i].format("--no-initial-controllers")
    yield made
    for node in made.values():
        node.stop()


def test_standalone_then_add_and_remove_controllers(nodes) -> None:
    for node in nodes.values():
        node.start()
    controller, broker = nodes[1].endpoint, nodes[4].endpoint
    assert [v["id"] for v in voters(controller)] == [1]
    assert produce_and_consume(broker, "dyn-a") == [f"m{i}".encode() for i in range(10)]

    for i in (2, 3):
        done = quorum_tool("--bootstrap-controller", controller, "--command-config",
                           str(nodes[i].config), "add-controller")
        assert (done.returncode, done.stdout) == (0, (
            f"Added controller {i} with directory id {nodes[i].directory_id} and endpoints: "
            f"CONTROLLER://{nodes[i].endpoint}\n")), done.stderr[-2000:]
    described = voters(controller)
    assert [(v["id"], v["directoryId"]) for v in described] == [
        (i, nodes[i].directory_id) for i in (1, 2, 3)]

    # an id already in the set: Kafka's DUPLICATE_VOTER message
    again = quorum_tool("--bootstrap-controller", controller, "--command-config",
                        str(nodes[2].config), "add-controller")
    assert again.returncode == 1
    assert (f"The voter id for ReplicaKey(id=2, directoryId=Optional[{nodes[2].directory_id}])"
            " is already part of the set of voters") in again.stderr + again.stdout

    done = quorum_tool("--bootstrap-controller", controller, "remove-controller",
                       "--controller-id", "3", "--controller-directory-id",
                       nodes[3].directory_id)
    assert done.returncode == 0, done.stderr[-2000:]
    # (the double space is the tool's own)
    assert done.stdout == (f"Removed  KRaft controller 3 with directory id "
                           f"{nodes[3].directory_id}\n")
    assert [v["id"] for v in voters(controller)] == [1, 2]
    # a voter that is not in the set: VOTER_NOT_FOUND
    missing = quorum_tool("--bootstrap-controller", controller, "remove-controller",
                          "--controller-id", "3", "--controller-directory-id",
                          nodes[3].directory_id)
    assert missing.returncode == 1
    assert "Cannot remove voter ReplicaKey(id=3" in missing.stderr + missing.stdout
    assert produce_and_consume(broker, "dyn-b") == [f"m{i}".encode() for i in range(10)]

    # a restart of every node keeps the voter set (the VotersRecord in the metadata log)
    for node in nodes.values():
        node.stop()
    for node in nodes.values():
        node.start()
    assert [v["id"] for v in voters(controller)] == [1, 2]
    assert produce_and_consume(broker, "dyn-c") == [f"m{i}".encode() for i in range(10)]
