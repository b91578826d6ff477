"""A real pykafkad broker for tests: in-process on a free port with a temporary data dir.

    with run_broker() as kafka:
        producer = KafkaProducer(bootstrap_servers=kafka.bootstrap_servers)

The broker runs its own trio loop on a background thread, so synchronous clients can be used
from the test.  Installing pykafkad registers the ``pykafkad_broker`` pytest fixture.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import trio

from pykafkad.launcher import NodeProcess as NodeHandle

STARTUP_TIMEOUT_S = 30


@dataclass
class RunningBroker:
    host: str
    port: int
    data_dir: Path
    broker: object
    server: object
    trio_token: object = None

    @property
    def bootstrap_servers(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def faults(self):
        """This broker's fault rules (pykafkad.faults.client.FaultControl): add / list /
        clear."""
        from pykafkad.faults.client import FaultControl

        return FaultControl(self.host, self.port)

    def call(self, fn, *args):
        """Runs ``fn(*args)`` on the broker's own thread, between requests (e.g. a retention
        pass in a test), so that it never races the broker's request handling."""
        return trio.from_thread.run_sync(fn, *args, trio_token=self.trio_token)


@contextlib.contextmanager
def run_broker(
    data_dir: str | Path | None = None,
    *,
    config: dict[str, str] | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    clock: Callable[[], int] | None = None,
    security_protocol: str = "PLAINTEXT",
) -> Iterator[RunningBroker]:
    """Starts a broker and stops it cleanly on exit (files flushed, clean-shutdown marker).

    ``clock`` (milliseconds) replaces the wall clock for retention and timeouts in tests.
    ``security_protocol`` (SSL, SASL_PLAINTEXT, SASL_SSL) names the one listener and secures
    it with the ssl.* / sasl.* settings in ``config`` (see pykafkad.security.testkit).
    """
    tmp = None
    if data_dir is None:
        tmp = tempfile.mkdtemp(prefix="pykafkad-")
        data_dir = tmp
    path = Path(data_dir)
    extra = {"clock": clock} if clock is not None else {}
    settings = dict(config or {})
    if security_protocol != "PLAINTEXT" and "listeners" not in settings:
        settings["listeners"] = f"{security_protocol}://{host}:{port}"
    node = open_single_node(settings, path, host, port, **extra)
    broker, server = node.broker, node.server
    server.faults.enabled = True  # the control channel is always on in tests
    started = threading.Event()
    state: dict = {}

    async def main() -> None:
        state["token"] = trio.lowlevel.current_trio_token()
        async with trio.open_nursery() as nursery:
            state["port"] = await nursery.start(node.run)
            started.set()

    def thread_main() -> None:
        try:
            trio.run(main)
        except BaseException as e:  # surfaced to the test below
            state["error"] = e
            started.set()

    thread = threading.Thread(target=thread_main, name="pykafkad", daemon=True)
    thread.start()
    started.wait(STARTUP_TIMEOUT_S)
    if "error" in state:
        raise state["error"]
    try:
        yield RunningBroker(host, state["port"], path, broker, server, state["token"])
    finally:
        with contextlib.suppress(trio.RunFinishedError):
            trio.from_thread.run_sync(node.request_shutdown, trio_token=state["token"])
        thread.join(STARTUP_TIMEOUT_S)
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def open_single_node(settings: dict[str, str], data_dir: Path, host: str, port: int, **extra):
    """The one-voter KRaft node (pykafkad.kraft.single_node) on ``data_dir``, formatted on
    first use, not yet started; a config with process.roles is taken as it is."""
    from pykafkad.broker import Broker
    from pykafkad.config import BrokerConfig
    from pykafkad.kraft.kraft_server import KafkaRaftServer
    from pykafkad.kraft.single_node import format_if_new, one_voter_settings
    from pykafkad.server import Server, served_listeners

    config = BrokerConfig.from_sources(None, settings)
    one_voter = not config.is_kraft
    if one_voter:
        config = BrokerConfig.from_sources(None, {**settings, **one_voter_settings(config, host, port)})
    format_if_new(config, data_dir)
    broker = Broker(config, data_dir, **extra)
    broker.internal_controller_listener = one_voter
    server = Server(broker, "", 0, listeners=served_listeners(config, host, port))
    return KafkaRaftServer(config, data_dir, broker, server)


