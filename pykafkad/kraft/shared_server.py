"""Kafka's SharedServer: what every KRaft node runs whatever its roles: the checked,
formatted log dirs, the RaftClient over ``__cluster_metadata-0`` (a voter when this node is in
controller.quorum.voters, an observer otherwise) and the MetadataLoader publishing images.

The broker side registers its publishers with ``metadata_listener(publisher)`` (or
``add_publisher``); ``raft`` is the RaftClient.
"""

from __future__ import annotations

import logging
from pathlib import Path

import trio

from pykafkad.kraft.loader import MetadataLoader, MetadataPublisher
from pykafkad.metadata.properties import MetaProperties, check_formatted, uuid_from_string
from pykafkad.raft.client import RaftClient
from pykafkad.raft.config import QuorumConfig
from pykafkad.raft.log import DIR_NAME

log = logging.getLogger("pykafkad.kraft")

_QUORUM_KEYS = ("controller.quorum.election.timeout.ms",
                "controller.quorum.election.backoff.max.ms",
                "controller.quorum.fetch.timeout.ms", "controller.quorum.request.timeout.ms",
                "controller.quorum.retry.backoff.ms")


def setting(config, key: str, default):
    """A node setting the config module accepts without applying it yet (metadata.log.*):
    the given value, else Kafka's default."""
    try:
        value = config[key]
    except KeyError:
        value = config.ignored.get(key)
    if value is None or value == "":
        return default
    return type(default)(value) if default is not None else str(value)


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
    dirs = [str(data_dir)] if data_dir is not None else list(config.log_dirs)
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
        if not voters:
            raise ValueError("controller.quorum.voters must list the quorum's voters "
                             "(a dynamic quorum, controller.quorum.bootstrap.servers only, "
                             "is not supported yet)")
        self.voters = voters
        self.raft = RaftClient(self.node_id, self.directory_id, voters, self.metadata_log_dir,
                               self.cluster_id, clock=clock, config=quorum_config(config))
        self._nursery: trio.Nursery | None = None
        self.loader = MetadataLoader(
            clock=self.raft.clock, snapshot_dir=self.metadata_log_dir / DIR_NAME,
            max_bytes_between_snapshots=setting(
                config, "metadata.log.max.record.bytes.between.snapshots", 20 * 1024 * 1024),
            max_snapshot_interval_ms=setting(
                config, "metadata.log.max.snapshot.interval.ms", 3_600_000),
            spawn=self._in_thread)
        self.raft.register_listener(self.loader)

    @property
    def is_voter(self) -> bool:
        return self.node_id in self.voters

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
        if self._nursery is None:
            fn()
        else:
            self._nursery.start_soon(trio.to_thread.run_sync, fn)

    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        """The raft client until ``shutdown``; snapshot writes run in worker threads here."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            await nursery.start(self.raft.run)
            task_status.started()
        self._nursery = None

    async def shutdown(self, timeout_s: float = 5.0) -> None:
        """A leader resigns (EndQuorumEpoch) so the others elect at once; then it stops."""
        await self.raft.shutdown(timeout_s)
