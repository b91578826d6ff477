"""Listeners, the connection nursery, periodic housekeeping and graceful shutdown.

Nothing protocol-specific lives here.  Shutdown stops accepting, lets every connection finish
the request it is handling (idle reads are cancelled), then flushes and closes the logs.
"""

from __future__ import annotations

import inspect
import logging
import math
import socket
from collections.abc import Callable
from dataclasses import dataclass

import trio

from pykafkad.connection import Connection
from pykafkad.connection_quotas import ConnectionQuotas
from pykafkad.connection_rate import ConnectionRates
from pykafkad.dispatch import BROKER, CONTROLLER, ListenerKind, load_handlers
from pykafkad.faults.node import NodeFaults, faults_enabled
from pykafkad.log.housekeeping import (
    apply_retention,
    clean_all_in_thread,
    remove_deleted_dirs,
)
from pykafkad.security.listener import ListenerSecurity

log = logging.getLogger("pykafkad")

#: how long shutdown waits for in-flight requests before cancelling them
SHUTDOWN_GRACE_S = 5.0
#: how often deleted topics' directories are looked for, to be removed in a worker thread
DELETED_DIRS_CHECK_MS = 1000


async def open_listeners(
    host: str, port: int, *, backlog: int = 50, receive_buffer: int = -1
) -> list[trio.SocketListener]:
    """Binds every address of ``host`` on one port (port 0: the first bound port, for all).

    ``backlog`` is socket.listen.backlog.size; ``receive_buffer`` (socket.receive.buffer.bytes,
    -1 = the OS's) is set on the listening socket, so accepted sockets inherit it, as Kafka's
    Acceptor does."""
    infos = await trio.socket.getaddrinfo(
        host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )
    listeners: list[trio.SocketListener] = []
    seen = set()
    try:
        for family, type_, proto, _, sockaddr in infos:
            if (family, sockaddr[0]) in seen:
                continue
            seen.add((family, sockaddr[0]))
            sock = trio.socket.socket(family, type_, proto)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            if receive_buffer != -1:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
            addr = (sockaddr[0], port, *sockaddr[2:])
            try:
                await sock.bind(addr)
            except OSError:
                sock.close()
                if listeners:
                    continue  # e.g. ::1 unavailable while 127.0.0.1 works
                raise
            sock.listen(backlog)
            if port == 0:
                port = sock.getsockname()[1]
            listeners.append(trio.SocketListener(sock))
    except BaseException:
        for lst in listeners:
            await lst.aclose()
        raise
    return listeners


@dataclass
class ServedListener:
    """One entry of ``listeners`` to bind: its name, address, API set and what it advertises
    (``advertised_host`` None: the bound host, or localhost for a wildcard; ``advertised_port``
    None: the bound port).  ``port`` becomes the bound port once listening (0: a free one)."""

    name: str
    host: str
    port: int
    kind: ListenerKind = BROKER
    advertised_host: str | None = None
    advertised_port: int | None = None
    #: its listener.security.protocol.map entry: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL
    security_protocol: str = "PLAINTEXT"


def served_listeners(config, host_override: str | None = None,
                     port_override: int | None = None) -> list[ServedListener]:
    """Every listener of a KRaft node's config: controller.listener.names serve the controller
    APIs, the others the broker's, each advertising its advertised.listeners entry."""
    controllers = set(config.controller_listener_names)
    advertised = {}
    if config.is_set("advertised.listeners") and "broker" in config.node_roles:
        advertised = {e.listener_name: e for e in config.advertised_listeners}
    out = []
    for e in config.listeners:
        kind = CONTROLLER if e.listener_name in controllers else BROKER
        adv = advertised.get(e.listener_name)
        out.append(ServedListener(
            e.listener_name, e.host or "", e.port, kind,
            adv.host if adv else None, (adv.port or None) if adv else None,
            e.security_protocol))
    first_broker = next((s for s in out if s.kind is BROKER), None)
    if first_broker is not None:  # --host / --port apply to the first broker listener
        if host_override is not None:
            first_broker.host = host_override
        if port_override is not None:
            first_broker.port = port_override
    return out


