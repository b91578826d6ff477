"""In-process quorums over real sockets for tests: RaftNodes (controller-only) in one trio run,
each on its own free port, killed abruptly by cancelling it or stopped gracefully."""

from __future__ import annotations

import random
from pathlib import Path

import trio

from compat.kafka_broker import free_port
from pykafkad.raft.node import RaftNode

CLUSTER_ID = "I4ZmrWqfT2e-upky_4fdPA"
WAIT_S = 30


class Quorum:
    def __init__(self, tmp: Path, nursery: trio.Nursery, voters=(1, 2, 3)):
        self.tmp = tmp
        self.nursery = nursery
        self.voters = {v: ("127.0.0.1", free_port()) for v in voters}
        self.nodes: dict[int, RaftNode] = {}
        self._scopes: dict[int, trio.CancelScope] = {}

    async def start(self, node_id: int, listen: tuple[str, int] | None = None) -> RaftNode:
        node = RaftNode(node_id, self.voters, self.tmp / f"node{node_id}", CLUSTER_ID,
                        rng=random.Random(node_id), directory_id=bytes(15) + bytes([node_id]))
        host, port = listen or self.voters.get(node_id) or ("127.0.0.1", free_port())
        scope = trio.CancelScope()

        async def run(task_status=trio.TASK_STATUS_IGNORED) -> None:
            with scope:
                await node.run(host, port, task_status=task_status)

        await self.nursery.start(run)
        self.nodes[node_id] = node
        self._scopes[node_id] = scope
        return node

    async def start_all(self) -> None:
        for v in self.voters:
            await self.start(v)

    def kill(self, node_id: int) -> None:
        """As a crash: no resignation, the log closed as the task unwinds."""
        self._scopes.pop(node_id).cancel()
        self.nodes.pop(node_id)

    async def stop(self, node_id: int) -> None:
        node = self.nodes.pop(node_id)
        await node.stop()
        self._scopes.pop(node_id)

    def leaders(self) -> list[RaftNode]:
        return [n for n in self.nodes.values() if n.raft.is_leader]

    async def wait_for(self, cond, what: str, timeout_s: float = WAIT_S) -> None:
        """Polls ``cond`` until it holds (each node wakes on its own timers and messages)."""
        with trio.move_on_after(timeout_s):
            while not cond():
                await trio.sleep(0.01)
            return
        raise AssertionError(f"timed out waiting for {what}: "
                             + ", ".join(f"{i}:{n.status()}" for i, n in self.nodes.items()))

    async def wait_for_leader(self) -> RaftNode:
        def agreed() -> bool:
            leaders = self.leaders()
            return len(leaders) == 1 and all(
                n.raft.leader_and_epoch == leaders[0].raft.leader_and_epoch
                for n in self.nodes.values())

        await self.wait_for(agreed, "one leader that every node follows")
        return self.leaders()[0]

    def log_bytes(self, node_id: int) -> bytes:
        log = self.nodes[node_id].raft.log
        return log.read(log.start_offset, 1 << 30)
