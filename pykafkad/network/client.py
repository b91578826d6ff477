"""NodeClient: one node's requests to another node (Raft, registration, heartbeats, follower
fetches, forwarding), over the same wire codec the broker serves with.

One connection per target node, opened lazily and reopened on the next request after a failure.
Requests are pipelined: several tasks may each have a request in flight; responses come back in
order (Kafka answers a connection's requests in order), and whichever waiting task reads the next
frame hands it to its owner, so no background task (and no nursery) is needed.  The version of
each API is the highest both sides serve, from one ApiVersions exchange per connection.
"""

from __future__ import annotations

import logging
import struct
from collections import deque
from dataclasses import dataclass, field
from itertools import count
from typing import Any

import trio

from wire.errors import ErrorCode
from wire.framing import (
    API_VERSIONS_KEY,
    RequestHeader,
    encode_request,
    read_response_header,
    request_header_version,
    response_header_version,
)
from wire.messages import API_KEYS
from wire.primitives import Reader

log = logging.getLogger("pykafkad.network")

_SIZE = struct.Struct(">i")
#: the ApiVersions version asked first; an older peer answers UNSUPPORTED_VERSION in v0
API_VERSIONS_VERSION = 3
#: a response larger than this is a broken peer, not a response
MAX_RESPONSE_BYTES = 512 * 1024 * 1024
#: set while a fault test cuts this node off from some peers (pykafkad/faults/node.py):
#: ``refuse_endpoint(host, port)`` true means requests to that node fail as unreachable
refuse_endpoint = None


class NodeUnavailableError(Exception):
    """The node cannot be reached, or the connection dropped with requests in flight."""


class AuthenticationError(NodeUnavailableError):
    """The peer refused this node's credentials (SASL_AUTHENTICATION_FAILED and its message):
    to the callers, a peer they cannot use now, retried as Kafka's NetworkClient retries."""


class UnsupportedVersionError(Exception):
    """The peer serves no version of the API that this codec knows."""


@dataclass
class _Pending:
    correlation_id: int
    api_key: int
    version: int
    done: trio.Event = field(default_factory=trio.Event)
    response: Any = None
    error: BaseException | None = None
    #: the caller gave up (cancelled or timed out): the response is read and dropped
    abandoned: bool = False


class _Connection:
    def __init__(self, stream: trio.SocketStream):
        self.stream = stream
        self.send_lock = trio.Lock()
        self.receive_lock = trio.Lock()
        self.pending: deque[_Pending] = deque()
        self.buffer = bytearray()
        self.broken: BaseException | None = None
        #: api key -> (min, max) the peer serves
        self.versions: dict[int, tuple[int, int]] = {}

    async def _read_exactly(self, n: int) -> bytes:
        while len(self.buffer) < n:
            chunk = await self.stream.receive_some(max(65536, n - len(self.buffer)))
            if not chunk:
                raise NodeUnavailableError("connection closed by the peer")
            self.buffer += chunk
        data = bytes(self.buffer[:n])
        del self.buffer[:n]
        return data

    async def read_one(self) -> None:
        """Reads the next response frame and hands it to the oldest pending request."""
        (size,) = _SIZE.unpack(await self._read_exactly(4))
        if size < 0 or size > MAX_RESPONSE_BYTES:
            raise NodeUnavailableError(f"response frame of {size} bytes")
        frame = await self._read_exactly(size)
        if not self.pending:
            raise NodeUnavailableError("a response arrived with no request in flight")
        p = self.pending.popleft()
        r = Reader(memoryview(frame))
        got = read_response_header(r, response_header_version(p.api_key, p.version))
        if got != p.correlation_id:
            raise NodeUnavailableError(f"correlation id {got} answered, {p.correlation_id} expected")
        try:
            p.response = API_KEYS[p.api_key].response_type().read(r, p.version)
        except Exception as e:  # a response this codec cannot read fails that request only
            p.error = e
        p.done.set()

    def fail(self, error: BaseException) -> None:
        self.broken = error
        while self.pending:
            p = self.pending.popleft()
            p.error = error
            p.done.set()


