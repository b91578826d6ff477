"""A broker's quota state: the configured quotas and one ClientQuotaManager per quota type.

The connection asks ``active`` once per request: with no quota configured nothing else runs.
"""

from __future__ import annotations

import time

from pykafkad.quotas.entity import CONSUMER_BYTE_RATE, PRODUCER_BYTE_RATE, REQUEST_PERCENTAGE
from pykafkad.quotas.manager import ClientQuotaManager
from pykafkad.quotas.table import apply_changes

PRODUCE, FETCH = 0, 1
#: ClientRequestQuotaManager.NanosToPercentagePerSecond
NANOS_TO_PERCENTAGE = 100.0 / 1e9
#: APIs Kafka never throttles by request time (inter-broker and controller APIs, ApiVersions)
REQUEST_QUOTA_EXEMPT = frozenset({4, 5, 6, 7, 18, 27, 52, 53, 54, 55, 56, 58, 62, 63, 64, 67, 70})


def _config_int(config, name: str, default: int) -> int:
    try:
        return int(config[name])
    except (KeyError, TypeError, ValueError):
        return default


class BrokerQuotas:
    def __init__(self, config=None) -> None:
        samples = _config_int(config, "quota.window.num", 11) if config is not None else 11
        window_s = (_config_int(config, "quota.window.size.seconds", 1)
                    if config is not None else 1)
        #: entity -> {key: value}: the single node's own table
        self.quotas: dict = {}
        self.produce = ClientQuotaManager(PRODUCER_BYTE_RATE, samples=samples, window_s=window_s)
        self.fetch = ClientQuotaManager(CONSUMER_BYTE_RATE, samples=samples, window_s=window_s)
        self.request = ClientQuotaManager(REQUEST_PERCENTAGE, samples=samples, window_s=window_s)

    @property
    def active(self) -> bool:
        return bool(self.quotas)

    def apply(self, changes) -> None:
        apply_changes(self.quotas, changes)

    def fetch_window_bytes(self, client_id: str, user: str = "ANONYMOUS") -> int:
        """ClientQuotaManager.getMaxValueInQuotaWindow: the most a fetch may return, the
        quota times ``quota.window.num - 1`` windows (so one fetch cannot overrun it alone)."""
        found = self.fetch.quota(self.quotas, user, client_id)
        if found is None:
            return 2**31 - 1
        m = self.fetch
        return int(min(found[0] * (m.samples - 1) * m.window_ms / 1000, 2**31 - 1))

    def throttle_ms(self, api_key: int, user: str, client_id: str, size: int,
                    handler_ns: int) -> int:
        """Records a request (``size``: the produce request's or the fetch response's bytes,
        ``handler_ns``: time in its handler) and answers the longest throttle it earns."""
        now_ms = int(time.time() * 1000)
        throttle = 0
        if api_key == PRODUCE:
            throttle = self.produce.record_and_throttle_ms(self.quotas, user, client_id, size,
                                                          now_ms)
        elif api_key == FETCH:
            throttle = self.fetch.record_and_throttle_ms(self.quotas, user, client_id, size,
                                                        now_ms)
        if api_key not in REQUEST_QUOTA_EXEMPT:
            throttle = max(throttle, self.request.record_and_throttle_ms(
                self.quotas, user, client_id, handler_ns * NANOS_TO_PERCENTAGE, now_ms))
        return throttle


def broker_quotas(broker) -> BrokerQuotas:
    """The broker's quota state, made on first use."""
    quotas = getattr(broker, "client_quotas", None)
    if quotas is None:
        quotas = broker.client_quotas = BrokerQuotas(getattr(broker, "config", None))
    return quotas
