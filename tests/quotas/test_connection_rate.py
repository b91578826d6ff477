"""Connection creation rates on explicit clock readings (Kafka's ConnectionQuotas): a fresh
rate is measured over at least ``quota.window.num - 1`` windows, a throttle never exceeds one
window, and a connection throttled for its IP is counted nowhere."""

from __future__ import annotations

from pykafkad.config.broker import BrokerConfig
from pykafkad.connection_rate import ConnectionRates


class Clock:
    def __init__(self) -> None:
        self.ms = 1_000_000

    def __call__(self) -> int:
        return self.ms


def rates(settings=None, quotas=None, listeners=("PLAINTEXT",), inter_broker=None):
    clock = Clock()
    config = BrokerConfig(dict(settings or {}))
    r = ConnectionRates(config, list(listeners), inter_broker,
                        ip_quotas=lambda: quotas or {}, clock=clock)
    return r, clock


def test_unlimited_by_default():
    r, _ = rates()
    assert all(r.record_connection("PLAINTEXT") == 0 for _ in range(1000))
    assert r.ip_throttle("PLAINTEXT", "127.0.0.1") == 0


def test_ip_rate_admits_a_window_of_connections_then_throttles_one_window():
    quotas = {(("ip", "127.0.0.1"),): {"connection_creation_rate": 1.0}}
    r, clock = rates(quotas=quotas)
    # 1 per second over a 10 s minimum window: ten at once are within it
    assert [r.ip_throttle("PLAINTEXT", "127.0.0.1") for _ in range(10)] == [0] * 10
    # the eleventh: 1.1/s, (0.1 / 1) x 10 s = 1 s, the bound anyway
    assert r.ip_throttle("PLAINTEXT", "127.0.0.1") == 1000
    # not counted: the next one is throttled the same, and other addresses are not limited
    assert r.ip_throttle("PLAINTEXT", "127.0.0.1") == 1000
    assert r.ip_throttle("PLAINTEXT", "127.0.0.2") == 0
    clock.ms += 10500  # measured over 10.5 s now: still 11 would be over 1/s
    assert r.ip_throttle("PLAINTEXT", "127.0.0.1") == 500
    clock.ms += 500  # 11 windows on, the first ten have left the rate
    assert r.ip_throttle("PLAINTEXT", "127.0.0.1") == 0


def test_the_default_ip_quota_applies_to_addresses_without_their_own():
    quotas = {(("ip", None),): {"connection_creation_rate": 1.0},
              (("ip", "10.0.0.1"),): {"connection_creation_rate": 100.0}}
    r, _ = rates(quotas=quotas)
    assert r.ip_rate("127.0.0.1") == 1
    assert r.ip_rate("10.0.0.1") == 100


def test_an_ip_quota_named_by_host_is_its_addresss():
    r, _ = rates(quotas={(("ip", "localhost"),): {"connection_creation_rate": 3.0}})
    assert r.ip_rate("127.0.0.1") == 3
    assert r.ip_rate("10.0.0.1") is None


def test_broker_rate_delays_and_a_listener_setting_overrides_it():
    r, _ = rates({"max.connection.creation.rate": "2"})
    assert [r.record_connection("PLAINTEXT") for _ in range(20)] == [0] * 20
    assert r.record_connection("PLAINTEXT") == 500  # (2.1 - 2) / 2 x 10 s
    r, _ = rates({"listener.name.plaintext.max.connection.creation.rate": "1"})
    assert [r.record_connection("PLAINTEXT") for _ in range(10)] == [0] * 10
    assert r.record_connection("PLAINTEXT") == 1000


def test_the_inter_broker_listener_among_several_escapes_the_broker_rate():
    # a listener's own rate is the broker-wide one unless its listener.name.* setting says
    # otherwise (Kafka's valuesWithPrefixOverride): the inter-broker listener escapes only
    # the broker-wide count
    r, _ = rates({"max.connection.creation.rate": "1",
                  "listener.name.internal.max.connection.creation.rate": "100"},
                 listeners=("PLAINTEXT", "INTERNAL"), inter_broker="INTERNAL")
    assert all(r.record_connection("INTERNAL") == 0 for _ in range(50))
    assert [r.record_connection("PLAINTEXT") for _ in range(10)] == [0] * 10
    assert r.record_connection("PLAINTEXT") == 1000


def test_an_ip_throttled_connection_is_taken_back_from_the_broker_rate():
    quotas = {(("ip", "127.0.0.1"),): {"connection_creation_rate": 1.0}}
    r, _ = rates({"max.connection.creation.rate": "2"}, quotas=quotas)
    for _ in range(10):
        assert r.record_connection("PLAINTEXT") == 0
        assert r.ip_throttle("PLAINTEXT", "127.0.0.1") == 0
    for _ in range(30):  # throttled for the IP: none of them counts for the broker
        assert r.record_connection("PLAINTEXT") == 0
        assert r.ip_throttle("PLAINTEXT", "127.0.0.1") == 1000
    assert [r.record_connection("PLAINTEXT") for _ in range(10)] == [0] * 10
