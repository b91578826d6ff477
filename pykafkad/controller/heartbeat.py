"""Kafka's BrokerHeartbeatManager: the active controller's in-memory broker sessions.

Sessions are not metadata: they live only on the active controller, are created when a
registration is handled or replayed, and are refreshed by heartbeats. A broker whose last
contact is older than broker.session.timeout.ms is stale and gets fenced. Time is injected
as ``now_ms`` on every call.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class BrokerControlState(enum.Enum):
    FENCED = (True, False, False)
    UNFENCED = (False, False, False)
    CONTROLLED_SHUTDOWN = (False, True, False)
    SHUTDOWN_NOW = (True, False, True)

    @property
    def fenced(self) -> bool:
        return self.value[0]

    @property
    def in_controlled_shutdown(self) -> bool:
        return self.value[1]

    @property
    def should_shut_down(self) -> bool:
        return self.value[2]


@dataclass
class BrokerHeartbeatState:
    id: int
    last_contact_ms: int = 0
    metadata_offset: int = -1
    controlled_shutdown_offset: int = -1
    fenced: bool = True

    @property
    def shutting_down(self) -> bool:
        return self.controlled_shutdown_offset >= 0


class BrokerHeartbeatManager:
    def __init__(self, session_timeout_ms: int) -> None:
        self.session_timeout_ms = session_timeout_ms
        self.brokers: dict[int, BrokerHeartbeatState] = {}

    def has_valid_session(self, broker_id: int, now_ms: int) -> bool:
        b = self.brokers.get(broker_id)
        return b is not None and self._valid(b, now_ms)

    def _valid(self, b: BrokerHeartbeatState, now_ms: int) -> bool:
        return not b.fenced and b.last_contact_ms + self.session_timeout_ms >= now_ms

    def register(self, broker_id: int, fenced: bool, now_ms: int) -> None:
        b = self.brokers.get(broker_id)
        offset = -1
        if b is None:
            b = self.brokers[broker_id] = BrokerHeartbeatState(broker_id)
        elif b.fenced != fenced:
            offset = b.metadata_offset
        self.touch(broker_id, fenced, offset, now_ms)

    def remove(self, broker_id: int) -> None:
        self.brokers.pop(broker_id, None)

    def touch(self, broker_id: int, fenced: bool, metadata_offset: int, now_ms: int) -> None:
        b = self.brokers[broker_id]
        b.last_contact_ms = now_ms
        b.metadata_offset = metadata_offset
        b.fenced = fenced
        if fenced:
            b.controlled_shutdown_offset = -1

    def fence(self, broker_id: int) -> None:
        b = self.brokers.get(broker_id)
        if b is not None:
            b.fenced = True
            b.controlled_shutdown_offset = -1

    def maybe_update_controlled_shutdown_offset(self, broker_id: int, offset: int) -> None:
        b = self.brokers[broker_id]
        if b.fenced:
            raise RuntimeError("Fenced brokers cannot enter controlled shutdown.")
        if b.controlled_shutdown_offset < 0:
            b.controlled_shutdown_offset = offset

    def lowest_active_offset(self) -> int:
        offsets = [b.metadata_offset for b in self.brokers.values()
                   if not b.fenced and not b.shutting_down]
        return min(offsets) if offsets else 2**63 - 1

    def find_one_stale_broker(self, now_ms: int) -> int | None:
        """The unfenced broker heard from longest ago, if its session has expired."""
        unfenced = [b for b in self.brokers.values() if not b.fenced]
        if not unfenced:
            return None
        oldest = min(unfenced, key=lambda b: (b.last_contact_ms, b.id))
        return None if self._valid(oldest, now_ms) else oldest.id

    def next_check_time_ms(self) -> int | None:
        unfenced = [b.last_contact_ms for b in self.brokers.values() if not b.fenced]
        return min(unfenced) + self.session_timeout_ms if unfenced else None

    def current_state(self, broker_id: int) -> BrokerControlState:
        b = self.brokers[broker_id]
        if b.shutting_down:
            return BrokerControlState.CONTROLLED_SHUTDOWN
        return BrokerControlState.FENCED if b.fenced else BrokerControlState.UNFENCED

    def next_state(self, broker_id: int, *, want_fence: bool, want_shut_down: bool,
                   current_metadata_offset: int, register_offset: int,
                   has_leaderships: bool) -> tuple[BrokerControlState, BrokerControlState]:
        """(current, next) as Kafka's calculateNextBrokerState decides them."""
        S = BrokerControlState
        cur = self.current_state(broker_id)
        if cur is S.FENCED:
            if want_shut_down:
                return cur, S.SHUTDOWN_NOW
            if not want_fence and current_metadata_offset >= register_offset:
                return cur, S.UNFENCED
            return cur, S.FENCED
        if cur is S.UNFENCED:
            if want_fence:
                return cur, S.SHUTDOWN_NOW if want_shut_down else S.FENCED
            if want_shut_down:
                return cur, S.CONTROLLED_SHUTDOWN if has_leaderships else S.SHUTDOWN_NOW
            return cur, S.UNFENCED
        # CONTROLLED_SHUTDOWN
        if has_leaderships:
            return cur, S.CONTROLLED_SHUTDOWN
        b = self.brokers[broker_id]
        if b.controlled_shutdown_offset <= self.lowest_active_offset():
            return cur, S.SHUTDOWN_NOW
        return cur, S.CONTROLLED_SHUTDOWN
