"""``pykafkad cluster``: several KRaft node processes on one machine, as a Kafka cluster is run.

Each node gets its own data dir ``DIR/node-<id>`` with a ``server.properties`` written as
Kafka's would be (process.roles, node.id, controller.quorum.voters, named listeners ...), and
runs as its own ``pykafkad --config`` process, so a test can stop, kill and restart one node
while the others keep serving.  Ports are consecutive from ``--port``: the brokers' PLAINTEXT
ports first, then the controller listeners'.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from pykafkad.metadata.properties import META_PROPERTIES

DEFAULT_DATA_DIR = "./pykafkad-cluster"
_PR_SET_PDEATHSIG = 1
#: what the fork server imports once, so that a node process starts without importing them
#: (about half a second of CPU each, most of a node's start)
PRELOAD = ["trio", "pykafkad.cli", "pykafkad.broker", "pykafkad.server", "pykafkad.handlers",
           "pykafkad.kraft.kraft_server", "pykafkad.launcher"]
READY_TIMEOUT_S = 60
STOP_TIMEOUT_S = 30
READY_MARK = "listening on "
#: what a node logs once its broker part has stopped after SIGUSR1 (stop_all waits for it);
#: here, not in kraft_server, so that a launcher need not import the node's code to stop it
CLUSTER_STOP_MARK = "ready for the cluster to stop"
#: how long stop_all waits for the brokers' controlled shutdowns before stopping the nodes
CLUSTER_STOP_BROKERS_S = 3.0
TAIL_LINES = 20


@dataclass
class NodeSpec:
    """One node's place in the cluster: its roles, ports and directory."""

    node_id: int
    roles: tuple[str, ...]
    host: str
    port: int | None  # the PLAINTEXT (broker) port; None on a dedicated controller
    controller_port: int
    data_dir: Path
    #: how many entries ``log.dirs`` has (JBOD): ``data``, then ``data-2``, ``data-3`` ...
    log_dir_count: int = 1

    @property
    def properties_path(self) -> Path:
        return self.data_dir / "server.properties"

    @property
    def log_dirs(self) -> list[Path]:
        return [self.data_dir / ("data" if i == 0 else f"data-{i + 1}")
                for i in range(self.log_dir_count)]


def plan_cluster(nodes: int, controllers: int, base_port: int, data_dir: Path,
                 host: str = "127.0.0.1", ports: list[int] | None = None,
                 log_dirs: int = 1) -> list[NodeSpec]:
    """``nodes`` brokers (combined broker+controller when ``controllers`` is 0), then
    ``controllers`` dedicated controllers; ids from 1.  ``ports`` (free ones, for tests)
    replaces the consecutive numbering from ``base_port``; each broker has ``log_dirs`` log
    dirs."""
    if nodes < 1 and controllers < 1:
        raise ValueError("a cluster needs at least one node")
    count = nodes + (controllers or nodes)
    ports = ports or [base_port + i for i in range(count)]
    specs = []
    for i in range(nodes):
        roles = ("broker",) if controllers else ("broker", "controller")
        specs.append(NodeSpec(i + 1, roles, host, ports[i], ports[nodes + i] if not controllers
                              else 0, data_dir / f"node-{i + 1}", log_dirs))
    for j in range(controllers):
        node_id = nodes + j + 1
        specs.append(NodeSpec(node_id, ("controller",), host, None, ports[nodes + j],
                              data_dir / f"node-{node_id}"))
    voters = [s for s in specs if "controller" in s.roles]
    if controllers:  # brokers reach the dedicated controllers' listener
        for s in specs:
            if s.controller_port == 0:
                s.controller_port = voters[0].controller_port
    return specs


