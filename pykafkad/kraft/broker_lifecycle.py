"""Kafka's BrokerLifecycleManager: a broker's registration with the active controller and its
heartbeats, which carry how far it has replayed the metadata log and whether it wants to stay
fenced or to shut down.

States as Kafka's BrokerState: STARTING (registered, catching up with the metadata log,
heartbeating every 10 ms), RECOVERY (caught up, fenced until it is ready and the controller
unfences it), RUNNING, PENDING_CONTROLLED_SHUTDOWN (``want_shut_down`` until the controller
has moved its leaderships away and says it may stop), SHUTTING_DOWN.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass

import trio

from wire.errors import ErrorCode
from wire.messages.broker_heartbeat_request import BrokerHeartbeatRequest
from wire.messages.broker_registration_request import (
    BrokerRegistrationRequest,
    Feature,
    Listener,
)

log = logging.getLogger("pykafkad.kraft.lifecycle")

#: Kafka's SecurityProtocol ids
SECURITY_PROTOCOLS = {"PLAINTEXT": 0, "SSL": 1, "SASL_PLAINTEXT": 2, "SASL_SSL": 3}
#: how often a broker still catching up heartbeats (Kafka: 10 ms)
CATCHING_UP_INTERVAL_S = 0.01
#: heartbeats while waiting for the controller's leave to shut down
SHUTDOWN_INTERVAL_S = 0.1
RETRY_BACKOFF_S = 0.1

STARTING, RECOVERY, RUNNING = "STARTING", "RECOVERY", "RUNNING"
PENDING_CONTROLLED_SHUTDOWN, SHUTTING_DOWN = "PENDING_CONTROLLED_SHUTDOWN", "SHUTTING_DOWN"


@dataclass(frozen=True)
class AdvertisedListener:
    name: str
    host: str
    port: int
    security_protocol: str = "PLAINTEXT"


class BrokerLifecycleManager:
    def __init__(self, node_id: int, cluster_id: str, channel, *,
                 listeners: Callable[[], list[AdvertisedListener]],
                 metadata_offset: Callable[[], int],
                 features: list[tuple[str, int, int]],
                 log_dir_ids: list[bytes], rack: str | None = None,
                 heartbeat_interval_ms: int = 2000):
        self.node_id = node_id
        self.cluster_id = cluster_id
        self.channel = channel
        self.listeners = listeners
        self.metadata_offset = metadata_offset
        self.features = features
        self.log_dir_ids = log_dir_ids
        self.rack = rack
        self.heartbeat_interval_s = heartbeat_interval_ms / 1000
        self.incarnation_id = uuid.uuid4().bytes
        self.broker_epoch = -1
        self.state = STARTING
        self.ready_to_unfence = False
        self.is_fenced = True
        self.registered = trio.Event()
        self.caught_up = trio.Event()
        self.unfenced = trio.Event()
        self.shutdown_allowed = trio.Event()
        self._wake = trio.Event()

    # -- the broker's calls ----------------------------------------------------------------
    def set_ready_to_unfence(self) -> None:
        """The broker has loaded the metadata it needs: it stops asking to stay fenced."""
        self.ready_to_unfence = True
        self._wake.set()

    async def controlled_shutdown(self, timeout_s: float) -> bool:
        """Asks the controller to move this broker's leaderships away; True once it says the
        broker may stop, False when ``timeout_s`` passes first (or it never registered)."""
        if self.broker_epoch < 0 or self.state == SHUTTING_DOWN:
            return self.state == SHUTTING_DOWN
        log.info("Broker %d: beginning controlled shutdown.", self.node_id)
        self.state = PENDING_CONTROLLED_SHUTDOWN
        self._wake.set()
        with trio.move_on_after(timeout_s):
            await self.shutdown_allowed.wait()
        if not self.shutdown_allowed.is_set():
            log.warning("Broker %d: the controller did not allow the shutdown within %.1f s; "
                        "stopping anyway.", self.node_id, timeout_s)
        return self.shutdown_allowed.is_set()

    # -- the loop ----------------------------------------------------------------------------
    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        while self.state != SHUTTING_DOWN:
            if self.broker_epoch < 0:
                ok = await self._register()
                interval = 0 if ok else RETRY_BACKOFF_S
            else:
                ok = await self._heartbeat()
                interval = self._next_interval() if ok else RETRY_BACKOFF_S
            if self.state == SHUTTING_DOWN:
                return
            with trio.move_on_after(interval):
                await self._wake.wait()
            self._wake = trio.Event()

    def _next_interval(self) -> float:
        if self.state == STARTING:
            return CATCHING_UP_INTERVAL_S
        if self.state == PENDING_CONTROLLED_SHUTDOWN:
            return SHUTDOWN_INTERVAL_S
        return self.heartbeat_interval_s

    async def _register(self) -> bool:
        request = BrokerRegistrationRequest(
            broker_id=self.node_id, cluster_id=self.cluster_id,
            incarnation_id=self.incarnation_id,
            listeners=[Listener(name=e.name, host=e.host, port=e.port,
                                security_protocol=SECURITY_PROTOCOLS.get(e.security_protocol, 0))
                       for e in self.listeners()],
            features=[Feature(name=n, min_supported_version=lo, max_supported_version=hi)
                      for n, lo, hi in self.features],
            rack=self.rack, log_dirs=list(self.log_dir_ids), previous_broker_epoch=-1)
        try:
            response = await self.channel.send(request)
        except trio.TooSlowError:
            log.info("Broker %d: no active controller answered the registration; retrying.",
                     self.node_id)
            return False
        if response.error_code != ErrorCode.NONE:
            log.error("Broker %d: unable to register with the controller: %s", self.node_id,
                      ErrorCode(response.error_code).name)
            return False
        self.broker_epoch = response.broker_epoch
        log.info("Broker %d: successfully registered with broker epoch %d, incarnation %s.",
                 self.node_id, self.broker_epoch, uuid.UUID(bytes=self.incarnation_id))
        self.registered.set()
        return True

    async def _heartbeat(self) -> bool:
        shutting_down = self.state == PENDING_CONTROLLED_SHUTDOWN
        request = BrokerHeartbeatRequest(
            broker_id=self.node_id, broker_epoch=self.broker_epoch,
            current_metadata_offset=self.metadata_offset(),
            want_fence=self.state == STARTING or not self.ready_to_unfence,
            want_shut_down=shutting_down)
        try:
            response = await self.channel.send(request)
        except trio.TooSlowError:
            log.info("Broker %d: no active controller answered the heartbeat.", self.node_id)
            return False
        code = response.error_code
        if code in (ErrorCode.STALE_BROKER_EPOCH, ErrorCode.BROKER_ID_NOT_REGISTERED):
            log.info("Broker %d: the controller answered %s; registering again.", self.node_id,
                     ErrorCode(code).name)
            self.broker_epoch = -1
            return True
        if code != ErrorCode.NONE:
            log.warning("Broker %d: heartbeat failed: %s", self.node_id, ErrorCode(code).name)
            return False
        was_fenced, self.is_fenced = self.is_fenced, response.is_fenced
        if self.state == STARTING and response.is_caught_up:
            log.info("Broker %d: caught up with the cluster metadata; transitioning from "
                     "STARTING to RECOVERY.", self.node_id)
            self.state = RECOVERY
            self.caught_up.set()
            self._wake.set()  # the next heartbeat at once
        elif self.state == RECOVERY and not response.is_fenced:
            log.info("Broker %d: the broker has been unfenced. Transitioning from RECOVERY "
                     "to RUNNING.", self.node_id)
            self.state = RUNNING
            self.unfenced.set()
        elif self.state == RUNNING and response.is_fenced and not was_fenced:
            log.warning("Broker %d: the controller fenced this broker; asking to be unfenced "
                        "again.", self.node_id)
            self.state = RECOVERY
        elif self.state == PENDING_CONTROLLED_SHUTDOWN and response.should_shut_down:
            log.info("Broker %d: the controller has asked us to exit controlled shutdown.",
                     self.node_id)
            self.state = SHUTTING_DOWN
            self.shutdown_allowed.set()
        return True
