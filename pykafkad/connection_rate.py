"""Connection creation rates, as Kafka's ConnectionQuotas throttles them (KIP-612).

``max.connection.creation.rate`` (broker-wide) and ``listener.name.<l>.max.connection
.creation.rate`` (a listener; unset, the broker-wide value): every accepted connection is
counted against both, and one over the rate holds the listener's acceptor for the throttle
time before the connection is served (the next ones wait in the listen backlog meanwhile).
The inter-broker listener of a broker with several listeners is exempt from the broker-wide
rate, so replication is never starved by clients.

``connection_creation_rate`` (an ``ip`` client quota, or the ``<default>`` ip's): a connection
over its address's rate is not counted, never read from, and closed once the throttle time has
passed: the client sees its requests go unanswered, then the connection close.

Rates are Kafka's sampled rates (``quota.window.num`` windows of ``quota.window.size.seconds``),
and a throttle time never exceeds one window.
"""

from __future__ import annotations

import ipaddress
import math
import socket
import time
from collections.abc import Callable, Mapping

from pykafkad.quotas.entity import CONNECTION_CREATION_RATE, IP
from pykafkad.quotas.rate import SampledRate

INT_MAX = 2**31 - 1
RATE = "max.connection.creation.rate"


def _listener_setting(config, listener: str, name: str):
    """``listener.name.<l>.<name>``, as Kafka's valuesWithPrefixOverride finds it: a per-broker
    dynamic value, a cluster-wide one, then the startup one; None when unset."""
    key = f"listener.name.{listener.lower()}.{name}"
    for source in ("dynamic_broker_configs", "dynamic_default_configs", "ignored"):
        value = getattr(config, source, {}).get(key)
        if value not in (None, ""):
            return value
    return None


class ConnectionRates:
    """One SocketServer's rate sensors: broker-wide, per listener, per IP address."""

    def __init__(self, config, listeners: list[str], inter_broker: str | None = None,
                 ip_quotas: Callable[[], Mapping] | None = None,
                 clock: Callable[[], int] | None = None) -> None:
        self.config = config
        self.samples = config["quota.window.num"]
        self.window_ms = config["quota.window.size.seconds"] * 1000
        #: an inter-broker listener among several is protected from the broker-wide rate
        self.protected = inter_broker if len(listeners) > 1 else None
        self.ip_quotas = ip_quotas or (lambda: {})
        self.clock = clock or (lambda: int(time.time() * 1000))
        self._broker: SampledRate | None = None
        self._listeners: dict[str, SampledRate] = {}
        self._ips: dict[str, SampledRate] = {}
        #: ip quota names -> their address (host names resolved once)
        self._resolved: dict[str, str | None] = {}

    # --- the broker and listener rates ----------------------------------------------------
    def _broker_rate(self) -> int:
        return self.config[RATE]

    def _listener_rate(self, listener: str) -> int:
        value = _listener_setting(self.config, listener, RATE)
        try:
            return int(value) if value is not None else self._broker_rate()
        except ValueError:
            return self._broker_rate()

    def record_connection(self, listener: str) -> int:
        """Counts a new connection on ``listener`` (and the broker, unless protected); the
        milliseconds the acceptor waits before serving it (0: within both rates)."""
        now = self.clock()
        throttle = 0
        if listener != self.protected:
            self._broker = self._broker or self._new_rate(now)
            throttle = self._record(self._broker, self._broker_rate(), 1.0, now)
        rate = self._listeners.get(listener)
        if rate is None:
            rate = self._listeners[listener] = self._new_rate(now)
        return max(throttle, self._record(rate, self._listener_rate(listener), 1.0, now))

    # --- the per-IP rate ------------------------------------------------------------------
    def ip_rate(self, ip: str) -> int | None:
        """The address's connection_creation_rate (its own quota, else the default IP's);
        None when neither is set.  A quota named by host name is its address's, as Kafka
        resolves it."""
        quotas = self.ip_quotas()
        if not quotas:
            return None
        address = _normal(ip)
        default = None
        for entity, values in quotas.items():
            if len(entity) != 1 or entity[0][0] != IP or CONNECTION_CREATION_RATE not in values:
                continue
            name = entity[0][1]
            if name is None:
                default = int(values[CONNECTION_CREATION_RATE])
            elif self._address_of(name) == address:
                return int(values[CONNECTION_CREATION_RATE])
        return default

    def _address_of(self, name: str) -> str | None:
        found = self._resolved.get(name)
        if found is None and name not in self._resolved:
            found = _normal(name)
            if found == name and not _is_ip(name):
                try:
                    found = socket.gethostbyname(name)
                except OSError:
                    found = None
            self._resolved[name] = found
        return found

    def ip_throttle(self, listener: str, ip: str) -> int:
        """Counts a connection from ``ip`` against its quota; over it, the throttle time
        (ms) after which the connection is closed, and the connection is counted nowhere
        (Kafka takes it back from the IP's, listener's and broker's rates)."""
        bound = self.ip_rate(ip)
        if bound is None:
            return 0
        now = self.clock()
        key = _normal(ip)
        rate = self._ips.get(key)
        if rate is None:
            rate = self._ips[key] = self._new_rate(now)
        throttle = self._record(rate, bound, 1.0, now)
        if throttle > 0:
            rate.record(-1.0, now)
            if listener != self.protected and self._broker is not None:
                self._broker.record(-1.0, now)
            if listener in self._listeners:
                self._listeners[listener].record(-1.0, now)
        return throttle

    # --- Kafka's Rate with a quota --------------------------------------------------------
    def _new_rate(self, now: int) -> SampledRate:
        return SampledRate(self.samples, self.window_ms, now)

    def _record(self, rate: SampledRate, bound: float, value: float, now: int) -> int:
        """Sensor.record with its quota checked, then QuotaUtils.boundedThrottleTime: how far
        the measured rate is over the bound, as a share of it, times the window the rate was
        measured over; at most one window."""
        rate.record(value, now)
        window = rate.window_size_ms(now)
        measured = sum(rate._values) / (window / 1000.0)
        if measured <= bound:
            return 0
        return min(_java_round((measured - bound) / bound * window), self.window_ms)


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


def _normal(ip: str) -> str:
    try:
        return str(ipaddress.ip_address(ip))
    except ValueError:
        return ip


def _java_round(x: float) -> int:
    """Java's Math.round: halves round up."""
    return int(math.floor(x + 0.5))
