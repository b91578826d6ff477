"""MetadataDelta: metadata records replayed in order on top of a MetadataImage (Kafka's
MetadataDelta and its per-area deltas), then ``apply()`` to make the next image.

Replay follows Kafka's rules and refuses what Kafka refuses (a partition of an unknown topic,
a fence with a stale broker epoch ...) with Kafka's messages, since such a record means the log
and this node disagree. ``local_changes(broker_id)`` is Kafka's TopicsDelta.localChanges: what a
broker must start leading, start following, or delete after this delta.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from pykafkad.metadata.image import (
    EMPTY_IMAGE,
    METADATA_VERSION,
    BrokerRegistration,
    ControllerRegistration,
    FeaturesImage,
    MetadataImage,
    TopicImage,
    TopicsImage,
    frozen,
    sorted_uuids,
)
from pykafkad.metadata.partition import PartitionRegistration
from wire.metadata import (
    AbortTransactionRecord,
    AccessControlEntryRecord,
    BeginTransactionRecord,
    BrokerRegistrationChangeRecord,
    ClearElrRecord,
    ClientQuotaRecord,
    ConfigRecord,
    DelegationTokenRecord,
    EndTransactionRecord,
    FeatureLevelRecord,
    FenceBrokerRecord,
    NoOpRecord,
    PartitionChangeRecord,
    PartitionRecord,
    ProducerIdsRecord,
    RegisterBrokerRecord,
    RegisterControllerRecord,
    RemoveAccessControlEntryRecord,
    RemoveDelegationTokenRecord,
    RemoveTopicRecord,
    RemoveUserScramCredentialRecord,
    TopicRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
    UnregisterControllerRecord,
    UserScramCredentialRecord,
    ZkMigrationStateRecord,
)

#: a partition as ``(topic name, partition id)``, as Kafka's TopicPartition
TopicPartition = tuple[str, int]

_DELETED = None  # a changed-map value meaning "removed in this delta"

#: BrokerRegistrationChangeRecord.fenced: 1 fence, 0 no change, -1 unfence
_FENCING_CHANGE = {1: True, 0: None, -1: False}
#: BrokerRegistrationChangeRecord.in_controlled_shutdown: 0 no change, 1 entering
_SHUTDOWN_CHANGE = {0: None, 1: True}


class MetadataReplayError(RuntimeError):
    """A record that cannot apply to the metadata as it stands (Kafka throws and the node stops
    replaying: the log and the image disagree)."""


@dataclass(frozen=True)
class PartitionInfo:
    topic_id: bytes
    partition: PartitionRegistration


@dataclass(frozen=True)
class LocalReplicaChanges:
    """Kafka's LocalReplicaChanges: partitions this broker no longer hosts (``deletes``), now
    leads (``leaders``; ``elected_leaders`` the subset whose leader epoch changed), or follows
    (``followers``), with the topic ids and the directory of each changed local replica."""

    deletes: set[TopicPartition] = field(default_factory=set)
    elected_leaders: dict[TopicPartition, PartitionInfo] = field(default_factory=dict)
    leaders: dict[TopicPartition, PartitionInfo] = field(default_factory=dict)
    followers: dict[TopicPartition, PartitionInfo] = field(default_factory=dict)
    topic_ids: dict[str, bytes] = field(default_factory=dict)
    directory_ids: dict[tuple[bytes, TopicPartition], bytes] = field(default_factory=dict)


class _TopicDelta:
    """The partitions of one topic changed in this delta, over the topic's previous image."""

    __slots__ = ("image", "partition_changes")

    def __init__(self, image: TopicImage):
        self.image = image
        self.partition_changes: dict[int, PartitionRegistration] = {}

    def partition(self, pid: int) -> PartitionRegistration | None:
        p = self.partition_changes.get(pid)
        return p if p is not None else self.image.partitions.get(pid)

    def apply(self) -> TopicImage:
        if not self.partition_changes:
            return self.image
        partitions = {**self.image.partitions, **self.partition_changes}
        return TopicImage(self.image.name, self.image.id, frozen(partitions))

    def local_changes(self, broker_id: int, out: LocalReplicaChanges) -> None:
        name, tid = self.image.name, self.image.id
        for pid, new in self.partition_changes.items():
            tp = (name, pid)
            prev = self.image.partitions.get(pid)
            if broker_id not in new.replicas:
                if prev is not None and broker_id in prev.replicas:
                    out.deletes.add(tp)
            elif prev is None or prev.partition_epoch != new.partition_epoch:
                info = PartitionInfo(tid, new)
                if new.leader == broker_id:
                    out.leaders[tp] = info
                    if prev is None or prev.leader_epoch != new.leader_epoch:
                        out.elected_leaders[tp] = info
                else:
                    out.followers[tp] = info
                out.topic_ids.setdefault(name, tid)
            if broker_id in new.replicas:
                directory = new.directory(broker_id)
                if prev is None or not prev.directories or broker_id not in prev.replicas \
                        or prev.directory(broker_id) != directory:
                    out.directory_ids[(tid, tp)] = directory


