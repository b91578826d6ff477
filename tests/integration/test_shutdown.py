"""Graceful shutdown answers the request in flight before the broker stops."""

from __future__ import annotations

import threading
import time

from compat.wire_client import WireClient
from pykafkad.testing import run_broker
from tests.integration.clients import create_topic
from tests.integration.test_protocol_edges import fetch


def test_shutdown_answers_a_long_poll_in_flight(tmp_path):
    result = {}
    with run_broker(tmp_path / "d") as b:
        create_topic(b.bootstrap_servers, "inflight")
        client = WireClient(b.bootstrap_servers)

        def poll():
            result["resp"] = fetch(client, "inflight", [0], epoch=-1, max_wait_ms=60_000,
                                   min_bytes=1)

        t = threading.Thread(target=poll)
        t.start()
        # wait (bounded) until the broker is handling that request, not just reading
        deadline = time.monotonic() + 30
        while not any(c.in_flight for c in list(b.server.connections)):
            assert time.monotonic() < deadline and t.is_alive()
            time.sleep(0.001)
    # leaving the block shut the broker down: the parked fetch was answered, not dropped
    t.join(30)
    client.close()
    part = result["resp"].responses[0].partitions[0]
    assert part.error_code == 0 and part.records == b""
