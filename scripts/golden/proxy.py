"""A TCP proxy between the clients and the broker that hands each exchange to a recorder.

Frames pass through unchanged; each response is paired with its request by correlation id
(a client may pipeline requests on one connection) and handed to the recorder as raw bytes
without the size prefix.
"""

from __future__ import annotations

import contextlib
import socket
import threading

from .common import log
from .recorder import Recorder


def _recv_exact(sock: socket.socket, n: int) -> bytes | None:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def _frames(sock: socket.socket):
    while True:
        prefix = _recv_exact(sock, 4)
        if prefix is None:
            return
        body = _recv_exact(sock, int.from_bytes(prefix, "big", signed=True))
        if body is None:
            return
        yield prefix, body


class Proxy:
    """Forwards frames both ways unchanged; pairs each response with its request."""

    def __init__(self, upstream: tuple[str, int], recorder: Recorder) -> None:
        self.upstream = upstream
        self.recorder = recorder
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.closing = False

    def start(self) -> None:
        threading.Thread(target=self._accept, name="golden-proxy", daemon=True).start()

    def close(self) -> None:
        self.closing = True
        with contextlib.suppress(OSError):
            self.listener.close()

    def _accept(self) -> None:
        while not self.closing:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            server = socket.create_connection(self.upstream)
        except OSError:
            client.close()
            return
        pending: dict[int, bytes] = {}
        lock = threading.Lock()

        def requests() -> None:
            try:
                for prefix, body in _frames(client):
                    corr = int.from_bytes(body[4:8], "big", signed=True)
                    with lock:
                        pending[corr] = body
                    server.sendall(prefix + body)
            except OSError:
                pass
            finally:
                with contextlib.suppress(OSError):
                    server.shutdown(socket.SHUT_WR)

        def responses() -> None:
            try:
                for prefix, body in _frames(server):
                    corr = int.from_bytes(body[:4], "big", signed=True)
                    with lock:
                        request = pending.pop(corr, None)
                    client.sendall(prefix + body)
                    if request is not None:
                        try:
                            self.recorder.exchange(request, body)
                        except Exception as e:
                            log(f"unparseable exchange: {e!r}")
            except OSError:
                pass
            finally:
                with contextlib.suppress(OSError):
                    client.shutdown(socket.SHUT_WR)

        t = threading.Thread(target=requests, daemon=True)
        t.start()
        responses()
        t.join(5)
        client.close()
        server.close()