class MetadataDelta:
    """Records replayed on top of ``image``; ``apply()`` gives the resulting image."""

    def __init__(self, image: MetadataImage = EMPTY_IMAGE):
        self.image = image
        self._snapshot = False
        self._metadata_version: int | None = None
        self._features: dict[str, int | None] = {}
        self._brokers: dict[int, BrokerRegistration | None] = {}
        self._controllers: dict[int, ControllerRegistration | None] = {}
        self._topics: dict[bytes, _TopicDelta] = {}
        self._created_topics: dict[str, bytes] = {}
        self._deleted_topic_ids: set[bytes] = set()
        self._configs: dict[tuple[int, str], dict[str, str | None]] = {}
        self._quotas: dict[tuple, dict[str, float | None]] = {}
        self._producer_ids: int | None = None
        self._acls: dict[bytes, AccessControlEntryRecord | None] = {}
        self._scram: dict[tuple[str, int], UserScramCredentialRecord | None] = {}
        self._tokens: dict[str, DelegationTokenRecord | None] = {}
        self._dispatch = {
            FeatureLevelRecord: self._feature_level,
            RegisterBrokerRecord: self._register_broker,
            UnregisterBrokerRecord: self._unregister_broker,
            FenceBrokerRecord: self._fence_broker,
            UnfenceBrokerRecord: self._unfence_broker,
            BrokerRegistrationChangeRecord: self._broker_registration_change,
            RegisterControllerRecord: self._register_controller,
            UnregisterControllerRecord: self._unregister_controller,
            TopicRecord: self._topic,
            PartitionRecord: self._partition,
            PartitionChangeRecord: self._partition_change,
            RemoveTopicRecord: self._remove_topic,
            ClearElrRecord: self._clear_elr,
            ConfigRecord: self._config,
            ClientQuotaRecord: self._client_quota,
            ProducerIdsRecord: self._producer_ids_record,
            AccessControlEntryRecord: self._acl,
            RemoveAccessControlEntryRecord: self._remove_acl,
            UserScramCredentialRecord: self._scram_credential,
            RemoveUserScramCredentialRecord: self._remove_scram_credential,
            DelegationTokenRecord: self._delegation_token,
            RemoveDelegationTokenRecord: self._remove_delegation_token,
        }

    # -- replay ----------------------------------------------------------------------------------
    def replay(self, record: object) -> None:
        """Applies one record to this delta (records that change no image are accepted)."""
        handler = self._dispatch.get(type(record))
        if handler is not None:
            handler(record)
        elif not isinstance(record, (NoOpRecord, ZkMigrationStateRecord, BeginTransactionRecord,
                                     EndTransactionRecord, AbortTransactionRecord)):
            raise MetadataReplayError(f"Unknown metadata record type {type(record).__name__}")

    def replay_all(self, records) -> MetadataDelta:
        for record in records:
            self.replay(record)
        return self

    def finish_snapshot(self) -> None:
        """The records replayed were a whole snapshot: whatever the old image held that the
        snapshot did not recreate is gone (Kafka's finishSnapshot)."""
        self._snapshot = True
        for tid in self.image.topics.by_id:
            if tid not in self._topics:
                self._deleted_topic_ids.add(tid)

    # features
    def _feature_level(self, r: FeatureLevelRecord) -> None:
        if r.name == METADATA_VERSION:
            self._metadata_version = r.feature_level
        else:
            self._features[r.name] = r.feature_level or _DELETED

    # cluster
    def broker(self, broker_id: int) -> BrokerRegistration | None:
        if broker_id in self._brokers:
            return self._brokers[broker_id]
        return None if self._snapshot else self.image.cluster.get(broker_id)

    def _register_broker(self, r: RegisterBrokerRecord) -> None:
        self._brokers[r.broker_id] = BrokerRegistration.from_record(r)

    def _unregister_broker(self, r: UnregisterBrokerRecord) -> None:
        self._brokers[r.broker_id] = _DELETED

    def _broker_or_raise(self, broker_id: int, epoch: int, action: str) -> BrokerRegistration:
        broker = self.broker(broker_id)
        if broker is None:
            raise MetadataReplayError(
                f"Tried to {action} broker {broker_id}, but that broker was not registered.")
        if broker.epoch != epoch:
            raise MetadataReplayError(
                f"Tried to {action} broker {broker_id}, but the given epoch, {epoch}, did not "
                f"match the current broker epoch, {broker.epoch}")
        return broker

    def _change_broker(self, broker: BrokerRegistration, fenced: bool | None,
                       shutdown: bool | None, directories: tuple | None,
                       cordoned: tuple | None = None) -> None:
        changes = {}
        if fenced is not None and fenced != broker.fenced:
            changes["fenced"] = fenced
        if shutdown is not None and shutdown != broker.in_controlled_shutdown:
            changes["in_controlled_shutdown"] = shutdown
        if directories is not None and directories != broker.directories:
            changes["directories"] = directories
        if cordoned is not None and cordoned != broker.cordoned_directories:
            changes["cordoned_directories"] = cordoned
        if changes:
            self._brokers[broker.id] = dataclasses.replace(broker, **changes)

    def _fence_broker(self, r: FenceBrokerRecord) -> None:
        self._change_broker(self._broker_or_raise(r.id, r.epoch, "fence"), True, None, None)

    def _unfence_broker(self, r: UnfenceBrokerRecord) -> None:
        self._change_broker(self._broker_or_raise(r.id, r.epoch, "unfence"), False, None, None)

    def _broker_registration_change(self, r: BrokerRegistrationChangeRecord) -> None:
        broker = self._broker_or_raise(r.broker_id, r.broker_epoch, "change")
        if r.fenced not in _FENCING_CHANGE:
            raise MetadataReplayError(
                f"Unable to replay {r!r}: unknown value for fenced field: {r.fenced}")
        if r.in_controlled_shutdown not in _SHUTDOWN_CHANGE:
            raise MetadataReplayError(
                f"Unable to replay {r!r}: unknown value for inControlledShutdown field: "
                f"{r.in_controlled_shutdown}")
        directories = sorted_uuids(r.log_dirs) if r.log_dirs else None
        cordoned = None if r.cordoned_log_dirs is None else tuple(r.cordoned_log_dirs)
        self._change_broker(broker, _FENCING_CHANGE[r.fenced],
                            _SHUTDOWN_CHANGE[r.in_controlled_shutdown], directories, cordoned)

    def _register_controller(self, r: RegisterControllerRecord) -> None:
        self._controllers[r.controller_id] = ControllerRegistration.from_record(r)

    def _unregister_controller(self, r: UnregisterControllerRecord) -> None:
        self._controllers[r.controller_id] = _DELETED

    # topics
    def topic_delta(self, topic_id: bytes) -> _TopicDelta | None:
        delta = self._topics.get(topic_id)
        if delta is None and not self._snapshot and topic_id not in self._deleted_topic_ids:
            image = self.image.topics.by_id.get(topic_id)
            if image is not None:
                delta = self._topics[topic_id] = _TopicDelta(image)
        return delta

    def _topic(self, r: TopicRecord) -> None:
        self._topics[r.topic_id] = _TopicDelta(TopicImage(r.name, r.topic_id))
        self._created_topics[r.name] = r.topic_id

    def _partition(self, r: PartitionRecord) -> None:
        delta = self.topic_delta(r.topic_id)
        if delta is None:
            raise MetadataReplayError(
                f"Tried to create partition {r.partition_id} of topic {_uuid(r.topic_id)}, "
                f"but no topic with that ID was found.")
        delta.partition_changes[r.partition_id] = PartitionRegistration.from_record(r)

    def _partition_change(self, r: PartitionChangeRecord) -> None:
        delta = self.topic_delta(r.topic_id)
        if delta is None:
            raise MetadataReplayError(
                f"Tried to change partition {r.partition_id} of topic {_uuid(r.topic_id)}, "
                f"but no topic with that ID was found.")
        prev = delta.partition(r.partition_id)
        if prev is None:
            raise MetadataReplayError(
                f"Unable to apply PartitionChangeRecord for partition {r.partition_id}: no such "
                f"partition found")
        delta.partition_changes[r.partition_id] = prev.merge(r)

    def _remove_topic(self, r: RemoveTopicRecord) -> None:
        delta = self._topics.pop(r.topic_id, None)
        if delta is not None:
            name = delta.image.name
            if r.topic_id in self.image.topics.by_id:
                self._deleted_topic_ids.add(r.topic_id)
        else:
            topic = None if self._snapshot else self.image.topics.by_id.get(r.topic_id)
            if topic is None or r.topic_id in self._deleted_topic_ids:
                raise MetadataReplayError(
                    f"Unable to delete topic with id {_uuid(r.topic_id)}: no such topic found.")
            name = topic.name
            self._deleted_topic_ids.add(r.topic_id)
        self._created_topics.pop(name, None)

    def _clear_elr(self, r: ClearElrRecord) -> None:
        if r.topic_name:
            topic = self.image.topics.by_name.get(r.topic_name)
            tid = self._created_topics.get(r.topic_name, topic.id if topic else None)
            if tid is None:
                raise MetadataReplayError(
                    f"Unable to clear elr for topic with name {r.topic_name}: no such topic "
                    f"found.")
            ids = [tid]
        else:
            ids = [*self.image.topics.by_id, *self._created_topics.values()]
        for tid in ids:
            delta = self.topic_delta(tid)
            if delta is None:
                continue
            for pid in {*delta.image.partitions, *delta.partition_changes}:
                p = delta.partition(pid)
                if p.elr or p.last_known_elr:
                    delta.partition_changes[pid] = p.merge(PartitionChangeRecord(
                        partition_id=pid, topic_id=tid, eligible_leader_replicas=[],
                        last_known_elr=[]))

    # configs, quotas, producer ids
    def _config(self, r: ConfigRecord) -> None:
        self._configs.setdefault((r.resource_type, r.resource_name), {})[r.name] = r.value

    def _client_quota(self, r: ClientQuotaRecord) -> None:
        entity = tuple(sorted((e.entity_type, e.entity_name) for e in r.entity or ()))
        self._quotas.setdefault(entity, {})[r.key] = None if r.remove else r.value

    def _producer_ids_record(self, r: ProducerIdsRecord) -> None:
        self._producer_ids = r.next_producer_id

    # ACLs, SCRAM, delegation tokens: kept so that snapshots carry them
    def _acl(self, r: AccessControlEntryRecord) -> None:
        self._acls[r.id] = r

    def _remove_acl(self, r: RemoveAccessControlEntryRecord) -> None:
        self._acls[r.id] = _DELETED

    def _scram_credential(self, r: UserScramCredentialRecord) -> None:
        self._scram[(r.name, r.mechanism)] = r

    def _remove_scram_credential(self, r: RemoveUserScramCredentialRecord) -> None:
        self._scram[(r.name, r.mechanism)] = _DELETED

    def _delegation_token(self, r: DelegationTokenRecord) -> None:
        self._tokens[r.token_id] = r

    def _remove_delegation_token(self, r: RemoveDelegationTokenRecord) -> None:
        self._tokens[r.token_id] = _DELETED

    # -- apply -----------------------------------------------------------------------------------
    def apply(self, offset: int | None = None, epoch: int | None = None) -> MetadataImage:
        """The image after every record replayed so far (``offset``/``epoch``: of the last one)."""
        base = EMPTY_IMAGE if self._snapshot else self.image
        mv = self._metadata_version
        features = base.features
        if mv is not None or self._features:
            features = FeaturesImage(
                features.metadata_version if mv is None else mv,
                frozen(_merged(features.finalized_versions, self._features)))
        topics = base.topics
        if self._topics or self._deleted_topic_ids:
            by_id = {tid: t for tid, t in base.topics.by_id.items()
                     if tid not in self._deleted_topic_ids}
            for tid, delta in self._topics.items():
                by_id[tid] = delta.apply()
            topics = TopicsImage(frozen(by_id), frozen({t.name: t for t in by_id.values()}))
        configs = base.configs
        if self._configs:
            configs = dict(base.configs)
            for resource, changes in self._configs.items():
                values = _merged(configs.get(resource, {}), changes)
                if values:
                    configs[resource] = frozen(values)
                else:
                    configs.pop(resource, None)
            configs = frozen(configs)
        quotas = base.client_quotas
        if self._quotas:
            quotas = dict(base.client_quotas)
            for entity, changes in self._quotas.items():
                values = _merged(quotas.get(entity, {}), changes)
                if values:
                    quotas[entity] = frozen(values)
                else:
                    quotas.pop(entity, None)
            quotas = frozen(quotas)
        return MetadataImage(
            features=features,
            cluster=_merged_frozen(base.cluster, self._brokers),
            controllers=_merged_frozen(base.controllers, self._controllers),
            topics=topics,
            configs=configs,
            client_quotas=quotas,
            producer_ids=base.producer_ids if self._producer_ids is None else self._producer_ids,
            acls=_merged_frozen(base.acls, self._acls),
            scram=_merged_frozen(base.scram, self._scram),
            delegation_tokens=_merged_frozen(base.delegation_tokens, self._tokens),
            offset=self.image.offset if offset is None else offset,
            epoch=self.image.epoch if epoch is None else epoch,
        )

    # -- what changed --------------------------------------------------------------------------
    @property
    def created_topics(self) -> dict[str, bytes]:
        return dict(self._created_topics)

    @property
    def deleted_topic_ids(self) -> set[bytes]:
        return set(self._deleted_topic_ids)

    @property
    def changed_brokers(self) -> dict[int, BrokerRegistration | None]:
        return dict(self._brokers)

    def local_changes(self, broker_id: int) -> LocalReplicaChanges:
        """What ``broker_id`` must do after this delta (Kafka's TopicsDelta.localChanges)."""
        out = LocalReplicaChanges()
        for delta in self._topics.values():
            if self._snapshot:
                old = self.image.topics.by_id.get(delta.image.id)
                delta = _rebased(delta, old)
            delta.local_changes(broker_id, out)
        for tid in self._deleted_topic_ids:
            topic = self.image.topics.by_id.get(tid)
            if topic is None:
                continue
            for pid, p in topic.partitions.items():
                if broker_id in p.replicas:
                    out.deletes.add((topic.name, pid))
        return out


def _rebased(delta: _TopicDelta, old: TopicImage | None) -> _TopicDelta:
    """A snapshot's topic compared with the topic of the same id before the snapshot."""
    if old is None:
        return delta
    rebased = _TopicDelta(old)
    rebased.partition_changes = dict(delta.partition_changes)
    return rebased


def _merged(base, changes) -> dict:
    out = dict(base)
    for k, v in changes.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = v
    return out


def _merged_frozen(base, changes):
    return frozen(_merged(base, changes)) if changes else base


def _uuid(b: bytes) -> str:
    import base64

    return base64.urlsafe_b64encode(b).decode().rstrip("=")
