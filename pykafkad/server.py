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

import trio

from pykafkad.connection import Connection
from pykafkad.connection_quotas import ConnectionQuotas
from pykafkad.dispatch import load_handlers
from pykafkad.log.housekeeping import (
    apply_retention,
    clean_all_in_thread,
    remove_deleted_dirs,
)

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


class Server:
    def __init__(self, broker, host: str, port: int, advertised_host: str | None = None,
                 advertised_port: int | None = None):
        self.broker = broker
        self.host = host
        self.port = port
        self.advertised_host = advertised_host
        #: advertised.listeners' port when it differs from the bound one (NAT, proxies)
        self.advertised_port = advertised_port
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
        load_handlers()

    def request_shutdown(self) -> None:
        self._shutdown.set()

    async def _serve_connection(self, stream: trio.SocketStream, ip: str) -> None:
        stream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.send_buffer != -1:
            stream.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.send_buffer)
        conn = Connection(stream, self.broker, self)
        self.connections.add(conn)
        try:
            await conn.serve()
        finally:
            self.connections.discard(conn)
            self.quotas.release(ip)
            if self.shutting_down and not self.connections:
                self._drained.set()

    async def _accept(self, listener: trio.SocketListener, nursery: trio.Nursery) -> None:
        while True:
            await self.quotas.wait_for_slot()  # max.connections: the backlog holds the rest
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
            if not self.quotas.admit(ip):  # max.connections.per.ip
                await stream.aclose()
                continue
            nursery.start_soon(self._serve_connection, stream, ip)

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
        broker.logs.defer_dir_removal = True
        nursery.start_soon(self._periodically, DELETED_DIRS_CHECK_MS,
                           lambda: remove_deleted_dirs(broker.logs), "removing deleted logs")
        if config["log.cleaner.enable"]:
            nursery.start_soon(self._periodically, config["log.cleaner.backoff.ms"],
                               lambda: clean_all_in_thread(broker.logs, broker.clock()),
                               "log cleaner")

    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        listeners = await open_listeners(
            self.host, self.port, backlog=self.broker.config["socket.listen.backlog.size"],
            receive_buffer=self.receive_buffer)
        self.port = listeners[0].socket.getsockname()[1]
        adv = self.advertised_host
        if not adv:
            adv = "localhost" if self.host in ("", "0.0.0.0", "::") else self.host
        self.broker.set_endpoint(adv, self.advertised_port or self.port)
        try:
            async with trio.open_nursery() as connections:
                async with trio.open_nursery() as accepting:
                    for lst in listeners:
                        accepting.start_soon(self._accept, lst, connections)
                    self._start_timers(accepting)
                    accepting.start_soon(self.broker.groups.run_timers)
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
