"""Apache Kafka brokers under a pykafkad controller quorum (issue 14.2): the strongest proof that
pykafkad speaks KRaft is that Kafka's own brokers register with it, are unfenced, replicate and
serve clients.

The pykafkad controller runs as ``pykafkad --config server.properties`` (process.roles=controller)
after ``pykafkad format``; every Kafka broker (process.roles=broker, one JVM each) is formatted
with ``kafka-storage format`` and the same cluster id, as on the machines of a real cluster.

    with run_kafka_brokers_under_pykafkad(brokers=2) as cluster:
        print(cluster.bootstrap_servers)

The reverse (issue 14.1), ``run_pykafkad_broker_under_kafka``: a pykafkad broker
(``pykafkad --config``, process.roles=broker, ``pykafkad format``) next to a Kafka broker under
a Kafka controller.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from compat.kafka_broker import (
    JAVA_OPTS,
    STARTUP_TIMEOUT_S,
    KafkaBroker,
    KafkaCluster,
    _cluster_ready,
    _tail,
    free_port,
    java_binary,
    kafka_classpath,
    server_properties,
)

REPO = Path(__file__).resolve().parent.parent


@dataclass
class PykafkadController:
    """A pykafkad controller-only node in its own process."""

    node_id: int
    port: int
    data_dir: Path
    proc: subprocess.Popen
    log_path: Path

    def stop(self, timeout: float = 60) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout)


@dataclass
class MixedCluster:
    cluster_id: str
    controller: PykafkadController
    #: the Kafka brokers, node ids 2..n+1
    brokers: list[KafkaBroker]

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(b.bootstrap_servers for b in self.brokers)

    def broker(self, node_id: int) -> KafkaBroker:
        return self.brokers[node_id - 2]


def _pykafkad(*args: str, **kwargs) -> list[str]:
    return [sys.executable, "-m", "pykafkad", *args]


def _wait_listening(ctrl: PykafkadController, deadline: float) -> None:
    """The node prints its ready line once every listener is bound and it has joined the quorum."""
    while "listening on" not in ctrl.log_path.read_text(errors="replace"):
        if ctrl.proc.poll() is not None:
            raise RuntimeError(f"pykafkad exited with {ctrl.proc.returncode}:\n"
                               f"{_tail(ctrl.log_path)}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"pykafkad did not start in time:\n{_tail(ctrl.log_path)}")
        time.sleep(0.1)  # another process's log file: nothing to wait on


@contextlib.contextmanager
def run_kafka_brokers_under_pykafkad(
    brokers: int = 1,
    *,
    controller_config: dict[str, str] | None = None,
    broker_config: dict[str, str] | None = None,
    data_dir: Path | None = None,
) -> Iterator[MixedCluster]:
    """One pykafkad controller (node 1, the only voter) and ``brokers`` Apache Kafka brokers
    (nodes 2..), all formatted with one cluster id; yields once every broker lists them all."""
    java = java_binary()
    env = {**os.environ, "CLASSPATH": kafka_classpath()}
    py_env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)}
    tmp = None
    if data_dir is None:
        tmp = tempfile.mkdtemp(prefix="pykafkad-mixed-")
        data_dir = Path(tmp)
    cluster_id = subprocess.run(_pykafkad("random-uuid"), env=py_env, capture_output=True,
                                text=True, check=True, timeout=60).stdout.strip()
    controller_port = free_port()
    voters = f"1@127.0.0.1:{controller_port}"
    ctrl_dir = data_dir / "node-1"
    ctrl_dir.mkdir(parents=True, exist_ok=True)
    ctrl_props = ctrl_dir / "server.properties"
    ctrl_props.write_text(server_properties(
        ctrl_dir, 0, controller_port,
        {"node.id": "1", "controller.quorum.voters": voters, **(controller_config or {})},
        roles="controller"))
    broker_props = []
    replicas = str(min(3, brokers))
    for node_id in range(2, brokers + 2):
        node_dir = data_dir / f"node-{node_id}"
        node_dir.mkdir(parents=True, exist_ok=True)
        props = node_dir / "server.properties"
        props.write_text(server_properties(node_dir, free_port(), controller_port, {
            "node.id": str(node_id), "controller.quorum.voters": voters,
            "offsets.topic.replication.factor": replicas,
            "transaction.state.log.replication.factor": replicas,
            "share.coordinator.state.topic.replication.factor": replicas,
            **(broker_config or {})}, roles="broker"))
        broker_props.append(props)
    procs: list = []
    cluster = None
    try:
        formats = [subprocess.Popen(_pykafkad("format", "-t", cluster_id, "-c", str(ctrl_props)),
                                    env=py_env, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True)]
        formats += [subprocess.Popen(
            [java, *JAVA_OPTS, "kafka.tools.StorageTool", "format", "-t", cluster_id,
             "-c", str(p)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            for p in broker_props]
        for f in formats:
            out, _ = f.communicate(timeout=STARTUP_TIMEOUT_S)
            if f.returncode != 0:
                raise RuntimeError(f"format failed ({' '.join(f.args[-4:])}):\n{out}")
        log_path = ctrl_dir / "pykafkad.log"
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(_pykafkad("--config", str(ctrl_props)), env=py_env,
                                    stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        controller = PykafkadController(1, controller_port, ctrl_dir, proc, log_path)
        procs.append(controller)
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        _wait_listening(controller, deadline)
        started = []
        for props in broker_props:
            port = int(next(line for line in props.read_text().splitlines()
                            if line.startswith("listeners=")).rsplit(":", 1)[1])
            log_path = props.parent / "kafka.log"
            with open(log_path, "ab") as log:
                p = subprocess.Popen([java, *JAVA_OPTS, "kafka.Kafka", str(props)], env=env,
                                     stdout=log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
            broker = KafkaBroker("4.4.0", port, props.parent, p, log_path)
            started.append(broker)
            procs.append(broker)
        _cluster_ready(KafkaCluster(started, cluster_id), deadline)
        cluster = MixedCluster(cluster_id, controller, started)
        yield cluster
    finally:
        for p in reversed(procs):
            p.stop()
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


@dataclass
class QuorumNode:
    """One voter of a mixed quorum: ``kind`` "pykafkad" or "kafka"; restartable on its dir."""

    node_id: int
    kind: str
    port: int
    props: Path
    env: dict
    proc: subprocess.Popen | None = None

    @property
    def log_path(self) -> Path:
        return self.props.parent / f"{self.kind}.log"

    @property
    def metadata_log(self) -> Path:
        return self.props.parent / "logs" / "__cluster_metadata-0" / "00000000000000000000.log"

    def start(self) -> None:
        env = self.env
        if self.kind == "pykafkad":
            cmd = _pykafkad("--config", str(self.props))
        else:  # Kafka's warnings and errors in its log (slf4j-simple, as compat.kafka_tools)
            from compat.kafka_tools import tools_dir

            binding = next(tools_dir().glob("slf4j-simple-*.jar"))
            env = {**env, "CLASSPATH": os.pathsep.join([env["CLASSPATH"], str(binding)])}
            cmd = [java_binary(), *JAVA_OPTS, "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                   "kafka.Kafka", str(self.props)]
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(cmd, env=env, stdout=log,
                                         stderr=subprocess.STDOUT, start_new_session=True)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(60)

    def stop(self) -> None:
        if self.proc is not None:
            KafkaBroker.stop(self)  # SIGTERM, then SIGKILL after a minute


@dataclass
class MixedQuorum:
    cluster_id: str
    voters: dict[int, QuorumNode]
    broker: KafkaBroker


@contextlib.contextmanager
def run_mixed_quorum(kinds: tuple[str, ...], *, first: tuple[int, ...] = (),
                     config: dict[int, dict[str, str]] | None = None,
                     data_dir: Path) -> Iterator[MixedQuorum]:
    """A static quorum of dedicated controllers of the given kinds (node ids 1..n, in order)
    and one Apache Kafka broker (node n+1). The voters in ``first`` start first, and the
    others once one of them leads (so that the first leader is of their kind)."""
    env = {**os.environ, "CLASSPATH": kafka_classpath()}
    py_env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)}
    cluster_id = subprocess.run(_pykafkad("random-uuid"), env=py_env, capture_output=True,
                                text=True, check=True, timeout=60).stdout.strip()
    ports = {i: free_port() for i in range(1, len(kinds) + 1)}
    voters_spec = ",".join(f"{i}@127.0.0.1:{p}" for i, p in ports.items())
    voters: dict[int, QuorumNode] = {}
    for i, kind in enumerate(kinds, 1):
        node_dir = data_dir / f"node-{i}"
        node_dir.mkdir(parents=True, exist_ok=True)
        props = node_dir / "server.properties"
        props.write_text(server_properties(node_dir, 0, ports[i], {
            "node.id": str(i), "controller.quorum.voters": voters_spec,
            **((config or {}).get(i, {}))}, roles="controller"))
        voters[i] = QuorumNode(i, kind, ports[i], props, py_env if kind == "pykafkad" else env)
    broker_id = len(kinds) + 1
    broker_dir = data_dir / f"node-{broker_id}"
    broker_dir.mkdir(parents=True, exist_ok=True)
    broker_props = broker_dir / "server.properties"
    broker_port = free_port()
    broker_props.write_text(server_properties(broker_dir, broker_port, 0, {
        "node.id": str(broker_id), "controller.quorum.voters": voters_spec}, roles="broker"))
    formats = []
    for node in voters.values():
        cmd = (_pykafkad("format", "-t", cluster_id, "-c", str(node.props))
               if node.kind == "pykafkad" else
               [java_binary(), *JAVA_OPTS, "kafka.tools.StorageTool", "format", "-t",
                cluster_id, "-c", str(node.props)])
        formats.append(subprocess.Popen(cmd, env=node.env, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True))
    formats.append(subprocess.Popen(
        [java_binary(), *JAVA_OPTS, "kafka.tools.StorageTool", "format", "-t", cluster_id,
         "-c", str(broker_props)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True))
    for f in formats:
        out, _ = f.communicate(timeout=STARTUP_TIMEOUT_S)
        if f.returncode != 0:
            raise RuntimeError(f"format failed:\n{out}")
    broker = None
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    try:
        for i in first:
            voters[i].start()
        while first and not any("is the leader of epoch" in voters[i].log_path.read_text(
                errors="replace") for i in first if voters[i].kind == "pykafkad"):
            if time.monotonic() > deadline:
                raise TimeoutError("the first voters elected no leader")
            time.sleep(0.1)  # other processes' logs: nothing to wait on
        for i, node in voters.items():
            if i not in first:
                node.start()
        with open(broker_dir / "kafka.log", "ab") as log:
            proc = subprocess.Popen([java_binary(), *JAVA_OPTS, "kafka.Kafka", str(broker_props)],
                                    env=env, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        broker = KafkaBroker("4.4.0", broker_port, broker_dir, proc, broker_dir / "kafka.log")
        _cluster_ready(KafkaCluster([broker], cluster_id), deadline)
        yield MixedQuorum(cluster_id, voters, broker)
    finally:
        if broker is not None:
            broker.stop()
        for node in voters.values():
            node.stop()


@dataclass
class PykafkadUnderKafka:
    """A Kafka controller (node 1), a Kafka broker (node 2) and a pykafkad broker (node 3)."""

    cluster_id: str
    controller: QuorumNode
    kafka: QuorumNode
    pykafkad: QuorumNode

    @property
    def bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.kafka.port},127.0.0.1:{self.pykafkad.port}"


def _wait_kafka_broker_lists(port: int, node_ids: set[int], deadline: float,
                             nodes: list[QuorumNode]) -> None:
    """Metadata from the broker on ``port`` lists exactly ``node_ids`` (unfenced brokers)."""
    from compat.wire_client import WireClient
    from wire.messages.metadata_request import MetadataRequest

    while True:
        for n in nodes:
            if n.proc is not None and n.proc.poll() is not None:
                raise RuntimeError(f"node {n.node_id} ({n.kind}) exited with "
                                   f"{n.proc.returncode}:\n{_tail(n.log_path)}")
        try:
            with WireClient(f"127.0.0.1:{port}", timeout=5) as c:
                md = c.request(3, 12, MetadataRequest(topics=None,
                                                      allow_auto_topic_creation=False))
            if {b.node_id for b in md.brokers} == node_ids and md.controller_id >= 0:
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError("brokers not listed in time:\n"
                               + "\n".join(f"--- node {n.node_id} ({n.kind})\n{_tail(n.log_path)}"
                                           for n in nodes))
        time.sleep(0.2)  # polling other processes' ports: nothing to wait on


@contextlib.contextmanager
def run_pykafkad_broker_under_kafka(*, controller_config: dict[str, str] | None = None,
                                    broker_config: dict[str, str] | None = None,
                                    data_dir: Path) -> Iterator[PykafkadUnderKafka]:
    """Issue 14.1: an Apache Kafka 4.4 controller (node 1, the only voter), an Apache Kafka
    broker (node 2) and a pykafkad broker (node 3, ``pykafkad --config`` with
    process.roles=broker), all formatted with one cluster id; yields once both brokers list
    each other (so the Kafka controller unfenced the pykafkad broker). Two JVMs."""
    env = {**os.environ, "CLASSPATH": kafka_classpath()}
    py_env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)}
    cluster_id = subprocess.run(_pykafkad("random-uuid"), env=py_env, capture_output=True,
                                text=True, check=True, timeout=60).stdout.strip()
    controller_port = free_port()
    voters = f"1@127.0.0.1:{controller_port}"
    nodes: dict[int, QuorumNode] = {}
    for node_id, kind in ((1, "kafka"), (2, "kafka"), (3, "pykafkad")):
        node_dir = data_dir / f"node-{node_id}"
        node_dir.mkdir(parents=True, exist_ok=True)
        props = node_dir / "server.properties"
        if node_id == 1:
            port = controller_port
            text = server_properties(node_dir, 0, controller_port, {
                "node.id": "1", "controller.quorum.voters": voters,
                **(controller_config or {})}, roles="controller")
        else:
            port = free_port()
            text = server_properties(node_dir, port, controller_port, {
                "node.id": str(node_id), "controller.quorum.voters": voters,
                "offsets.topic.replication.factor": "2",
                "transaction.state.log.replication.factor": "2",
                "share.coordinator.state.topic.replication.factor": "2",
                **(broker_config or {})}, roles="broker")
        props.write_text(text)
        nodes[node_id] = QuorumNode(node_id, kind, port, props,
                                    py_env if kind == "pykafkad" else env)
    formats = []
    for node in nodes.values():
        cmd = (_pykafkad("format", "-t", cluster_id, "-c", str(node.props))
               if node.kind == "pykafkad" else
               [java_binary(), *JAVA_OPTS, "kafka.tools.StorageTool", "format", "-t",
                cluster_id, "-c", str(node.props)])
        formats.append(subprocess.Popen(cmd, env=node.env, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True))
    for f in formats:
        out, _ = f.communicate(timeout=STARTUP_TIMEOUT_S)
        if f.returncode != 0:
            raise RuntimeError(f"format failed:\n{out}")
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    try:
        for node in nodes.values():
            node.start()
        for broker in (nodes[2], nodes[3]):
            _wait_kafka_broker_lists(broker.port, {2, 3}, deadline, list(nodes.values()))
        yield PykafkadUnderKafka(cluster_id, nodes[1], nodes[2], nodes[3])
    finally:
        # brokers first: a broker's controlled shutdown waits for the controller's answer
        for node in (nodes[2], nodes[3]):
            if node.proc is not None and node.proc.poll() is None:
                node.proc.send_signal(signal.SIGTERM)
        for node in (nodes[2], nodes[3], nodes[1]):
            node.stop()
