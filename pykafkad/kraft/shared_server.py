"""Kafka's SharedServer: what every KRaft node runs whatever its roles: the checked,
formatted log dirs, the RaftClient over ``__cluster_metadata-0`` (a voter when this node is in
controller.quorum.voters or in the dynamic quorum's voter set, an observer otherwise) and the MetadataLoader publishing images.

The broker side registers its publishers with ``metadata_listener(publisher)`` (or
``add_publisher``); ``raft`` is the RaftClient.
"""

from __future__ import annotations

import logging
from pathlib import Path

import trio

from pykafkad.kraft.loader import MetadataLoader, MetadataPublisher
from pykafkad.log.log_dirs import configured_log_dirs
from pykafkad.metadata.properties import MetaProperties, check_formatted, uuid_from_string
from pykafkad.metadata.snapshot import read_snapshot
from pykafkad.raft.client import RaftClient
from pykafkad.raft.config import QuorumConfig
from pykafkad.raft.log import DIR_NAME, MetadataLogRetention, metadata_log_config
from pykafkad.raft.voter_set import VoterSet, bootstrap_ids, read_voter_set
from pykafkad.security.client import controller_security

log = logging.getLogger("pykafkad.kraft")

_QUORUM_KEYS = ("controller.quorum.election.timeout.ms",
                "controller.quorum.election.backoff.max.ms",
                "controller.quorum.fetch.timeout.ms", "controller.quorum.request.timeout.ms",
                "controller.quorum.retry.backoff.ms")


def setting(config, key: str, default):
    """A node setting read straight from the config (internal.* overrides are only in
    ``config.ignored``): the given value, else Kafka's default."""
    try:
        value = config[key]
    except KeyError:
        value = config.ignored.get(key)
    if value is None or value == "":
        return default
    return type(default)(value) if default is not None else str(value)


#: how often the metadata log is checked against its retention (Kafka: every 60 s)
CLEAN_INTERVAL_S = 60.0


#: Kafka 4.4's minimum metadata.log.segment.bytes (tests lower it with the internal override)
METADATA_LOG_SEGMENT_MIN_BYTES = 8 * 1024 * 1024


def metadata_segment_bytes(config) -> int:
    """metadata.log.segment.bytes, refused below 8 MiB as Kafka 4.4 refuses it;
    internal.metadata.log.segment.bytes (Kafka's test-only override) wins when set."""
    internal = setting(config, "internal.metadata.log.segment.bytes", 0)
    if internal > 0:
        return internal
    value = setting(config, "metadata.log.segment.bytes", 1073741824)
    if value < METADATA_LOG_SEGMENT_MIN_BYTES:
        raise ValueError(f"Invalid value {value} for configuration metadata.log.segment.bytes: "
                         f"Value must be at least {METADATA_LOG_SEGMENT_MIN_BYTES}")
    return value


def _snapshot_timestamp(path: Path) -> int | None:
    """The last contained log timestamp of a snapshot, from its header."""
    try:
        return read_snapshot(path).last_contained_log_timestamp
    except (OSError, ValueError):
        return None


def metadata_log_dir(config, data_dir: Path | None = None) -> Path:
    """metadata.log.dir, else the first log dir (``data_dir`` when the node was given one)."""
    configured = setting(config, "metadata.log.dir", None)
    if configured:
        return Path(configured)
    if data_dir is not None:
        return Path(data_dir)
    return Path(config.log_dirs[0])


def check_storage(config, data_dir: Path) -> MetaProperties:
    """Kafka's start-up check of the log dirs (MetaPropertiesError with Kafka's message)."""
    dirs = ([str(d) for d in configured_log_dirs(config, data_dir)] if data_dir is not None
            else list(config.log_dirs))
    meta_dir = metadata_log_dir(config, data_dir)
    if str(meta_dir) not in dirs:
        dirs.append(str(meta_dir))
    return check_formatted(dirs, metadata_log_dir=meta_dir, node_id=config.node_id)


def quorum_config(config) -> QuorumConfig:
    props = {}
    for key in _QUORUM_KEYS:
        try:
            if config.is_set(key):
                props[key] = str(config[key])
        except KeyError:
            continue
    return QuorumConfig.from_properties(props)


