"""The broker's state and its operations on topics and partitions, independent of the network.

Handlers translate requests into calls on ``Broker``; this module owns the rules (auto topic
creation, topic validation, per-topic configs) so that handlers stay thin.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import logging
import os
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import trio

from pykafkad.cluster import (
    Topic,
    TopicRegistry,
    new_topic_id,
    read_partition_metadata,
    validate_topic_name,
    write_partition_metadata,
)
from pykafkad.config import BrokerConfig, ConfigError, resolve_topic_config, validate_topic_configs
from pykafkad.config.client_metrics import ClientMetricsStore
from pykafkad.coordinator.group_configs import GroupConfigStore
from pykafkad.coordinator.runtime import GroupCoordinatorService
from pykafkad.coordinator.transaction_coordinator import TransactionCoordinator
from pykafkad.coordinator.txn_verification import AddPartitionsToTxnManager
from pykafkad.fetch_sessions import FetchSessionCache
from pykafkad.kraft.metadata_cache import SingleNodeMetadataCache
from pykafkad.log.checkpoint import fsync_dir
from pykafkad.log.config import LogConfig
from pykafkad.log.epoch import LeaderEpochCache
from pykafkad.log.log_dirs import configured_log_dirs
from pykafkad.log.manager import ADOPT, DELETE, STRAY, LogManager
from pykafkad.log.partition import PartitionLog
from pykafkad.log.segment import (
    INDEX_SUFFIX,
    LOG_SUFFIX,
    TIME_INDEX_SUFFIX,
    TXN_INDEX_SUFFIX,
    segment_file_name,
)
from pykafkad.producer_ids import ProducerIdManager
from pykafkad.replica import Partition, ReplicaManager
from pykafkad.replica.hw_checkpoint import HighWatermarkCheckpoint
from pykafkad.security.authorizer import authorizer_from_config
from wire.errors import ErrorCode, KafkaError

log = logging.getLogger("pykafkad")

#: the coordinators' own epoch for their internal-topic state (the group coordinator's
#: partition leader epoch, as a single node never changes leader)
LEADER_EPOCH = 0


def wall_clock_ms() -> int:
    return int(time.time() * 1000)


#: what a partition just created may hold (its first segment, metadata and checkpoint)
NEW_PARTITION_FILES = (
    *(segment_file_name(0, suffix) for suffix in (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX,
                                                  TXN_INDEX_SUFFIX)),
    *(name + tmp for name in ("partition.metadata", "leader-epoch-checkpoint") for tmp in ("", ".tmp")),
)


def remove_new_partition_dir(path: Path) -> None:
    """Removes a partition directory a rolled-back creation leaves.  Out of descriptors, listing
    it fails (that needs one), so the files a new partition has are unlinked by name."""
    shutil.rmtree(path, ignore_errors=True)
    if not path.exists():
        return
    for name in NEW_PARTITION_FILES:
        with contextlib.suppress(OSError):
            os.unlink(path / name)
    with contextlib.suppress(OSError):
        os.rmdir(path)


@dataclass(frozen=True)
class Endpoint:
    node_id: int
    host: str
    port: int


def log_config_from(topic_config) -> LogConfig:
    """Maps Kafka's topic config names onto the log's own settings (segment size: Kafka's
    LogConfig.segmentSize, internal.segment.bytes when set)."""
    config = LogConfig.from_topic_configs(topic_config)
    segment_bytes = topic_config.effective_segment_bytes
    if segment_bytes != config.segment_bytes:
        config = dataclasses.replace(config, segment_bytes=segment_bytes)
    return config


def read_or_create_meta(data_dir: Path, node_id: int) -> str:
    """Kafka's ``meta.properties`` (KRaft, version 1): returns the cluster id."""
    path = data_dir / "meta.properties"
    props: dict[str, str] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if "=" in line and not line.startswith("#"):
                k, v = line.split("=", 1)
                props[k.strip()] = v.strip()
    if "cluster.id" not in props:
        cid = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        did = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        path.write_text(
            f"#\n#Written by pykafkad\ncluster.id={cid}\ndirectory.id={did}\n"
            f"node.id={node_id}\nversion=1\n"
        )
        return cid
    return props["cluster.id"]


