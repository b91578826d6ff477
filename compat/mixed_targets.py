"""Mixed clusters as compat targets (issue 14.4): Apache Kafka and pykafkad brokers side by side
under one controller, so that the cluster scenarios and the kill loop run with replicas of one
partition on both implementations.

    with run_mixed_cluster(("kafka", "pykafkad", "pykafkad"), controller="kafka") as cluster:
        run_matrix(cluster.bootstrap_servers, ..., nodes=MixedNodes(cluster))
        run_failover(MixedTarget(cluster), ..., roles=["kafka", "pykafkad"])

Brokers are nodes 1..n (as in run_kafka_cluster, so the scenarios see the same ids) and the
controller-only node is n+1, a Kafka JVM or ``pykafkad --config`` with process.roles=controller.
Each node is a compat.mixed_cluster.QuorumNode: restartable on its own ports and data.

After the kill loop the replicas are compared twice: byte for byte (failover.py) and through
Kafka's DumpLogSegments (``dump_logs``), whose batch-by-batch listing names what differs.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from compat.kafka_broker import (
    JAVA_OPTS,
    STARTUP_TIMEOUT_S,
    free_port,
    java_binary,
    kafka_classpath,
    server_properties,
)
from compat.mixed_cluster import REPO, QuorumNode, _pykafkad, _wait_kafka_broker_lists

KINDS = ("kafka", "pykafkad")
#: the internal topics as compat's three-node clusters have them (compat.kafka_broker's
#: run_kafka_cluster): three replicas, two in sync to write
INTERNAL_TOPICS = {
    "offsets.topic.replication.factor": "3",
    "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2",
    "share.coordinator.state.topic.replication.factor": "3",
    "share.coordinator.state.topic.min.isr": "2",
}


@dataclass
class MixedBrokers:
    """A controller-only node and brokers of either kind (node ids 1..n)."""

    cluster_id: str
    controller: QuorumNode
    brokers: dict[int, QuorumNode]

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"127.0.0.1:{n.port}" for n in self.brokers.values())

    def describe(self) -> str:
        kinds = ", ".join(f"{i} {n.kind}" for i, n in self.brokers.items())
        return f"{self.controller.kind} controller; brokers {kinds}"

    def running(self) -> list[QuorumNode]:
        return [n for n in self.brokers.values() if n.proc is not None and n.proc.poll() is None]

    def wait_listed(self, deadline: float) -> None:
        """Every running broker lists exactly the running brokers (all unfenced)."""
        up = self.running()
        for n in up:
            _wait_kafka_broker_lists(n.port, {m.node_id for m in up}, deadline,
                                     [self.controller, *up])


def _format(node: QuorumNode, cluster_id: str) -> subprocess.Popen:
    cmd = (_pykafkad("format", "-t", cluster_id, "-c", str(node.props))
           if node.kind == "pykafkad" else
           [java_binary(), *JAVA_OPTS, "kafka.tools.StorageTool", "format", "-t", cluster_id,
            "-c", str(node.props)])
    return subprocess.Popen(cmd, env=node.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def _terminate(nodes: list[QuorumNode]) -> None:
    for n in nodes:
        if n.proc is not None and n.proc.poll() is None:
            n.proc.send_signal(signal.SIGTERM)
    for n in nodes:
        n.stop()


@contextlib.contextmanager
def run_mixed_cluster(broker_kinds: tuple[str, ...] = ("kafka", "pykafkad", "pykafkad"),
                      controller: str = "kafka", *, config: dict[str, str] | None = None,
                      data_dir: Path | None = None) -> Iterator[MixedBrokers]:
    """One controller-only node of kind ``controller`` (the only voter) and one broker per
    entry of ``broker_kinds``, formatted with one cluster id; ``config`` goes to every node.
    Yields once every broker lists them all."""
    for kind in (controller, *broker_kinds):
        if kind not in KINDS:
            raise ValueError(f"unknown node kind {kind!r}; one of {KINDS}")
    with contextlib.ExitStack() as stack:
        if data_dir is None:
            data_dir = Path(stack.enter_context(
                tempfile.TemporaryDirectory(prefix="mixed-cluster-")))
        yield from _run(broker_kinds, controller, config or {}, data_dir)


def _run(broker_kinds, controller, config, data_dir) -> Iterator[MixedBrokers]:
    env = {**os.environ, "CLASSPATH": kafka_classpath()}
    py_env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)}
    cluster_id = subprocess.run(_pykafkad("random-uuid"), env=py_env, capture_output=True,
                                text=True, check=True, timeout=60).stdout.strip()
    ctrl_id = len(broker_kinds) + 1
    ctrl_port = free_port()
    voters = f"{ctrl_id}@127.0.0.1:{ctrl_port}"

    def node(node_id: int, kind: str, roles: str) -> QuorumNode:
        node_dir = data_dir / f"node-{node_id}"
        node_dir.mkdir(parents=True, exist_ok=True)
        port = ctrl_port if roles == "controller" else free_port()
        props = node_dir / "server.properties"
        props.write_text(server_properties(node_dir, port, ctrl_port, {
            "node.id": str(node_id), "controller.quorum.voters": voters,
            **INTERNAL_TOPICS, **config}, roles=roles))
        return QuorumNode(node_id, kind, port, props, py_env if kind == "pykafkad" else env)

    ctrl = node(ctrl_id, controller, "controller")
    brokers = {i: node(i, kind, "broker") for i, kind in enumerate(broker_kinds, 1)}
    formats = [_format(n, cluster_id) for n in (ctrl, *brokers.values())]
    for f in formats:
        out, _ = f.communicate(timeout=STARTUP_TIMEOUT_S)
        if f.returncode != 0:
            raise RuntimeError(f"format failed:\n{out}")
    cluster = MixedBrokers(cluster_id, ctrl, brokers)
    try:
        ctrl.start()
        for b in brokers.values():
            b.start()
        cluster.wait_listed(time.monotonic() + STARTUP_TIMEOUT_S)
        yield cluster
    finally:
        # brokers first: a broker's controlled shutdown waits for the controller's answer
        _terminate(list(brokers.values()))
        _terminate([ctrl])


class MixedNodes:
    """compat.node_control.NodeControl over a mixed cluster's brokers."""

    def __init__(self, cluster: MixedBrokers):
        self.cluster = cluster

    def stop_node(self, node_id: int) -> None:
        """A clean stop (SIGTERM: controlled shutdown), as kafka-server-stop.sh does."""
        _terminate([self.cluster.brokers[node_id]])

    def kill_node(self, node_id: int) -> None:
        self.cluster.brokers[node_id].kill()

    def start_node(self, node_id: int) -> None:
        node = self.cluster.brokers[node_id]
        if node.proc is not None and node.proc.poll() is None:
            return
        node.start()
        self.cluster.wait_listed(time.monotonic() + STARTUP_TIMEOUT_S)


