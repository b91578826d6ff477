"""Kafka's ControllerMutationQuotaManager (KIP-599): ``controller_mutation_rate``, in
partitions created or deleted per second, for CreateTopics, DeleteTopics and CreatePartitions.

The active controller checks it, per topic, with the principal and client id of the request
(the Envelope's, for a request a broker forwarded). From the versions that know the error
(CreateTopics v6, DeleteTopics v5, CreatePartitions v3) the quota is strict: once the bucket
is in debt, every further topic is refused with THROTTLING_QUOTA_EXCEEDED, while the topic
that takes it into debt still passes. Older versions are permissive: everything is done and
only the throttle time tells the client to slow down.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from pykafkad.quotas.entity import CONTROLLER_MUTATION_RATE
from pykafkad.quotas.manager import ClientQuotaManager
from pykafkad.quotas.token_bucket import TokenBucket, throttle_ms

#: the first strict version of each API that records mutations (ControllerApis)
STRICT_SINCE = {19: 6, 20: 5, 37: 3}


class ThrottlingQuotaExceeded(Exception):
    """A strict quota refused a mutation; ``throttle_time_ms`` is how long the bucket needs."""

    def __init__(self, throttle_time_ms: int) -> None:
        super().__init__("The throttling quota has been exceeded.")
        self.throttle_time_ms = throttle_time_ms


class MutationQuota:
    """The quota of one request: records its mutations and remembers the throttle time the
    last violation earned (counted down from when it was recorded, as Kafka's
    AbstractControllerMutationQuota)."""

    def __init__(self, bucket: TokenBucket, quota: float, burst: float, strict: bool,
                 clock: Callable[[], int]) -> None:
        self.bucket, self.quota, self.burst = bucket, quota, burst
        self.strict = strict
        self.clock = clock
        self._throttle_ms = 0
        self._recorded_ms = 0

    def record(self, permits: int) -> None:
        now = self.clock()
        if self.strict:
            tokens = self.bucket.measure(self.quota, self.burst, now)
            if tokens < 0:  # checked before recording: a request within the bucket passes whole
                self._violated(tokens, now)
                raise ThrottlingQuotaExceeded(self._throttle_ms)
            self.bucket.record(permits, self.quota, self.burst, now)
        else:
            self.bucket.record(permits, self.quota, self.burst, now)
            tokens = self.bucket.measure(self.quota, self.burst, now)
            if tokens < 0:
                self._violated(tokens, now)

    def _violated(self, tokens: float, now: int) -> None:
        self._throttle_ms = throttle_ms(tokens, self.quota)
        self._recorded_ms = now

    @property
    def throttle_time_ms(self) -> int:
        return max(0, self._throttle_ms - (self.clock() - self._recorded_ms))


class ControllerMutationQuotaManager(ClientQuotaManager):
    """The controller's buckets, one per quota in use (keyed as the other client quotas'
    rates are: by user and/or client id, after the entity that matched)."""

    def __init__(self, *, samples: int = 11, window_s: int = 1,
                 clock: Callable[[], int] | None = None) -> None:
        super().__init__(CONTROLLER_MUTATION_RATE, samples=samples, window_s=window_s)
        self.clock = clock or (lambda: int(time.time() * 1000))
        self._buckets: dict[tuple[str, str], TokenBucket] = {}

    def quota_for(self, quotas, user: str, client_id: str, api_key: int,
                  version: int) -> MutationQuota | None:
        """The request's quota; None when no controller_mutation_rate applies to it."""
        found = self.quota(quotas, user, client_id)
        if found is None:
            return None
        bound, key = found
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = TokenBucket()
        return MutationQuota(bucket, bound, TokenBucket.burst(bound, self.samples, self.window_ms),
                             version >= STRICT_SINCE[api_key], self.clock)
