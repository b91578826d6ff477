"""Kafka's RemoteLeaderEndPoint: what a follower asks its leader, over a NodeClient.

The inter-broker Fetch (replica id and broker epoch in ReplicaState from v15, the replica id
field before; READ_UNCOMMITTED; topic ids from v13, topic names at v12 when an id is unknown),
ListOffsets for the leader's earliest / latest offset (a follower's view: the log start and log
end), and OffsetForLeaderEpoch for the end offset of an epoch on the leader.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from pykafkad.network.client import NodeClient
from pykafkad.replica.fetch_session import FetchSessionHandler
from wire.errors import ErrorCode, KafkaError
from wire.messages.fetch_request import (
    FetchPartition,
    FetchRequest,
    FetchTopic,
    ForgottenTopic,
    ReplicaState,
)
from wire.messages.list_offsets_request import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsTopic,
)
from wire.messages.offset_for_leader_epoch_request import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
)
from wire.primitives import ZERO_UUID

#: (topic, partition)
TopicPartition = tuple[str, int]

EARLIEST_TIMESTAMP = -2
LATEST_TIMESTAMP = -1
READ_UNCOMMITTED = 0
#: the newest Fetch version that names topics (v13 on name them by id)
FETCH_TOPIC_NAMES_VERSION = 12
FETCH_TOPIC_IDS_VERSION = 13


def error_code(code: int) -> ErrorCode:
    """``code`` as an ErrorCode (UNKNOWN_SERVER_ERROR for a code this codec does not know)."""
    try:
        return ErrorCode(code)
    except ValueError:
        return ErrorCode.UNKNOWN_SERVER_ERROR


class BrokerEndpoint(NamedTuple):
    """The leader's broker id and the address of its inter-broker listener."""

    id: int
    host: str
    port: int


@dataclass(frozen=True)
class FetcherConfig:
    """The replica.fetch.* broker configs, Kafka's defaults."""

    #: replica.fetch.wait.max.ms
    max_wait_ms: int = 500
    #: replica.fetch.min.bytes
    min_bytes: int = 1
    #: replica.fetch.max.bytes (per partition)
    max_bytes_per_partition: int = 1_048_576
    #: replica.fetch.response.max.bytes
    response_max_bytes: int = 10_485_760
    #: replica.fetch.backoff.ms
    backoff_ms: int = 1000
    #: num.replica.fetchers (fetchers per source broker)
    num_fetchers: int = 1
    #: how long one request may take beyond its long poll before the leader counts as gone
    #: (replica.socket.timeout.ms)
    request_timeout_ms: int = 30_000
    #: incremental fetch sessions (KIP-227), as Kafka's followers use
    fetch_sessions: bool = True

    KEYS = {
        "replica.fetch.wait.max.ms": "max_wait_ms",
        "replica.fetch.min.bytes": "min_bytes",
        "replica.fetch.max.bytes": "max_bytes_per_partition",
        "replica.fetch.response.max.bytes": "response_max_bytes",
        "replica.fetch.backoff.ms": "backoff_ms",
        "num.replica.fetchers": "num_fetchers",
        "replica.socket.timeout.ms": "request_timeout_ms",
    }

    @classmethod
    def from_config(cls, config: Any) -> FetcherConfig:
        """From a broker config mapping (keys it lacks keep Kafka's defaults)."""
        values = {}
        for key, attr in cls.KEYS.items():
            try:
                value = config[key]
            except KeyError:
                continue
            if value is not None:
                values[attr] = int(value)
        return cls(**values)


class FetchPartitionData(NamedTuple):
    """What one partition of a fetch asks for."""

    topic_id: bytes
    fetch_offset: int
    log_start_offset: int
    current_leader_epoch: int
    #: -1 when the fetch does not ask the leader to check for divergence
    last_fetched_epoch: int
    #: replica.fetch.max.bytes, or less (see ReplicaFetcher)
    max_bytes: int


