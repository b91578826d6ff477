"""A dynamic controller quorum (KIP-853) on pykafkad nodes, driven by Kafka's own tools: one
controller formatted with ``--standalone``, two more formatted with ``--no-initial-controllers``
and added with ``kafka-metadata-quorum add-controller`` (run with the joining controller's
config), one removed with ``remove-controller``; a broker that only knows
``controller.quorum.bootstrap.servers`` keeps serving clients throughout, and a restart keeps
the voter set (the VotersRecord in the log). The same scenario runs on Apache Kafka 4.4 nodes
(from the same jars, formatted with its StorageTool), so every tool output checked here is
Kafka's too."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer

from compat.kafka_broker import JAVA_OPTS, free_port, java_binary, kafka_classpath
from compat.kafka_tools import run_tool
from compat.wire_client import WireClient
from pykafkad.kraft.broker_lifecycle import format_feature_flags
from tests.integration.clients import needs_java
from wire.errors import ErrorCode
from wire.messages import add_raft_voter_request as add_req
from wire.messages.remove_raft_voter_request import RemoveRaftVoterRequest

pytestmark = needs_java

ROOT = Path(__file__).resolve().parents[2]
CLUSTER_ID = "OQyDbVTuRv6SLDRTnfTrPw"
WAIT_S = 30


class Node:
    def __init__(self, impl: str, base: Path, node_id: int, roles: str, endpoint: str,
                 props: dict[str, str]):
        #: "pykafkad" or "kafka" (Apache Kafka from compat's jars)
        self.impl = impl
        self.node_id = node_id
        #: its one listener's host:port
        self.endpoint = endpoint
        self.dir = base / f"n{node_id}"
        self.dir.mkdir()
        self.config = self.dir / "server.properties"
        self.config.write_text("".join(f"{k}={v}\n" for k, v in {
            "process.roles": roles, "node.id": str(node_id),
            "controller.listener.names": "CONTROLLER", "log.dirs": str(self.dir / "data"),
            "offsets.topic.replication.factor": "1", "group.initial.rebalance.delay.ms": "0",
            **props}.items()))
        self.proc: subprocess.Popen | None = None

    def _command(self, *args: str) -> list[str]:
        if self.impl == "kafka":
            return [java_binary(), *JAVA_OPTS, *args]
        return [sys.executable, "-m", "pykafkad", *args]

    def _env(self) -> dict[str, str]:
        if self.impl == "kafka":
            return {**os.environ, "CLASSPATH": kafka_classpath()}
        return {**os.environ, "PYTHONPATH": str(ROOT)}

    def format(self, *flags: str) -> None:
        if self.impl == "kafka":
            cmd = self._command("kafka.tools.StorageTool", "format")
        else:  # with the feature levels pykafkad's brokers support, as its launcher does
            cmd = self._command("format") + [
                a for f in format_feature_flags() for a in ("--feature", f)]
        subprocess.run([*cmd, "-t", CLUSTER_ID, "-c", str(self.config), *flags], cwd=ROOT,
                       check=True, capture_output=True, timeout=120, env=self._env())

    @property
    def directory_id(self) -> str:
        text = (self.dir / "data" / "meta.properties").read_text()
        return re.search(r"^directory\.id=(\S+)$", text, re.M).group(1)

    def start(self) -> None:
        log = open(self.dir / "node.log", "ab")
        cmd = self._command("kafka.Kafka", str(self.config)) if self.impl == "kafka" else \
            self._command("--config", str(self.config))
        self.proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                     env=self._env())
        log.close()
        host, port = self.endpoint.rsplit(":", 1)
        wait_for(lambda: self.proc.poll() is None and _accepts(host, int(port)),
                 f"node {self.node_id} to listen", timeout=60)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _accepts(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


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


def bad_voter_changes(controller: str) -> list[tuple[int, str]]:
    """(error code, message) of AddRaftVoter / RemoveRaftVoter requests that a leader refuses
    before looking at its voter set (raw frames: the Admin client validates these away)."""
    good_dir = bytes(range(16))
    endpoint = [add_req.Listener(name="CONTROLLER", host="127.0.0.1", port=1)]
    requests = [
        (80, 1, add_req.AddRaftVoterRequest(cluster_id="x", timeout_ms=1000, voter_id=5,
                                             voter_directory_id=good_dir, listeners=[])),
        (80, 1, add_req.AddRaftVoterRequest(cluster_id=None, timeout_ms=1000, voter_id=5,
                                             voter_directory_id=bytes(16), listeners=endpoint)),
        (80, 1, add_req.AddRaftVoterRequest(
            cluster_id=None, timeout_ms=1000, voter_id=5, voter_directory_id=good_dir,
            listeners=[add_req.Listener(name="OTHER", host="127.0.0.1", port=1)])),
        (81, 0, RemoveRaftVoterRequest(cluster_id=None, voter_id=-1, voter_directory_id=good_dir)),
    ]
    with WireClient(controller) as client:
        return [(r.error_code, r.error_message)
                for r in (client.request(k, v, req) for k, v, req in requests)]


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


@pytest.fixture(params=["pykafkad", "kafka"])
def nodes(request, tmp_path: Path):
    impl = request.param
    ports = {i: free_port() for i in (1, 2, 3, 4)}
    bootstrap = f"127.0.0.1:{ports[1]}"
    made = {i: Node(impl, tmp_path, i, "controller", f"127.0.0.1:{ports[i]}", {
        "listeners": f"CONTROLLER://127.0.0.1:{ports[i]}",
        "controller.quorum.bootstrap.servers": bootstrap}) for i in (1, 2, 3)}
    made[4] = Node(impl, tmp_path, 4, "broker", f"127.0.0.1:{ports[4]}", {
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
    assert bad_voter_changes(controller) == [
        (ErrorCode.INCONSISTENT_CLUSTER_ID,
         f'The given id "x" doesn\'t match the cluster id "{CLUSTER_ID}"'),
        (ErrorCode.INVALID_REQUEST, "Add voter request didn't include a valid voter"),
        (ErrorCode.INVALID_REQUEST,
         "Add voter request didn't include the endpoint (Endpoints(endpoints={ListenerName(OTHER)"
         "=127.0.0.1/<unresolved>:1})) for the default listener ListenerName(CONTROLLER)"),
        (ErrorCode.INVALID_REQUEST, "Remove voter request didn't include a valid voter"),
    ]
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
    assert (f"DuplicateVoterException: The voter id for ReplicaKey(id=2, directoryId="
            f"{nodes[2].directory_id}) is already part of the set of voters [") in again.stderr
    for i in (1, 2, 3):
        assert f"ReplicaKey(id={i}, directoryId={nodes[i].directory_id})" in \
            again.stderr.split("set of voters")[1]

    # through the broker, which forwards RemoveRaftVoter to the active controller
    done = quorum_tool("--bootstrap-server", broker, "remove-controller",
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
    assert (f"VoterNotFoundException: Cannot remove voter ReplicaKey(id=3, directoryId="
            f"{nodes[3].directory_id}) from the set of voters [") in missing.stderr
    assert produce_and_consume(broker, "dyn-b") == [f"m{i}".encode() for i in range(10)]

    # a restart of every node keeps the voter set (the VotersRecord in the metadata log)
    for node in nodes.values():
        node.stop()
    for node in nodes.values():
        node.start()
    assert [v["id"] for v in voters(controller)] == [1, 2]
    assert produce_and_consume(broker, "dyn-c") == [f"m{i}".encode() for i in range(10)]
