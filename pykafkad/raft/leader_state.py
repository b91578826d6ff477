"""The leader's view of the replicas (Kafka's LeaderState): each voter's and observer's fetched
end offset and fetch times, and the high watermark they make.

The high watermark is the largest offset that a majority of voters (the leader counting its own
flushed log end) have reached, and it only counts once it is inside the leader's epoch (past
the epoch's start offset, i.e. the LeaderChange record there is replicated): a leader never commits an
older epoch's entries by counting replicas (Raft, section 5.4.2). It never moves backwards.
"""

from __future__ import annotations

from dataclasses import dataclass

#: an observer that has not fetched for this long leaves DescribeQuorum (Kafka: 5 minutes)
OBSERVER_SESSION_TIMEOUT_MS = 300_000


@dataclass
class ReplicaState:
    replica_id: int
    directory_id: bytes = bytes(16)
    end_offset: int = -1
    last_fetch_ms: int = -1
    last_caught_up_ms: int = -1
    #: the leader's log end when this replica last fetched (for last_caught_up_ms)
    last_fetch_leader_end: int = -1

    def update(self, fetch_offset: int, leader_end: int, now: int) -> None:
        """Kafka's rule: caught up now when the fetch reaches the leader's end; caught up at the
        previous fetch when it reaches what the leader's end was then."""
        if fetch_offset >= leader_end:
            self.last_caught_up_ms = max(self.last_caught_up_ms, now)
        elif self.last_fetch_leader_end > 0 and fetch_offset >= self.last_fetch_leader_end:
            self.last_caught_up_ms = max(self.last_caught_up_ms, self.last_fetch_ms)
        self.last_fetch_leader_end = leader_end
        self.last_fetch_ms = now
        self.end_offset = fetch_offset


class LeaderState:
    def __init__(self, local_id: int, voters: list[int], epoch_start_offset: int,
                 directory_ids: dict[int, bytes] | None = None):
        self.local_id = local_id
        self.epoch_start_offset = epoch_start_offset
        ids = directory_ids or {}
        self.voters = {v: ReplicaState(v, ids.get(v, bytes(16))) for v in voters}
        self.observers: dict[int, ReplicaState] = {}
        self.high_watermark: int | None = None

    def set_voters(self, voters: list[int], directory_ids: dict[int, bytes]) -> None:
        """A new voter set (KIP-853): a joining observer's state moves to the voters, a
        removed voter's to the observers; the high watermark counts the new set."""
        for rid in [r for r in self.voters if r not in voters]:
            self.observers[rid] = self.voters.pop(rid)
        for rid in voters:
            if rid not in self.voters:
                self.voters[rid] = self.observers.pop(rid, None) or ReplicaState(rid)
            self.voters[rid].directory_id = directory_ids.get(rid, bytes(16))
        self._update_high_watermark()

    def replica(self, replica_id: int) -> ReplicaState | None:
        return self.voters.get(replica_id) or self.observers.get(replica_id)

    def update_local(self, end_offset: int, now: int) -> bool:
        """The leader's own (flushed) end offset; True when the high watermark moved."""
        local = self.voters.get(self.local_id) or self.observers.setdefault(
            self.local_id, ReplicaState(self.local_id))
        local.end_offset = end_offset
        local.last_fetch_ms = local.last_caught_up_ms = now
        return self._update_high_watermark()

    def update_replica(self, replica_id: int, directory_id: bytes, fetch_offset: int,
                       leader_end: int, now: int) -> bool:
        """A Fetch at ``fetch_offset`` (that replica's end offset); True when the HW moved."""
        if replica_id in self.voters:
            # a voter is described with the directory id of the voter set (the zero uuid for
            # static voters, kraft.version 0), whatever its fetches say
            state = self.voters[replica_id]
        else:
            state = self.observers.setdefault(replica_id, ReplicaState(replica_id))
            state.directory_id = directory_id
        state.update(fetch_offset, leader_end, now)
        return replica_id in self.voters and self._update_high_watermark()

    def _update_high_watermark(self) -> bool:
        ends = sorted((s.end_offset for s in self.voters.values()), reverse=True)
        candidate = ends[len(ends) // 2]
        if candidate <= self.epoch_start_offset:
            return False
        if self.high_watermark is not None and candidate <= self.high_watermark:
            return False
        self.high_watermark = candidate
        return True

    def observer_states(self, now: int) -> list[ReplicaState]:
        for rid in [r for r, s in self.observers.items()
                    if now - s.last_fetch_ms >= OBSERVER_SESSION_TIMEOUT_MS]:
            del self.observers[rid]
        return list(self.observers.values())