def server_properties(spec: NodeSpec, specs: list[NodeSpec],
                      overrides: Mapping[str, str] | None = None,
                      dynamic_quorum: bool = False) -> dict[str, str]:
    """The node's server.properties, with the keys and layout of Kafka's
    config/server.properties for a KRaft node (``dynamic_quorum``: KIP-853's
    controller.quorum.bootstrap.servers instead of controller.quorum.voters)."""
    voters = ",".join(f"{s.node_id}@{s.host}:{s.controller_port}"
                      for s in specs if "controller" in s.roles)
    quorum_key = "controller.quorum.voters"
    if dynamic_quorum:
        quorum_key = "controller.quorum.bootstrap.servers"
        voters = ",".join(f"{s.host}:{s.controller_port}"
                          for s in specs if "controller" in s.roles)
    brokers = sum(1 for s in specs if "broker" in s.roles)
    listeners, advertised = [], []
    if "broker" in spec.roles:
        listeners.append(f"PLAINTEXT://{spec.host}:{spec.port}")
        advertised.append(f"PLAINTEXT://{spec.host}:{spec.port}")
    if "controller" in spec.roles:
        listeners.append(f"CONTROLLER://{spec.host}:{spec.controller_port}")
        advertised.append(f"CONTROLLER://{spec.host}:{spec.controller_port}")
    props = {
        "process.roles": ",".join(spec.roles),
        "node.id": str(spec.node_id),
        quorum_key: voters,
        "listeners": ",".join(listeners),
        "advertised.listeners": ",".join(advertised),
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "log.dirs": ",".join(str(d) for d in spec.log_dirs),
        # Kafka's defaults need 3 brokers; fewer get what they can hold
        "offsets.topic.replication.factor": str(min(3, brokers)),
        "transaction.state.log.replication.factor": str(min(3, brokers)),
        "transaction.state.log.min.isr": str(min(2, brokers)),
    }
    if "broker" in spec.roles:
        props["inter.broker.listener.name"] = "PLAINTEXT"
    # the fault control channel (loopback only) for pause/isolate tests: pykafkad/faults
    props["pykafkad.faults.enable"] = "true"
    props.update(overrides or {})
    return props


def free_ports(count: int) -> list[int]:
    """Ports free now, all different (held open together so the OS cannot repeat one)."""
    socks = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def write_properties(path: Path, props: Mapping[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))


def random_cluster_id() -> str:
    """Kafka's Uuid.randomUuid().toString() (never starting with "-", which a command line
    would take for an option), as ``pykafkad random-uuid`` prints it."""
    from pykafkad.metadata.properties import random_uuid

    return random_uuid()


def initial_controllers(specs: list[NodeSpec]) -> str:
    """``--initial-controllers`` for a dynamic quorum of the plan's controllers, each with a
    new directory id (its format takes its own from the list)."""
    from pykafkad.metadata.properties import random_uuid

    return ",".join(f"{s.node_id}@{s.host}:{s.controller_port}:{random_uuid()}"
                    for s in specs if "controller" in s.roles)


def format_node(spec: NodeSpec, cluster_id: str, initial: str | None = None) -> None:
    """Formats a node's storage unless it is formatted already (a restart keeps its cluster
    id), as ``pykafkad format --cluster-id ID --config server.properties`` (Kafka's
    ``kafka-storage format``) would; run in this process, its report kept out of the
    launcher's output."""
    from pykafkad.kraft.broker_lifecycle import format_feature_flags
    from pykafkad.metadata.storage_tool import main as storage_main

    log_dir = spec.data_dir / "data"
    if (log_dir / META_PROPERTIES).exists():
        return
    args = ["format", "--cluster-id", cluster_id, "--config", str(spec.properties_path)]
    for flag in format_feature_flags():  # the feature levels pykafkad's brokers support
        args += ["--feature", flag]
    if initial is not None:  # a dynamic quorum
        args += (["--initial-controllers", initial] if "controller" in spec.roles
                 else ["--no-initial-controllers"])
    report = io.StringIO()
    with contextlib.redirect_stdout(report), contextlib.redirect_stderr(report):
        status = storage_main(args)
    if status != 0:
        raise RuntimeError(f"formatting node {spec.node_id} failed: {report.getvalue().strip()}")


_context: multiprocessing.context.BaseContext | None = None


def node_context() -> multiprocessing.context.BaseContext:
    """Nodes are forked from one fork server per launcher process, which has imported
    pykafkad already; each node is still a process of its own (own interpreter state, pid,
    session and log), as ``python -m pykafkad`` would be."""
    global _context
    if _context is None:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(PRELOAD)
        _context = ctx
    return _context


def start_fork_server() -> None:
    """Starts the fork server now, without waiting for it: its imports (most of a cold
    start) then run in its own process while this one writes and formats the nodes' storage;
    the first node's start waits for them."""
    from multiprocessing import forkserver

    node_context()
    forkserver.ensure_running()


