"""The controller.quorum.* settings, with Kafka's names and defaults (QuorumConfig)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class QuorumConfig:
    #: controller.quorum.election.timeout.ms: wait this (randomized up to twice) for a leader
    election_timeout_ms: int = 1000
    #: controller.quorum.election.backoff.max.ms: the most a lost election waits to retry
    election_backoff_max_ms: int = 1000
    #: controller.quorum.fetch.timeout.ms: a follower without a successful fetch this long
    #: looks for a new leader
    fetch_timeout_ms: int = 2000
    #: controller.quorum.request.timeout.ms
    request_timeout_ms: int = 2000
    #: controller.quorum.retry.backoff.ms
    retry_backoff_ms: int = 20
    #: the Fetch long-poll of the raft client (KafkaRaftClient's fetchMaxWaitMs)
    fetch_max_wait_ms: int = 500
    #: the bytes a raft Fetch asks for (KafkaRaftClient: 8 MiB)
    fetch_max_bytes: int = 8 * 1024 * 1024
    #: FetchSnapshot max_bytes
    fetch_snapshot_max_bytes: int = 8 * 1024 * 1024

    @property
    def check_quorum_timeout_ms(self) -> int:
        """A leader that has not heard from a majority for this long resigns (1.5 fetch
        timeouts, as Kafka's LeaderState)."""
        return int(self.fetch_timeout_ms * 1.5)

    @classmethod
    def from_properties(cls, props: dict[str, str]) -> QuorumConfig:
        def get(key: str, default: int) -> int:
            return int(props.get(key, default))

        d = cls()
        return cls(
            election_timeout_ms=get("controller.quorum.election.timeout.ms", d.election_timeout_ms),
            election_backoff_max_ms=get("controller.quorum.election.backoff.max.ms",
                                        d.election_backoff_max_ms),
            fetch_timeout_ms=get("controller.quorum.fetch.timeout.ms", d.fetch_timeout_ms),
            request_timeout_ms=get("controller.quorum.request.timeout.ms", d.request_timeout_ms),
            retry_backoff_ms=get("controller.quorum.retry.backoff.ms", d.retry_backoff_ms),
        )