class Broker:
    """Everything a request handler may touch: config, topics, logs, fetch sessions, the clock."""

    def __init__(
        self,
        config: BrokerConfig,
        data_dir: Path,
        *,
        clock: Callable[[], int] = wall_clock_ms,
    ):
        self.config = config
        self.data_dir = data_dir
        self.clock = clock
        self._topic_configs: dict[str, tuple] = {}
        #: each topic's LogConfig, for as long as its resolved configs stay the same object
        self._log_configs: dict[str, tuple] = {}
        self.node_id: int = config["node.id"]
        self.endpoint = Endpoint(self.node_id, "localhost", 9092)
        #: advertised endpoints by listener name (server.py fills it)
        self.endpoints: dict[str, Endpoint] = {}
        data_dir.mkdir(parents=True, exist_ok=True)
        config.record_data_dir(str(data_dir.resolve()))
        self.cluster_id = read_or_create_meta(data_dir, self.node_id)
        self.topics = TopicRegistry(data_dir)
        self.group_configs = GroupConfigStore(data_dir)
        self.client_metrics = ClientMetricsStore(data_dir)
        self.logs = LogManager(data_dir, clock, configured_log_dirs(config, data_dir)[1:])
        self._kraft_broker = config.is_kraft and "broker" in config.node_roles
        #: the one way handlers reach a partition: leadership, ISR, HW, the leader's checks
        self.replicas = ReplicaManager(
            self.node_id,
            get_log=lambda topic, index: self.logs.get(topic, index, storage_errors=True),
            get_topic=self.topics.get,
            topic_config=lambda topic: self.topic_config(topic) if topic is not None else None,
            clock=clock,
            replica_lag_time_max_ms=lambda: config["replica.lag.time.max.ms"],
            peek_leader_epoch=self._peek_leader_epoch,
            hw_checkpoint=HighWatermarkCheckpoint(data_dir),
            has_log=self.logs.has,
        )
        if self._kraft_broker:  # the metadata log says what this broker leads or follows
            self.replicas.single_node = False
            self.replicas.log_unopened = self.logs.found_unopened
        # Lists the partition directories only: each log loads on first use or in the
        # background (open_logs_in_background), so start-up does not grow with the data.
        self.logs.load_all(self._log_config_for_partition, self._classify_partition_dir)
        self.topics.deleted()  # every directory of a deleted topic is gone now
        # A topic's partitions whose directories a crash lost right after CreateTopics
        # answered (the registry is the durable record) are created again, empty.
        for topic in self.topics.topics.values():
            lost = [p for p in range(topic.num_partitions) if not self.logs.has(topic.name, p)]
            if lost:
                self.logs.prepare(topic.name, lost, self._partition_metadata_writer(topic))
        #: the cluster as Metadata describes it (a KRaft broker's publisher replaces it)
        self.metadata_cache = SingleNodeMetadataCache(self)
        #: a KRaft broker's ForwardingManager (admin requests go to the active controller)
        self.forwarding = None
        #: the StandardAuthorizer when ``authorizer.class.name`` names it, else None
        self.authorizer = authorizer_from_config(config.ignored)
        #: the single node's CONTROLLER listener is its own, hidden: what arrives there
        #: (its broker side's forwarded requests) is the node itself (set by its builder)
        self.internal_controller_listener = False
        #: a KRaft broker's FindCoordinator (the leader of the key's internal partition)
        self.coordinator_locator = None
        #: a KRaft broker's AutoTopicCreationManager (topics are created by the controller)
        self.auto_topic_creation = None
        self.fetch_sessions = FetchSessionCache(
            clock=clock, max_sessions=config["max.incremental.fetch.session.cache.slots"])
        self.producer_ids = ProducerIdManager(data_dir)
        #: set when partitions were prepared whose directories are still to be made
        self._dirs_wanted = trio.Event()
        self.shutting_down = False
        self.txn_coordinator = TransactionCoordinator(self)
        #: KIP-890 part 1 with a transaction coordinator on another broker
        self.txn_verification = AddPartitionsToTxnManager(self)
        self.txn_coordinator.load()
        #: consumer groups and committed offsets, replayed from __consumer_offsets
        self.groups = GroupCoordinatorService(self, LEADER_EPOCH)
        self._next_producer_expiry = 0
        self._next_txn_id_expiry = 0
        #: test-only fault hook for Produce: ``fn(stage, topic, partition, batch_header)`` with
        #: stage "before_append" / "after_append"; raising ConnectionResetError drops the
        #: connection there (the request or its response is lost, so the client retries)
        self.produce_fault: Callable[..., None] | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    def set_endpoint(self, host: str, port: int, listener_name: str | None = None) -> None:
        """Records a listener's advertised endpoint; the first one is also the default
        (``endpoint``).  Without a listener name it is what every listener advertises (a
        proxy in front of the broker, scripts/capture_golden.py)."""
        endpoint = Endpoint(self.node_id, host, port)
        if listener_name is None:
            self.endpoint = endpoint
            self.endpoints.clear()
            return
        if not self.endpoints:
            self.endpoint = endpoint
        self.endpoints[listener_name] = endpoint

    def endpoint_for(self, listener_name: str) -> Endpoint:
        """The advertised endpoint of a listener, as Kafka's brokers advertise per listener."""
        return self.endpoints.get(listener_name, self.endpoint)

    def close(self) -> None:
        # Kafka's ReplicaManager.shutdown(checkpointHW = true), before the logs close
        try:
            self.replicas.checkpoint_high_watermarks()
        except OSError as e:
            log.error("Error while writing to highwatermark file in directory %s: %s",
                      self.data_dir, e)
        self.logs.close()

    async def open_logs_in_background(self) -> None:
        """Opens the logs start-up left unopened, ~10 ms of work at a time between requests,
        so that housekeeping (retention, producer expiry, the cleaner) soon covers them all;
        then, for as long as the broker runs, makes the directories of new topics' partitions
        in a worker thread (as Kafka's brokers create logs once the controller has answered)."""
        logs = self.logs
        while logs.unopened and not self.shutting_down:
            until = time.monotonic() + 0.01
            while logs.unopened and time.monotonic() < until:
                logs.open_some(1)
            await trio.sleep(0)
        while not self.shutting_down:
            if logs.dirless:
                await trio.to_thread.run_sync(logs.make_dirs)
            await self._dirs_wanted.wait()
            self._dirs_wanted = trio.Event()

    # -- appends and waiting -----------------------------------------------------------------
    def notify_append(self) -> None:
        """Wakes every long-polling Fetch (at shutdown) so it re-checks its partitions; appends
        wake them through the replica layer (followers on the log end, consumers on the HW)."""
        self.replicas.wake_all()

    # -- topics --------------------------------------------------------------------------------
    def topic_config(self, topic: Topic):
        """The topic's effective configs, cached until its overrides or the broker's change
        (resolving costs ~20 µs, and Produce asks on every request)."""
        cached = self._topic_configs.get(topic.name)
        if cached is not None and cached[0] == self.config.version and cached[1] is topic.configs:
            return cached[2]
        resolved = resolve_topic_config(self.config, topic.configs)
        self._topic_configs[topic.name] = (self.config.version, topic.configs, resolved)
        return resolved

    def _log_config_for_partition(self, topic_name: str, partition: int) -> LogConfig | None:
        topic = self.topics.get(topic_name)
        if topic is None and self._kraft_broker:
            # a log adopted before the first metadata image: the broker's defaults until
            # the publisher gives the topic's overrides (update_config)
            return log_config_from(resolve_topic_config(self.config, {}))
        if topic is None or partition >= topic.num_partitions:
            return None
        resolved = self.topic_config(topic)
        cached = self._log_configs.get(topic_name)
        if cached is None or cached[0] is not resolved:
            cached = self._log_configs[topic_name] = (resolved, log_config_from(resolved))
        return cached[1]

    def _classify_partition_dir(self, topic_name: str, partition: int, dir: str) -> str:
        """Kafka's stray detection by topic id: a directory whose ``partition.metadata`` names
        another topic id than the topic's (or a topic that does not exist) is never adopted.
        A directory without the file is adopted when its topic exists (pykafkad writes the
        file right after creating the directory, so such a directory is the topic's: a crash
        came between the two) and gets the file now."""
        dir_id = read_partition_metadata(dir)
        if dir_id is not None and dir_id in self.topics.deleting:
            return DELETE
        topic = self.topics.get(topic_name)
        if topic is None and dir_id is not None and self._kraft_broker:
            # a KRaft broker learns its topics from the metadata log after start: its
            # publisher decides about the directory once the first image is in
            return ADOPT
        if topic is None or partition >= topic.num_partitions:
            return STRAY
        if dir_id is not None and dir_id != topic.topic_id:
            return STRAY
        if dir_id is None:
            try:
                write_partition_metadata(Path(dir), topic.topic_id)
            except OSError as e:  # adopted all the same; written again at the next start
                log.warning("Could not write %s/partition.metadata: %s", dir, e)
        return ADOPT

    def _peek_leader_epoch(self, topic: str, index: int) -> int | None:
        """The latest epoch in a partition's leader-epoch-checkpoint, its log left unopened."""
        if not self.logs.has(topic, index):
            return None
        path = self.logs.partition_dir(topic, index)
        return LeaderEpochCache(path).latest_epoch if path.is_dir() else None

    @staticmethod
    def _partition_metadata_writer(topic: Topic) -> Callable[[Path], None]:
        return lambda dir: write_partition_metadata(dir, topic.topic_id)

    def _create_partition(self, topic: Topic, index: int) -> PartitionLog:
        plog = self.logs.create(topic.name, index, log_config_from(self.topic_config(topic)))
        write_partition_metadata(plog.dir, topic.topic_id)
        return plog

    def check_new_topic(self, name: str, num_partitions: int, configs: dict[str, str]) -> None:
        """Raises KafkaError with Kafka's code when CreateTopics would refuse this topic."""
        validate_topic_name(name)
        if name in self.topics.topics:
            raise KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
        # Kafka's metric names fold '.' into '_', so such pairs of names may not coexist
        folded = name.replace(".", "_")
        for other in self.topics.topics:
            if other.replace(".", "_") == folded:
                raise KafkaError(
                    ErrorCode.INVALID_TOPIC_EXCEPTION,
                    f"Topic '{name}' collides with existing topic: {other}",
                )
        if num_partitions <= 0:
            raise KafkaError(
                ErrorCode.INVALID_PARTITIONS, "Number of partitions was set to an invalid non-positive value."
            )
        try:
            validate_topic_configs(configs, broker=self.config)
        except ConfigError as e:
            raise KafkaError(ErrorCode.INVALID_CONFIG, str(e)) from None

    def create_topic(self, name: str, num_partitions: int, configs: dict[str, str]) -> Topic:
        """``create_topics`` for one topic: returns it or raises its KafkaError."""
        result = self.create_topics([(name, num_partitions, configs)])[0]
        if isinstance(result, KafkaError):
            raise result
        return result

    def create_topics(self, wanted: list[tuple[str, int, dict[str, str]]]) -> list[Topic | KafkaError]:
        """Creates topics as Kafka's controller does: each is checked, then the topic
        registry, the durable record, is saved once for all and the data dir fsynced once,
        before anyone is answered.  The partitions' directories are made right after, in the
        background, and their logs on first use (a crash before that leaves the registry, from
        which the start prepares them again).  A registry that cannot be written (disk full)
        answers KAFKA_STORAGE_ERROR and leaves no trace of the topics; a log that cannot be
        created later answers KAFKA_STORAGE_ERROR to its Produce and is tried again.  Returns,
        in order, each topic or the KafkaError it is refused with."""
        if self._kraft_broker:  # only the controller creates topics (the internal ones too)
            return [KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                               f"Topic {name} is created by the active controller")
                    for name, _, _ in wanted]
        results: list[Topic | KafkaError] = []
        made: list[Topic] = []
        for name, num_partitions, configs in wanted:
            try:
                self.check_new_topic(name, num_partitions, configs)
            except KafkaError as e:
                results.append(e)
                continue
            topic = Topic(name, new_topic_id(), num_partitions, dict(configs))
            self.logs.prepare(name, range(num_partitions), self._partition_metadata_writer(topic))
            # registered in memory now so the next topics' checks see it; saved below
            self.topics.topics[name] = topic
            self.topics.by_id[topic.topic_id] = topic
            made.append(topic)
            results.append(topic)
        if not made:
            return results
        try:
            self.topics.add_all(made)
        except OSError as e:
            for topic in made:
                self._remove_partitions(topic.name, range(topic.num_partitions))
            what = "creating topic " + ", ".join(t.name for t in made)
            error = self._storage_error(what, e)
            return [error if isinstance(r, Topic) else r for r in results]
        try:
            fsync_dir(self.data_dir)  # the registry's new name
        except OSError as e:  # saved already
            log.warning("cannot fsync %s: %s", self.data_dir, e)
        for topic in made:
            log.info("created topic %s with %d partitions", topic.name, topic.num_partitions)
        self._dirs_wanted.set()
        return results

    def _create_partition_files(self, topic: Topic, index: int) -> None:
        try:
            self._create_partition(topic, index)
        except OSError:
            remove_new_partition_dir(self.logs.partition_dir(topic.name, index))
            raise

    def _remove_partitions(self, name: str, partitions) -> None:
        """Undoes partition creation (rollback): closes and deletes their logs and dirs."""
        for p in partitions:
            self.replicas.forget(name, p)
        dirs = [self.logs.partition_dir(name, p) for p in partitions]
        self.logs.remove_partitions(name, partitions)
        for d in dirs:
            remove_new_partition_dir(d)

    def _storage_error(self, what: str, e: OSError) -> KafkaError:
        log.warning("%s failed, rolled back: %s", what, e)
        return KafkaError(ErrorCode.KAFKA_STORAGE_ERROR,
                          f"Error while {what} in dir {self.data_dir}: {e.strerror or e}")

    def auto_create_topic(self, name: str) -> Topic | None:
        """Creates ``name`` as Kafka's auto.create.topics.enable would, or returns None."""
        if not self.config["auto.create.topics.enable"]:
            return None
        return self.create_topic(name, self.config["num.partitions"], {})

    def delete_topic(self, name: str) -> Topic:
        """``delete_topics`` for one topic: returns it or raises its KafkaError (or OSError)."""
        result = self.delete_topics([name])[0]
        if isinstance(result, BaseException):
            raise result
        return result

    def delete_topics(self, names: list[str]) -> list[Topic | KafkaError | OSError]:
        """Deletes topics as Kafka's controller does: the registry records them as deleting
        (one save, the durable record, before anyone is answered), their directories are
        renamed ``-delete`` (removed off the request loop) with one fsync of the data dir,
        and the registry forgets them.  Returns, in order, each deleted topic, or the
        KafkaError it is refused with, or the OSError (disk full) that kept all as they were."""
        results: list[Topic | KafkaError | OSError] = []
        doomed: dict[str, Topic] = {}
        for name in names:
            topic = self.topics.get(name)
            if topic is None or name in doomed:
                results.append(KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
            elif not self.config["delete.topic.enable"]:
                results.append(KafkaError(ErrorCode.TOPIC_DELETION_DISABLED))
            else:
                doomed[name] = topic
                results.append(topic)
        if not doomed:
            return results
        try:
            self.topics.remove_all(list(doomed))
        except OSError as e:
            return [e if isinstance(r, Topic) else r for r in results]
        for name in doomed:
            self.replicas.forget_topic(name)
        self.logs.delete_topics(doomed)
        try:
            self.topics.deleted({t.topic_id for t in doomed.values()})
        except OSError as e:  # the ids stay in the file: the next start finds nothing left
            log.warning("cannot save %s: %s", self.topics.path, e)
        for name, topic in doomed.items():
            self.fetch_sessions.forget_topic(topic.topic_id)
            if name != "__consumer_offsets":
                self.groups.on_topic_deleted(name)  # Kafka drops the topic's committed offsets
            log.info("deleted topic %s", name)
        return results

    def create_partitions(self, name: str, count: int, validate_only: bool) -> None:
        # Kafka 4.4's controller (ReplicationControlManager) words these; no message for a
        # missing topic
        topic = self.topics.get(name)
        if topic is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        if count < topic.num_partitions:
            raise KafkaError(
                ErrorCode.INVALID_PARTITIONS,
                f"The topic {name} currently has {topic.num_partitions} partition(s); {count} "
                "would not be an increase.",
            )
        if count == topic.num_partitions:
            raise KafkaError(
                ErrorCode.INVALID_PARTITIONS,
                f"Topic already has {topic.num_partitions} partition(s).",
            )
        if validate_only:
            return
        old = topic.num_partitions
        try:
            for p in range(old, count):
                self._create_partition_files(topic, p)
            topic.num_partitions = count
            self.topics.save()
        except OSError as e:
            topic.num_partitions = old
            self._remove_partitions(name, range(old, count))
            raise self._storage_error(f"creating partitions of {name}", e) from e

    def set_topic_configs(self, topic: Topic, configs: dict[str, str]) -> None:
        topic.configs = dict(configs)
        self.topics.save()
        self.logs.update_config(topic.name, log_config_from(self.topic_config(topic)))

    # -- partitions ----------------------------------------------------------------------------
    def leader_endpoint(self, topic: str, index: int) -> tuple[int, str, int] | None:
        """(node id, host, port) of the partition's leader on the inter-broker listener, or
        None when no such partition exists (what the transaction marker channel asks).  A
        single node leads every partition of its topics; a node id < 0: the partition exists
        but has no leader now.  The cluster's metadata publisher replaces this with the
        image's view."""
        topic_ = self.topics.get(topic)
        if topic_ is None or not 0 <= index < topic_.num_partitions:
            return None
        return self.node_id, self.endpoint.host, self.endpoint.port

    def partition(self, topic: str, index: int) -> Partition:
        """The hosted partition (``ReplicaManager.get_partition_or_error``)."""
        return self.replicas.get_partition_or_error(topic, index)

    # -- housekeeping --------------------------------------------------------------------------
    def apply_retention(self) -> int:
        return self.logs.apply_retention(self.clock())

    def run_transaction_timers(self) -> None:
        """Aborts timed-out transactions; every transaction.remove.expired.transaction.cleanup
        .interval.ms expires transactional ids (transactional.id.expiration.ms), every
        producer.id.expiration.check.interval.ms idle producer ids (producer.id.expiration.ms)."""
        now = self.clock()
        self.txn_coordinator.abort_timed_out_transactions(now)
        if now >= self._next_txn_id_expiry:
            interval = self.config["transaction.remove.expired.transaction.cleanup.interval.ms"]
            self._next_txn_id_expiry = now + interval
            self.txn_coordinator.expire_transactional_ids(now)
        if now >= self._next_producer_expiry:
            interval = self.config["producer.id.expiration.check.interval.ms"]
            self._next_producer_expiry = now + interval
            expiration = self.config["producer.id.expiration.ms"]
            for plog in self.logs.logs().values():
                plog.remove_expired_producers(now, expiration)
