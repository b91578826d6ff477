"""One task per client connection: frames in, dispatch, responses out, in request order.

Requests on a connection are handled one at a time, as Kafka does.  Bytes that break the
protocol close this connection with one log line; a handler bug is logged with its traceback
and closes this connection too.  The broker keeps serving everyone else either way.
"""

from __future__ import annotations

import errno
import logging
import os
import struct
import time

import trio

from pykafkad.dispatch import BROKER, HANDLERS_BY_KIND, ListenerKind, RequestContext
from pykafkad.faults import control
from pykafkad.faults.node import NodeFaults
from pykafkad.faults.partition_table import peer_node_id
from pykafkad.faults.responses import error_answer, set_topic_errors
from pykafkad.handlers.config_forwarding import CONFIG_APIS, forward_configs
from pykafkad.handlers.create_topics_forwarding import CREATE_TOPICS_KEY, forward_create_topics
from pykafkad.kraft.error_responses import error_response
from pykafkad.security.api_acls import cluster_gate_allows
from pykafkad.security.authenticator import AuthenticationClosed
from pykafkad.security.cluster_denial import Processors, Received, channel_info, denial_message
from pykafkad.security.principal import ANONYMOUS, KafkaPrincipal
from wire.errors import ErrorCode, RemoteProtocolError
from wire.framing import API_VERSIONS_KEY, encode_response, frame_size, read_request_header
from wire.primitives import Reader

log = logging.getLogger("pykafkad.connection")

RECEIVE_SIZE = 256 * 1024


class ConnectionClosed(Exception):
    pass


