"""Share sessions (KIP-932's share session cache on a partition leader): one per (group,
member), keyed by the member id the client sends.  Epoch 0 opens a session (with the
partitions of the request), each later request carries the next epoch and adds or forgets
partitions, epoch -1 closes it.  At most ``group.share.max.share.sessions`` are open."""

from __future__ import annotations

from dataclasses import dataclass, field

from wire.errors import ErrorCode, KafkaError

INITIAL_EPOCH, FINAL_EPOCH = 0, -1


@dataclass
class ShareSession:
    group_id: str
    member_id: str
    #: the epoch the next request must carry
    epoch: int = 1
    #: (topic id, partition) in the order they were added
    partitions: dict[tuple[bytes, int], None] = field(default_factory=dict)


class ShareSessionCache:
    def __init__(self, max_sessions: int):
        self.max_sessions = max_sessions
        self.sessions: dict[tuple[str, str], ShareSession] = {}

    def open(self, group_id: str, member_id: str, partitions) -> tuple[ShareSession, ShareSession | None]:
        """A new session (epoch 0); returns it and the session it replaced, if any."""
        key = (group_id, member_id)
        old = self.sessions.pop(key, None)
        if len(self.sessions) >= self.max_sessions:
            if old is not None:
                self.sessions[key] = old
            raise KafkaError(ErrorCode.SHARE_SESSION_LIMIT_REACHED,
                             "Share session limit reached")
        session = self.sessions[key] = ShareSession(group_id, member_id)
        for tp in partitions:
            session.partitions[tp] = None
        return session, old

    def get(self, group_id: str, member_id: str, epoch: int) -> ShareSession:
        """The session a request at ``epoch`` (> 0 or -1) continues."""
        session = self.sessions.get((group_id, member_id))
        if session is None:
            raise KafkaError(ErrorCode.SHARE_SESSION_NOT_FOUND,
                             f"Share session not found for member {member_id}")
        if epoch != FINAL_EPOCH and epoch != session.epoch:
            raise KafkaError(ErrorCode.INVALID_SHARE_SESSION_EPOCH,
                             f"Invalid share session epoch {epoch}, expected {session.epoch}")
        return session

    def close(self, session: ShareSession) -> None:
        self.sessions.pop((session.group_id, session.member_id), None)
