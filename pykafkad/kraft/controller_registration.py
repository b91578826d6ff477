"""Kafka's ControllerRegistrationManager (KIP-919): every controller tells the active
controller its controller-listener endpoints and supported features, which the active one
writes as a RegisterControllerRecord. DescribeCluster on a controller listener lists these
registrations, and UpdateFeatures checks every registered controller supports a new level.

The manager registers once the metadata.version allows it (3.7-IV0) and again whenever the
log no longer holds this process's registration (another incarnation's, or none).
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

import trio

from pykafkad.kraft.broker_lifecycle import SECURITY_PROTOCOLS
from wire.errors import ErrorCode
from wire.messages.controller_registration_request import (
    ControllerRegistrationRequest,
    Feature,
    Listener,
)

log = logging.getLogger("pykafkad.kraft.controller_registration")

IBP_3_7_IV0 = 15
#: Kafka's resend backoff after a failed registration (exponential, 100 ms to 10 s)
RETRY_MIN_S, RETRY_MAX_S = 0.1, 10.0


class ControllerRegistrationManager:
    def __init__(self, node_id: int, channel: Any, *,
                 listeners: list[tuple[str, str, int, str]],
                 features: list[tuple[str, int, int]]):
        """``listeners``: (name, host, port, security protocol) of the controller listeners;
        ``features``: (name, min, max) this controller supports."""
        self.node_id = node_id
        self.channel = channel
        self.listeners = listeners
        self.features = features
        self.incarnation_id = uuid.uuid4().bytes
        self.metadata_version = 0
        self.registered_in_log = False
        self._last_seen = None
        self._changed = trio.Event()

    # -- MetadataPublisher -------------------------------------------------------------------
    def on_metadata_update(self, delta, image, manifest) -> None:
        """As Kafka's manager, only a change of the metadata.version or of this node's
        registration wakes it (an acknowledged registration is committed: it will show up)."""
        mv = image.features.metadata_version or 0
        reg = image.controllers.get(self.node_id)
        if mv == self.metadata_version and reg == self._last_seen:
            return
        self.metadata_version, self._last_seen = mv, reg
        self.registered_in_log = reg is not None and reg.incarnation_id == self.incarnation_id
        self._changed.set()

    def request(self) -> ControllerRegistrationRequest:
        return ControllerRegistrationRequest(
            controller_id=self.node_id, incarnation_id=self.incarnation_id,
            zk_migration_ready=False,
            listeners=[Listener(name=n, host=h, port=p,
                                security_protocol=SECURITY_PROTOCOLS.get(sp, 0))
                       for n, h, p, sp in self.listeners],
            features=[Feature(name=n, min_supported_version=lo, max_supported_version=hi)
                      for n, lo, hi in self.features])

    async def _wait_change(self, timeout_s: float | None = None) -> None:
        with trio.move_on_after(3600 if timeout_s is None else timeout_s):
            await self._changed.wait()
        self._changed = trio.Event()

    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        backoff = RETRY_MIN_S
        while True:
            if self.registered_in_log or self.metadata_version < IBP_3_7_IV0:
                await self._wait_change()
                continue
            try:
                response = await self.channel.send(self.request())
                error = response.error_code
            except trio.TooSlowError:
                error = ErrorCode.REQUEST_TIMED_OUT
            if error == ErrorCode.NONE:
                log.info("Controller %d: the active controller acknowledged the registration.",
                         self.node_id)
                backoff = RETRY_MIN_S
                await self._wait_change()
                continue
            log.info("Controller %d: registration failed with error %s; retrying",
                     self.node_id, error)
            await trio.sleep(backoff)
            backoff = min(backoff * 2, RETRY_MAX_S)