class MixedTarget:
    """compat.failover.FailoverTarget over a mixed cluster: the brokers are the nodes killed;
    the rounds pick their victims by kind (``kind``)."""

    #: failover.py compares every replica through DumpLogSegments too (``dump_logs``)
    compare_dumps = True

    def __init__(self, cluster: MixedBrokers):
        self.cluster = cluster
        self.control = MixedNodes(cluster)
        self.node_ids = sorted(cluster.brokers)

    def kind(self, node_id: int) -> str:
        return self.cluster.brokers[node_id].kind

    def bootstrap(self, node_id: int) -> str:
        return f"127.0.0.1:{self.cluster.brokers[node_id].port}"

    def log_dir(self, node_id: int) -> Path:
        return self.cluster.brokers[node_id].props.parent / "logs"

    def running(self, node_id: int) -> bool:
        proc = self.cluster.brokers[node_id].proc
        return proc is not None and proc.poll() is None

    def kill_node(self, node_id: int) -> None:
        self.control.kill_node(node_id)

    def start_node(self, node_id: int) -> None:
        self.control.start_node(node_id)


#: DumpLogSegments names the file it dumps; the rest of its output is the log's content
_DUMPING = re.compile(r"^Dumping (\S+)$", re.M)


def dump_logs(files: list[Path]) -> dict[Path, str]:
    """Kafka's DumpLogSegments (``kafka-dump-log --deep-iteration --print-data-log``) of each
    segment file, one JVM for all of them: file -> its listing, batch by batch and record by
    record (offsets, epochs, producer ids and sequences, CRCs, keys and values)."""
    from compat.kafka_tools import run_tool

    if not files:
        return {}
    proc = run_tool("kafka-dump-log", ["--deep-iteration", "--print-data-log", "--files",
                                       ",".join(str(f) for f in files)], check=True)
    parts = _DUMPING.split(proc.stdout)
    # [before, path1, text1, path2, text2, ...]
    return {Path(path): text.strip() for path, text in zip(parts[1::2], parts[2::2], strict=True)}


def replica_dumps(target, topic: str, partitions: int) -> dict[int, dict[int, str]]:
    """partition -> node id -> the DumpLogSegments listing of all its segments, in order."""
    where: dict[Path, tuple[int, int]] = {}
    for p in range(partitions):
        for n in target.node_ids:
            for f in sorted((target.log_dir(n) / f"{topic}-{p}").glob("*.log")):
                where[f] = (p, n)
    out: dict[int, dict[int, str]] = {p: {n: "" for n in target.node_ids}
                                      for p in range(partitions)}
    for f, text in dump_logs(list(where)).items():
        p, n = where[f]
        out[p][n] += f"{f.name}\n{text}\n"
    return out


def dump_differences(target, topic: str, partitions: int) -> list[str]:
    """What differs between the replicas' DumpLogSegments listings (empty: identical)."""
    problems = []
    for p, by_node in replica_dumps(target, topic, partitions).items():
        first = min(by_node)
        for n, text in by_node.items():
            if not text:
                problems.append(f"{topic}-{p}: node {n} has no segment")
            elif text != by_node[first]:
                a, b = by_node[first].splitlines(), text.splitlines()
                i = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                         min(len(a), len(b)))
                problems.append(
                    f"{topic}-{p}: node {n} ({target.kind(n)}) differs from node {first} "
                    f"({target.kind(first)}) at line {i}: {b[i] if i < len(b) else '<end>'!r}"
                    f" vs {a[i] if i < len(a) else '<end>'!r}")
    return problems
