"""A group coordinator on a fake clock and in-memory storage, and short-hands to drive it."""

from __future__ import annotations

from dataclasses import replace

from pykafkad.coordinator.config import GroupCoordinatorConfig
from pykafkad.coordinator.coordinator import CommitPartition, CommitRequest, GroupCoordinator
from pykafkad.coordinator.group import JoinResult, Pending, SyncResult
from pykafkad.coordinator.membership import JoinRequest, SyncRequest
from pykafkad.coordinator.storage import MemoryStorage
from wire.messages.consumer_protocol_subscription import ConsumerProtocolSubscription
from wire.primitives import Writer

CONFIG = GroupCoordinatorConfig(
    initial_rebalance_delay_ms=0, min_session_timeout_ms=100, max_session_timeout_ms=60_000)


class FakeClock:
    def __init__(self, now: int = 1_700_000_000_000):
        self.now = now

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> None:
        self.now += ms


def subscription(*topics: str) -> bytes:
    w = Writer()
    w.int16(0)
    ConsumerProtocolSubscription(topics=list(topics)).write(w, 0)
    return w.getvalue()


class Harness:
    def __init__(self, clock: FakeClock | None = None, storage: MemoryStorage | None = None,
                 **config):
        self.clock = clock or FakeClock()
        self.storage = storage or MemoryStorage()
        self.config = replace(CONFIG, **config)
        self.coord = GroupCoordinator(self.config, self.storage, self.clock)
        self.coord.load()

    def reload(self) -> Harness:
        """A new coordinator replaying the same storage (a broker restart)."""
        return Harness(self.clock, self.storage, **{
            k: getattr(self.config, k) for k in self.config.__dataclass_fields__})

    def poll(self) -> None:
        self.coord.timer.run_due()

    def advance(self, ms: int) -> None:
        self.clock.advance(ms)
        self.poll()

    def group(self, group_id: str = "g"):
        return self.coord.groups.get(group_id)

    def join(self, member_id: str = "", *, group: str = "g", topics=("t",), protocols=None,
             session: int = 10_000, rebalance: int = 30_000, instance: str | None = None,
             version: int = 5, client_id: str = "client",
             protocol_type: str = "consumer") -> Pending[JoinResult]:
        if protocols is None:
            protocols = [("range", subscription(*topics))]
        p = self.coord.join_group(JoinRequest(
            group, member_id, session, rebalance, protocol_type, protocols,
            group_instance_id=instance, client_id=client_id, client_host="/127.0.0.1",
            api_version=version))
        self.poll()
        return p

    def join_new(self, **kw) -> tuple[str, Pending[JoinResult]]:
        """A dynamic member's two-step join (MEMBER_ID_REQUIRED, then the real join)."""
        first = self.join(**kw)
        assert first.done and first.value.error == 79, first.value
        member_id = first.value.member_id
        return member_id, self.join(member_id, **kw)

    def sync(self, member_id: str, generation: int, assignments=None, *, group: str = "g",
             instance: str | None = None) -> Pending[SyncResult]:
        p = self.coord.sync_group(SyncRequest(
            group, generation, member_id, dict(assignments or {}), group_instance_id=instance,
            protocol_type="consumer"))
        self.poll()
        return p

    def heartbeat(self, member_id: str, generation: int, *, group: str = "g",
                  instance: str | None = None) -> int:
        code = self.coord.heartbeat(group, member_id, instance, generation)
        self.poll()
        return code

    def commit(self, offsets: dict, *, group: str = "g", member_id: str = "",
               generation: int = -1, version: int = 8, **kw):
        parts = [CommitPartition(t, p, o, **kw) for (t, p), o in offsets.items()]
        return self.coord.commit_offsets(CommitRequest(
            group, parts, generation, member_id, api_version=version))

    def committed(self, group: str = "g", topics=None, require_stable: bool = False) -> dict:
        out = {}
        for topic, parts in self.coord.fetch_offsets(group, topics, require_stable):
            for f in parts:
                out[(topic, f.partition)] = f.offset if not f.error else f.error
        return out

    def form(self, n: int, **kw) -> tuple[list[str], int]:
        """n dynamic members join an empty group and sync; returns their ids and generation."""
        pendings = []
        for _ in range(n):
            member_id, p = self.join_new(**kw)
            pendings.append((member_id, p))
        # with no initial delay the first forms a generation alone; everyone rejoins until
        # a generation holds all of them
        for _ in range(n + 1):
            if all(p.done and p.value.error == 0 for _, p in pendings) and \
                    len({p.value.generation_id for _, p in pendings}) == 1:
                break
            for i, (member_id, p) in enumerate(pendings):
                if p.done:
                    pendings[i] = (member_id, self.join(member_id, **kw))
        ids = [m for m, _ in pendings]
        gen = pendings[0][1].value.generation_id
        leader = pendings[0][1].value.leader
        syncs = [self.sync(m, gen, {x: x.encode() for x in ids} if m == leader else None)
                 for m in ids]
        assert all(s.done and s.value.error == 0 for s in syncs), [s.value for s in syncs]
        return ids, gen
