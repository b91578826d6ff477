"""Malformed input closes only its own connection; the broker keeps serving everyone else."""

from __future__ import annotations

import os
import socket
import struct
import threading

from tests.integration.clients import confluent_consume, confluent_produce, create_topic


def _send_garbage(port: int, payload: bytes) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        try:
            s.sendall(payload)
            s.settimeout(5)
            while s.recv(4096):
                pass
        except OSError:
            pass


def test_malformed_frames_leave_good_client_served(broker, topic_name):
    create_topic(broker.bootstrap_servers, topic_name)
    bad = [
        struct.pack(">i", 2_000_000_000),  # frame larger than socket.request.max.bytes
        struct.pack(">i", -5),
        struct.pack(">i", 8) + b"\x00\x12\x00\x03\x00\x00",  # truncated header
        struct.pack(">i", 10) + struct.pack(">hhi", 999, 0, 1) + b"\x00\x00",  # unknown api
        struct.pack(">i", 12) + struct.pack(">hhi", 3, 9, 7) + b"\xff\xff\x05\x01",  # bad body
    ] + [struct.pack(">i", 40) + os.urandom(40) for _ in range(30)]
    stop = threading.Event()

    def attack():
        while not stop.is_set():
            for payload in bad:
                _send_garbage(broker.port, payload)

    threads = [threading.Thread(target=attack) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        confluent_produce(broker.bootstrap_servers, topic_name,
                          [{"value": f"{i}".encode()} for i in range(500)])
        got = confluent_consume(broker.bootstrap_servers, topic_name, 500)
        assert len(got) == 500
    finally:
        stop.set()
        for t in threads:
            t.join()


def test_half_sent_frame_then_disconnect(broker, topic_name):
    create_topic(broker.bootstrap_servers, topic_name)
    with socket.create_connection(("127.0.0.1", broker.port)) as s:
        s.sendall(struct.pack(">i", 1000) + b"\x00\x03")
    confluent_produce(broker.bootstrap_servers, topic_name, [{"value": b"still here"}])
    assert confluent_consume(broker.bootstrap_servers, topic_name, 1)[0].value() == b"still here"
