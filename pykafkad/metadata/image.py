"""MetadataImage: an immutable snapshot of the cluster's metadata, as Kafka's image package.

An image is never changed: a MetadataDelta replays records on top of one and ``apply()`` makes
the next. ``records()`` gives back the records that rebuild the image (what a snapshot holds),
in Kafka's order: features, cluster, topics, configs, client quotas, producer ids, ACLs, SCRAM
credentials, delegation tokens.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from pykafkad.metadata.partition import PartitionRegistration
from wire.metadata.access_control_entry_record import AccessControlEntryRecord
from wire.metadata.client_quota_record import ClientQuotaRecord, EntityData
from wire.metadata.config_record import ConfigRecord
from wire.metadata.delegation_token_record import DelegationTokenRecord
from wire.metadata.feature_level_record import FeatureLevelRecord
from wire.metadata.producer_ids_record import ProducerIdsRecord
from wire.metadata.register_broker_record import BrokerEndpoint, BrokerFeature, RegisterBrokerRecord
from wire.metadata.register_controller_record import (
    ControllerEndpoint,
    ControllerFeature,
    RegisterControllerRecord,
)
from wire.metadata.topic_record import TopicRecord
from wire.metadata.user_scram_credential_record import UserScramCredentialRecord

METADATA_VERSION = "metadata.version"
_EMPTY: Mapping = MappingProxyType({})


def sorted_uuids(uuids) -> tuple[bytes, ...]:
    """UUIDs in Kafka's Uuid.compareTo order (signed most, then least significant half)."""
    return tuple(sorted(uuids, key=lambda b: (int.from_bytes(b[:8], "big", signed=True),
                                               int.from_bytes(b[8:], "big", signed=True))))


def frozen(mapping: Mapping) -> Mapping:
    """A read-only view of a private copy."""
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class Endpoint:
    """A listener of a broker or controller registration."""

    name: str
    host: str
    port: int
    security_protocol: int


@dataclass(frozen=True)
class BrokerRegistration:
    """A registered broker (Kafka's BrokerRegistration), built from its RegisterBrokerRecord."""

    id: int
    epoch: int
    incarnation_id: bytes
    listeners: tuple[Endpoint, ...]
    supported_features: Mapping[str, tuple[int, int]]
    rack: str | None
    fenced: bool
    in_controlled_shutdown: bool
    is_migrating_zk_broker: bool = False
    directories: tuple[bytes, ...] = ()
    cordoned_directories: tuple[bytes, ...] = ()

    @classmethod
    def from_record(cls, r: RegisterBrokerRecord) -> BrokerRegistration:
        return cls(
            id=r.broker_id,
            epoch=r.broker_epoch,
            incarnation_id=r.incarnation_id,
            listeners=tuple(Endpoint(e.name, e.host, e.port, e.security_protocol)
                            for e in r.end_points or ()),
            supported_features=frozen({f.name: (f.min_supported_version, f.max_supported_version)
                                       for f in r.features or ()}),
            rack=r.rack,
            fenced=r.fenced,
            in_controlled_shutdown=r.in_controlled_shutdown,
            is_migrating_zk_broker=r.is_migrating_zk_broker,
            directories=sorted_uuids(r.log_dirs or ()),
            cordoned_directories=tuple(r.cordoned_log_dirs or ()),
        )

    def listener(self, name: str) -> Endpoint | None:
        return next((e for e in self.listeners if e.name == name), None)

    def to_record(self) -> RegisterBrokerRecord:
        return RegisterBrokerRecord(
            broker_id=self.id,
            is_migrating_zk_broker=self.is_migrating_zk_broker,
            incarnation_id=self.incarnation_id,
            broker_epoch=self.epoch,
            end_points=[BrokerEndpoint(e.name, e.host, e.port, e.security_protocol)
                        for e in self.listeners],
            features=[BrokerFeature(n, lo, hi) for n, (lo, hi) in self.supported_features.items()],
            rack=self.rack,
            fenced=self.fenced,
            in_controlled_shutdown=self.in_controlled_shutdown,
            log_dirs=list(self.directories),
            cordoned_log_dirs=list(self.cordoned_directories) or None,
        )


@dataclass(frozen=True)
class ControllerRegistration:
    """A registered controller (KIP-919), from its RegisterControllerRecord."""

    id: int
    incarnation_id: bytes
    zk_migration_ready: bool
    listeners: tuple[Endpoint, ...]
    supported_features: Mapping[str, tuple[int, int]]

    @classmethod
    def from_record(cls, r: RegisterControllerRecord) -> ControllerRegistration:
        return cls(
            id=r.controller_id,
            incarnation_id=r.incarnation_id,
            zk_migration_ready=r.zk_migration_ready,
            listeners=tuple(Endpoint(e.name, e.host, e.port, e.security_protocol)
                            for e in r.end_points or ()),
            supported_features=frozen({f.name: (f.min_supported_version, f.max_supported_version)
                                       for f in r.features or ()}),
        )

    def to_record(self) -> RegisterControllerRecord:
        return RegisterControllerRecord(
            controller_id=self.id,
            incarnation_id=self.incarnation_id,
            zk_migration_ready=self.zk_migration_ready,
            end_points=[ControllerEndpoint(e.name, e.host, e.port, e.security_protocol)
                        for e in self.listeners],
            features=[ControllerFeature(n, lo, hi)
                      for n, (lo, hi) in self.supported_features.items()],
        )