class SharedServer:
    def __init__(self, config, data_dir: Path, meta: MetaProperties, *, clock=None):
        self.config = config
        self.node_id = config.node_id
        self.cluster_id = meta.cluster_id
        self.metadata_log_dir = metadata_log_dir(config, data_dir)
        self.directory_id = uuid_from_string(meta.directory_id)
        voters = {node: (host, port) for node, host, port in config.quorum_voters}
        #: kraft.version 0 (static controller.quorum.voters) or 1 (KIP-853's dynamic quorum,
        #: whose voters the bootstrap checkpoint or a snapshot holds)
        self.kraft_version = 0
        self.voter_set: VoterSet | None = None
        if not voters:
            names = config.controller_listener_names
            self.voter_set = read_voter_set(self.metadata_log_dir / DIR_NAME,
                                            names[0] if names else "CONTROLLER")
            if self.voter_set is not None:
                self.kraft_version = self.voter_set.kraft_version
                voters = dict(self.voter_set.endpoints)
        if not voters and not config.quorum_bootstrap_servers:
            raise ValueError("controller.quorum.voters or controller.quorum.bootstrap.servers "
                             "must name the quorum's controllers")
        #: the voters' controller endpoints (an observer of a dynamic quorum adds the leader's
        #: once it learns it)
        self.voters = voters
        #: the voter ids this node started with
        self.voter_ids = sorted(voters)
        self.raft = RaftClient(
            self.node_id, self.directory_id, voters, self.metadata_log_dir, self.cluster_id,
            clock=clock, config=quorum_config(config),
            quorum_state_version=1 if self.kraft_version else 0,
            bootstrap=bootstrap_ids(config.quorum_bootstrap_servers),
            voter_directory_ids=self.voter_set.directory_ids if self.voter_set else None,
            kraft_version=self.kraft_version,
            security=controller_security(config),
            voters_record=self.voter_set.record if self.voter_set else None,
            log_config=metadata_log_config(
                metadata_segment_bytes(config), setting(config, "metadata.log.segment.ms",
                                                        604800000)),
            retention=MetadataLogRetention(
                setting(config, "metadata.max.retention.bytes", 100 * 1024 * 1024),
                setting(config, "metadata.max.retention.ms", 604800000),
                snapshot_timestamp=_snapshot_timestamp))
        self._nursery: trio.Nursery | None = None
        #: set once the raft client has stopped (a leader after its resignation)
        self.stopped = trio.Event()
        self.loader = MetadataLoader(
            clock=self.raft.clock, snapshot_dir=self.metadata_log_dir / DIR_NAME,
            max_bytes_between_snapshots=setting(
                config, "metadata.log.max.record.bytes.between.snapshots", 20 * 1024 * 1024),
            max_snapshot_interval_ms=setting(
                config, "metadata.log.max.snapshot.interval.ms", 3_600_000),
            spawn=self._in_thread)
        if self.voter_set is not None:  # later snapshots carry the quorum's records forward
            self.loader.snapshot_control = {"kraft_version": self.voter_set.kraft_version,
                                            "voters": self.voter_set.record}
        self.raft.register_listener(self.loader)

    @property
    def is_voter(self) -> bool:
        return self.node_id in self.raft.machine.voters

    # -- the broker side's interface ------------------------------------------------------
    def add_publisher(self, publisher: MetadataPublisher) -> None:
        """``publisher.on_metadata_update(delta, image, manifest)`` on every committed change
        (at once with the current image when one was published already)."""
        self.loader.add_publisher(publisher)

    metadata_listener = add_publisher

    @property
    def image(self):
        return self.loader.image

    @property
    def leader_and_epoch(self):
        return self.raft.leader_and_epoch

    # -- running ----------------------------------------------------------------------------
    def _in_thread(self, fn) -> None:
        """Runs a snapshot write in a worker thread, then trims the metadata log behind the
        new snapshot (on the event loop, where the raft client appends)."""
        if self._nursery is None:
            fn()
            self.clean_metadata_log()
            return

        async def write_then_clean() -> None:
            await trio.to_thread.run_sync(fn)
            self.clean_metadata_log()

        self._nursery.start_soon(write_then_clean)

    def clean_metadata_log(self) -> bool:
        """Kafka's KafkaMetadataLog.maybeClean: snapshots and segments beyond retention."""
        try:
            return self.raft.log.maybe_clean(self.raft.clock())
        except OSError:
            log.exception("cleaning the metadata log failed")
            return False

    async def _clean_periodically(self) -> None:
        while True:  # as Kafka's raft client, every minute
            await trio.sleep(CLEAN_INTERVAL_S)
            self.clean_metadata_log()

    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        """The raft client until ``shutdown``; snapshot writes run in worker threads here."""
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                cleaner = trio.CancelScope()

                async def raft_then_stop_cleaning(task_status=trio.TASK_STATUS_IGNORED) -> None:
                    try:
                        await self.raft.run(task_status=task_status)
                    finally:
                        cleaner.cancel()

                async def clean() -> None:
                    with cleaner:
                        await self._clean_periodically()

                await nursery.start(raft_then_stop_cleaning)
                nursery.start_soon(clean)
                task_status.started()
        finally:
            self._nursery = None
            self.stopped.set()

    async def shutdown(self, timeout_s: float = 5.0) -> None:
        """A leader resigns (EndQuorumEpoch) so the others elect at once; then it stops."""
        await self.raft.shutdown(timeout_s)
