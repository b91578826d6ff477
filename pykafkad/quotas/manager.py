"""Kafka's ClientQuotaManager: which quota applies to a (user, client-id) and the throttle
time of a request that takes the rate over it.

The quota found is the most specific one configured (DefaultQuotaCallback's order: user and
client-id, user and default client, user, default user and client-id, defaults, client-id,
default client). Requests that share the quota share its rate: the rate is kept per user when
the quota names a user (or the default user) and per client-id when it names a client (or the
default client), as Kafka's metric tags are.
"""

from __future__ import annotations

from collections.abc import Mapping

from pykafkad.quotas.entity import CLIENT_ID, USER, Entity
from pykafkad.quotas.rate import SampledRate


def quota_entities(user: str, client_id: str) -> list[Entity]:
    """The entities to look a quota up in, most specific first."""
    return [
        ((CLIENT_ID, client_id), (USER, user)),
        ((CLIENT_ID, None), (USER, user)),
        ((USER, user),),
        ((CLIENT_ID, client_id), (USER, None)),
        ((CLIENT_ID, None), (USER, None)),
        ((USER, None),),
        ((CLIENT_ID, client_id),),
        ((CLIENT_ID, None),),
    ]


class ClientQuotaManager:
    """One quota type (``key``: producer_byte_rate, consumer_byte_rate, request_percentage)."""

    def __init__(self, key: str, *, samples: int = 11, window_s: int = 1) -> None:
        self.key = key
        self.samples, self.window_ms = samples, window_s * 1000
        self._rates: dict[tuple[str, str], SampledRate] = {}

    def quota(self, quotas: Mapping[Entity, Mapping[str, float]], user: str,
              client_id: str) -> tuple[float, tuple[str, str]] | None:
        """The bound and the rate's key, or None when no quota applies."""
        for entity in quota_entities(user, client_id):
            values = quotas.get(entity)
            if values is not None and self.key in values:
                named = dict(entity)
                return values[self.key], (user if USER in named else "",
                                          client_id if CLIENT_ID in named else "")
        return None

    def record_and_throttle_ms(self, quotas, user: str, client_id: str, value: float,
                               now_ms: int) -> int:
        """Records ``value`` against the quota that applies and answers the throttle time
        (QuotaUtils.throttleTime: how far over the bound, as a share of the bound, times the
        window the rate was measured over); 0 when within the quota or none applies."""
        found = self.quota(quotas, user, client_id)
        if found is None:
            return 0
        bound, key = found
        rate = self._rates.get(key)
        if rate is None:
            rate = self._rates[key] = SampledRate(self.samples, self.window_ms, now_ms)
        rate.record(value, now_ms)
        window_ms = rate.window_size_ms(now_ms)
        measured = sum(rate._values) / (window_ms / 1000.0)
        if measured <= bound:
            return 0
        return round((measured - bound) / bound * window_ms)

    def unrecord(self, quotas, user: str, client_id: str, value: float) -> None:
        """Takes back a value recorded for a response that was not sent (a throttled fetch)."""
        found = self.quota(quotas, user, client_id)
        rate = self._rates.get(found[1]) if found is not None else None
        if rate is not None:
            rate._values[rate._current] -= value