class NodeClient:
    """Requests to one node at ``host:port``."""

    def __init__(self, host: str, port: int, *, client_id: str = "pykafkad",
                 connect_timeout_s: float = 10.0, security=None):
        #: pykafkad.security.client.ClientSecurity for a secured peer listener, else None
        self.security = security
        self.host = host
        self.port = port
        self.client_id = client_id
        self.connect_timeout_s = connect_timeout_s
        self._ids = count(1)
        self._conn: _Connection | None = None
        self._connect_lock = trio.Lock()

    def __repr__(self) -> str:
        return f"NodeClient({self.host}:{self.port})"

    async def request(self, request: Any, version: int | None = None, timeout_s: float = 30.0) -> Any:
        """Sends ``request`` (a generated request object) and returns the decoded response.
        ``version`` None picks the highest version both sides serve."""
        if refuse_endpoint is not None and refuse_endpoint(self.host, self.port):
            await self.aclose()
            raise NodeUnavailableError(f"{self.host}:{self.port} is cut off (fault isolation)")
        with trio.fail_after(timeout_s):
            conn = await self._connection()
            api_key = request.API_KEY
            if version is None:
                version = self._negotiate(conn, api_key)
            return await self._exchange(conn, api_key, version, request)

    async def api_versions(self) -> dict[int, tuple[int, int]]:
        """{api key: (min, max)} the peer serves (from this connection's ApiVersions)."""
        conn = await self._connection()
        return dict(conn.versions)

    async def aclose(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.fail(NodeUnavailableError("client closed"))
            with trio.CancelScope(shield=True):
                await conn.stream.aclose()

    def _negotiate(self, conn: _Connection, api_key: int) -> int:
        spec = API_KEYS[api_key]
        theirs = conn.versions.get(api_key)
        if theirs is None:
            raise UnsupportedVersionError(f"{self} does not serve {spec.name}")
        low, high = max(theirs[0], spec.lowest_version), min(theirs[1], spec.highest_version)
        if low > high:
            raise UnsupportedVersionError(
                f"{self} serves {spec.name} v{theirs[0]}-{theirs[1]}, this codec "
                f"v{spec.lowest_version}-{spec.highest_version}")
        return high

    async def _connection(self) -> _Connection:
        conn = self._conn
        if conn is not None and conn.broken is None:
            return conn
        async with self._connect_lock:
            if self._conn is not None and self._conn.broken is None:
                return self._conn
            if self._conn is not None:
                with trio.CancelScope(shield=True):
                    await self._conn.stream.aclose()
                self._conn = None
            try:
                with trio.fail_after(self.connect_timeout_s):
                    stream = await trio.open_tcp_stream(self.host, self.port)
                    if self.security is not None:
                        stream = await self.security.wrap(stream, self.host)
            except (OSError, trio.TooSlowError, trio.BrokenResourceError) as e:
                raise NodeUnavailableError(f"cannot connect to {self.host}:{self.port}: {e}") from e
            conn = _Connection(stream)
            try:
                conn.versions = await self._fetch_api_versions(conn)
                if self.security is not None:
                    await self.security.authenticate(
                        lambda key, version, req: self._exchange(conn, key, version, req))
            except AuthenticationError as e:  # Kafka logs these at ERROR
                log.error("authentication to %s:%d failed: %s", self.host, self.port, e)
                with trio.CancelScope(shield=True):
                    await stream.aclose()
                raise
            except BaseException:
                with trio.CancelScope(shield=True):
                    await stream.aclose()
                raise
            self._conn = conn
            return conn

    async def _fetch_api_versions(self, conn: _Connection) -> dict[int, tuple[int, int]]:
        req_type = API_KEYS[API_VERSIONS_KEY].request_type()
        from pykafkad import __version__

        req = req_type(client_software_name="pykafkad", client_software_version=__version__)
        resp = await self._exchange(conn, API_VERSIONS_KEY, API_VERSIONS_VERSION, req)
        if resp.error_code == ErrorCode.UNSUPPORTED_VERSION:
            resp = await self._exchange(conn, API_VERSIONS_KEY, 0, req_type())
        if resp.error_code:
            raise NodeUnavailableError(f"ApiVersions to {self.host}:{self.port} failed: "
                                       f"{ErrorCode(resp.error_code).name}")
        return {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}

    async def _exchange(self, conn: _Connection, api_key: int, version: int, request: Any) -> Any:
        if conn.broken is not None:
            raise NodeUnavailableError(str(conn.broken))
        p = _Pending(next(self._ids), api_key, version)
        header = RequestHeader(api_key, version, p.correlation_id, self.client_id,
                               request_header_version(api_key, version))
        frame = encode_request(header, request)
        async with conn.send_lock:
            conn.pending.append(p)
            try:
                await conn.stream.send_all(frame)
            except BaseException as e:  # a partial frame leaves the stream unusable
                self._break(conn, e)
                self._reraise(e)
        try:
            while not p.done.is_set():
                async with conn.receive_lock:
                    if p.done.is_set():
                        break
                    try:
                        await conn.read_one()
                    except BaseException as e:  # cancelled mid-frame, or the peer went away
                        self._break(conn, e)
                        self._reraise(e)
        except BaseException:
            p.abandoned = True
            raise
        if p.error is not None:
            if isinstance(p.error, NodeUnavailableError | trio.Cancelled):
                raise NodeUnavailableError(str(p.error))
            raise p.error
        return p.response

    def _break(self, conn: _Connection, error: BaseException) -> None:
        if conn.broken is None:
            log.debug("connection to %s:%s broken: %r", self.host, self.port, error)
            conn.fail(NodeUnavailableError(f"connection to {self.host}:{self.port} lost: {error!r}"))
        if self._conn is conn:
            self._conn = None
            getattr(conn.stream, "transport_stream", conn.stream).socket.close()

    @staticmethod
    def _reraise(error: BaseException) -> None:
        """Cancellation and NodeUnavailableError go up as they are; socket errors become
        NodeUnavailableError."""
        if isinstance(error, OSError | trio.BrokenResourceError | trio.ClosedResourceError):
            raise NodeUnavailableError(str(error)) from error
        raise error