@dataclass(frozen=True)
class FeaturesImage:
    """Finalized feature levels. metadata.version is kept apart, as Kafka keeps it: level 0 of
    any other feature removes it, while metadata.version is always set once bootstrapped."""

    metadata_version: int | None = None
    finalized_versions: Mapping[str, int] = field(default_factory=lambda: _EMPTY)

    def level(self, name: str) -> int:
        """The finalized level of ``name``; 0 when it is not finalized."""
        if name == METADATA_VERSION:
            return self.metadata_version or 0
        return self.finalized_versions.get(name, 0)

    def records(self) -> Iterator[FeatureLevelRecord]:
        if self.metadata_version is not None:
            yield FeatureLevelRecord(METADATA_VERSION, self.metadata_version)
        for name, level in self.finalized_versions.items():
            yield FeatureLevelRecord(name, level)


@dataclass(frozen=True)
class TopicImage:
    """A topic: its name, id and partitions by partition id."""

    name: str
    id: bytes
    partitions: Mapping[int, PartitionRegistration] = field(default_factory=lambda: _EMPTY)

    def records(self) -> Iterator[object]:
        yield TopicRecord(self.name, self.id)
        for pid in sorted(self.partitions):
            yield self.partitions[pid].to_record(self.id, pid)


@dataclass(frozen=True)
class TopicsImage:
    """Topics by id and by name (the same TopicImage objects)."""

    by_id: Mapping[bytes, TopicImage] = field(default_factory=lambda: _EMPTY)
    by_name: Mapping[str, TopicImage] = field(default_factory=lambda: _EMPTY)

    def get(self, name_or_id: str | bytes) -> TopicImage | None:
        if isinstance(name_or_id, str):
            return self.by_name.get(name_or_id)
        return self.by_id.get(name_or_id)

    def partition(self, topic_id: bytes, partition_id: int) -> PartitionRegistration | None:
        topic = self.by_id.get(topic_id)
        return None if topic is None else topic.partitions.get(partition_id)


#: a client-quota entity: its ``(entity_type, entity_name)`` pairs, sorted
QuotaEntity = tuple[tuple[str, "str | None"], ...]
#: a config resource: ``(resource type, resource name)``; types as in ConfigResource.Type
ConfigResource = tuple[int, str]


@dataclass(frozen=True)
class MetadataImage:
    """The whole metadata state at ``offset`` (the last record applied; -1 when empty) and the
    epoch of the batch that held it."""

    features: FeaturesImage = field(default_factory=FeaturesImage)
    cluster: Mapping[int, BrokerRegistration] = field(default_factory=lambda: _EMPTY)
    controllers: Mapping[int, ControllerRegistration] = field(default_factory=lambda: _EMPTY)
    topics: TopicsImage = field(default_factory=TopicsImage)
    configs: Mapping[ConfigResource, Mapping[str, str]] = field(default_factory=lambda: _EMPTY)
    client_quotas: Mapping[QuotaEntity, Mapping[str, float]] = field(default_factory=lambda: _EMPTY)
    #: the next producer id the controller hands out (-1 before any block was allocated)
    producer_ids: int = -1
    acls: Mapping[bytes, AccessControlEntryRecord] = field(default_factory=lambda: _EMPTY)
    scram: Mapping[tuple[str, int], UserScramCredentialRecord] = field(default_factory=lambda: _EMPTY)
    delegation_tokens: Mapping[str, DelegationTokenRecord] = field(default_factory=lambda: _EMPTY)
    offset: int = -1
    epoch: int = -1

    @property
    def metadata_version(self) -> int | None:
        return self.features.metadata_version

    def is_empty(self) -> bool:
        return self == EMPTY_IMAGE

    def records(self) -> list[object]:
        """The records a snapshot of this image holds, in Kafka's order."""
        out: list[object] = list(self.features.records())
        out += [self.cluster[b].to_record() for b in sorted(self.cluster)]
        out += [self.controllers[c].to_record() for c in sorted(self.controllers)]
        for topic in self.topics.by_id.values():
            out += topic.records()
        for (rtype, rname), values in self.configs.items():
            out += [ConfigRecord(rtype, rname, k, v) for k, v in values.items()]
        for entity, values in self.client_quotas.items():
            ents = [EntityData(t, n) for t, n in entity]
            out += [ClientQuotaRecord(ents, k, v, False) for k, v in values.items()]
        if self.producer_ids >= 0:
            out.append(ProducerIdsRecord(broker_id=-1, broker_epoch=-1,
                                         next_producer_id=self.producer_ids))
        out += self.acls.values()
        out += self.scram.values()
        out += self.delegation_tokens.values()
        return out


EMPTY_IMAGE = MetadataImage()
