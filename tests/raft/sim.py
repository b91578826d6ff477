"""A deterministic quorum for tests: several RaftMachines over real logs in a temp dir, one
fake clock, and a message router that delivers their real requests and responses (encoded and
decoded with the wire codec at Kafka's highest versions, so every field crosses the wire) and
can cut nodes off."""

from __future__ import annotations

import random
from pathlib import Path

from pykafkad.raft.config import QuorumConfig
from pykafkad.raft.log import DIR_NAME, MetadataLog
from pykafkad.raft.machine import RaftMachine
from pykafkad.raft.quorum import Leader
from pykafkad.raft.quorum_state import FILE_NAME, FileQuorumStateStore
from wire.messages import API_KEYS

CLUSTER_ID = "I4ZmrWqfT2e-upky_4fdPA"


def roundtrip(msg, version=None):
    v = type(msg).HIGHEST_VERSION if version is None else version
    return type(msg).decode(msg.encode(v), v), v


class Sim:
    def __init__(self, tmp: Path, voters=(1, 2, 3), observers=(), seed=0,
                 config: QuorumConfig | None = None):
        self.tmp = tmp
        self.now = 0
        self.seed = seed
        self.config = config or QuorumConfig()
        self.voter_ids = list(voters)
        self.endpoints = {v: ("127.0.0.1", 9000 + v) for v in voters}
        self.nodes: dict[int, RaftMachine] = {}
        self.down: set[int] = set()
        for n in list(voters) + list(observers):
            self.start(n)

    def clock(self) -> int:
        return self.now

    def start(self, node_id: int) -> RaftMachine:
        d = self.tmp / f"node{node_id}"
        log = MetadataLog.open(d, self.clock)
        store = FileQuorumStateStore(d / DIR_NAME / FILE_NAME)
        m = RaftMachine(node_id, bytes(15) + bytes([node_id]), self.endpoints, log, store,
                        CLUSTER_ID, self.config, random.Random(self.seed * 100 + node_id),
                        self.clock)
        m.start(self.now)
        self.nodes[node_id] = m
        self.down.discard(node_id)
        return m

    def stop(self, node_id: int) -> None:
        self.nodes.pop(node_id).log.close()
        self.down.add(node_id)

    def deliver(self, src: int, out) -> None:
        m = self.nodes[src]
        dst = out.destination
        if dst in self.down or src in self.down or dst not in self.nodes:
            m.on_failure(dst, out.request, self.now)
            return
        req, v = roundtrip(out.request)
        target = self.nodes[dst]
        name = API_KEYS[type(req).API_KEY].name
        handler = {
            "Vote": target.handle_vote, "BeginQuorumEpoch": target.handle_begin_quorum_epoch,
            "EndQuorumEpoch": target.handle_end_quorum_epoch, "Fetch": target.handle_fetch,
            "FetchSnapshot": target.handle_fetch_snapshot,
        }[name]
        resp = handler(req, v, self.now)
        if name == "Fetch":
            resp = resp[0]
        resp, _ = roundtrip(resp, v)
        m.on_response(dst, out.request, resp, self.now)

    def step(self, ms: int = 10) -> None:
        """One round: every live node polls and its requests are answered at once."""
        self.now += ms
        for nid in sorted(self.nodes):
            if nid in self.down:
                continue
            for out in self.nodes[nid].poll(self.now):
                self.deliver(nid, out)

    def run_until(self, cond, max_ms: int = 60_000, ms: int = 10) -> None:
        start = self.now
        while not cond():
            if self.now - start > max_ms:
                raise AssertionError(f"not reached in {max_ms} simulated ms: {self.describe()}")
            self.step(ms)

    def leaders(self) -> list[RaftMachine]:
        return [m for n, m in self.nodes.items()
                if n not in self.down and isinstance(m.quorum.state, Leader)]

    def leader(self) -> RaftMachine:
        (m,) = self.leaders()
        return m

    def describe(self) -> str:
        return ", ".join(f"{n}:{m.quorum.state.name}@{m.epoch} leo={m.log.end_offset} "
                         f"hw={m.high_watermark}" for n, m in sorted(self.nodes.items()))

    def log_bytes(self, node_id: int) -> bytes:
        m = self.nodes[node_id]
        return m.log.read(m.log.start_offset, 1 << 30) if m.log.end_offset else b""
