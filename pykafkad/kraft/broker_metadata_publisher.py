"""Kafka's BrokerMetadataPublisher: a KRaft broker applies each published MetadataImage.

The topic view the handlers use (the broker's TopicRegistry, in memory: the metadata log is
the durable record) and the metadata cache follow the image; the partitions this broker now
leads / follows / lost (``MetadataDelta.local_changes``) go to the ReplicaManager, the
follower ones to the fetcher manager with the leader's endpoint on the inter-broker listener,
and the logs of deleted replicas are removed (renamed ``-delete`` first, as today).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

from pykafkad.cluster import Topic, read_partition_metadata, write_partition_metadata
from pykafkad.kraft.metadata_cache import KRaftMetadataCache
from pykafkad.quotas.broker_quotas import broker_quotas
from pykafkad.replica.leader_endpoint import BrokerEndpoint
from pykafkad.replica.manager import LocalChanges
from pykafkad.replica.partition import Partition

log = logging.getLogger("pykafkad.kraft.broker")

GROUP_METADATA_TOPIC = "__consumer_offsets"
TRANSACTION_STATE_TOPIC = "__transaction_state"
#: ConfigResource.Type.TOPIC
TOPIC_RESOURCE = 2


class FollowerView:
    """What the fetcher needs of a followed Partition (``FollowerPartition``): its log, its
    leader epoch, its topic id, and where the follower's HW goes (waking long polls)."""

    __slots__ = ("partition", "_on_hw")

    def __init__(self, partition: Partition, on_hw):
        self.partition = partition
        self._on_hw = on_hw

    @property
    def topic_id(self) -> bytes:
        return self.partition.topic_id

    @property
    def log(self):
        return self.partition.log

    @property
    def leader_epoch(self) -> int:
        return self.partition.leader_epoch

    def set_high_watermark(self, hw: int) -> None:
        if self.partition.log.maybe_increment_high_watermark(hw):
            self._on_hw(self.partition)