class Server:
    def __init__(self, broker, host: str, port: int, advertised_host: str | None = None,
                 advertised_port: int | None = None, *,
                 listeners: list[ServedListener] | None = None):
        self.broker = broker
        #: what is bound: ``listeners``, or one PLAINTEXT broker listener at host:port
        self.listeners = listeners or [
            ServedListener("PLAINTEXT", host, port, BROKER, advertised_host, advertised_port)]
        main = next((s for s in self.listeners if s.kind is BROKER), self.listeners[0])
        self.host = main.host
        self.port = main.port
        self.advertised_host = main.advertised_host
        #: advertised.listeners' port when it differs from the bound one (NAT, proxies)
        self.advertised_port = main.advertised_port
        self.shutting_down = False
        self.connections: set[Connection] = set()
        self._shutdown = trio.Event()
        self._drained = trio.Event()
        config = broker.config
        #: socket.send.buffer.bytes / socket.receive.buffer.bytes: applied when set; unset,
        #: the OS tunes them (Kafka's 100 KiB defaults would cap a localhost transfer)
        self.send_buffer = config["socket.send.buffer.bytes"] if config.is_set(
            "socket.send.buffer.bytes") else -1
        self.receive_buffer = config["socket.receive.buffer.bytes"] if config.is_set(
            "socket.receive.buffer.bytes") else -1
        #: connections.max.idle.ms in seconds (negative: never), as Kafka's Selector
        idle_ms = config["connections.max.idle.ms"]
        self.max_idle_s = idle_ms / 1000 if idle_ms >= 0 else math.inf
        self.quotas = ConnectionQuotas(config)
        #: each listener's TLS context and SASL settings (pykafkad/security), by name
        self.security = {spec.name: ListenerSecurity.from_config(config, spec.name,
                                                                 spec.security_protocol)
                         for spec in self.listeners}
        #: fault rules and the partition table (pykafkad/faults), changed over the control
        #: channel when pykafkad.faults.enable=true
        self.faults = NodeFaults(faults_enabled(config),
                                 config["node.id"] if config.is_set("node.id") else -1)
        self.faults.on_partition_change = self._close_refused_connections
        #: a KRaft controller's listeners are its own SocketServer in Kafka, with their own
        #: connection quotas: a node's broker side dialling its controller takes no client slot
        self.controller_quotas = ConnectionQuotas(config)
        # connection creation rates, one set per SocketServer as the counts: the broker's
        # listeners see the ip quotas (connection_creation_rate) of the broker's metadata
        broker_names = [s.name for s in self.listeners if s.kind is BROKER]
        inter_broker = _inter_broker_name(config)
        self.rates = ConnectionRates(config, broker_names, inter_broker,
                                     ip_quotas=self._client_quotas)
        self.controller_rates = ConnectionRates(
            config, [s.name for s in self.listeners if s.kind is not BROKER])
        load_handlers()

    def _close_refused_connections(self) -> None:
        for conn in list(self.connections):
            if conn.refused_by_partition():
                conn.scope.cancel()

    def request_shutdown(self) -> None:
        self._shutdown.set()

    async def _serve_connection(self, stream: trio.SocketStream, ip: str,
                                spec: ServedListener) -> None:
        stream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.send_buffer != -1:
            stream.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.send_buffer)
        security = self.security[spec.name]
        tls, principal = await security.start_tls(stream, self.max_idle_s)
        if tls is False:  # the handshake failed: Kafka logs it and closes
            self.quotas.release(ip)
            return
        conn = Connection(stream, self.broker, self, listener_name=spec.name,
                          listener_kind=spec.kind, tls=tls,
                          sasl=security.authenticator(self.broker), principal=principal)
        self.connections.add(conn)
        try:
            await conn.serve()
        finally:
            self.connections.discard(conn)
            self._quotas_of(spec).release(ip)
            if self.shutting_down and not self.connections:
                self._drained.set()

    def _quotas_of(self, spec: ServedListener) -> ConnectionQuotas:
        return self.quotas if spec.kind is BROKER else self.controller_quotas

    def _client_quotas(self):
        quotas = getattr(self.broker, "client_quotas", None)
        return quotas.quotas if quotas is not None else {}

    async def _close_later(self, stream: trio.SocketStream, delay_ms: int) -> None:
        """A connection over its IP's connection_creation_rate: held unread, then closed
        (Kafka's acceptor keeps it among its throttled sockets until the throttle ends)."""
        with trio.move_on_after(delay_ms / 1000):
            await self._shutdown.wait()
        await stream.aclose()

    async def _accept(self, listener: trio.SocketListener, nursery: trio.Nursery,
                      spec: ServedListener) -> None:
        quotas = self._quotas_of(spec)
        rates = self.rates if spec.kind is BROKER else self.controller_rates
        while True:
            await quotas.wait_for_slot()  # max.connections: the backlog holds the rest
            try:
                stream = await listener.accept()
            except OSError as e:  # EMFILE and friends: keep serving who is connected
                log.warning("accept failed: %s", e)
                await trio.sleep(0.1)
                continue
            try:
                ip = stream.socket.getpeername()[0]
            except OSError:  # already gone
                await stream.aclose()
                continue
            delay_ms = rates.record_connection(spec.name)
            if delay_ms > 0:  # max.connection.creation.rate: this acceptor waits
                log.debug("delaying the connection from %s for %d ms (connection creation "
                          "rate)", ip, delay_ms)
                try:
                    await trio.sleep(delay_ms / 1000)
                except BaseException:  # shutting down: the held connection goes too
                    with trio.CancelScope(shield=True):
                        await stream.aclose()
                    raise
            throttle_ms = rates.ip_throttle(spec.name, ip)
            if throttle_ms > 0:  # connection_creation_rate of the ip
                log.debug("Delaying closing of connection from /%s for %d ms", ip, throttle_ms)
                nursery.start_soon(self._close_later, stream, throttle_ms)
                continue
            if not quotas.admit(ip):  # max.connections.per.ip
                await stream.aclose()
                continue
            nursery.start_soon(self._serve_connection, stream, ip, spec)

    async def _periodically(self, interval_ms: int, task: Callable[[], object], what: str) -> None:
        """Runs ``task`` every ``interval_ms``; a failure is logged. A task that returns an
        awaitable (work handed to a thread) is awaited before the next interval starts."""
        while True:
            await trio.sleep(interval_ms / 1000)
            try:
                pending = task()
                if inspect.isawaitable(pending):
                    await pending
            except Exception:
                log.exception("%s failed", what)

    def _start_timers(self, nursery: trio.Nursery) -> None:
        broker, config = self.broker, self.broker.config
        nursery.start_soon(self._periodically, config["log.retention.check.interval.ms"],
                           lambda: apply_retention(broker.logs, broker.clock()),
                           "retention check")
        nursery.start_soon(
            self._periodically,
            config["transaction.abort.timed.out.transaction.cleanup.interval.ms"],
            broker.run_transaction_timers, "transaction timers")
        # Kafka's isr-expiration task: followers not caught up within the lag time leave the ISR
        nursery.start_soon(self._periodically, max(config["replica.lag.time.max.ms"] // 2, 1),
                           broker.replicas.maybe_shrink_isr, "ISR expiration")
        nursery.start_soon(self._periodically,
                           max(config["replica.high.watermark.checkpoint.interval.ms"], 1),
                           broker.replicas.checkpoint_high_watermarks_in_thread,
                           "high watermark checkpoint")
        broker.logs.defer_dir_removal = True
        nursery.start_soon(self._periodically, DELETED_DIRS_CHECK_MS,
                           lambda: remove_deleted_dirs(broker.logs), "removing deleted logs")
        if config["log.cleaner.enable"]:
            nursery.start_soon(self._periodically, config["log.cleaner.backoff.ms"],
                               lambda: clean_all_in_thread(broker.logs, broker.clock()),
                               "log cleaner")

    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        bound: list[tuple[trio.SocketListener, ServedListener]] = []
        try:
            for spec in self.listeners:
                opened = await open_listeners(
                    spec.host, spec.port, backlog=self.broker.config["socket.listen.backlog.size"],
                    receive_buffer=self.receive_buffer)
                bound.extend((lst, spec) for lst in opened)
                spec.port = opened[0].socket.getsockname()[1]
        except BaseException:
            for lst, _ in bound:
                await lst.aclose()
            raise
        main = next((s for s in self.listeners if s.kind is BROKER), self.listeners[0])
        self.port = main.port
        for spec in self.listeners:
            if spec.kind is not BROKER:
                continue
            adv = spec.advertised_host
            if not adv:
                adv = "localhost" if spec.host in ("", "0.0.0.0", "::") else spec.host
            self.broker.set_endpoint(adv, spec.advertised_port or spec.port, spec.name)
        listeners = [lst for lst, _ in bound]
        try:
            async with trio.open_nursery() as connections:
                async with trio.open_nursery() as accepting:
                    for lst, spec in bound:
                        accepting.start_soon(self._accept, lst, connections, spec)
                    self._start_timers(accepting)
                    accepting.start_soon(self.broker.groups.run_timers)
                    accepting.start_soon(self.broker.txn_coordinator.channel.run)
                    accepting.start_soon(self.broker.txn_verification.run)
                    accepting.start_soon(self.broker.open_logs_in_background)
                    task_status.started(self.port)
                    await self._shutdown.wait()
                    self.broker.logs.cleaner.stopping.set()  # a running round gives up
                    accepting.cancel_scope.cancel()
                for lst in listeners:
                    await lst.aclose()
                self.shutting_down = True
                self.broker.shutting_down = True
                self.broker.groups.shutdown()  # answers parked JoinGroup/SyncGroup requests
                for conn in list(self.connections):
                    if conn.idle_scope is not None:
                        conn.idle_scope.cancel()
                self.broker.notify_append()
                if self.connections:
                    with trio.move_on_after(SHUTDOWN_GRACE_S):
                        await self._drained.wait()
                connections.cancel_scope.cancel()
        finally:
            self.broker.close()
            log.info("pykafkad stopped")


def _inter_broker_name(config) -> str | None:
    try:
        endpoint = config.inter_broker_listener
    except Exception:  # a config without listeners (tests building a bare Server)
        return None
    return endpoint.listener_name if endpoint is not None else None