@contextlib.contextmanager
def _without_main_module():
    """multiprocessing re-imports the parent's ``__main__`` in every child it starts (spawn
    and forkserver do), so a script that calls run_cluster at its top level, with no
    ``if __name__ == "__main__"`` guard, would start clusters from its nodes.  A node needs
    nothing of its parent's main module: the preparation data it gets leaves it out."""
    from multiprocessing import spawn

    original = spawn.get_preparation_data

    def preparation_data(name: str) -> dict:
        data = original(name)
        data.pop("init_main_from_name", None)
        data.pop("init_main_from_path", None)
        return data

    spawn.get_preparation_data = preparation_data
    try:
        yield
    finally:
        spawn.get_preparation_data = original


def run_node(argv: list[str], log_path: str) -> None:
    """A node process's body: its own session, stdout and stderr to its log, then exactly
    what ``pykafkad --config server.properties`` does; the exit status is the command's."""
    os.setsid()
    _forget_the_fork_server()
    fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    die_with_parent()
    from pykafkad.cli import main

    code = main(argv)
    sys.stdout.flush()
    sys.stderr.flush()
    sys.exit(code)


def _forget_the_fork_server() -> None:
    """multiprocessing hands every child the write end of the pipe that keeps the fork server
    alive while it has clients; a node is no client of it, and holding that end would keep the
    fork server (and so, through die_with_parent, the node itself) alive after the launcher
    was killed."""
    from multiprocessing import forkserver

    server = forkserver._forkserver
    if server._forkserver_alive_fd is not None:
        os.close(server._forkserver_alive_fd)
        server._forkserver_alive_fd = None


