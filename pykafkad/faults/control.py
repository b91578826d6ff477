"""The control channel: one JSON command per frame, on the node's own listeners.

A control request is an ordinary request frame (size, header v1) with a private API key,
``CONTROL_API_KEY``, that Kafka does not use and ApiVersions never advertises, and a JSON body;
the answer is a response frame (size, correlation id) with a JSON body.  So a test or the
``pykafkad faults`` command needs only the node's bootstrap address.  A node serves it only
with ``pykafkad.faults.enable=true`` and only to loopback peers; otherwise the key is unknown
and the connection closes, as for any unknown API."""

from __future__ import annotations

import ipaddress
import json
import socket
import struct
from typing import Any

CONTROL_API_KEY = 32767
CONTROL_VERSION = 0
_SIZE = struct.Struct(">i")
_HEADER = struct.Struct(">hhi")
#: a control answer is small; anything larger is not one
MAX_ANSWER_BYTES = 16 * 1024 * 1024
CLIENT_ID = "pykafkad-faults"


class FaultControlError(RuntimeError):
    """The node refused the command (the message is the node's), or could not be reached."""


def is_loopback(peer: str) -> bool:
    host = peer.rsplit(":", 1)[0].strip("[]")
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def encode_command(correlation_id: int, command: dict[str, Any]) -> bytes:
    client_id = CLIENT_ID.encode()
    body = (_HEADER.pack(CONTROL_API_KEY, CONTROL_VERSION, correlation_id)
            + struct.pack(">h", len(client_id)) + client_id + json.dumps(command).encode())
    return _SIZE.pack(len(body)) + body


def encode_answer(correlation_id: int, answer: dict[str, Any]) -> bytes:
    body = struct.pack(">i", correlation_id) + json.dumps(answer).encode()
    return _SIZE.pack(len(body)) + body


def _read_exactly(sock: socket.socket, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise FaultControlError("the node closed the control connection (is "
                                    "pykafkad.faults.enable=true set on it?)")
        data += chunk
    return bytes(data)


def call(host: str, port: int, command: dict[str, Any], timeout_s: float = 10.0) -> dict:
    """Sends one command to the node at host:port and returns its answer."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as sock:
            sock.sendall(encode_command(1, command))
            (size,) = _SIZE.unpack(_read_exactly(sock, 4))
            if not 4 <= size <= MAX_ANSWER_BYTES:
                raise FaultControlError(f"not a control answer ({size} bytes)")
            frame = _read_exactly(sock, size)
    except OSError as e:
        raise FaultControlError(f"cannot reach {host}:{port}: {e}") from e
    answer = json.loads(frame[4:])
    if "error" in answer:
        raise FaultControlError(answer["error"])
    return answer