class Connection:
    def __init__(self, stream: trio.SocketStream, broker, server, *,
                 listener_name: str = "PLAINTEXT", listener_kind: ListenerKind = BROKER,
                 tls: trio.SSLStream | None = None, sasl=None,
                 principal: KafkaPrincipal = ANONYMOUS) -> None:
        #: what requests are read from and answers written to (the TLS stream on SSL listeners)
        self.stream = tls or stream
        #: the TCP stream underneath (sendfile needs its socket; TLS cannot use it)
        self.socket_stream = stream
        #: who is on the other end: the certificate's or SASL's principal, or User:ANONYMOUS
        self.principal = principal
        #: a SASL listener's authenticator (pykafkad.security.authenticator), else None
        self.sasl = sasl
        self.broker = broker
        self.server = server
        #: the listener this connection was accepted on, and so the APIs it may call
        self.listener_name = listener_name
        self.listener_kind = listener_kind
        self.handlers = HANDLERS_BY_KIND[listener_kind]
        self.buf = bytearray()
        try:
            host, port = stream.socket.getpeername()[:2]
            self.peer = f"{host}:{port}"
        except OSError:
            host, self.peer = "?", "?"
        #: the client's address, as the authorizer matches ACL hosts
        self.client_host = host
        self.idle_scope: trio.CancelScope | None = None
        #: True while a request is being handled (shutdown waits for it)
        self.in_flight = False
        #: fault control: the rules by API key (consulted once per request), who is on the
        #: other end (set from the first request: a peer node's id, or None for a client)
        self.faults = getattr(server, "faults", None) or NodeFaults()
        self.fault_rules = self.faults.rules.by_key
        self.classified = False
        self.peer_node: int | None = None
        self.control = False
        #: cancelled to close this connection (a partition table that now refuses it)
        self.scope = trio.CancelScope()
        #: this connection as Kafka's network layer names it (processor, connection id)
        self.channel = channel_info(_processors(server, broker, listener_kind), stream.socket,
                                    listener_name, _security_protocol(server, listener_name))

    async def _fill(self, n: int) -> None:
        while len(self.buf) < n:
            data = await self.stream.receive_some(max(RECEIVE_SIZE, n - len(self.buf)))
            if not data:
                raise ConnectionClosed
            self.buf += data
            if self.idle_scope is not None:  # any bytes are activity
                self.idle_scope.deadline = trio.current_time() + self.server.max_idle_s

    async def read_frame(self) -> memoryview:
        await self._fill(4)
        size = frame_size(self.buf, self.broker.config["socket.request.max.bytes"])
        await self._fill(4 + size)
        frame = bytes(self.buf[4 : 4 + size])
        del self.buf[: 4 + size]
        return memoryview(frame)

    async def send_chunks(self, chunks: list) -> None:
        for chunk in chunks:
            if isinstance(chunk, (bytes, bytearray, memoryview)):
                await self.stream.send_all(chunk)
            else:
                await self._sendfile(chunk)

    async def _sendfile(self, region) -> None:
        """Zero-copy send of a segment file region; falls back to pread when unsupported."""
        file = region.file  # held while sending: out of descriptors a region may let go of it
        if file is None:  # read into memory to free its descriptor (log/region.py)
            await self.stream.send_all(region.data)
            return
        if self.stream is not self.socket_stream:  # TLS encrypts in user space
            await self.stream.send_all(os.pread(file.fileno(), len(region), region.offset))
            return
        sock = self.stream.socket
        offset, remaining, fd = region.offset, len(region), file.fileno()
        while remaining > 0:
            try:
                sent = os.sendfile(sock.fileno(), fd, offset, remaining)
            except BlockingIOError:
                await trio.lowlevel.wait_writable(sock)
                continue
            except OSError as e:
                if e.errno in (errno.EINVAL, errno.ENOSYS):
                    await self.stream.send_all(os.pread(fd, remaining, offset))
                    return
                raise
            if sent == 0:
                raise ConnectionClosed
            offset += sent
            remaining -= sent

    async def serve(self) -> None:
        with self.scope:
            await self._serve()

    async def _serve(self) -> None:
        try:
            while not self.server.shutting_down:
                # connections.max.idle.ms: silent that long between requests (or inside one)
                # and the connection is closed, as Kafka's Selector does; shutdown cancels too
                deadline = trio.current_time() + self.server.max_idle_s
                with trio.CancelScope(deadline=deadline) as scope:
                    self.idle_scope = scope
                    frame = await self.read_frame()
                self.idle_scope = None
                if scope.cancelled_caught:
                    if not self.server.shutting_down:
                        log.debug("closing connection from %s: idle", self.peer)
                    break
                self.in_flight = True
                await self.handle_frame(frame)
                self.in_flight = False
        except ConnectionClosed:
            pass
        except RemoteProtocolError as e:
            log.warning("closing connection from %s: protocol error: %s", self.peer, e)
        except (trio.BrokenResourceError, trio.ClosedResourceError, ConnectionError):
            pass
        except Exception:
            log.exception("closing connection from %s after an internal error", self.peer)
        finally:
            with trio.move_on_after(1) as cleanup:
                cleanup.shield = True
                await self.stream.aclose()

    async def handle_frame(self, frame: memoryview) -> None:
        if self.sasl is not None and self.sasl.expects_unwrapped_token:
            await self._unwrapped_token(bytes(frame))
            return
        r = Reader(frame)
        header = read_request_header(r)
        if not self.classified:
            self._classify(header)
        if self.sasl is not None and self.sasl.intercepts(header.api_key):
            await self._authenticate(header, r)
            return
        handler = self.handlers.get(header.api_key)
        if handler is None or not handler.served_by(self.broker):
            if self.control and header.api_key == control.CONTROL_API_KEY:
                answer = self.faults.handle(bytes(frame[r.pos:]))
                await self.stream.send_all(control.encode_answer(header.correlation_id, answer))
                return
            # Kafka: "not enabled" on this listener, the connection closes
            raise RemoteProtocolError(
                f"API key {header.api_key} is not served on {self.listener_kind.value} "
                f"listener {self.listener_name}")
        version = header.api_version
        ctx = RequestContext(self.broker, header, self.peer, self.listener_name,
                             self.listener_kind, getattr(self, "principal", None),
                             Received(self.channel, len(frame), len(frame), header_size=r.pos))
        if not handler.min_version <= version <= handler.max_version:
            if header.api_key != API_VERSIONS_KEY:
                raise RemoteProtocolError(
                    f"unsupported version {version} of API {header.api_key}"
                )
            # ApiVersions: answer a v0 body with UNSUPPORTED_VERSION (clients fall back)
            response = await handler.fn(ctx, None)
            version = 0
        else:
            request = handler.request_type.read(r, version)
            forwarding = (getattr(self.broker, "forwarding", None)
                          if self.listener_kind is BROKER else None)
            rules = self.fault_rules.get(header.api_key)
            if rules:
                response = await self._fault(rules, ctx, handler, request)
                if response is not _NO_FAULT:
                    if response is not None:
                        await self.send_chunks(encode_response(
                            header.correlation_id, header.api_key, version, response))
                    return
            quotas = getattr(self.broker, "client_quotas", None)
            started = time.perf_counter_ns() if quotas is not None and quotas.active else 0
            if not cluster_gate_allows(ctx):
                response = error_response(request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                                          denial_message(header.api_key, ctx.received))
            elif forwarding is not None and header.api_key in CONFIG_APIS:
                # checked here first, as Kafka's ConfigAdminManager.preprocess
                response = await forward_configs(ctx, frame, request, forwarding,
                                                 handler.response_type)
                ctx.throttle_ms = _throttle_time(response)
            elif forwarding is not None and header.api_key == CREATE_TOPICS_KEY:
                response = await forward_create_topics(ctx, frame, request, forwarding,
                                                       handler.response_type)
                ctx.throttle_ms = _throttle_time(response)
            elif forwarding is not None and forwarding.forwards(header.api_key):
                # a KRaft broker: the active controller answers (Kafka's ForwardingManager)
                response = await forwarding.forward(ctx, frame, request, handler.response_type)
                # the controller's throttle (its mutation quota) mutes this client
                # (RequestHandlerHelper.sendForwardedResponse)
                ctx.throttle_ms = _throttle_time(response)
            else:
                response = await handler.fn(ctx, request)
            if started and response is not None:  # quotas: one check when none is set
                await self._send_throttled(quotas, header, version, len(frame), response,
                                           time.perf_counter_ns() - started, ctx.throttle_ms)
                return
        if response is None:
            return
        chunks = encode_response(header.correlation_id, header.api_key, version, response)
        await self.send_chunks(chunks)
        if ctx.throttle_ms > 0:  # muted: nothing more is read from the client meanwhile
            await trio.sleep(ctx.throttle_ms / 1000)

    async def _send_throttled(self, quotas, header, version, request_size, response,
                              handler_ns, other_throttle_ms: int = 0) -> None:
        """Records the request against its quotas, answers with ``throttle_time_ms`` and then
        mutes this connection for that long (KIP-219: the client backs off on its own and the
        broker reads nothing more from it meanwhile).  ``other_throttle_ms``: a throttle time
        the response already carries (the controller's), the longer of the two applies."""
        principal = getattr(self, "principal", None)
        user = principal.name if principal is not None else "ANONYMOUS"
        client_id = header.client_id or ""
        chunks = encode_response(header.correlation_id, header.api_key, version, response)
        size = request_size
        if header.api_key == FETCH_KEY:
            size = sum(len(c) for c in chunks)
        throttle_ms = quotas.throttle_ms(header.api_key, user, client_id, size, handler_ns)
        if throttle_ms > other_throttle_ms and hasattr(response, "throttle_time_ms"):
            if header.api_key == FETCH_KEY:  # a throttled fetch answers nothing (KafkaApis)
                quotas.fetch.unrecord(quotas.quotas, user, client_id, size)
                response.responses = []
            response.throttle_time_ms = throttle_ms
            chunks = encode_response(header.correlation_id, header.api_key, version, response)
        await self.send_chunks(chunks)
        throttle_ms = max(throttle_ms, other_throttle_ms)
        if throttle_ms > 0:
            await trio.sleep(throttle_ms / 1000)

    async def _authenticate(self, header, r: Reader) -> None:
        """SaslHandshake / SaslAuthenticate before the session (or to renew it); a failed
        exchange is answered, then the connection closes."""
        from wire.messages import API_KEYS

        spec = API_KEYS.get(header.api_key)
        if spec is None or header.api_key not in (17, 36):
            self.sasl.handle(header.api_key, header.api_version, None)  # raises: closes
        handler = self.handlers.get(header.api_key)
        if handler is None or not handler.min_version <= header.api_version <= handler.max_version:
            raise RemoteProtocolError(f"unsupported version {header.api_version} of API "
                                      f"{header.api_key} during SASL authentication")
        request = spec.request_type().read(r, header.api_version)
        try:
            response = self.sasl.handle(header.api_key, header.api_version, request)
        except AuthenticationClosed:
            raise ConnectionClosed from None
        await self.send_chunks(encode_response(
            header.correlation_id, header.api_key, header.api_version, response))
        if self.sasl.closing:
            raise ConnectionClosed
        if self.sasl.authenticated:
            self.principal = self.sasl.principal

    async def _unwrapped_token(self, token: bytes) -> None:
        """A SASL token after SaslHandshake v0: no request header, the answer is the bare
        challenge behind its length; a failure closes the connection unanswered."""
        try:
            challenge = self.sasl.unwrapped_token(token)
        except AuthenticationClosed:
            raise ConnectionClosed from None
        await self.stream.send_all(struct.pack(">i", len(challenge)) + challenge)
        if self.sasl.authenticated:
            self.principal = self.sasl.principal

    def _classify(self, header) -> None:
        """Who this connection is from, by its first request: a control client (loopback,
        faults enabled), a peer node (its inter-node client id) or a client; refused at once
        when the partition table cuts that one off."""
        self.classified = True
        faults = self.faults
        if header.api_key == control.CONTROL_API_KEY:
            self.control = faults.enabled and control.is_loopback(self.peer)
            return
        self.peer_node = peer_node_id(header.client_id)
        if faults.partition.refuses_inbound(self.peer_node):
            raise ConnectionClosed

    def refused_by_partition(self) -> bool:
        return (self.classified and not self.control
                and self.faults.partition.refuses_inbound(self.peer_node))

    async def _fault(self, rules, ctx, handler, request):
        """Applies the first matching fault rule: waits its delay, then closes the connection,
        answers its error, or (a delay only) lets the request through (``_NO_FAULT``)."""
        topics = getattr(self.broker, "topics", None)

        def name_for_id(topic_id: bytes):
            topic = topics.by_id.get(topic_id) if topics is not None else None
            return getattr(topic, "name", None)

        rule = self.faults.rules.take(rules, request, name_for_id)
        if rule is None:
            return _NO_FAULT
        log.info("fault rule %d fires on %s from %s", rule.rule_id,
                 type(request).__name__, self.peer)
        if rule.delay_ms:
            await trio.sleep(rule.delay_ms / 1000)
        if rule.close:
            raise ConnectionClosed
        if rule.error is None:
            return _NO_FAULT
        if header_is_metadata(request):  # per-topic errors on the real answer
            response = await handler.fn(ctx, request)
            return set_topic_errors(response, rule.error, rule.topic)
        return error_answer(request, rule.error, ctx.version)


_NO_FAULT = object()
FETCH_KEY = 1


def _processors(server, broker, kind: ListenerKind) -> Processors:
    """The server's network processors for ``kind``'s listeners: a KRaft controller's are
    its own SocketServer in Kafka, numbered apart from the broker's."""
    table = getattr(server, "processors", None)
    if table is None:
        table = server.processors = {}
    if kind not in table:
        try:
            threads = broker.config["num.network.threads"]
        except (AttributeError, KeyError, TypeError):
            threads = 3  # Kafka's default
        table[kind] = Processors(threads)
    return table[kind]


def _security_protocol(server, listener_name: str) -> str:
    for spec in getattr(server, "listeners", None) or ():
        if getattr(spec, "name", None) == listener_name:
            return getattr(spec, "security_protocol", "PLAINTEXT")
    return "PLAINTEXT"


def _throttle_time(response) -> int:
    return getattr(response, "throttle_time_ms", 0) or 0


def header_is_metadata(request) -> bool:
    return type(request).__name__ == "MetadataRequest"