class ClusterHandle:
    """A running ``run_cluster``: ``nodes`` by id (NodeHandle: node_id, host, port,
    controller_port, pid, running, faults), and per-node stop / kill / start / pause /
    resume / isolate / heal."""

    def __init__(self, cluster, data_dir: Path):
        self._cluster = cluster
        self.data_dir = data_dir

    @property
    def bootstrap_servers(self) -> str:
        return self._cluster.bootstrap_servers

    @property
    def cluster_id(self) -> str:
        return self._cluster.cluster_id

    @property
    def nodes(self) -> dict[int, NodeHandle]:
        return self._cluster.nodes

    def stop(self, node_id: int) -> None:
        """SIGTERM, then waits for the node to exit."""
        self.nodes[node_id].stop()

    def kill(self, node_id: int) -> None:
        """SIGKILL: no clean shutdown."""
        self.nodes[node_id].kill()

    def start(self, node_id: int, timeout: float = STARTUP_TIMEOUT_S) -> None:
        """Starts a stopped node again on its own data dir and waits until it is ready."""
        self._cluster.start(node_id, timeout)

    def pause(self, node_id: int) -> None:
        """SIGSTOP: the node stops answering but keeps its sockets, like a long GC pause."""
        self._cluster.pause(node_id)

    def resume(self, node_id: int) -> None:
        """SIGCONT after ``pause``."""
        self._cluster.resume(node_id)

    def isolate(self, node_id: int, from_clients: bool = False) -> None:
        """Cuts the node off from the other nodes, both ways, while clients still reach it;
        ``from_clients``: cuts the clients off while the nodes still talk.  Done inside the
        nodes (pykafkad/faults/partition_table.py), no root needed."""
        self._cluster.isolate(node_id, from_clients)

    def heal(self, node_id: int | None = None) -> None:
        """Ends ``isolate`` for the node (None: for every node)."""
        self._cluster.heal(node_id)


@contextlib.contextmanager
def run_cluster(
    nodes: int = 3,
    controllers: int = 0,
    *,
    config: dict[str, str] | None = None,
    data_dir: str | Path | None = None,
    host: str = "127.0.0.1",
    log_dirs: int = 1,
) -> Iterator[ClusterHandle]:
    """Starts ``nodes`` KRaft node processes (combined broker+controller, or brokers plus
    ``controllers`` dedicated controllers) on free ports, each with its own data dir under
    ``data_dir`` (a temporary one by default; ``log_dirs`` log dirs in it for a broker), and
    stops them all on exit."""
    from pykafkad.launcher import Cluster, free_ports, plan_cluster

    tmp = None
    if data_dir is None:
        tmp = tempfile.mkdtemp(prefix="pykafkad-cluster-")
        data_dir = tmp
    path = Path(data_dir)
    ports = free_ports(nodes + (controllers or nodes))
    cluster = Cluster(plan_cluster(nodes, controllers, 0, path, host, ports, log_dirs),
                      config)
    try:
        cluster.start_all(STARTUP_TIMEOUT_S)
        yield ClusterHandle(cluster, path)
    finally:
        cluster.stop_all()
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)




@dataclass
class SecuredBroker:
    """A broker with one SASL_SSL listener (every SCRAM mechanism and PLAIN), its CA and
    users, and ready client settings: ``clients["confluent"]`` / ``["kafka-python"]`` /
    ``["java"]`` for ``user`` (SCRAM-SHA-512 unless another mechanism was asked for)."""

    broker: RunningBroker
    ca: object
    users: dict
    clients: dict

    @property
    def bootstrap_servers(self) -> str:
        return self.broker.bootstrap_servers


@contextlib.contextmanager
def run_secured_broker(users: dict[str, str] | None = None, *, user: str | None = None,
                       mechanism: str = "SCRAM-SHA-512",
                       config: dict[str, str] | None = None) -> Iterator[SecuredBroker]:
    """A throw-away CA and broker certificate, a SASL_SSL broker whose SCRAM users (and PLAIN
    JAAS users) are ``users``, and the matching client settings."""
    from pykafkad.security.testkit import (
        CertificateAuthority,
        add_scram_users,
        broker_ssl_config,
        client_settings,
        plain_jaas,
    )

    users = dict(users or {"alice": "alice-secret"})
    user = user or next(iter(users))
    certs = tempfile.mkdtemp(prefix="pykafkad-certs-")
    try:
        ca = CertificateAuthority(Path(certs))
        settings = {
            **broker_ssl_config(ca, ca.issue("localhost", server=True)),
            "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
            "listener.name.sasl_ssl.plain.sasl.jaas.config": plain_jaas(users, user, users[user]),
            **(config or {})}
        with run_broker(config=settings, security_protocol="SASL_SSL") as b:
            add_scram_users(b, users)
            yield SecuredBroker(b, ca, users, client_settings(
                "SASL_SSL", ca, mechanism=mechanism, username=user, password=users[user]))
    finally:
        shutil.rmtree(certs, ignore_errors=True)
