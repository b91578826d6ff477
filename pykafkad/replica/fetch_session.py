"""Kafka's FetchSessionHandler (KIP-227) for a follower's fetches from one leader.

The first fetch (epoch 0) sends every partition and asks the leader for a session; while the
session lives, each fetch carries the next epoch and names only the partitions whose fetch
data changed (added or altered) and those that left (forgotten topics); the leader answers only
partitions with something new. A leader that answers without a session id (its cache is full)
keeps getting full fetches. Any failure (a session error, a lost connection) starts a new
session with the next fetch (Kafka's nextCloseExistingAttemptNew).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wire.errors import ErrorCode

if TYPE_CHECKING:
    from pykafkad.replica.leader_endpoint import FetchPartitionData, TopicPartition

INVALID_SESSION_ID = 0
INITIAL_EPOCH = 0
INT32_MAX = 0x7FFFFFFF


class FetchRequestData:
    """One fetch's share of the session: what to send, what to forget, under which id/epoch."""

    __slots__ = ("to_send", "to_forget", "session_id", "epoch")

    def __init__(self, to_send: dict[TopicPartition, FetchPartitionData],
                 to_forget: dict[TopicPartition, bytes], session_id: int, epoch: int):
        self.to_send = to_send
        #: tp -> topic id of the partitions that left the session
        self.to_forget = to_forget
        self.session_id = session_id
        self.epoch = epoch


class FetchSessionHandler:
    def __init__(self) -> None:
        self.session_id = INVALID_SESSION_ID
        self.next_epoch = INITIAL_EPOCH
        #: what the leader's session holds for each partition (as last sent)
        self.session_partitions: dict[TopicPartition, FetchPartitionData] = {}

    @property
    def is_full(self) -> bool:
        return self.next_epoch == INITIAL_EPOCH

    def build(self, partitions: dict[TopicPartition, FetchPartitionData]) -> FetchRequestData:
        """The next fetch for ``partitions`` (all the fetcher wants now)."""
        previous = self.session_partitions
        self.session_partitions = dict(partitions)
        if self.is_full:
            # a new session (closing ours, if any: the leader drops it on epoch 0)
            return FetchRequestData(dict(partitions), {}, self.session_id, INITIAL_EPOCH)
        to_send = {tp: d for tp, d in partitions.items() if previous.get(tp) != d}
        to_forget = {tp: d.topic_id for tp, d in previous.items() if tp not in partitions}
        return FetchRequestData(to_send, to_forget, self.session_id, self.next_epoch)

    def handle_response(self, response: Any) -> bool:
        """Moves the session on after a response; False when the response must be ignored
        (a session error: the next fetch is a full one)."""
        if response.error_code != ErrorCode.NONE:
            self._reset(keep_id=response.error_code != ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
            return False
        if self.is_full:
            self.session_id = response.session_id
            if response.session_id != INVALID_SESSION_ID:
                self.next_epoch = 1
            return True
        self.next_epoch = 1 if self.next_epoch >= INT32_MAX else self.next_epoch + 1
        return True

    def handle_error(self) -> None:
        """The fetch failed (no response): the next one starts a new session."""
        self._reset(keep_id=True)

    def _reset(self, *, keep_id: bool) -> None:
        if not keep_id:
            self.session_id = INVALID_SESSION_ID
        self.next_epoch = INITIAL_EPOCH
        self.session_partitions = {}
