"""The official Apache Kafka broker (KRaft, one node as broker and controller), from Maven Central.

The compatibility suite runs every scenario against this broker too: a scenario that fails on
Apache Kafka is a broken scenario.  The broker's jars (org.apache.kafka:kafka_2.13 and its
runtime dependencies) are fetched once with Maven (compat/maven.py); storage is formatted
with ``kafka.tools.StorageTool`` (what ``kafka-storage.sh format`` runs) and the broker runs as
``kafka.Kafka server.properties``, as ``kafka-server-start.sh`` does.

    with run_kafka() as kafka:
        print(kafka.bootstrap_servers)
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from compat import maven

DEFAULT_VERSION = "4.4.0"
SCALA = "2.13"
STARTUP_TIMEOUT_S = 120
JAVA_OPTS = ["-Xms256m", "-Xmx1g", "-XX:+UseG1GC", "-Djava.awt.headless=true"]


def kafka_classpath(version: str = DEFAULT_VERSION) -> str:
    return maven.classpath(maven.fetch(f"kafka-{version}", [f"org.apache.kafka:kafka_{SCALA}:{version}"]))


def java_binary() -> str:
    java = shutil.which("java")
    if java is None:
        raise RuntimeError("java is not installed (Apache Kafka needs Java 17+)")
    return java


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def formatted_cluster_id(data_dir: Path) -> str | None:
    """The cluster id ``kafka-storage format`` wrote into the log dir's meta.properties, or None
    for a dir never formatted."""
    try:
        text = (data_dir / "logs" / "meta.properties").read_text()
    except FileNotFoundError:
        return None
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() == "cluster.id":
            return value.strip()
    return None


def server_properties(data_dir: Path, port: int, controller_port: int, extra: dict[str, str],
                      roles: str = "broker,controller",
                      extra_listeners: dict[str, int] | None = None) -> str:
    """A node's server.properties: combined broker+controller by default; ``roles`` "broker"
    (PLAINTEXT only, ``controller_port`` unused) or "controller" (CONTROLLER only, ``port``
    unused) for a cluster with dedicated controllers.  ``extra_listeners``: more broker
    listeners, named after their security protocol (SSL, SASL_PLAINTEXT, SASL_SSL), by port,
    next to PLAINTEXT (which readiness is checked on)."""
    more = extra_listeners or {}
    listed = "".join(f",{name}://127.0.0.1:{p}" for name, p in more.items())
    props = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.voters": f"1@127.0.0.1:{controller_port}",
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}"
                     + listed,
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}" + listed,
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT"
                                          + "".join(f",{n}:{n}" for n in more),
        "log.dirs": str(data_dir / "logs"),
        # a single node can only hold one replica of the internal topics
        "offsets.topic.replication.factor": "1",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        # tests join groups often: no 3 s wait for more members (pykafkad's test setting too)
        "group.initial.rebalance.delay.ms": "0",
        **extra,
    }
    if roles == "broker":
        props["process.roles"] = roles
        props["listeners"] = f"PLAINTEXT://127.0.0.1:{port}" + listed
    elif roles == "controller":
        props["process.roles"] = roles
        props["listeners"] = f"CONTROLLER://127.0.0.1:{controller_port}"
        for key in ("advertised.listeners", "inter.broker.listener.name"):
            props.pop(key, None)
    return "".join(f"{k}={v}\n" for k, v in props.items())


@dataclass
class KafkaBroker:
    version: str
    port: int
    data_dir: Path
    proc: subprocess.Popen
    log_path: Path
    #: the CONTROLLER listener's port (ControllerApis), 0 when unknown
    controller_port: int = 0

    @property
    def bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self, timeout: float = 60) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout)


def _wait_ready(broker: KafkaBroker, deadline: float) -> None:
    from compat.wire_client import WireClient
    from wire.messages.metadata_request import MetadataRequest

    last: Exception | None = None
    while time.monotonic() < deadline:
        if broker.proc.poll() is not None:
            raise RuntimeError(
                f"Kafka exited with {broker.proc.returncode}:\n{_tail(broker.log_path)}")
        try:
            with WireClient(broker.bootstrap_servers, timeout=5) as c:
                md = c.request(3, 12, MetadataRequest(topics=None, allow_auto_topic_creation=False))
                if md.brokers and md.controller_id >= 0:
                    return
        except OSError as e:
            last = e
        time.sleep(0.2)  # polling a port that is not open yet: nothing to wait on
    raise TimeoutError(f"Kafka did not start in time ({last}):\n{_tail(broker.log_path)}")


def _tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


@contextlib.contextmanager
def run_kafka(
    version: str = DEFAULT_VERSION,
    *,
    port: int = 0,
    config: dict[str, str] | None = None,
    data_dir: Path | None = None,
    extra_listeners: dict[str, int] | None = None,
) -> Iterator[KafkaBroker]:
    """Runs Apache Kafka on a free port until exit, in ``data_dir`` (formatted on first use and
    restarted with its records and cluster id after that) or in a temporary dir."""
    java = java_binary()
    cp = kafka_classpath(version)
    tmp = None
    if data_dir is None:
        tmp = tempfile.mkdtemp(prefix="apache-kafka-")
        data_dir = Path(tmp)
    data_dir.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    controller_port = free_port()
    props = data_dir / "server.properties"
    props.write_text(server_properties(data_dir, port, controller_port, dict(config or {}),
                                       extra_listeners=extra_listeners))
    log_path = data_dir / "kafka.log"
    env = {**os.environ, "CLASSPATH": cp}
    if formatted_cluster_id(data_dir) is None:
        # only a new dir is formatted: formatting gives a cluster id, which a restart must keep
        fmt = subprocess.run(
            [java, *JAVA_OPTS, "kafka.tools.StorageTool", "format", "-t", uuid.uuid4().hex[:22],
             "-c", str(props)],
            env=env, capture_output=True, text=True, timeout=STARTUP_TIMEOUT_S)
        if fmt.returncode != 0:
            raise RuntimeError(f"kafka-storage format failed:\n{fmt.stdout}\n{fmt.stderr}")
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            [java, *JAVA_OPTS, "kafka.Kafka", str(props)], env=env, stdout=log,
            stderr=subprocess.STDOUT, start_new_session=True)
    broker = KafkaBroker(version, port, data_dir, proc, log_path, controller_port)
    try:
        _wait_ready(broker, time.monotonic() + STARTUP_TIMEOUT_S)
        yield broker
    finally:
        broker.stop()
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def kafka_config_error(properties: dict[str, str], work_dir: Path) -> tuple[int, str | None]:
    """Runs Apache Kafka's ``kafka.Kafka`` on ``properties`` and returns its exit status and
    the message of the exception it exits with (None if it printed none), with Scala's
    "requirement failed: " prefix removed.  A config Kafka accepts gets as far as its storage
    check: "No readable meta.properties files found." on an unformatted dir."""
    import re

    from compat.kafka_tools import tools_dir

    java = java_binary()
    binding = [j for j in tools_dir().glob("slf4j-simple-*.jar")]
    cp = os.pathsep.join([kafka_classpath(), *map(str, binding)])
    work_dir.mkdir(parents=True, exist_ok=True)
    props = work_dir / "server.properties"
    props.write_text("".join(f"{k}={v}\n" for k, v in properties.items()))
    proc = subprocess.run(
        [java, "-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", cp, "kafka.Kafka", str(props)],
        capture_output=True, text=True, timeout=STARTUP_TIMEOUT_S)
    for line in (proc.stdout + proc.stderr).splitlines():
        m = re.match(r"(?:[\w.]+\.)?\w*(?:Exception|Error): (.*)", line)
        if m:
            return proc.returncode, m.group(1).replace("requirement failed: ", "")
    return proc.returncode, None


@dataclass
class KafkaCluster:
    """``run_kafka_cluster``'s nodes (one JVM each, combined broker+controller)."""

    nodes: list[KafkaBroker]
    cluster_id: str
    #: seconds the per-node ``kafka-storage format`` runs took (run in parallel)
    format_s: float = 0.0
    #: dedicated controller nodes (``controllers`` > 0); ``nodes`` are then the brokers
    controllers: list[KafkaBroker] = field(default_factory=list)

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(n.bootstrap_servers for n in self.nodes)


