"""Kafka's TokenBucket stat (KIP-599): the controller mutation quota is a bucket of partition
mutations, not a sampled rate, so a burst up to the bucket's size passes at once and the
bucket then refills at the quota's rate.

The bucket holds ``quota * samples * window`` tokens at most (``controller.quota.window.num``
windows of ``controller.quota.window.size.seconds``) and starts full. Recording takes tokens
out and may leave it negative: the debt is what the throttle time pays back.
"""

from __future__ import annotations

import math


class TokenBucket:
    __slots__ = ("tokens", "last_update_ms")

    def __init__(self) -> None:
        #: None until first used: Kafka's bucket starts empty at time 0, so its first refill
        #: fills it to the brim
        self.tokens: float | None = None
        self.last_update_ms = 0

    @staticmethod
    def burst(quota: float, samples: int, window_ms: int) -> float:
        return samples * (window_ms / 1000.0) * quota

    def _refill(self, quota: float, burst: float, now_ms: int) -> None:
        if self.tokens is None:
            self.tokens = burst
        else:
            self.tokens = min(burst, self.tokens + quota * (now_ms - self.last_update_ms) / 1000.0)
        self.last_update_ms = now_ms

    def measure(self, quota: float, burst: float, now_ms: int) -> float:
        """The tokens left now (negative: in debt)."""
        self._refill(quota, burst, now_ms)
        return self.tokens

    def record(self, value: float, quota: float, burst: float, now_ms: int) -> None:
        self._refill(quota, burst, now_ms)
        self.tokens = min(burst, self.tokens - value)


def throttle_ms(tokens: float, quota: float) -> int:
    """How long until a bucket in debt is back at zero when nothing more is taken
    (ControllerMutationQuotaManager.throttleTimeMs). Java's Math.round: halves round up."""
    return int(math.floor(-tokens / quota * 1000 + 0.5))