class NodeChild:
    """A node process with the part of Popen's interface the launcher uses."""

    def __init__(self, process: multiprocessing.process.BaseProcess):
        self.process = process

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        return self.process.exitcode

    def poll(self) -> int | None:
        return self.process.exitcode

    def wait(self, timeout: float | None = None) -> int:
        self.process.join(timeout)
        if self.process.exitcode is None:
            raise subprocess.TimeoutExpired("pykafkad node", timeout)
        return self.process.exitcode

    def send_signal(self, sig: int) -> None:
        if self.process.exitcode is None:
            os.kill(self.process.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


@dataclass
class NodeProcess:
    """One node's process; ``start`` again reuses the same data dir."""

    spec: NodeSpec
    proc: NodeChild | None = None
    log_offset: int = 0
    #: stopped by SIGSTOP (pause) and not yet resumed
    paused: bool = False

    @property
    def node_id(self) -> int:
        return self.spec.node_id

    @property
    def host(self) -> str:
        return self.spec.host

    @property
    def port(self) -> int | None:
        return self.spec.port

    @property
    def controller_port(self) -> int:
        return self.spec.controller_port

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def log_path(self) -> Path:
        return self.spec.data_dir / "pykafkad.log"

    @property
    def endpoints(self) -> list[tuple[str, int]]:
        """Every host:port this node listens on (what peers connect to); a broker's
        ``controller_port`` is the controllers' when they are dedicated, not its own."""
        own_controller_port = self.controller_port if "controller" in self.spec.roles else None
        return [(self.host, p) for p in (self.port, own_controller_port) if p]

    @property
    def faults(self):
        """This node's fault rules (pykafkad.faults.client.FaultControl), over its first
        listener's control channel."""
        from pykafkad.faults.client import FaultControl

        return FaultControl(self.host, self.port or self.controller_port)

    def pause(self) -> None:
        """SIGSTOP: the process stops answering but keeps its sockets (a long GC pause)."""
        if self.running and not self.paused:
            self.proc.send_signal(signal.SIGSTOP)
            self.paused = True

    def resume(self) -> None:
        if self.paused:
            self.paused = False
            if self.running:
                self.proc.send_signal(signal.SIGCONT)

    def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log_offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        process = node_context().Process(
            target=run_node, name=f"pykafkad-node-{self.node_id}",
            args=(["--config", str(self.spec.properties_path)], str(self.log_path)))
        with _without_main_module():
            process.start()
        self.proc = NodeChild(process)

    def printed_ready(self) -> bool:
        """This start's process printed its ready line."""
        return self.logged(READY_MARK)

    def logged(self, mark: str) -> bool:
        """This start's process wrote ``mark`` to its log."""
        try:
            with open(self.log_path, "rb") as f:
                f.seek(self.log_offset)
                return mark.encode() in f.read()
        except OSError:
            return False

    def tail(self, lines: int = TAIL_LINES) -> str:
        try:
            with open(self.log_path, "rb") as f:
                f.seek(self.log_offset)
                text = f.read().decode(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> None:
        """SIGTERM (a clean shutdown), then SIGKILL if it is not done in time."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        self.resume()  # a paused node handles its SIGTERM once it runs again
        self.wait_stopped(timeout)

    def wait_stopped(self, timeout: float = STOP_TIMEOUT_S) -> None:
        """Waits for the signalled process to exit, SIGKILL if it is not done in time (no
        second SIGTERM: one arriving while the node exits would end it by the signal)."""
        if self.proc is None:
            return
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()

    def kill(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.kill()
        self.proc.wait()
        self.paused = False


class NodeFailedError(RuntimeError):
    """A node exited while the cluster was starting: the message ends with its last log lines."""

    def __init__(self, node: NodeProcess):
        self.node = node
        super().__init__(f"node {node.node_id} exited with status {node.proc.returncode} at "
                         f"start; its last lines ({node.log_path}):\n{node.tail()}")


def die_with_parent() -> None:
    """On Linux the kernel sends a node SIGTERM (a clean shutdown) when its parent, the fork
    server, goes, and the fork server goes with the launcher, even after a kill -9: no node
    outlives its cluster.  A node whose parent is gone already stops at once."""
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if parent == 1 or os.getppid() != parent:
        sys.exit(0)


#: how long one readiness probe (a Metadata request to a broker) may take
READY_PROBE_TIMEOUT_S = 2.0


def nodes_ready(nodes: list[NodeProcess]) -> bool:
    """The readiness check: every node's process printed its own ready line, which a node with
    the broker role prints once the active controller has registered and unfenced it (as
    Kafka's broker starts serving only then): every broker registered and unfenced; and each
    of those brokers already lists all of them in Metadata (its metadata caught up), so that a
    client's first Metadata sees the whole cluster."""
    return all(n.printed_ready() for n in nodes) and brokers_see_each_other(nodes)


def _probe_security(node: NodeProcess):
    """How the readiness probe logs in to a node's broker listener: as its brokers reach each
    other (a SASL or TLS inter-broker listener), else None."""
    from pykafkad.config import BrokerConfig
    from pykafkad.security.client import inter_broker_security

    return inter_broker_security(BrokerConfig.from_sources(node.spec.properties_path))


def brokers_see_each_other(nodes: list[NodeProcess]) -> bool:
    import trio

    brokers = [n for n in nodes if "broker" in n.spec.roles and n.port]
    expected = {n.node_id for n in brokers}

    async def check() -> bool:
        from pykafkad.network.client import NodeClient
        from wire.messages.metadata_request import MetadataRequest

        for n in brokers:
            client = NodeClient(n.host, n.port, connect_timeout_s=READY_PROBE_TIMEOUT_S,
                                security=_probe_security(n))
            try:
                resp = await client.request(
                    MetadataRequest(topics=[], allow_auto_topic_creation=False),
                    timeout_s=READY_PROBE_TIMEOUT_S)
            finally:
                await client.aclose()
            if not expected <= {b.node_id for b in resp.brokers}:
                return False
        return True

    from pykafkad.network.client import NodeUnavailableError

    try:
        return trio.run(check)
    except (NodeUnavailableError, trio.TooSlowError, OSError):
        return False


def wait_ready(nodes: list[NodeProcess], timeout: float = READY_TIMEOUT_S,
               ready: Callable[[list[NodeProcess]], bool] = nodes_ready) -> None:
    """Polls ``ready`` until it holds; raises NodeFailedError as soon as a node exits."""
    deadline = time.monotonic() + timeout
    while True:
        for n in nodes:
            if n.proc is not None and n.proc.poll() is not None:
                raise NodeFailedError(n)
        if ready(nodes):
            return
        if time.monotonic() > deadline:
            raise TimeoutError("nodes not ready in time: " + ", ".join(
                str(n.node_id) for n in nodes if not n.printed_ready()))
        time.sleep(0.02)  # polling other processes' log files: nothing to wait on


class Cluster:
    """The node processes of one cluster, created from a plan and formatted once."""

    def __init__(self, specs: list[NodeSpec], overrides: Mapping[str, str] | None = None,
                 cluster_id: str | None = None,
                 ready: Callable[[list[NodeProcess]], bool] = nodes_ready,
                 dynamic_quorum: bool = False):
        self.specs = specs
        #: the readiness check start_all waits for (see nodes_ready)
        self.ready = ready
        self.cluster_id = cluster_id or random_cluster_id()
        self.nodes: dict[int, NodeProcess] = {s.node_id: NodeProcess(s) for s in specs}
        #: node id -> "nodes" or "clients": who it is cut off from (isolate / heal)
        self.isolated: dict[int, str] = {}
        start_fork_server()
        initial = initial_controllers(specs) if dynamic_quorum else None
        for s in specs:
            write_properties(s.properties_path,
                             server_properties(s, specs, overrides, dynamic_quorum))
            format_node(s, self.cluster_id, initial)

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"{s.host}:{s.port}" for s in self.specs if s.port is not None)

    def start_all(self, timeout: float = READY_TIMEOUT_S) -> None:
        for n in self.nodes.values():
            n.start()
        try:
            wait_ready(list(self.nodes.values()), timeout, self.ready)
        except BaseException:
            self.stop_all()
            raise

    def node(self, node_id: int) -> NodeProcess:
        try:
            return self.nodes[node_id]
        except KeyError:
            raise ValueError(f"no node {node_id} (nodes: "
                             f"{', '.join(map(str, self.nodes))})") from None

    def pause(self, node_id: int) -> None:
        self.node(node_id).pause()

    def resume(self, node_id: int) -> None:
        """SIGCONT; a table changed while it was paused reaches it now."""
        self.node(node_id).resume()
        self.apply_partitions([node_id])

    def start(self, node_id: int, timeout: float = READY_TIMEOUT_S) -> None:
        """Starts a stopped node again on its own data dir and waits until it is ready; an
        isolation in force applies to it again."""
        node = self.node(node_id)
        if node.running:
            raise RuntimeError(f"node {node_id} is running")
        node.start()
        wait_ready([node], timeout, self.ready)
        self.apply_partitions([node_id])

    def isolate(self, node_id: int, from_clients: bool = False) -> None:
        """Cuts the node off from the other nodes (both ways) while clients still reach
        it, or (``from_clients``) from the clients while the nodes still talk."""
        from pykafkad.faults.isolation import FROM_CLIENTS, FROM_NODES

        self.node(node_id)
        self.isolated[node_id] = FROM_CLIENTS if from_clients else FROM_NODES
        self.apply_partitions()

    def heal(self, node_id: int | None = None) -> None:
        """Ends the node's isolation (None: every node's)."""
        if node_id is None:
            self.isolated.clear()
        else:
            self.node(node_id)
            self.isolated.pop(node_id, None)
        self.apply_partitions()

    def apply_partitions(self, node_ids=None) -> None:
        """Sends every running, unpaused node (or those of ``node_ids``) its partition
        table; a paused node gets its table when resumed, a stopped one when started."""
        from pykafkad.faults.isolation import partition_tables

        tables = partition_tables({n.node_id: n.endpoints for n in self.nodes.values()},
                                  self.isolated)
        for node_id, table in tables.items():
            node = self.nodes[node_id]
            if (node_ids is None or node_id in node_ids) and node.running and not node.paused:
                node.faults.set_partition(**table)

    def stop_all(self) -> None:
        """Stops the whole cluster as Kafka's test harness does: every broker's controlled
        shutdown at once while all controllers still run, then the raft parts, all at once,
        none waiting for peers that stop too. A paused node is resumed and isolations healed
        first; a node not done in time is killed."""
        for n in self.nodes.values():
            n.resume()
        if self.isolated:  # a cut-off broker's controlled shutdown would wait for nothing
            from pykafkad.faults.control import FaultControlError

            with contextlib.suppress(FaultControlError):
                self.heal()
        running = [n for n in self.nodes.values() if n.running]
        # only a node that printed its ready line handles SIGUSR1 (before, it would end it)
        ready = [n for n in running if n.printed_ready()]
        for n in ready:
            n.proc.send_signal(signal.SIGUSR1)
        deadline = time.monotonic() + CLUSTER_STOP_BROKERS_S
        waiting = list(ready)
        while waiting and time.monotonic() < deadline:
            waiting = [n for n in waiting if n.running and not n.logged(CLUSTER_STOP_MARK)]
            if waiting:
                time.sleep(0.01)  # polling other processes' log files: nothing to wait on
        for n in running:
            n.proc.send_signal(signal.SIGTERM)
        for n in running:
            n.wait_stopped()


def parse_args(argv: list[str]) -> argparse.Namespace:
    from pykafkad.faults.cluster_cli import COMMANDS_EPILOG

    p = argparse.ArgumentParser(prog="pykafkad cluster",
                                description="Runs a pykafkad KRaft cluster on this machine.",
                                epilog=COMMANDS_EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nodes", type=int, default=3,
                   help="brokers (combined broker+controller nodes unless --controllers)")
    p.add_argument("--controllers", type=int, default=0,
                   help="dedicated controller nodes (default 0: every node is both)")
    p.add_argument("--port", type=int, default=9092,
                   help="first port: brokers' PLAINTEXT ports, then controller ports "
                        "(0: any free ports)")
    p.add_argument("--host", default="127.0.0.1", help="address every listener binds")
    p.add_argument("--data-dir", default=DEFAULT_DATA_DIR, help="holds node-<id>/ per node")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="a broker property for every node (repeatable)")
    p.add_argument("--dynamic-quorum", action="store_true",
                   help="a dynamic controller quorum (KIP-853): controller.quorum."
                        "bootstrap.servers, formatted with --initial-controllers")
    return p.parse_args(argv)


def main(argv: list[str]) -> int:
    from pykafkad.faults.cluster_control import COMMANDS

    if argv[:1] and argv[0] in COMMANDS:  # a command to a running cluster
        from pykafkad.faults.cluster_cli import main as command_main

        return command_main(argv, DEFAULT_DATA_DIR)
    args = parse_args(argv)
    overrides = {}
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            print(f"pykafkad cluster: --set expects KEY=VALUE, got {item!r}", file=sys.stderr)
            return 2
        overrides[key.strip()] = value.strip()
    if args.nodes < 0 or args.controllers < 0 or args.nodes + args.controllers < 1:
        print("pykafkad cluster: --nodes and --controllers must leave at least one node",
              file=sys.stderr)
        return 2
    count = args.nodes + (args.controllers or args.nodes)
    if not 0 <= args.port <= 65536 - count:
        print(f"pykafkad cluster: --port must be between 0 and {65536 - count} for {count} "
              f"ports, got {args.port}", file=sys.stderr)
        return 2
    ports = free_ports(count) if args.port == 0 else None  # 0: any free ports
    specs = plan_cluster(args.nodes, args.controllers, args.port, Path(args.data_dir), args.host,
                         ports)
    cluster = Cluster(specs, overrides, dynamic_quorum=args.dynamic_quorum)
    stop = {"signal": None}

    def on_signal(signum, _frame) -> None:
        stop["signal"] = signum

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        cluster.start_all()
    except NodeFailedError as e:
        print(f"pykafkad cluster: {e}", file=sys.stderr)
        return 1
    except TimeoutError as e:
        print(f"pykafkad cluster: {e}", file=sys.stderr)
        return 1
    reported: set[int] = set()
    from pykafkad.faults.cluster_control import ClusterControlServer

    control = ClusterControlServer(cluster, Path(args.data_dir))
    control.start()
    print(f"pykafkad cluster ready: {len(specs)} nodes, bootstrap servers "
          f"{cluster.bootstrap_servers}", flush=True)
    try:
        while stop["signal"] is None:
            time.sleep(0.2)  # the handler only records the signal
            for n in cluster.nodes.values():
                if n.running:  # started again: a later exit is news
                    reported.discard(n.node_id)
                elif n.node_id not in reported and n.node_id not in control.quiet:
                    reported.add(n.node_id)
                    print(f"pykafkad cluster: node {n.node_id} exited with status "
                          f"{n.proc.returncode}; its last lines ({n.log_path}):\n{n.tail()}",
                          file=sys.stderr, flush=True)
    finally:
        control.close()
        cluster.stop_all()
    return 0
