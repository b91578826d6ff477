"""Share groups as a broker runs them: the group coordinator's share-group membership, the
share partitions of the partitions this broker leads, and the share session cache.  Config is
read per group (a group config override, else the broker's ``group.share.*`` value)."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable

import trio

from pykafkad.config.group import BROKER_SYNONYMS, GROUP_CONFIGS, broker_value
from pykafkad.coordinator.coordinator import RECORD_REPLAYERS
from pykafkad.coordinator.metadata_hash import topic_hash
from pykafkad.coordinator.share_group import group_records
from pykafkad.coordinator.share_group import state_records as sr
from pykafkad.coordinator.share_group.group import (
    UNINITIALIZED_START_OFFSET,
    ShareGroupCoordinator,
    replay,
)
from pykafkad.coordinator.share_group.persister import SharePersister
from pykafkad.coordinator.share_group.share_coordinator import ShareCoordinator
from pykafkad.coordinator.share_group.share_partition import SharePartition
from pykafkad.coordinator.share_group.share_sessions import ShareSessionCache
from pykafkad.coordinator.share_group.state_store import SHARE_GROUP_STATE_TOPIC, ShareStateStore
from wire.errors import KafkaError

log = logging.getLogger("pykafkad.coordinator.share")
#: group_states: read the group's list of share partitions itself
_ASK = object()
_ATTR = "_share_group_service"
RECORD_REPLAYERS.update(dict.fromkeys(group_records.RECORD_TYPES, replay))


def service_of(broker) -> ShareGroupService:
    """The broker's share-group service, made on first use."""
    svc = getattr(broker, _ATTR, None)
    if svc is None:
        svc = ShareGroupService(broker)
        setattr(broker, _ATTR, svc)
    return svc


