"""Incremental fetch sessions (KIP-227).

A session remembers, per partition, what the consumer fetches and what it was last told (high
watermark, last stable offset, log start offset), so that later fetches can name only what
changed and responses can leave out partitions with nothing new.

Epochs: 0 opens a session (closing ``session_id`` if given), -1 (FINAL) means "no session"
(closing ``session_id`` if given), N > 0 continues the session whose next epoch is N.
"""

from __future__ import annotations

import itertools
import random
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from wire.errors import ErrorCode

INITIAL_EPOCH = 0
FINAL_EPOCH = -1
#: Kafka's max.incremental.fetch.session.cache.slots default (the broker passes the setting);
#: when every slot is taken by a session used in the last IDLE_EVICTION_MS, a new one is not
#: created and the fetch is answered sessionless (session id 0), as Kafka does
MAX_SESSIONS = 1000
#: Kafka evicts sessions idle longer than this when the cache is full
IDLE_EVICTION_MS = 120_000


@dataclass
class CachedPartition:
    fetch_offset: int
    max_bytes: int
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1


@dataclass
class FetchSession:
    session_id: int
    #: the epoch the next request must carry
    epoch: int
    uses_topic_ids: bool
    #: (topic key, partition) -> state, in the order the consumer listed them
    partitions: OrderedDict = field(default_factory=OrderedDict)
    last_used_ms: int = 0


@dataclass
class SessionContext:
    """What one Fetch request works on: the partitions to read and how to answer."""

    #: (topic key, partition) -> (fetch_offset, partition_max_bytes) in response order
    partitions: list[tuple[object, int, int, int]]
    session: FetchSession | None
    incremental: bool
    error: ErrorCode = ErrorCode.NONE
    response_session_id: int = 0


class FetchSessionCache:
    def __init__(self, clock: Callable[[], int], max_sessions: int = MAX_SESSIONS):
        self.clock = clock
        self.max_sessions = max_sessions
        self.sessions: dict[int, FetchSession] = {}
        self._ids = itertools.count(random.randint(1, 1 << 20))

    def _new_id(self) -> int:
        while True:
            sid = next(self._ids) & 0x7FFFFFFF
            if sid and sid not in self.sessions:
                return sid

    def _evict_if_full(self) -> bool:
        if len(self.sessions) < self.max_sessions:
            return True
        if not self.sessions:  # no slots at all: every fetch is sessionless
            return False
        now = self.clock()
        oldest = min(self.sessions.values(), key=lambda s: s.last_used_ms)
        if now - oldest.last_used_ms >= IDLE_EVICTION_MS:
            del self.sessions[oldest.session_id]
            return True
        return False

    def forget_topic(self, topic_key: object) -> None:
        for s in self.sessions.values():
            for key in [k for k in s.partitions if k[0] == topic_key]:
                del s.partitions[key]

    def context(
        self,
        session_id: int,
        epoch: int,
        requested: list[tuple[object, int, int, int]],
        forgotten: list[tuple[object, int]],
        uses_topic_ids: bool,
    ) -> SessionContext:
        """``requested`` holds (topic key, partition, fetch_offset, partition_max_bytes)."""
        if epoch in (INITIAL_EPOCH, FINAL_EPOCH):
            if session_id:
                self.sessions.pop(session_id, None)
            if epoch == FINAL_EPOCH or not requested or not self._evict_if_full():
                return SessionContext(requested, None, incremental=False)
            session = FetchSession(self._new_id(), 1, uses_topic_ids)
            for topic, part, offset, max_bytes in requested:
                session.partitions[(topic, part)] = CachedPartition(offset, max_bytes)
            session.last_used_ms = self.clock()
            self.sessions[session.session_id] = session
            return SessionContext(
                requested, session, incremental=False, response_session_id=session.session_id
            )
        session = self.sessions.get(session_id)
        if session is None:
            return SessionContext([], None, False, ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
        if session.epoch != epoch:
            return SessionContext([], None, False, ErrorCode.INVALID_FETCH_SESSION_EPOCH)
        if session.uses_topic_ids != uses_topic_ids:
            return SessionContext([], None, False, ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR)
        for topic, part, offset, max_bytes in requested:
            cached = session.partitions.get((topic, part))
            if cached is None:
                session.partitions[(topic, part)] = CachedPartition(offset, max_bytes)
            else:
                cached.fetch_offset = offset
                cached.max_bytes = max_bytes
        for key in forgotten:
            session.partitions.pop(key, None)
        session.epoch = epoch + 1 if epoch < 0x7FFFFFFF else 1
        session.last_used_ms = self.clock()
        parts = [(t, p, c.fetch_offset, c.max_bytes) for (t, p), c in session.partitions.items()]
        return SessionContext(parts, session, True, response_session_id=session.session_id)

    @staticmethod
    def should_include(
        session: FetchSession | None,
        key: tuple[object, int],
        has_records: bool,
        error: int,
        high_watermark: int,
        last_stable_offset: int,
        log_start_offset: int,
        incremental: bool,
    ) -> bool:
        """Records what the consumer is told; in an incremental response, True only on change."""
        if session is None:
            return True
        cached = session.partitions.get(key)
        if cached is None:
            return True
        changed = (
            cached.high_watermark != high_watermark
            or cached.last_stable_offset != last_stable_offset
            or cached.log_start_offset != log_start_offset
        )
        cached.high_watermark = high_watermark
        cached.last_stable_offset = last_stable_offset
        cached.log_start_offset = log_start_offset
        return (not incremental) or has_records or error != 0 or changed
