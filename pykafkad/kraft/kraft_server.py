"""Kafka's KafkaRaftServer: a KRaft node by its process.roles.

Every node runs the SharedServer (raft client, metadata loader). A controller adds the
ControllerServer behind its CONTROLLER listeners; a broker adds the BrokerLifecycleManager and
today's Broker behind its broker listeners. The node is ready (``run``'s task_status) once its
listeners are bound and, for a broker, once the controller has unfenced it (Kafka's broker
waits for that before "Kafka Server started"). Stopping: the broker's controlled shutdown, the
listeners, then the raft client (a leader resigns so the quorum elects at once).
"""

from __future__ import annotations

import logging
from pathlib import Path

import trio

from pykafkad.controller.supported_features import controller_supported_features
from pykafkad.kraft.broker_lifecycle import (
    AdvertisedListener,
    BrokerLifecycleManager,
    supported_features,
)
from pykafkad.kraft.broker_server import BrokerServer
from pykafkad.kraft.controller_channel import ControllerChannel
from pykafkad.kraft.controller_registration import ControllerRegistrationManager
from pykafkad.kraft.controller_server import ControllerServer
from pykafkad.kraft.dynamic_config_publisher import DynamicConfigPublisher
from pykafkad.kraft.migration import single_node_records
from pykafkad.kraft.security_publisher import SecurityPublisher
from pykafkad.kraft.shared_server import SharedServer, check_storage
from pykafkad.launcher import CLUSTER_STOP_MARK
from pykafkad.log.log_dirs import configured_log_dirs, load_log_dirs, online_log_dir_ids
from pykafkad.security.client import controller_security
from pykafkad.server import Server

log = logging.getLogger("pykafkad.kraft")

#: how long a stopping broker waits for the controller's leave (Kafka: up to 5 minutes)
CONTROLLED_SHUTDOWN_TIMEOUT_S = 10.0
#: how long a resigning raft leader waits for the other voters' EndQuorumEpoch answers
RESIGN_TIMEOUT_S = 5.0