class BrokerMetadataPublisher:
    """``on_metadata_update(delta, image, manifest)`` (a MetadataLoader publisher)."""

    def __init__(self, broker: Any, fetchers: Any, *, inter_broker_listener: str,
                 spawn: Callable[..., None] | None = None):
        self.broker = broker
        self.node_id = broker.node_id
        self.fetchers = fetchers
        self.inter_broker_listener = inter_broker_listener
        self.cache = KRaftMetadataCache(self.node_id)
        broker.metadata_cache = self.cache
        broker.replicas.single_node = False
        broker.replicas.is_replica_isr_eligible = self.cache.is_replica_isr_eligible
        # the metadata log, not pykafkad-topics.json, says which topics exist
        broker.topics.topics.clear()
        broker.topics.by_id.clear()
        self._followers: dict[tuple[str, int], FollowerView] = {}
        # the group coordinator serves only the __consumer_offsets partitions led here
        broker.groups.coordinator.owned_partitions = set()
        # and the transaction coordinator only the __transaction_state partitions led here;
        # its markers go to each partition's leader as the image names it
        broker.txn_coordinator.owned_partitions = set()
        broker.leader_endpoint = self.leader_endpoint
        self.image: Any = None
        #: the AssignmentsManager (AssignReplicasToDirs), set by the BrokerServer
        self.assignments: Any = None
        #: starts a task in the broker server's nursery (None: coordinators load in line)
        self._spawn = spawn
        #: the __consumer_offsets loads under way, by partition (a newer one supersedes)
        self._group_loads: dict[int, object] = {}
        #: and the __transaction_state ones
        self._txn_loads: dict[int, object] = {}
        #: whether the logs found at start were checked against a caught-up image
        self._strays_checked = False

    def name(self) -> str:
        return "BrokerMetadataPublisher"

    # -- the publisher -------------------------------------------------------------------------
    def on_metadata_update(self, delta: Any, image: Any, manifest: Any) -> None:
        if not self._strays_checked and self._caught_up():
            # Kafka's initializeManagers: the logs meet the first image that is caught up
            self._strays_checked = True
            self._set_aside_strays(image)
        self.image = image
        self.cache.set_image(image)
        broker_quotas(self.broker).quotas = image.client_quotas
        self._update_topics(image)
        self._apply_local_changes(delta.local_changes(self.node_id), image, delta)

    def leader_endpoint(self, topic: str, index: int) -> tuple[int, str, int] | None:
        """(node id, host, port) of a partition's leader on the inter-broker listener; None
        when the partition does not exist, a node id < 0 when it has no (reachable) leader
        now (what the transaction marker channel asks)."""
        view = self.cache.partition(topic, index)
        if not view.replicas:
            return None
        node = self.cache.broker_endpoint(view.leader, self.inter_broker_listener) \
            if view.leader >= 0 else None
        if node is None:
            return -1, "", -1
        return node.node_id, node.host, node.port

    def follower(self, tp: tuple[str, int]) -> FollowerView | None:
        """The fetcher manager's ``get_partition``."""
        return self._followers.get(tp)

    # -- stray replicas -------------------------------------------------------------------------
    def _caught_up(self) -> bool:
        """Whether the controller has said this broker caught up with the metadata log (an
        image replayed from an older snapshot would take live logs for strays)."""
        lifecycle = getattr(self.broker, "lifecycle", None)
        return lifecycle is not None and lifecycle.caught_up.is_set()

    def _set_aside_strays(self, image: Any) -> None:
        """Kafka's isStrayReplica against the first image after a start: a log whose topic id
        (partition.metadata) is missing or not in the image, or whose partition's replicas do
        not name this broker (the topic was deleted, or the replica moved, while it was
        down), is renamed ``-stray``. Hosted partitions are the image's already."""
        logs = self.broker.logs
        replicas = self.broker.replicas
        strays = []
        for topic, index in sorted(logs.keys()):
            path = logs.partition_dir(topic, index)
            if replicas.hosted(topic, index) is not None or not path.is_dir():
                continue
            topic_id = read_partition_metadata(path)
            registration = None if topic_id is None else image.topics.partition(topic_id, index)
            if registration is None or self.node_id not in registration.replicas:
                log.info("Found stray log dir %s-%d: %s", topic, index,
                         "no topic id" if topic_id is None else
                         "its topic id is not in the metadata image" if registration is None
                         else f"the replica assignment {list(registration.replicas)} does not "
                              f"contain the local brokerId {self.node_id}")
                strays.append((topic, index))
        if strays:
            logs.mark_stray(strays)

    # -- topics --------------------------------------------------------------------------------
    def _update_topics(self, image: Any) -> None:
        """The registry (what handlers read) becomes the image's topics, with their partition
        counts and ConfigRecord overrides; a log's config follows a changed override."""
        broker = self.broker
        registry = broker.topics
        seen = set()
        for name, t in image.topics.by_name.items():
            seen.add(name)
            configs = dict(image.configs.get((TOPIC_RESOURCE, name), {}))
            old = registry.topics.get(name)
            if old is not None and old.topic_id != t.id:  # recreated under the same name
                registry.by_id.pop(old.topic_id, None)
                old = None
            if old is None:
                topic = Topic(name, t.id, len(t.partitions), configs)
                registry.topics[name] = topic
                registry.by_id[t.id] = topic
                if configs and broker.logs.partitions_of(name):  # logs found at start
                    self._set_configs(topic, configs)
                continue
            old.num_partitions = len(t.partitions)
            if old.configs != configs:
                self._set_configs(old, configs)
        for name in [n for n in registry.topics if n not in seen]:
            topic = registry.topics.pop(name)
            registry.by_id.pop(topic.topic_id, None)

    def _set_configs(self, topic: Topic, configs: dict[str, str]) -> None:
        from pykafkad.broker import log_config_from

        topic.configs = configs
        self.broker.logs.update_config(
            topic.name, log_config_from(self.broker.topic_config(topic)))

    # -- replicas ------------------------------------------------------------------------------
    def _apply_local_changes(self, changes: Any, image: Any, delta: Any) -> None:
        broker = self.broker
        if not (changes.leaders or changes.followers or changes.deletes):
            return
        wanted = {**changes.leaders, **changes.followers}
        dir_ids = {Path(d.path): d.directory_id for d in getattr(broker, "log_dirs", ())}
        by_id = {ident: path for path, ident in dir_ids.items()}
        for (topic, index), info in wanted.items():
            t = broker.topics.by_id.get(info.topic_id)
            if t is not None:
                assigned = (info.partition.directory(self.node_id)
                            if info.partition.directories else None)
                broker.logs.prepare(topic, [index],
                                    lambda d, tid=info.topic_id: write_partition_metadata(d, tid),
                                    preferred_dir=by_id.get(assigned))
                self._report_dir(info, index, assigned, dir_ids.get(broker.logs.dir_of(topic, index)))
        local = LocalChanges(
            leaders={tp: (i.topic_id, i.partition)
                     for tp, i in changes.leaders.items()},
            followers={tp: (i.topic_id, i.partition)
                       for tp, i in changes.followers.items()})
        # a follower stops fetching before it becomes leader (Kafka's makeLeaders)
        if changes.leaders:
            self.fetchers.remove_partitions(list(changes.leaders))
            for tp in changes.leaders:
                self._followers.pop(tp, None)
        broker.replicas.apply(local)
        if changes.followers:
            self._make_followers(changes.followers, image)
        if changes.deletes:
            self._delete(changes.deletes, delta)
        self._move_coordinators(changes)
        log.info("Broker %d: leads %d, follows %d, removed %d partitions at offset %s",
                 self.node_id, len(changes.leaders), len(changes.followers),
                 len(changes.deletes), image.offset)

    def _report_dir(self, info: Any, index: int, assigned: bytes | None,
                    actual: bytes | None) -> None:
        """Tells the controller the dir a replica is in when the metadata says otherwise
        (UNASSIGNED on a broker with several log dirs), as Kafka's AssignmentsManager."""
        if self.assignments is None or assigned is None or actual is None or actual == assigned:
            return
        self.assignments.assign(info.topic_id, index, actual)

    def _move_coordinators(self, changes: Any) -> None:
        """Kafka's onElection / onResignation for the group coordinator: a newly led
        __consumer_offsets partition is loaded, one led elsewhere now is unloaded."""
        coordinator = self.broker.groups.coordinator
        storage = coordinator.storage
        for topic, index in changes.leaders:
            if topic == GROUP_METADATA_TOPIC and index not in (coordinator.owned_partitions or ()) \
                    and index not in self._group_loads:
                plog = self.broker.logs.get(topic, index)
                if plog is None:
                    continue
                if self._spawn is None or _small(plog):
                    # (a small partition, a new one above all, loads at once: no window of
                    # COORDINATOR_LOAD_IN_PROGRESS, which some clients' admin calls do not retry)
                    try:
                        coordinator.load_partition(index, list(storage._read_partition(plog)))  # noqa: SLF001
                    except Exception as e:  # noqa: BLE001 - one bad partition must not stop the broker
                        coordinator.fail_load(index, e)
                    continue
                coordinator.begin_load(index)
                token = self._group_loads[index] = object()
                self._spawn(self._load_group_partition, index, plog, token)
        for topic, index in [*changes.followers, *changes.deletes]:
            if topic == GROUP_METADATA_TOPIC:
                self._group_loads.pop(index, None)
                coordinator.unload_partition(index)
        # the transaction coordinator's onElection / onResignation, at the leader epoch
        txn = self.broker.txn_coordinator
        for (topic, index), info in changes.elected_leaders.items():
            if topic == TRANSACTION_STATE_TOPIC:
                epoch = info.partition.leader_epoch
                if self._spawn is None:
                    txn.on_election(index, epoch)
                    continue
                read = txn.begin_election(index, epoch)
                self._txn_loads.pop(index, None)
                if read is not None and _small(self.broker.logs.get(topic, index)):
                    try:
                        records, error = read(), None
                    except Exception as e:  # noqa: BLE001 - one bad partition must not stop the broker
                        records, error = None, e
                    txn.finish_election(index, records, error)
                elif read is not None:
                    token = self._txn_loads[index] = object()
                    self._spawn(self._load_txn_partition, index, read, token)
        for (topic, index), info in changes.followers.items():
            if topic == TRANSACTION_STATE_TOPIC:
                epoch = info.partition.leader_epoch
                if txn.coordinator_epochs.get(index, epoch) <= epoch:  # (else: stale)
                    self._txn_loads.pop(index, None)
                txn.on_resignation(index, epoch)
        for topic, index in changes.deletes:
            if topic == TRANSACTION_STATE_TOPIC:
                self._txn_loads.pop(index, None)
                txn.on_resignation(index)

    async def _load_group_partition(self, index: int, plog: Any, token: object) -> None:
        """Kafka's coordinator loader: the partition's records are read in a worker thread
        (the request loop goes on, its groups answering COORDINATOR_LOAD_IN_PROGRESS), then
        replayed here; a load that leadership changes overtook is dropped."""
        coordinator = self.broker.groups.coordinator
        read = coordinator.storage._read_partition  # noqa: SLF001
        started = time.monotonic()
        try:
            records = await trio.to_thread.run_sync(lambda: list(read(plog)))
        except Exception as e:  # noqa: BLE001 - one bad partition must not stop the broker
            if self._group_loads.get(index) is token:
                del self._group_loads[index]
                coordinator.fail_load(index, e)
            return
        if self._group_loads.get(index) is token:
            del self._group_loads[index]
            coordinator.finish_load(index, records)
            log.info("Finished loading of metadata from %s-%d (%d records) in %d milliseconds",
                     GROUP_METADATA_TOPIC, index, len(records),
                     (time.monotonic() - started) * 1000)

    async def _load_txn_partition(self, index: int, read: Callable[[], Any],
                                  token: object) -> None:
        """The transaction coordinator's load, read in a worker thread as the groups' is."""
        txn = self.broker.txn_coordinator
        try:
            records, error = await trio.to_thread.run_sync(read), None
        except Exception as e:  # noqa: BLE001 - one bad partition must not stop the broker
            records, error = None, e
        if self._txn_loads.get(index) is token:
            del self._txn_loads[index]
            txn.finish_election(index, records, error)

    def _make_followers(self, followers: dict, image: Any) -> None:
        """Kafka's applyLocalFollowersDelta: stop fetching, then fetch again from the new
        leader (its endpoint on the inter-broker listener) from the log end; the fetcher
        truncates on the diverging epoch it is answered."""
        replicas = self.broker.replicas
        self.fetchers.remove_partitions(list(followers))
        to_fetch = {}
        for tp, info in followers.items():
            partition = replicas.hosted(*tp)
            if partition is None:
                continue
            self._followers[tp] = FollowerView(partition, replicas._on_high_watermark)  # noqa: SLF001
            leader = info.partition.leader
            node = self.cache.broker_endpoint(leader, self.inter_broker_listener) \
                if leader >= 0 else None
            if node is None:
                continue  # no leader (or it has no such listener): wait for the next image
            to_fetch[tp] = (BrokerEndpoint(leader, node.host, node.port),
                            info.partition.leader_epoch, partition.log.log_end_offset)
        if to_fetch:
            self.fetchers.add_partitions(to_fetch)

    def _delete(self, deletes: set, delta: Any) -> None:
        broker = self.broker
        self.fetchers.remove_partitions(list(deletes))
        for tp in deletes:
            self._followers.pop(tp, None)
            broker.replicas.forget(*tp)
        by_topic: dict[str, list[int]] = {}
        for topic, index in deletes:
            by_topic.setdefault(topic, []).append(index)
        gone = [t for t in by_topic if t not in broker.topics.topics]
        if gone:  # the whole topic went: its directories are renamed -delete, then removed
            broker.logs.delete_topics(gone)
            for name in gone:
                log.info("deleted the logs of topic %s", name)
        moved = [(topic, i) for topic, indexes in by_topic.items() if topic not in gone
                 for i in indexes]
        if moved:  # reassigned away: this replica's log goes too (renamed -delete, removed)
            broker.logs.delete_partitions(moved)


#: a coordinator partition with at most this many offsets is read on the request loop (a few
#: milliseconds); bigger ones in a worker thread
SMALL_PARTITION_OFFSETS = 1000


def _small(plog: Any) -> bool:
    return plog is not None and \
        plog.log_end_offset - plog.log_start_offset <= SMALL_PARTITION_OFFSETS
