"""A controller-only quorum node for tests and experiments: a trio server on one listener
that serves the quorum's APIs (as Kafka's controller listener: Fetch, Vote, BeginQuorumEpoch,
EndQuorumEpoch, DescribeQuorum, FetchSnapshot, plus ApiVersions) around a RaftClient.

    python -m pykafkad.raft.node --node-id 1 --voters 1@127.0.0.1:9093,2@127.0.0.1:9094 \\
        --dir /tmp/n1 --cluster-id X [--listen 127.0.0.1:9093]

Lines on stdin drive it: ``append <text>`` appends a record with that text as its value
(``append noop``: a NoOpRecord, which Kafka's metadata decoders read) when it leads and prints ``appended <offset>`` (or ``not-leader <leader> <epoch>``); ``status`` prints
one JSON line (leader, epoch, high watermark, log end); EOF or SIGTERM stops it gracefully (a
leader resigns). It prints ``listening <host>:<port>`` once it serves. The node will be folded
into the real node (process.roles=controller) later.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import signal
import sys
import uuid
from pathlib import Path

import trio

from pykafkad.connection import Connection
from pykafkad.dispatch import CONTROLLER, load_handlers
from pykafkad.raft.client import RaftClient
from pykafkad.raft.config import QuorumConfig
from pykafkad.raft.machine import NotLeaderError
from wire.metadata.no_op_record import NoOpRecord

#: the APIs of Kafka 4.4's controller listener that the quorum needs (and DescribeCluster,
#: which ``--bootstrap-controller`` admin clients ask first)
CONTROLLER_QUORUM_API_KEYS = frozenset({1, 18, 52, 53, 54, 55, 59, 60})


def noop_record() -> bytes:
    """A NoOpRecord in Kafka's metadata record frame (frame version 1, api key, version, body),
    the payload a controller appends when idle; Kafka's tools decode it."""
    return bytes([1, NoOpRecord.API_KEY, 0]) + NoOpRecord().encode(0)


def parse_voters(spec: str) -> dict[int, tuple[str, int]]:
    """``controller.quorum.voters`` syntax: ``id@host:port,...``."""
    voters = {}
    for part in spec.split(","):
        node, _, address = part.strip().partition("@")
        host, _, port = address.rpartition(":")
        voters[int(node)] = (host.strip("[]"), int(port))
    return voters


class RaftNode:
    """What Connection and the handlers need of a node, and no more."""

    served_api_keys = CONTROLLER_QUORUM_API_KEYS
    controller_only = True

    def __init__(self, node_id: int, voters: dict[int, tuple[str, int]], log_dir: Path,
                 cluster_id: str, *, config: QuorumConfig | None = None,
                 rng: random.Random | None = None, directory_id: bytes | None = None):
        self.node_id = node_id
        self.cluster_id = cluster_id
        self.config = {"socket.request.max.bytes": 104857600}
        self.max_idle_s = 600.0
        self.shutting_down = False
        self.raft = RaftClient(node_id, directory_id or uuid.uuid4().bytes, voters, log_dir,
                               cluster_id, rng=rng, config=config)
        self.listen = voters.get(node_id)
        self.port: int | None = None

    async def serve(self, host: str, port: int, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        load_handlers()
        listeners = await trio.open_tcp_listeners(port, host=host)
        self.port = listeners[0].socket.getsockname()[1]
        async with trio.open_nursery() as nursery:
            await nursery.start(self.raft.run)
            for listener in listeners:
                nursery.start_soon(self._accept, listener, nursery)
            task_status.started(self.port)
            await self._stopped.wait()
            nursery.cancel_scope.cancel()

    _stopped: trio.Event

    async def run(self, host: str, port: int, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        """Serves until ``stop`` (graceful: the raft client resigns first)."""
        self._stopped = trio.Event()
        await self.serve(host, port, task_status=task_status)

    async def stop(self, timeout_s: float = 5.0) -> None:
        await self.raft.shutdown(timeout_s)
        with trio.move_on_after(timeout_s):
            while not self.raft._resignation_done():
                await trio.sleep(0.01)
        self.shutting_down = True
        self._stopped.set()

    async def _accept(self, listener: trio.SocketListener, nursery: trio.Nursery) -> None:
        async with listener:
            while True:
                stream = await listener.accept()
                nursery.start_soon(Connection(stream, self, self, listener_name="CONTROLLER",
                                              listener_kind=CONTROLLER).serve)

    def append(self, values: list[bytes]) -> int:
        leader, epoch = self.raft.leader_and_epoch
        return self.raft.schedule_append(epoch, values)

    def status(self) -> dict:
        leader, epoch = self.raft.leader_and_epoch
        return {"nodeId": self.node_id, "leaderId": leader, "leaderEpoch": epoch,
                "highWatermark": self.raft.high_watermark, "logEndOffset": self.raft.log.end_offset,
                "state": self.raft.machine.quorum.state.name}


async def _lines(stream: trio.abc.ReceiveStream):
    buf = bytearray()
    while True:
        chunk = await stream.receive_some(65536)
        if not chunk:
            return
        buf += chunk
        while b"\n" in buf:
            line, _, rest = bytes(buf).partition(b"\n")
            buf = bytearray(rest)
            yield line.decode()


async def _stdin_commands(node: RaftNode) -> None:
    async for line in _lines(trio.lowlevel.FdStream(os.dup(sys.stdin.fileno()))):
        cmd, _, arg = line.strip().partition(" ")
        if cmd == "append":
            try:
                value = noop_record() if arg == "noop" else arg.encode()
                out = f"appended {node.append([value])}"
            except NotLeaderError:
                leader, epoch = node.raft.leader_and_epoch
                out = f"not-leader {leader} {epoch}"
        elif cmd == "status":
            out = json.dumps(node.status())
        else:
            out = f"unknown command {cmd!r}"
        print(out, flush=True)
    await node.stop()


async def _main(args: argparse.Namespace) -> None:
    voters = parse_voters(args.voters)
    props = dict(kv.split("=", 1) for kv in args.set)
    node = RaftNode(args.node_id, voters, Path(args.dir), args.cluster_id,
                    config=QuorumConfig.from_properties(props))
    host, port = voters[args.node_id] if args.listen is None else (
        args.listen.rpartition(":")[0], int(args.listen.rpartition(":")[2]))
    async with trio.open_nursery() as nursery:
        bound = await nursery.start(node.run, host, port)
        print(f"listening {host}:{bound}", flush=True)
        nursery.start_soon(_stdin_commands, node)
        nursery.start_soon(_signals, node)
        await node._stopped.wait()
        nursery.cancel_scope.cancel()


async def _signals(node: RaftNode) -> None:
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for _ in signals:
            await node.stop()
            return


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m pykafkad.raft.node", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--node-id", type=int, required=True)
    p.add_argument("--voters", required=True, help="controller.quorum.voters: id@host:port,...")
    p.add_argument("--dir", required=True, help="metadata.log.dir")
    p.add_argument("--cluster-id", required=True)
    p.add_argument("--listen", help="host:port (default: this node's voter address)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="controller.quorum.* settings")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    trio.run(_main, args)


if __name__ == "__main__":
    main()