def _cluster_ready(cluster: KafkaCluster, deadline: float,
                   nodes: list[KafkaBroker] | None = None) -> None:
    """Every node (of ``nodes``, by default all) answers Metadata listing every one of them
    and a controller."""
    from compat.wire_client import WireClient
    from wire.messages.metadata_request import MetadataRequest

    nodes = list(cluster.nodes if nodes is None else nodes)
    pending = list(nodes)
    while pending:
        node = pending[0]
        if node.proc.poll() is not None:
            raise RuntimeError(f"Kafka node exited with {node.proc.returncode}:\n"
                               f"{_tail(node.log_path)}")
        try:
            with WireClient(node.bootstrap_servers, timeout=5) as c:
                md = c.request(3, 12, MetadataRequest(topics=None, allow_auto_topic_creation=False))
            if len(md.brokers) == len(nodes) and md.controller_id >= 0:
                pending.pop(0)
                continue
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"Kafka cluster not ready in time:\n{_tail(node.log_path)}")
        time.sleep(0.2)  # polling ports of other processes: nothing to wait on


@contextlib.contextmanager
def run_kafka_cluster(
    nodes: int = 3,
    version: str = DEFAULT_VERSION,
    *,
    config: dict[str, str] | None = None,
    data_dir: Path | None = None,
    controllers: int = 0,
) -> Iterator[KafkaCluster]:
    """Runs an Apache Kafka KRaft cluster of ``nodes`` combined broker+controller nodes on
    free ports, one JVM per node, with a static quorum (controller.quorum.voters); every node
    dir is formatted with the same cluster id first, as ``kafka-storage format`` is run on each
    machine of a real cluster.  ``controllers`` > 0: ``nodes`` brokers (ids 1..nodes) and that
    many dedicated controllers (the next ids, in ``cluster.controllers``), as pykafkad's
    ``run_cluster(nodes, controllers)``, so brokers can die while the quorum lives."""
    java = java_binary()
    cp = kafka_classpath(version)
    tmp = None
    if data_dir is None:
        tmp = tempfile.mkdtemp(prefix="apache-kafka-cluster-")
        data_dir = Path(tmp)
    ports = [(free_port(), free_port()) for _ in range(nodes + controllers)]
    roles = (["broker"] * nodes + ["controller"] * controllers if controllers
             else ["broker,controller"] * nodes)
    voters = ",".join(f"{i + 1}@127.0.0.1:{c}" for i, (_, c) in enumerate(ports)
                      if "controller" in roles[i])
    cluster_id = uuid.uuid4().hex[:22]
    env = {**os.environ, "CLASSPATH": cp}
    started: list[KafkaBroker] = []
    cluster = KafkaCluster(started, cluster_id)
    try:
        props_paths = []
        for i, (port, controller_port) in enumerate(ports):
            node_dir = data_dir / f"node-{i + 1}"
            node_dir.mkdir(parents=True, exist_ok=True)
            replicas = str(min(3, nodes))
            extra = {"node.id": str(i + 1), "controller.quorum.voters": voters,
                     "offsets.topic.replication.factor": replicas,
                     "transaction.state.log.replication.factor": replicas,
                     "transaction.state.log.min.isr": str(min(2, nodes)),
                     "share.coordinator.state.topic.replication.factor": replicas,
                     "share.coordinator.state.topic.min.isr": str(min(2, nodes)),
                     **(config or {})}
            props = node_dir / "server.properties"
            props.write_text(server_properties(node_dir, port, controller_port, extra, roles[i]))
            props_paths.append(props)
        t0 = time.monotonic()
        formats = [subprocess.Popen(
            [java, *JAVA_OPTS, "kafka.tools.StorageTool", "format", "-t", cluster_id,
             "-c", str(p)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            for p in props_paths if formatted_cluster_id(p.parent) is None]
        for f in formats:
            out, _ = f.communicate(timeout=STARTUP_TIMEOUT_S)
            if f.returncode != 0:
                raise RuntimeError(f"kafka-storage format failed:\n{out}")
        cluster.format_s = time.monotonic() - t0
        for i, props in enumerate(props_paths):
            log_path = props.parent / "kafka.log"
            with open(log_path, "ab") as log:
                proc = subprocess.Popen(
                    [java, *JAVA_OPTS, "kafka.Kafka", str(props)], env=env, stdout=log,
                    stderr=subprocess.STDOUT, start_new_session=True)
            node = KafkaBroker(version, ports[i][0], props.parent, proc, log_path, ports[i][1])
            (started if roles[i] != "controller" else cluster.controllers).append(node)
        _cluster_ready(cluster, time.monotonic() + STARTUP_TIMEOUT_S)
        yield cluster
    finally:
        # brokers first: a broker's controlled shutdown waits for the controller's answer
        for group in (started, cluster.controllers):
            for node in group:
                if node.proc.poll() is None:
                    node.proc.send_signal(signal.SIGTERM)
            for node in group:
                node.stop()
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