class RemoteLeaderEndPoint:
    """One leader broker as a follower's fetcher sees it."""

    def __init__(
        self,
        endpoint: BrokerEndpoint,
        client: NodeClient,
        *,
        replica_id: int,
        broker_epoch: Callable[[], int],
        config: FetcherConfig,
    ):
        self.endpoint = endpoint
        self.client = client
        self.replica_id = replica_id
        self._broker_epoch = broker_epoch
        self.config = config
        self.session = FetchSessionHandler() if config.fetch_sessions else None

    def __repr__(self) -> str:
        return f"RemoteLeaderEndPoint({self.endpoint})"

    @property
    def _timeout_s(self) -> float:
        return (self.config.max_wait_ms + self.config.request_timeout_ms) / 1000

    def session_holds_partitions(self) -> bool:
        """Whether the leader's fetch session still has partitions of ours."""
        session = self.session
        return session is not None and not session.is_full and bool(session.session_partitions)

    def build_fetch(
        self, partitions: dict[TopicPartition, FetchPartitionData]
    ) -> tuple[FetchRequest, int | None]:
        """The Fetch for ``partitions`` (with a session: only what changed since the last one)
        and the version to send it at (None: the newest the leader serves; 12 when some topic
        id is unknown, as Kafka does)."""
        config = self.config
        names_only = any(d.topic_id == ZERO_UUID for d in partitions.values())
        if self.session is not None:
            data = self.session.build(partitions)
            to_send, to_forget = data.to_send, data.to_forget
            session_id, epoch = data.session_id, data.epoch
        else:
            to_send, to_forget, session_id, epoch = partitions, {}, 0, -1  # no session
        topics: dict[str, FetchTopic] = {}
        for (topic, partition), d in to_send.items():
            ft = topics.get(topic)
            if ft is None:
                ft = topics[topic] = FetchTopic(topic=topic, topic_id=d.topic_id)
            ft.partitions.append(FetchPartition(
                partition=partition,
                current_leader_epoch=d.current_leader_epoch,
                fetch_offset=d.fetch_offset,
                last_fetched_epoch=d.last_fetched_epoch,
                log_start_offset=d.log_start_offset,
                partition_max_bytes=d.max_bytes,
            ))
        forgotten: dict[str, ForgottenTopic] = {}
        for (topic, partition), topic_id in to_forget.items():
            ft = forgotten.get(topic)
            if ft is None:
                ft = forgotten[topic] = ForgottenTopic(topic=topic, topic_id=topic_id)
            ft.partitions.append(partition)
        request = FetchRequest(
            replica_id=self.replica_id,
            replica_state=ReplicaState(replica_id=self.replica_id,
                                       replica_epoch=self._broker_epoch()),
            max_wait_ms=config.max_wait_ms,
            min_bytes=config.min_bytes,
            max_bytes=config.response_max_bytes,
            isolation_level=READ_UNCOMMITTED,
            session_id=session_id,
            session_epoch=epoch,
            topics=list(topics.values()),
            forgotten_topics_data=list(forgotten.values()),
        )
        return request, FETCH_TOPIC_NAMES_VERSION if names_only else None

    async def fetch(self, request: FetchRequest, version: int | None) -> Any | None:
        """Sends the Fetch. None: the session was refused (the next fetch is a full one, at
        once); another top-level error is raised as KafkaError."""
        try:
            response = await self.client.request(request, version, timeout_s=self._timeout_s)
        except BaseException:
            if self.session is not None:
                self.session.handle_error()
            raise
        if self.session is not None and not self.session.handle_response(response):
            if response.error_code != ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR:
                return None
        if response.error_code:
            raise KafkaError(error_code(response.error_code), "fetch failed at the leader")
        return response

    async def fetch_epoch_end_offsets(
        self, partitions: dict[TopicPartition, tuple[int, int]]
    ) -> dict[TopicPartition, tuple[int, int, int]]:
        """OffsetForLeaderEpoch for ``{tp: (current leader epoch, epoch)}``:
        ``{tp: (error code, leader epoch, end offset)}``."""
        topics: dict[str, OffsetForLeaderTopic] = {}
        for (topic, partition), (current, epoch) in partitions.items():
            ot = topics.get(topic)
            if ot is None:
                ot = topics[topic] = OffsetForLeaderTopic(topic=topic)
            ot.partitions.append(OffsetForLeaderPartition(
                partition=partition, current_leader_epoch=current, leader_epoch=epoch))
        response = await self.client.request(
            OffsetForLeaderEpochRequest(replica_id=self.replica_id, topics=list(topics.values())),
            timeout_s=self.config.request_timeout_ms / 1000)
        return {
            (t.topic, p.partition): (p.error_code, p.leader_epoch, p.end_offset)
            for t in response.topics for p in t.partitions
        }

    async def fetch_earliest_offset(self, tp: TopicPartition, current_leader_epoch: int) -> int:
        """The leader's log start offset (ListOffsets EARLIEST as a replica)."""
        return await self._list_offset(tp, current_leader_epoch, EARLIEST_TIMESTAMP)

    async def fetch_latest_offset(self, tp: TopicPartition, current_leader_epoch: int) -> int:
        """The leader's log end offset (ListOffsets LATEST as a replica)."""
        return await self._list_offset(tp, current_leader_epoch, LATEST_TIMESTAMP)

    async def _list_offset(self, tp: TopicPartition, current_leader_epoch: int, ts: int) -> int:
        topic, partition = tp
        request = ListOffsetsRequest(
            replica_id=self.replica_id, isolation_level=READ_UNCOMMITTED,
            topics=[ListOffsetsTopic(name=topic, partitions=[ListOffsetsPartition(
                partition_index=partition, current_leader_epoch=current_leader_epoch,
                timestamp=ts)])])
        response = await self.client.request(
            request, timeout_s=self.config.request_timeout_ms / 1000)
        for t in response.topics:
            for p in t.partitions:
                if (t.name, p.partition_index) == tp:
                    if p.error_code:
                        raise KafkaError(error_code(p.error_code),
                                         f"ListOffsets for {topic}-{partition} failed")
                    return p.offset
        raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR,
                         f"ListOffsets answered no offset for {topic}-{partition}")

    async def aclose(self) -> None:
        await self.client.aclose()