class ShareGroupService:
    def __init__(self, broker):
        self.broker = broker
        self.clock = broker.clock
        self.coordinator = ShareGroupCoordinator(
            broker.clock, self._topic_lookup,
            lambda g: int(self.config(g, "share.session.timeout.ms")),
            lambda g: int(self.config(g, "share.heartbeat.interval.ms")),
            _broker_int(broker, "group.share.max.size", 200),
            groups=broker.groups.coordinator.__dict__.setdefault("share_groups", {}),
            write=lambda group_id, records: broker.groups.coordinator.storage.append(
                group_id, records),
            topic_hash=self._topic_hash)
        self.sessions = ShareSessionCache(
            _broker_int(broker, "group.share.max.share.sessions", 2000))
        #: (group id, topic id, partition) -> its share partition
        self.partitions: dict[tuple[str, bytes, int], SharePartition] = {}
        #: set when records become available again (release, lock expiry): parked share
        #: fetches look again
        self.records_freed = trio.Event()
        self.store = ShareStateStore(broker)
        #: the share coordinator of the __share_group_state partitions led here
        self.share_coordinator = ShareCoordinator(broker, self.store)
        #: how this node's share partitions reach their share coordinator
        self.persister = SharePersister(broker, self.share_coordinator)
        #: share-partition states read from the share coordinator, used on first fetch
        self.persisted: dict[tuple[str, bytes, int], object] = {}
        #: the leader epoch each share partition was read at: a partition led again later
        #: (after leading elsewhere) is read again
        self.read_epochs: dict[tuple[str, bytes, int], int] = {}

    # -- config --------------------------------------------------------------------------------
    def config(self, group_id: str, name: str) -> str:
        override = self.broker.group_configs.get(group_id).get(name)
        if override is not None:
            return override
        synonym = BROKER_SYNONYMS.get(name)
        if synonym is not None:
            return broker_value(self.broker.config, synonym)
        return GROUP_CONFIGS[name].default_string

    def lock_ms(self, group_id: str) -> int:
        return int(self.config(group_id, "share.record.lock.duration.ms"))

    def delivery_limit(self, group_id: str) -> int:
        return int(self.config(group_id, "share.delivery.count.limit"))

    def max_record_locks(self, group_id: str) -> int:
        """The cap on a share partition's in-flight records (Kafka's maxInFlightRecords)."""
        return int(self.config(group_id, "share.partition.max.record.locks"))

    def _topic_lookup(self, name: str) -> tuple[bytes, int] | None:
        topic = self.broker.topics.get(name)
        return None if topic is None else (topic.topic_id, topic.num_partitions)

    def _topic_hash(self, name: str) -> int | None:
        """KIP-1101's hash of a topic: its id, name, partitions and their replicas' racks."""
        topic = self.broker.topics.get(name)
        if topic is None:
            return None
        cache = self.broker.metadata_cache
        racks = []
        for index in range(topic.num_partitions):
            replicas = cache.partition(name, index).replicas
            racks.append([r for r in map(self._rack_of, replicas) if r is not None])
        return topic_hash(topic.topic_id, name, racks)

    def _rack_of(self, broker_id: int) -> str | None:
        """A registered broker's rack (fenced or not, as Kafka's cluster image has it)."""
        image = getattr(self.broker.metadata_cache, "image", None)
        if image is not None:
            b = image.cluster.get(broker_id)
            return None if b is None else b.rack
        if broker_id == self.broker.node_id:
            return self.broker.config["broker.rack"]
        return None

    async def initialize_share_state(self, group_id: str, state_epoch: int,
                                     partitions: list[tuple[bytes, int, int]]) -> None:
        """InitializeShareGroupState for the partitions the group coordinator recorded as
        initializing, at the group epoch and the start offset it chose (-1: the
        share-partition leader resolves share.auto.offset.reset on its first read), as
        Kafka's group coordinator sends it; then they become initialized, or are sent again
        on a later heartbeat."""
        done: list[tuple[bytes, int]] = []
        failed: list[tuple[bytes, int]] = []

        async def one(tid: bytes, index: int, start: int) -> None:
            try:
                await self.persister.initialize((group_id, tid, index), state_epoch, start)
            except (KafkaError, trio.TooSlowError) as e:
                log.info("cannot initialize the share state of %s-%d in group %s: %s",
                         tid.hex(), index, group_id, e)
                failed.append((tid, index))
            else:
                done.append((tid, index))

        try:
            async with trio.open_nursery() as nursery:
                for tid, index, start in partitions:
                    nursery.start_soon(one, tid, index, start)
            self.coordinator.initialized(group_id, done, failed)
        except KafkaError as e:  # the group's records could not be written: retried later
            log.warning("cannot record the share state of group %s: %s", group_id, e)
        except Exception:  # a system task: never take the broker down
            log.exception("initializing the share state of group %s", group_id)

    # -- share partitions ----------------------------------------------------------------------
    def share_partition(self, group_id: str, topic_id: bytes, index: int, plog) -> SharePartition:
        """The group's share partition, initialized on first fetch from
        ``share.auto.offset.reset`` (latest: the HW; earliest: the log start; by_duration:
        the first offset at or after now minus the duration)."""
        key = (group_id, topic_id, index)
        sp = self.partitions.get(key)
        if sp is None:
            state = self.persisted.pop(key, None)
            if state is not None:
                sp = SharePartition.from_state(group_id, topic_id, index, state.start_offset,
                                               state.state_epoch, state.state_batches)
            else:
                sp = SharePartition(group_id, topic_id, index, self._reset_offset(group_id, plog))
            self.partitions[key] = sp
        elif sp.start_offset < plog.log_start_offset:
            sp.reset(plog.log_start_offset)
        return sp

    async def prepare(self, group_id: str, partitions) -> set[tuple[bytes, int]]:
        """Reads the state of the share partitions led here that are new (or led again at a
        new leader epoch) from their share coordinator; returns those whose state could not
        be read (not served until it can: a fresh start would deliver accepted records
        again)."""
        unready = set()
        for tid, index in partitions:
            topic = self.broker.topics.by_id.get(tid)
            if topic is None:
                continue
            leader, epoch = self.broker.replicas.current_leader(topic.name, index)
            if leader != self.broker.node_id:
                continue
            key = (group_id, tid, index)
            if self.read_epochs.get(key) == epoch:
                continue
            try:
                state = await self.persister.read(key, epoch)
                if state is not None and state.start_offset == UNINITIALIZED_START_OFFSET:
                    # initialized by the group coordinator: the leader picks the start
                    plog = self.broker.replicas.get_partition_or_error(
                        topic.name, index).local_log_with_epoch(-1, require_leader=True)
                    state = dataclasses.replace(
                        state, start_offset=self._reset_offset(group_id, plog))
                if state is None:
                    plog = self.broker.replicas.get_partition_or_error(
                        topic.name, index).local_log_with_epoch(-1, require_leader=True)
                    start = self._reset_offset(group_id, plog)
                    await self.persister.initialize(key, 0, start)
                    state = sr.ShareStateValue(snapshot_epoch=0, leader_epoch=epoch,
                                               start_offset=start)
            except KafkaError as e:
                log.info("cannot read the share state of %s: %s", key, e)
                unready.add((tid, index))
                continue
            if self.read_epochs.get(key) == epoch:
                continue  # another request read it meanwhile, and may have served it since
            self.partitions.pop(key, None)
            self.persisted[key] = state
            self.read_epochs[key] = epoch
        return unready

    def _reset_offset(self, group_id: str, plog) -> int:
        strategy = self.config(group_id, "share.auto.offset.reset").strip().lower()
        if strategy == "earliest":
            return plog.log_start_offset
        if strategy.startswith("by_duration:"):
            found = plog.offset_for_timestamp(self.clock() - _duration_ms(strategy[12:]))
            return plog.high_watermark if found is None else found.offset
        return plog.high_watermark

    def expire_locks(self, group_id: str) -> int | None:
        """Runs due lock expiries of the group's partitions; the next deadline (clock ms)."""
        now = self.clock()
        limit = self.delivery_limit(group_id)
        freed = False
        nearest = None
        for (g, _, _), sp in self.partitions.items():
            if g != group_id:
                continue
            freed |= sp.expire_locks(now, limit)
            d = sp.next_lock_deadline()
            if d is not None and (nearest is None or d < nearest):
                nearest = d
        if freed:
            self.notify_freed()
        return nearest

    async def flush(self) -> None:
        """Writes every share partition whose acknowledged state changed to its share
        coordinator (before the client is answered); KafkaError when a write fails (the
        partition stays dirty and is written with the next request)."""
        failed = None
        for sp in list(self.partitions.values()):
            if not sp.dirty:
                continue
            key = (sp.group_id, sp.topic_id, sp.partition)
            done = sp.delivery_complete_count()
            start = sp.start_offset
            pending = sp.changed  # a reset replaces the list: then nothing here is cleared
            written = len(pending)
            try:
                await self.persister.write(key, sp.state_epoch, self.read_epochs.get(key, -1),
                                           start, sp.state_batches(only_changed=True), done)
            except KafkaError as e:
                failed = e
                continue
            del pending[:written]
            sp.dirty = bool(sp.changed)
            sp.persisted = (start, done)
        if failed is not None:
            raise failed

    def notify_freed(self) -> None:
        self.records_freed.set()
        self.records_freed = trio.Event()

    def release_member(self, group_id: str, member_id: str,
                       partitions: Iterable[tuple[bytes, int]]) -> None:
        limit = self.delivery_limit(group_id)
        freed = False
        for topic_id, index in partitions:
            sp = self.partitions.get((group_id, topic_id, index))
            if sp is not None:
                freed |= sp.release_member(member_id, limit)
        if freed:
            self.notify_freed()

    def group_partitions(self, group_id: str) -> list[SharePartition]:
        return [sp for (g, _, _), sp in self.partitions.items() if g == group_id]

    async def delete_group(self, group_id: str) -> int:
        """DeleteGroups for a share group: only an Empty one, with its share state, forgotten
        here and at each share partition's share coordinator (DeleteShareGroupState through
        the persister where that is another node), as Kafka's group coordinator does."""
        listed = self._listed_partitions(group_id)  # the group's records go with it
        code = self.coordinator.delete(group_id)
        if code == 0:
            keys = set(await self.group_states(group_id, listed=listed))
            self.delete_group_state(group_id)
            for key in sorted(keys):
                try:
                    await self.persister.delete(key)
                except KafkaError as e:
                    log.warning("cannot forget the share state of %s: %s", key, e)
        return code

    async def summary(self, key: tuple[str, bytes, int]) -> tuple[int, int, int, int] | None:
        """(state epoch, leader epoch, start offset, delivery complete count) as the key's
        share coordinator has it, wherever that is; None when never initialized."""
        if self.broker.topics.get(SHARE_GROUP_STATE_TOPIC) is None:
            return None  # no share state anywhere yet
        return await self.persister.summary(key)

    async def group_states(self, group_id: str, topic_ids=None, listed=_ASK) -> dict:
        """{key: summary} of the group's initialized share partitions (of ``topic_ids`` only,
        when given), asked of their share coordinators: those the group's
        ShareGroupStatePartitionMetadata lists, as Kafka's group coordinator asks; for a group
        written before pykafkad kept that list, every partition of the cluster's topics."""
        keys = {k for k in list(self.partitions) + list(self.stored_states()) if k[0] == group_id}
        if listed is _ASK:
            listed = self._listed_partitions(group_id)
        if listed is not None:
            keys |= listed
        else:
            from pykafkad.cluster import INTERNAL_TOPICS

            for topic in list(self.broker.topics.by_id.values()):
                if topic.name not in INTERNAL_TOPICS:
                    keys.update((group_id, topic.topic_id, i) for i in range(topic.num_partitions))
        out = {}
        for key in sorted(keys):
            if topic_ids is not None and key[1] not in topic_ids:
                continue
            state = await self.summary(key)
            if state is not None:
                out[key] = state
        return out

    def _listed_partitions(self, group_id: str) -> set[tuple[str, bytes, int]] | None:
        """The share partitions the group's ShareGroupStatePartitionMetadata lists as
        initializing or initialized; None when the group has no such record."""
        group = self.coordinator.groups.get(group_id)
        if group is None or not (group.initializing or group.initialized):
            return None
        return {(group_id, tid, p) for lists in (group.initializing, group.initialized)
                for tid, (_, partitions) in lists.items() for p in partitions}

    def drop_cached(self, group_id: str) -> None:
        """The group's last share session here closed (Kafka's onGroupEmpty): its share
        partitions leave this leader's cache once written, so the next fetch reads the state
        again (offsets may be altered or deleted meanwhile, on another node)."""
        if any(g == group_id for g, _ in self.sessions.sessions):
            return
        for key in [k for k, sp in self.partitions.items() if k[0] == group_id and not sp.dirty]:
            self.partitions.pop(key, None)
            self.persisted.pop(key, None)
            self.read_epochs.pop(key, None)

    def delete_group_state(self, group_id: str) -> None:
        """DeleteGroups: the group's share partitions are forgotten (tombstones written)."""
        for key in {k for k in list(self.partitions) + list(self.stored_states())
                    if k[0] == group_id}:
            self._forget(key)

    def delete_topic_state(self, group_id: str, topic_id: bytes) -> None:
        for key in {k for k in list(self.partitions) + list(self.stored_states())
                    if k[0] == group_id and k[1] == topic_id}:
            self._forget(key)

    async def delete_topic_state_everywhere(self, group_id: str, topic_id: bytes) -> None:
        """DeleteShareGroupOffsets: every partition's share state is forgotten here and at
        its share coordinator (DeleteShareGroupState where that is another node)."""
        self.delete_topic_state(group_id, topic_id)
        topic = self.broker.topics.by_id.get(topic_id)
        if self.broker.topics.get(SHARE_GROUP_STATE_TOPIC) is None:
            return  # no share state anywhere yet
        for index in range(topic.num_partitions if topic is not None else 0):
            try:
                await self.persister.delete((group_id, topic_id, index))
            except KafkaError as e:
                log.warning("cannot forget the share state of %s-%d: %s", topic.name, index, e)

    def _forget(self, key: tuple[str, bytes, int]) -> None:
        """Forgets a share partition here, and its stored state where this node is its share
        coordinator."""
        self.partitions.pop(key, None)
        self.persisted.pop(key, None)
        self.read_epochs.pop(key, None)
        coordinator = self.share_coordinator
        if coordinator.check(key) == 0:
            try:
                coordinator.delete(key)
            except KafkaError as e:
                log.warning("cannot forget the share state of %s: %s", key, e)

    def stored_states(self) -> dict:
        """The stored states of the share partitions whose coordinator is this node, with
        those read from other coordinators."""
        self.share_coordinator.load_led()
        return {**self.share_coordinator.states, **self.persisted}


def _broker_int(broker, name: str, default: int) -> int:
    """A ``group.share.*`` broker config: its value, or Kafka's default where pykafkad does not
    define it."""
    try:
        return int(broker_value(broker.config, name))
    except KeyError:
        return default


def _duration_ms(text: str) -> int:
    """An ISO-8601 duration such as PT10M or P1D (Kafka's by_duration:<duration>)."""
    import re

    m = re.fullmatch(r"P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?", text.strip().upper())
    if m is None:
        return 0
    d, h, mi, s = (float(x) if x else 0.0 for x in m.groups())
    return int((((d * 24 + h) * 60 + mi) * 60 + s) * 1000)
