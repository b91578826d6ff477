"""Connection limits, as Kafka's ConnectionQuotas applies them.

``max.connections``: at the limit, the broker stops accepting (new connections wait in the
listen backlog) until one closes.  ``max.connections.per.ip`` (with
``max.connections.per.ip.overrides``, ``host:count,...``): a connection beyond its address's
limit is accepted and closed at once.  Both are read at every accept, so AlterConfigs changes
apply to new connections.
"""

from __future__ import annotations

import logging
import socket
from collections import Counter

import trio

log = logging.getLogger("pykafkad")


class ConnectionQuotas:
    def __init__(self, config) -> None:
        self.config = config
        self.total = 0
        self.per_ip: Counter[str] = Counter()
        self._freed = trio.Event()
        self._overrides: dict[str, int] = {}
        self._overrides_raw: str | None = None

    async def wait_for_slot(self) -> None:
        """Returns once fewer than max.connections connections are open."""
        while self.total >= self.config["max.connections"]:
            await self._freed.wait()

    def admit(self, ip: str) -> bool:
        """Counts a new connection from ``ip``; False (and nothing counted) beyond its limit."""
        limit = self._limit(ip)
        if self.per_ip[ip] >= limit:
            log.info("Rejected connection from /%s, address already has the configured "
                     "maximum of %d connections.", ip, limit)
            return False
        self.per_ip[ip] += 1
        self.total += 1
        return True

    def release(self, ip: str) -> None:
        self.per_ip[ip] -= 1
        if not self.per_ip[ip]:
            del self.per_ip[ip]
        self.total -= 1
        self._freed.set()
        self._freed = trio.Event()

    def _limit(self, ip: str) -> int:
        raw = self.config["max.connections.per.ip.overrides"] or ""
        if raw != self._overrides_raw:
            self._overrides = _parse_overrides(raw)
            self._overrides_raw = raw
        return self._overrides.get(ip, self.config["max.connections.per.ip"])


def _parse_overrides(raw: str) -> dict[str, int]:
    """``"host:count,..."`` by IP address (host names resolved, as Kafka's InetAddress)."""
    out: dict[str, int] = {}
    for entry in (e.strip() for e in raw.split(",") if e.strip()):
        host, _, count = entry.rpartition(":")
        try:
            out[socket.gethostbyname(host.strip("[] "))] = int(count)
        except (OSError, ValueError):
            log.warning("ignoring max.connections.per.ip.overrides entry %r", entry)
    return out
