"""A replica's place in the quorum: its epoch state and the transitions between them (Kafka's
QuorumState and EpochState subclasses), pure: time comes in as ``now`` (ms), randomness from an
injected ``random.Random``, and every transition that changes the epoch, the vote or the leader
is written to the ``quorum-state`` file before it takes effect.

States (KIP-595 with KIP-996 pre-vote):
- Unattached: an epoch without a known leader, maybe with a vote cast; its election timer
  expiring makes a voter Prospective.
- Prospective: asks for pre-votes for epoch+1 without bumping its epoch; a majority makes it
  Candidate, so a partitioned voter cannot disturb a working quorum by bumping epochs.
- Candidate: epoch bumped, voted for itself, asks for votes; a majority makes it Leader.
- Leader: appends, tracks the voters' fetch offsets for the high watermark.
- Follower: fetches from the leader; the fetch timer expiring (no successful fetch) makes a voter
  Prospective (an observer looks for the leader again).
- Resigned: a leader that is shutting down (or lost the check-quorum), until a new epoch.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from pykafkad.raft.config import QuorumConfig
from pykafkad.raft.leader_state import LeaderState
from pykafkad.raft.quorum_state import NO_LEADER, NOT_VOTED, ElectionState, FileQuorumStateStore


@dataclass
class Unattached:
    epoch: int
    election_deadline: float
    voted_id: int = NOT_VOTED
    name = "Unattached"

    @property
    def leader_id(self) -> int:
        return NO_LEADER


@dataclass
class Prospective:
    """Pre-voting for ``epoch + 1``; keeps the vote (and leader) it had in ``epoch``."""

    epoch: int
    election_deadline: float
    voted_id: int = NOT_VOTED
    granted: set[int] = field(default_factory=set)
    rejected: set[int] = field(default_factory=set)
    #: set when the pre-vote lost: wait until then before the next round
    backoff_until: float | None = None
    #: the leader it followed before its fetch timeout (Kafka's ProspectiveState keeps it):
    #: a vote response naming that same leader is no news, a lost pre-vote goes back to it
    retained_leader_id: int = NO_LEADER
    name = "Prospective"

    @property
    def leader_id(self) -> int:
        return NO_LEADER


@dataclass
class Candidate:
    epoch: int
    election_deadline: float
    granted: set[int] = field(default_factory=set)
    rejected: set[int] = field(default_factory=set)
    backoff_until: float | None = None
    name = "Candidate"

    @property
    def leader_id(self) -> int:
        return NO_LEADER


@dataclass
class Follower:
    epoch: int
    leader_id: int
    fetch_deadline: float
    voted_id: int = NOT_VOTED
    high_watermark: int | None = None
    has_fetched: bool = False
    name = "Follower"


@dataclass
class Leader:
    epoch: int
    epoch_start_offset: int
    granting: tuple[int, ...]
    replicas: LeaderState
    name = "Leader"
    #: voters that acknowledged this epoch (BeginQuorumEpoch answered, or fetched)
    acknowledged: set[int] = field(default_factory=set)
    check_quorum_deadline: float = 0.0
    #: voters that fetched since the check-quorum timer was last reset
    fetched_since_check: set[int] = field(default_factory=set)


@dataclass
class Resigned:
    epoch: int
    election_deadline: float
    preferred_successors: list[int]
    unacknowledged: set[int]
    name = "Resigned"


EpochState = Unattached | Prospective | Candidate | Follower | Leader | Resigned


#: the unit of the backoff after a lost election (KafkaRaftClient.RETRY_BACKOFF_BASE_MS)
RETRY_BACKOFF_BASE_MS = 100


def majority(n: int) -> int:
    return n // 2 + 1


class QuorumState:
    def __init__(
        self,
        local_id: int,
        voters: list[int],
        store: FileQuorumStateStore,
        config: QuorumConfig,
        rng: random.Random,
        *,
        directory_id: bytes = bytes(16),
        quorum_state_version: int = 0,
        voter_directory_ids: dict[int, bytes] | None = None,
    ):
        self.local_id = local_id
        #: the voters' directory ids (a dynamic quorum's VotersRecord; none for a static one)
        self.voter_directory_ids = voter_directory_ids or {}
        self.directory_id = directory_id
        self.voters = sorted(voters)
        self.store = store
        self.config = config
        self.rng = rng
        self.quorum_state_version = quorum_state_version
        self.state: EpochState = Unattached(0, float("inf"))

    # -- properties ----------------------------------------------------------------------------
    @property
    def is_voter(self) -> bool:
        return self.local_id in self.voters

    @property
    def is_only_voter(self) -> bool:
        return self.voters == [self.local_id]

    @property
    def epoch(self) -> int:
        return self.state.epoch

    @property
    def leader_id(self) -> int:
        s = self.state
        if isinstance(s, Leader | Resigned):  # a resigned leader still names itself (Kafka 4)
            return self.local_id
        if isinstance(s, Follower):
            return s.leader_id
        return NO_LEADER

    def is_(self, cls: type) -> bool:
        return isinstance(self.state, cls)

    def election_timeout(self, now: float) -> float:
        """Kafka's randomized timeout: ``[timeout, 2 * timeout)`` from now."""
        t = self.config.election_timeout_ms
        return now + t + self.rng.randrange(t) if t > 0 else now

    def election_backoff(self, now: float, retries: int = 1) -> float:
        """Kafka's binary exponential backoff after a lost election: a random multiple of
        100 ms below ``2 ** retries`` of them, at most controller.quorum.election.backoff.max.ms."""
        spread = 2 << min(20, max(1, retries) - 1)
        return now + min(RETRY_BACKOFF_BASE_MS * self.rng.randrange(spread),
                         self.config.election_backoff_max_ms)

    def _persist(self, s: EpochState) -> None:
        voted = NOT_VOTED
        leader = NO_LEADER
        if isinstance(s, Candidate) or (isinstance(s, Leader)):
            voted = self.local_id
        elif isinstance(s, Unattached | Prospective | Follower):
            voted = s.voted_id
        if isinstance(s, Leader):
            leader = self.local_id
        elif isinstance(s, Follower):
            leader = s.leader_id
        elif isinstance(s, Resigned):
            leader = self.local_id
        if isinstance(s, Leader | Resigned):
            voted = NOT_VOTED
        state = ElectionState(
            epoch=s.epoch, leader_id=leader, voted_id=voted,
            voted_directory_id=self.directory_id if voted == self.local_id else bytes(16),
            voters=tuple(self.voters))
        self.store.write(state, self.quorum_state_version)

    def _set(self, s: EpochState, *, persist: bool = True) -> None:
        if persist:
            self._persist(s)
        self.state = s

    # -- start ---------------------------------------------------------------------------------
    def initialize(self, log_end_epoch: int, now: float) -> None:
        """From the file (Kafka's QuorumState.initialize): a restarted leader is Resigned, a
        node that voted for itself a Candidate, a known leader is followed; a log whose last
        epoch is ahead of the file wins."""
        stored = self.store.read() or ElectionState(0)
        if stored.epoch < log_end_epoch:
            stored = ElectionState(log_end_epoch, voters=stored.voters)
        epoch = max(stored.epoch, 0)
        if not self.is_voter:
            if stored.has_leader and stored.leader_id != self.local_id:
                self._set(Follower(epoch, stored.leader_id, now + self.config.fetch_timeout_ms),
                          persist=False)
            else:
                self._set(Unattached(epoch, float("inf")), persist=False)
            return
        if stored.leader_id == self.local_id:
            others = {v for v in self.voters if v != self.local_id}
            self._set(Resigned(epoch, self.election_timeout(now), [], others), persist=False)
        elif stored.voted_id == self.local_id and not stored.has_leader:
            self._set(Candidate(epoch, self.election_timeout(now), {self.local_id}),
                      persist=False)
        elif stored.has_leader:
            self._set(Follower(epoch, stored.leader_id, now + self.config.fetch_timeout_ms,
                               voted_id=stored.voted_id), persist=False)
        else:
            self._set(Unattached(epoch, self.election_timeout(now), stored.voted_id),
                      persist=False)

    # -- transitions ---------------------------------------------------------------------------
    def to_unattached(self, epoch: int, now: float) -> None:
        """A higher epoch without a leader (Kafka's transitionToUnattached)."""
        deadline = self.election_timeout(now) if self.is_voter else float("inf")
        self._set(Unattached(epoch, deadline))

    def to_unattached_voted(self, candidate_id: int, epoch: int, now: float) -> None:
        self._set(Unattached(epoch, self.election_timeout(now), candidate_id))

    def to_prospective(self, now: float) -> None:
        s = self.state
        voted = s.voted_id if isinstance(s, Unattached | Prospective | Follower) else NOT_VOTED
        if isinstance(s, Candidate):
            voted = self.local_id
        retained = s.leader_id if isinstance(s, Follower) else (
            s.retained_leader_id if isinstance(s, Prospective) else NO_LEADER)
        self._set(Prospective(s.epoch, self.election_timeout(now), voted, {self.local_id},
                              retained_leader_id=retained), persist=False)

    def to_candidate(self, now: float) -> None:
        self._set(Candidate(self.epoch + 1, self.election_timeout(now), {self.local_id}))

    def to_leader(self, epoch_start_offset: int, now: float) -> Leader:
        s = self.state
        assert isinstance(s, Candidate)
        leader = Leader(
            s.epoch, epoch_start_offset, tuple(sorted(s.granted)),
            LeaderState(self.local_id, self.voters, epoch_start_offset,
                        self.voter_directory_ids),
            acknowledged={self.local_id},
            check_quorum_deadline=now + self.config.check_quorum_timeout_ms)
        self._set(leader)
        return leader

    def to_follower(self, epoch: int, leader_id: int, now: float) -> None:
        s = self.state
        voted = s.voted_id if isinstance(s, Unattached | Prospective | Follower) and \
            s.epoch == epoch else NOT_VOTED
        if isinstance(s, Candidate) and s.epoch == epoch:
            voted = self.local_id
        self._set(Follower(epoch, leader_id, now + self.config.fetch_timeout_ms, voted_id=voted))

    def to_resigned(self, preferred_successors: list[int], now: float) -> None:
        s = self.state
        others = {v for v in self.voters if v != self.local_id}
        self._set(Resigned(s.epoch, self.election_timeout(now), preferred_successors, others))

    # -- votes ---------------------------------------------------------------------------------
    def can_grant_vote(self, candidate_id: int, log_up_to_date: bool, pre_vote: bool) -> bool:
        """Kafka's EpochState.canGrantVote for the current state (same epoch as the request
        for a standard vote; a pre-vote never changes state)."""
        s = self.state
        if isinstance(s, Leader | Resigned):
            return False
        if isinstance(s, Follower):
            # a follower that hears from its leader keeps it: no pre-vote, no vote
            return pre_vote and not s.has_fetched and log_up_to_date
        if pre_vote:
            return log_up_to_date
        if isinstance(s, Candidate):
            return candidate_id == self.local_id
        voted = s.voted_id
        if voted != NOT_VOTED:
            return voted == candidate_id
        return log_up_to_date
