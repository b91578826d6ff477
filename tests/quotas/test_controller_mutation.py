"""The controller mutation quota's arithmetic on explicit clock readings: Kafka's TokenBucket
(burst = quota x samples x window, starting full), strict and permissive recording, and the
throttle time that pays the bucket's debt back."""

from __future__ import annotations

import pytest

from pykafkad.quotas.controller_mutation import (
    ControllerMutationQuotaManager,
    ThrottlingQuotaExceeded,
)
from pykafkad.quotas.token_bucket import TokenBucket

KEY = "controller_mutation_rate"
QUOTAS = {(("client-id", "c"),): {KEY: 2.0}}


class Clock:
    def __init__(self) -> None:
        self.ms = 1_000_000

    def __call__(self) -> int:
        return self.ms


def manager() -> tuple[ControllerMutationQuotaManager, Clock]:
    clock = Clock()
    return ControllerMutationQuotaManager(clock=clock), clock


def test_no_quota_is_unbounded():
    m, _ = manager()
    assert m.quota_for({}, "ANONYMOUS", "c", 19, 7) is None
    assert m.quota_for(QUOTAS, "ANONYMOUS", "other", 19, 7) is None


def test_a_new_bucket_is_full_and_refills_at_the_quota_up_to_the_burst():
    b = TokenBucket()
    burst = TokenBucket.burst(2.0, 11, 1000)
    assert burst == 22.0
    assert b.measure(2.0, burst, 5000) == 22.0
    b.record(30, 2.0, burst, 5000)
    assert b.measure(2.0, burst, 5000) == -8.0
    assert b.measure(2.0, burst, 6500) == -5.0
    assert b.measure(2.0, burst, 60000) == 22.0  # never above the burst


def test_strict_passes_the_request_that_empties_the_bucket_then_refuses():
    m, clock = manager()
    first = m.quota_for(QUOTAS, "ANONYMOUS", "c", 19, 6)
    first.record(50)  # 22 tokens: accepted whole, the bucket is now 28 in debt
    assert first.throttle_time_ms == 0
    second = m.quota_for(QUOTAS, "ANONYMOUS", "c", 19, 6)
    with pytest.raises(ThrottlingQuotaExceeded) as e:
        second.record(1)
    assert e.value.throttle_time_ms == 14000  # 28 tokens at 2 per second
    clock.ms += 4000
    assert second.throttle_time_ms == 10000  # counted down from when it was recorded
    with pytest.raises(ThrottlingQuotaExceeded) as e:
        second.record(1)
    assert e.value.throttle_time_ms == 10000
    clock.ms += 10000
    second.record(1)  # back at zero: accepted


def test_permissive_records_everything_and_throttles_from_the_first_debt():
    m, _ = manager()
    for version in (5, 5):
        q = m.quota_for(QUOTAS, "ANONYMOUS", "c", 19, version)
        q.record(50)
    assert q.throttle_time_ms == 39000  # 22 - 100 = -78 tokens at 2 per second


@pytest.mark.parametrize(("api_key", "strict_since"), [(19, 6), (20, 5), (37, 3)])
def test_strict_from_the_version_that_knows_the_error(api_key, strict_since):
    m, _ = manager()
    assert m.quota_for(QUOTAS, "ANONYMOUS", "c", api_key, strict_since).strict
    assert not m.quota_for(QUOTAS, "ANONYMOUS", "c", api_key, strict_since - 1).strict


def test_the_bucket_is_shared_by_whom_the_quota_names():
    quotas = {(("user", "alice"),): {KEY: 1.0}}
    m, _ = manager()
    m.quota_for(quotas, "alice", "one", 19, 7).record(11)
    m.quota_for(quotas, "alice", "two", 19, 7).record(1)  # the user's bucket: now in debt
    with pytest.raises(ThrottlingQuotaExceeded):
        m.quota_for(quotas, "alice", "three", 19, 7).record(1)
