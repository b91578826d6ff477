"""The single-node broker as the released pykafkad ran it (no process.roles, topics in
pykafkad-topics.json, no metadata log): what writes the data dirs the one-voter node must still
start on.  It runs the same Broker and Server the released version ran, on a free port."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path

import trio

from pykafkad.broker import Broker
from pykafkad.config import BrokerConfig
from pykafkad.server import Server
from pykafkad.testing import RunningBroker

START_TIMEOUT_S = 30


@contextlib.contextmanager
def run_released_broker(data_dir: Path, host: str = "127.0.0.1") -> Iterator[str]:
    """Yields the bootstrap servers of a released-style single-node broker on ``data_dir``."""
    with run_released(data_dir, host=host) as running:
        yield running.bootstrap_servers


@contextlib.contextmanager
def run_released(data_dir: Path, *, config: dict[str, str] | None = None,
                 host: str = "127.0.0.1", port: int = 0, clock=None) -> Iterator[RunningBroker]:
    """The released-style broker as a RunningBroker: for the component tests that wire
    several standalone brokers together by hand (the coordinators' marker and verification
    channels) and reach into them between requests."""
    extra = {"clock": clock} if clock is not None else {}
    broker = Broker(BrokerConfig.from_sources(None, dict(config or {})), Path(data_dir), **extra)
    server = Server(broker, host, port)
    started = threading.Event()
    state: dict = {}

    async def main() -> None:
        state["token"] = trio.lowlevel.current_trio_token()
        async with trio.open_nursery() as nursery:
            state["port"] = await nursery.start(server.run)
            started.set()

    def thread_main() -> None:
        try:
            trio.run(main)
        except BaseException as e:  # surfaced below
            state["error"] = e
            started.set()

    thread = threading.Thread(target=thread_main, name="released-pykafkad", daemon=True)
    thread.start()
    started.wait(START_TIMEOUT_S)
    if "error" in state:
        raise state["error"]
    try:
        yield RunningBroker(host, state["port"], Path(data_dir), broker, server, state["token"])
    finally:
        with contextlib.suppress(trio.RunFinishedError):
            trio.from_thread.run_sync(server.request_shutdown, trio_token=state["token"])
        thread.join(START_TIMEOUT_S)