class KafkaRaftServer:
    """Quacks like ``pykafkad.server.Server`` for the command line: ``run``,
    ``request_shutdown``, ``broker``, ``listeners``, ``host``, ``port``."""

    #: the default ``pykafkad`` (a one-voter node the user never configured as one): it keeps
    #: the single-node ready line
    single_node = False

    def __init__(self, config, data_dir: Path, broker, server: Server, *, meta=None):
        self.config = config
        self.data_dir = Path(data_dir)
        self.broker = broker
        self.server = server
        self.roles = config.node_roles
        meta = meta or check_storage(config, self.data_dir)
        # every log dir of log.dirs, the data dir first (registration, DescribeLogDirs)
        broker.log_dirs = load_log_dirs(configured_log_dirs(config, self.data_dir))
        self.shared = SharedServer(config, self.data_dir, meta, clock=broker.clock)
        broker.shared_server = self.shared
        broker.raft = self.shared.raft
        self.shared.loader.add_publisher(SecurityPublisher(broker))
        self.controller: ControllerServer | None = None
        if "controller" in self.roles:
            migration = None
            if "broker" in self.roles and len(self.shared.voters) == 1:
                node_id, directory_id = config.node_id, self.shared.directory_id
                migration = lambda: single_node_records(self.data_dir, node_id, directory_id)  # noqa: E731
            self.controller = ControllerServer(self.shared, config, migration=migration)
        broker.controller_server = self.controller
        self.registration_channel: ControllerChannel | None = None
        self.registration: ControllerRegistrationManager | None = None
        if self.controller is not None:
            raft = self.shared.raft
            self.registration_channel = ControllerChannel(
                self.shared.voters, leader=lambda: raft.leader_and_epoch.leader_id,
                client_id=f"controller-{config.node_id}-registration-manager",
                security=controller_security(config))
            self.registration = ControllerRegistrationManager(
                config.node_id, self.registration_channel,
                listeners=self._controller_listeners(),
                features=controller_supported_features())
            self.shared.loader.add_publisher(self.registration)
        self.channel: ControllerChannel | None = None
        self.lifecycle: BrokerLifecycleManager | None = None
        self.broker_server: BrokerServer | None = None
        if "broker" in self.roles:
            raft = self.shared.raft
            self.channel = ControllerChannel(
                self.shared.voters, leader=lambda: raft.leader_and_epoch.leader_id,
                client_id=f"broker-{config.node_id}-to-controller",
                security=controller_security(config))
            broker.controller_channel = self.channel
            self.lifecycle = BrokerLifecycleManager(
                config.node_id, self.shared.cluster_id, self.channel,
                listeners=self._advertised_listeners,
                metadata_offset=lambda: self.shared.loader.last_offset,
                features=supported_features(),
                log_dir_ids=online_log_dir_ids(broker.log_dirs, self.shared.directory_id),
                rack=config["broker.rack"],
                heartbeat_interval_ms=config["broker.heartbeat.interval.ms"],
                previous_broker_epoch=broker.logs.previous_broker_epoch,
                session_timeout_ms=config["broker.session.timeout.ms"])
            if self.controller is not None:
                local = (config.node_id, self.lifecycle.incarnation_id)
                self.controller.local_broker = self.controller.controller.cluster.local_broker = local
            broker.lifecycle = self.lifecycle
            inter_broker = config.inter_broker_listener
            self.broker_server = BrokerServer(
                broker, self.channel,
                inter_broker_listener=inter_broker.listener_name if inter_broker else "PLAINTEXT",
                broker_epoch=lambda: self.lifecycle.broker_epoch)
            self.shared.loader.add_publisher(DynamicConfigPublisher(broker))
        self._shutdown = trio.Event()
        #: the broker part stops (controlled shutdown, then its controller channels)
        self._stop_broker = trio.Event()
        #: the launcher stops the whole cluster (request_cluster_stop): nobody then waits for
        #: peers that are stopping too
        self.cluster_stopping = False
        self._controlled_shutdown_scope: trio.CancelScope | None = None

    # -- what the command line reads ------------------------------------------------------------
    @property
    def listeners(self):
        return self.server.listeners

    @property
    def host(self) -> str:
        return self.server.host

    @property
    def port(self) -> int:
        return self.server.port

    def request_shutdown(self) -> None:
        self._stop_broker.set()
        self._shutdown.set()
        if self.cluster_stopping and self._controlled_shutdown_scope is not None:
            self._controlled_shutdown_scope.cancel()  # the launcher stopped waiting for it

    def request_cluster_stop(self) -> None:
        """The whole cluster is being stopped (as Kafka's test harness does: brokers first,
        in parallel, controllers last): the broker part does its controlled shutdown now,
        while every controller still runs, then logs CLUSTER_STOP_MARK; the shutdown that
        follows resigns without waiting for the other voters' answers, as they stop too."""
        self.cluster_stopping = True
        self._stop_broker.set()

    def _advertised_listeners(self) -> list[AdvertisedListener]:
        from pykafkad.dispatch import BROKER

        protocols = {e.listener_name: e.security_protocol for e in self.config.listeners}
        out = []
        for spec in self.server.listeners:
            if spec.kind is not BROKER:
                continue
            ep = self.broker.endpoint_for(spec.name)
            out.append(AdvertisedListener(spec.name, ep.host, ep.port,
                                          protocols.get(spec.name, "PLAINTEXT")))
        return out

    def _controller_listeners(self) -> list[tuple[str, str, int, str]]:
        """(name, host, port, protocol) of this controller's listeners, as registered."""
        from pykafkad.dispatch import CONTROLLER

        protocols = {e.listener_name: e.security_protocol for e in self.config.listeners}
        host, port = self.shared.voters.get(self.config.node_id, ("", 0))
        return [(spec.name, spec.advertised_host or spec.host or host,
                 spec.advertised_port or spec.port or port, protocols.get(spec.name, "PLAINTEXT"))
                for spec in self.server.listeners if spec.kind is CONTROLLER]

    # -- running ---------------------------------------------------------------------------------
    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        try:
            await self._run(task_status)
        except BaseExceptionGroup as group:  # e.g. a listener that cannot bind: as Server's
            errors = group.exceptions
            if len(errors) == 1 and isinstance(errors[0], OSError):
                raise errors[0] from None
            raise

    async def _until(self, event: trio.Event) -> None:
        """Waits for ``event``, or for a shutdown asked meanwhile."""
        async with trio.open_nursery() as waiting:
            async def until_set() -> None:
                await event.wait()
                waiting.cancel_scope.cancel()

            async def until_shutdown() -> None:
                await self._shutdown.wait()
                waiting.cancel_scope.cancel()

            waiting.start_soon(until_set)
            waiting.start_soon(until_shutdown)

    async def _run(self, task_status) -> None:
        server_done = trio.Event()

        async def run_server(task_status=trio.TASK_STATUS_IGNORED) -> None:
            try:
                await self.server.run(task_status=task_status)
            finally:
                server_done.set()

        async with trio.open_nursery() as nursery:
            await nursery.start(self.shared.run)
            if self.controller is not None:
                await nursery.start(self.controller.run)
            port = await nursery.start(run_server)
            if self.registration is not None:
                await nursery.start(self.registration.run)
            if self.broker_server is not None:
                await nursery.start(self.broker_server.run)
            if self.lifecycle is not None:
                await nursery.start(self.lifecycle.run)
                await self._until(self.lifecycle.caught_up)
                # Kafka's BrokerServer installs its publishers once the controller says the
                # broker caught up: the first image it applies is the whole current one (the
                # logs found at start are checked against it), never one replayed on the way
                if self.lifecycle.caught_up.is_set():
                    self.shared.loader.add_publisher(self.broker_server.publisher)
                    self.lifecycle.set_ready_to_unfence()
                await self._until(self.lifecycle.unfenced)
                if self.lifecycle.unfenced.is_set():
                    log.info("Node %d: the broker is registered and unfenced.", self.config.node_id)
            task_status.started(port)
            await self._stop_broker.wait()
            if self.lifecycle is not None:
                raft = self.shared.raft
                with trio.CancelScope() as self._controlled_shutdown_scope:
                    if self.cluster_stopping and self._shutdown.is_set():
                        self._controlled_shutdown_scope.cancel()
                    allowed = await self.lifecycle.controlled_shutdown(
                        CONTROLLED_SHUTDOWN_TIMEOUT_S,
                        quorum_leader=lambda: raft.leader_and_epoch.leader_id,
                        leaderless_grace_s=raft.config.fetch_timeout_ms / 1000)
                    if allowed:  # recorded in the clean-shutdown marker for the next start
                        self.broker.logs.broker_epoch = self.lifecycle.broker_epoch
                self._controlled_shutdown_scope = None
            if self.channel is not None:
                await self.channel.aclose()
            if self.registration_channel is not None:
                await self.registration_channel.aclose()
            if not self._shutdown.is_set():
                log.info("Node %d: %s.", self.config.node_id, CLUSTER_STOP_MARK)
                await self._shutdown.wait()
            # the raft client resigns while the controller listener still serves the other
            # voters (their EndQuorumEpoch answers, their fetches), then the listeners close;
            # when the whole cluster stops, the others are stopping too: no one to wait for
            await self.shared.shutdown(0 if self.cluster_stopping else RESIGN_TIMEOUT_S)
            with trio.move_on_after(RESIGN_TIMEOUT_S):
                await self.shared.stopped.wait()
            self.server.request_shutdown()
            await server_done.wait()
            nursery.cancel_scope.cancel()
