"""ClientQuotaManager's arithmetic on explicit clock readings: which quota applies, the rate over
``quota.window.num`` windows, and Kafka's throttle time (QuotaUtils.throttleTime)."""

from __future__ import annotations

from pykafkad.quotas.manager import ClientQuotaManager

KEY = "producer_byte_rate"


def test_no_quota_no_throttle():
    m = ClientQuotaManager(KEY)
    assert m.record_and_throttle_ms({}, "ANONYMOUS", "c", 10**9, 0) == 0


def test_throttle_is_the_excess_over_the_bound_times_the_window():
    # 10 KB/s; 11 samples of 1 s: a fresh rate is measured over at least 10 s, so 100 KB is
    # exactly at the bound, and each byte over it costs 1000 ms / 10240 of throttle
    quotas = {(("client-id", "c"),): {KEY: 10240.0}}
    m = ClientQuotaManager(KEY)
    assert m.record_and_throttle_ms(quotas, "ANONYMOUS", "c", 102400, 0) == 0
    throttle = m.record_and_throttle_ms(quotas, "ANONYMOUS", "c", 51200, 0)
    # rate = 153600 / 10 s = 15360 B/s; (15360 - 10240) / 10240 * 10000 ms
    assert throttle == 5000


def test_the_window_grows_with_elapsed_time_once_past_the_minimum():
    quotas = {(("client-id", "c"),): {KEY: 1000.0}}
    m = ClientQuotaManager(KEY)
    m.record_and_throttle_ms(quotas, "ANONYMOUS", "c", 5000, 0)
    # 10.5 s later a new sample starts; the window is 10.5 s (ten whole windows have passed)
    throttle = m.record_and_throttle_ms(quotas, "ANONYMOUS", "c", 10000, 10500)
    assert throttle == round((15000 / 10.5 - 1000) / 1000 * 10500)


def test_samples_older_than_the_whole_window_are_dropped():
    quotas = {(("client-id", "c"),): {KEY: 1000.0}}
    m = ClientQuotaManager(KEY)
    assert m.record_and_throttle_ms(quotas, "ANONYMOUS", "c", 50000, 0) > 0
    assert m.record_and_throttle_ms(quotas, "ANONYMOUS", "c", 100, 11000) == 0


def test_the_most_specific_quota_applies_and_defaults_are_shared_per_name():
    quotas = {
        (("user", None),): {KEY: 100.0},
        (("client-id", "c"), ("user", "alice")): {KEY: 1e9},
        (("client-id", None),): {KEY: 5.0},
    }
    m = ClientQuotaManager(KEY)
    assert m.quota(quotas, "alice", "c") == (1e9, ("alice", "c"))
    # the default user quota: one rate per user, whatever the client id
    assert m.quota(quotas, "bob", "x") == (100.0, ("bob", ""))
    assert m.quota({(("client-id", None),): {KEY: 5.0}}, "bob", "x") == (5.0, ("", "x"))
    assert m.quota({}, "bob", "x") is None
