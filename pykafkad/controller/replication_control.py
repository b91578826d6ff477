"""Kafka's ReplicationControlManager, topic half: topics and partitions built only by replaying
TopicRecord / PartitionRecord / PartitionChangeRecord / RemoveTopicRecord, and the
CreateTopics / DeleteTopics / CreatePartitions operations with Kafka's checks and messages.

Leadership and ISR changes live in leadership.py, reassignments in reassignment.py; both work
on this state.
"""

from __future__ import annotations

import base64
import random as _random
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from pykafkad.controller.cluster_control import ClusterControlManager
from pykafkad.controller.config_control import (
    BROKER,
    TOPIC,
    ConfigurationControlManager,
    clear_elr_records,
)
from pykafkad.controller.feature_control import FeatureControlManager
from pykafkad.controller.placement import StripedReplicaPlacer
from pykafkad.controller.result import NONE, ApiError, ControllerResult
from pykafkad.controller.topic_names import collision_key, validate_topic_name
from pykafkad.metadata.partition import NO_LEADER, PartitionRegistration
from pykafkad.quotas.controller_mutation import ThrottlingQuotaExceeded
from wire.errors import ErrorCode
from wire.messages.create_partitions_response import (
    CreatePartitionsResponse,
    CreatePartitionsTopicResult,
)
from wire.messages.create_topics_response import (
    CreatableTopicConfigs,
    CreatableTopicResult,
    CreateTopicsResponse,
)
from wire.metadata import (
    ClearElrRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RemoveTopicRecord,
    TopicRecord,
)
from wire.primitives import ZERO_UUID

CLUSTER_METADATA_TOPIC = "__cluster_metadata"
_RESERVED_IDS = {ZERO_UUID, (1).to_bytes(16, "big")}
MAX_PARTITIONS_PER_REQUEST = 10_000     # Kafka's MAX_RECORDS_PER_USER_OP guard
#: QuorumController.MAX_RECORDS_PER_USER_OP: the most records one admin request may write
MAX_RECORDS_PER_USER_OP = 10_000
BATCH_TOO_LARGE = "Unable to perform excessively large batch operation."


@dataclass
class TopicControlInfo:
    name: str
    id: bytes
    parts: dict[int, PartitionRegistration] = field(default_factory=dict)


def random_topic_id(rnd: _random.Random) -> bytes:
    """Kafka's Uuid.randomUuid: a v4 uuid, never reserved, never printing with a leading '-'."""
    while True:
        u = uuid.UUID(int=rnd.getrandbits(128), version=4).bytes
        if u not in _RESERVED_IDS and not base64.urlsafe_b64encode(u).startswith(b"-"):
            return u


def apply_partition_change_quota(quota, partitions: int) -> None:
    """ControllerRequestContext.applyPartitionChangeQuota: records ``partitions`` mutations
    against the request's controller_mutation_rate (``quota``: None when none applies); a
    strict quota already in debt refuses them. The error has no message: Kafka's
    ApiError.fromThrowable drops an exception's message when it is the error's default."""
    if quota is None:
        return
    try:
        quota.record(partitions)
    except ThrottlingQuotaExceeded:
        raise ApiError(ErrorCode.THROTTLING_QUOTA_EXCEEDED, None) from None


class ReplicationControlManager:
    def __init__(self, cluster: ClusterControlManager, configs: ConfigurationControlManager,
                 features: FeatureControlManager, *, rnd: _random.Random,
                 id_rnd: _random.Random | None = None,
                 default_num_partitions: int = 1, default_replication_factor: int = 1,
                 broker_defaults: dict[str, str] | None = None,
                 describe_configs: Callable[[dict[str, str]], list] | None = None) -> None:
        self.cluster = cluster
        self.configs = configs
        self.features = features
        self.random = rnd
        self.placer = StripedReplicaPlacer(rnd)
        # Topic ids come from their own stream, so the placer draws exactly what Kafka's does.
        if id_rnd is None:
            id_rnd = _random.Random(rnd.getrandbits(64)) if hasattr(rnd, "getrandbits") \
                else _random.Random()
        self.id_random = id_rnd
        self.default_num_partitions = default_num_partitions
        self.default_replication_factor = default_replication_factor
        self.broker_defaults = {"min.insync.replicas": "1",
                                "unclean.leader.election.enable": "false",
                                **(broker_defaults or {})}
        # (creation overrides) -> the effective configs CreateTopics reports, as ConfigEntry
        self.describe_configs = describe_configs
        self.topics: dict[bytes, TopicControlInfo] = {}
        self.topics_by_name: dict[str, bytes] = {}
        #: (topic id, partition) not led by their preferred replica, as Kafka's
        #: imbalancedPartitions: what auto.leader.rebalance.enable's task walks
        self.imbalanced: set[tuple[bytes, int]] = set()

    # --- replay ----------------------------------------------------------------------------
    def replay_topic(self, record: TopicRecord) -> None:
        if record.name in self.topics_by_name:
            raise RuntimeError(f"Found duplicate TopicRecord for {record.name}")
        self.topics_by_name[record.name] = record.topic_id
        self.topics[record.topic_id] = TopicControlInfo(record.name, record.topic_id)

    def replay_partition(self, record: PartitionRecord) -> None:
        topic = self.topics.get(record.topic_id)
        if topic is None:
            raise RuntimeError(f"Tried to create partition {record.partition_id}, but no topic "
                               "with that ID was found.")
        part = topic.parts[record.partition_id] = PartitionRegistration.from_record(record)
        self._track_imbalance(record.topic_id, record.partition_id, part)

    def replay_partition_change(self, record: PartitionChangeRecord) -> None:
        topic = self.topics.get(record.topic_id)
        part = topic.parts.get(record.partition_id) if topic is not None else None
        if part is None:
            raise RuntimeError(f"Tried to change partition {record.partition_id}, but no "
                               "partition with that id was found.")
        part = topic.parts[record.partition_id] = part.merge(record)
        self._track_imbalance(record.topic_id, record.partition_id, part)

    def _track_imbalance(self, topic_id: bytes, pid: int, part: PartitionRegistration) -> None:
        if part.has_preferred_leader():
            self.imbalanced.discard((topic_id, pid))
        else:
            self.imbalanced.add((topic_id, pid))

    def replay_remove_topic(self, record: RemoveTopicRecord) -> None:
        topic = self.topics.pop(record.topic_id, None)
        if topic is None:
            raise ApiError(ErrorCode.UNKNOWN_TOPIC_ID,
                           f"Can't find topic with ID {record.topic_id!r} to remove.")
        del self.topics_by_name[topic.name]
        self.imbalanced.difference_update((topic.id, pid) for pid in topic.parts)
        self.configs.delete_topic_configs(topic.name)

    def replay_clear_elr(self, record: ClearElrRecord) -> None:
        """Empty the ELR and last known ELR of one topic's partitions (all topics when the
        name is empty), each as a partition change (the partition epoch moves)."""
        if record.topic_name:
            topic_id = self.topics_by_name.get(record.topic_name)
            if topic_id is None:
                raise RuntimeError(f"Unable to find a topic named {record.topic_name} in "
                                   "order to clear its ELRs.")
            topics = [self.topics[topic_id]]
        else:
            topics = list(self.topics.values())
        for topic in topics:
            for pid, part in list(topic.parts.items()):
                if part.elr or part.last_known_elr:
                    topic.parts[pid] = part.merge(PartitionChangeRecord(
                        topic_id=topic.id, partition_id=pid, eligible_leader_replicas=[],
                        last_known_elr=[]))

    # --- queries ---------------------------------------------------------------------------
    def partition(self, topic_id: bytes, partition_id: int) -> PartitionRegistration | None:
        topic = self.topics.get(topic_id)
        return None if topic is None else topic.parts.get(partition_id)

    def all_partitions(self) -> Iterator[tuple[TopicControlInfo, int, PartitionRegistration]]:
        for topic in sorted(self.topics.values(), key=lambda t: t.name):
            for pid in sorted(topic.parts):
                yield topic, pid, topic.parts[pid]

    def topic_config(self, topic: str, name: str) -> str:
        """A topic's effective value: its override, the cluster-wide dynamic default, else
        the broker's static value."""
        value = self.configs.topic_config(topic, name)
        if value is None:
            value = self.configs.get((BROKER, "")).get(name)
        return value if value is not None else self.broker_defaults[name]

    def effective_min_isr(self, topic: TopicControlInfo) -> int:
        min_isr = int(self.topic_config(topic.name, "min.insync.replicas"))
        first = topic.parts.get(0) or next(iter(topic.parts.values()), None)
        return min(min_isr, len(first.replicas)) if first is not None else min_isr

    def unclean_enabled(self, topic: str) -> bool:
        return self.topic_config(topic, "unclean.leader.election.enable").lower() == "true"

    def _isr_for(self, replicas: list[int]) -> list[int]:
        return [r for r in replicas if self.cluster.is_active(r)]

    def _new_partition(self, replicas: list[int], isr: list[int]) -> PartitionRegistration:
        dirs = tuple(self.cluster.default_dir(r) for r in replicas) \
            if self.features.directory_assignment else ()
        return PartitionRegistration(replicas=tuple(replicas), isr=tuple(isr), leader=isr[0],
                                     directories=dirs)

    def validate_manual_assignment(self, replicas: list[int], rf: int | None) -> None:
        """Kafka's validateManualPartitionAssignment, with its messages."""
        if not replicas:
            raise ApiError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                           "The manual partition assignment includes an empty replica list.")
        prev = None
        for broker in sorted(replicas):
            reg = self.cluster.registration(broker)
            if reg is None:
                raise ApiError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                               f"The manual partition assignment includes broker {broker}, but "
                               "no such broker is registered.")
            if reg.all_dirs_cordoned:
                raise ApiError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                               f"The manual partition assignment includes broker {broker}, but "
                               "all its log directories are cordoned.")
            if broker == prev:
                raise ApiError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                               f"The manual partition assignment includes the broker {prev} "
                               "more than once.")
            prev = broker
        if rf is not None and len(replicas) != rf:
            raise ApiError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                           f"The manual partition assignment includes a partition with "
                           f"{len(replicas)} replica(s), but this is not consistent with "
                           f"previous partitions, which have {rf} replica(s).")

    # --- CreateTopics ----------------------------------------------------------------------
    def create_topics(self, request, quota=None) -> ControllerResult:
        """CreateTopics as Kafka's controller answers it (ControllerApis + createTopics).
        ``quota``: the request's controller mutation quota, taken per topic once its
        partitions are placed (validate_only too, as Kafka's)."""
        total = sum((self.default_num_partitions if t.num_partitions == -1 else
                     max(t.num_partitions, 0)) if not t.assignments else len(t.assignments)
                    for t in request.topics)
        if total > MAX_PARTITIONS_PER_REQUEST:
            return ControllerResult([], CreateTopicsResponse(topics=[
                CreatableTopicResult(name=t.name, error_code=ErrorCode.POLICY_VIOLATION,
                                     error_message="Excessively large number of partitions "
                                                   "per request.")
                for t in request.topics]))
        names = [t.name for t in request.topics]
        duplicates = {n for n in names if names.count(n) > 1}
        errors: dict[str, ApiError] = {}
        topics = [t for t in request.topics
                  if t.name not in duplicates and t.name != CLUSTER_METADATA_TOPIC]
        for t in topics:
            try:
                validate_topic_name(t.name)
            except ApiError as e:
                errors[t.name] = e
                continue
            if ("." in t.name or "_" in t.name) and t.name not in self.topics_by_name:
                for existing in self.topics_by_name:
                    if existing != t.name and collision_key(existing) == collision_key(t.name):
                        errors[t.name] = ApiError(
                            ErrorCode.INVALID_TOPIC_EXCEPTION,
                            f"Topic '{t.name}' collides with existing topic: {existing}")
                        break
        for t in topics:
            if t.name in self.topics_by_name:
                errors[t.name] = ApiError(ErrorCode.TOPIC_ALREADY_EXISTS,
                                          f"Topic '{t.name}' already exists.")
        for t in topics:
            if t.name in errors:
                continue
            nulls = [c.name for c in t.configs if c.value is None]
            if nulls:
                errors[t.name] = ApiError(ErrorCode.INVALID_CONFIG,
                                          "Null value not supported for topic configs: "
                                          + ",".join(nulls))
        records: list = []
        successes: dict[str, CreatableTopicResult] = {}
        for t in topics:
            if t.name in errors:
                continue
            config_records: list = []
            if t.configs:
                ops = [(c.name, 0, c.value) for c in t.configs]
                config_records, error = self.configs.incremental_alter((TOPIC, t.name), ops,
                                                                       newly_created=True)
                if error.is_failure:
                    errors[t.name] = error
                    continue
                config_records += clear_elr_records(config_records,
                                                    self.features.elr_enabled)
            try:
                successes[t.name] = self._create_topic(t, records, config_records, quota)
            except ApiError as e:
                errors[t.name] = e
        if len(records) > MAX_RECORDS_PER_USER_OP:
            # Kafka's BoundedList of records overflows: the whole request fails, validated or not
            return ControllerResult([], CreateTopicsResponse(topics=[
                CreatableTopicResult(name=t.name, error_code=ErrorCode.POLICY_VIOLATION,
                                     error_message=BATCH_TOO_LARGE)
                for t in request.topics]))
        results = []
        for t in topics:
            if t.name in errors:
                e = errors[t.name]
                results.append(CreatableTopicResult(name=t.name, error_code=e.code,
                                                    error_message=e.message))
            else:
                results.append(successes[t.name])
        for name in dict.fromkeys(n for n in names if n in duplicates):
            results.append(CreatableTopicResult(name=name, error_code=ErrorCode.INVALID_REQUEST,
                                                error_message="Duplicate topic name."))
        if CLUSTER_METADATA_TOPIC in names and CLUSTER_METADATA_TOPIC not in duplicates:
            results.append(CreatableTopicResult(
                name=CLUSTER_METADATA_TOPIC, error_code=ErrorCode.INVALID_REQUEST,
                error_message=f"Creation of internal topic {CLUSTER_METADATA_TOPIC} is "
                              "prohibited."))
        response = CreateTopicsResponse(topics=results)
        if request.validate_only:
            return ControllerResult([], response, atomic=True)
        return ControllerResult(records, response, atomic=True)

    def _create_topic(self, t, records: list, config_records: list,
                      quota=None) -> CreatableTopicResult:
        new_parts: dict[int, PartitionRegistration] = {}
        if t.assignments:
            if t.replication_factor != -1:
                raise ApiError(ErrorCode.INVALID_REQUEST,
                               "A manual partition assignment was specified, but replication "
                               "factor was not set to -1.")
            if t.num_partitions != -1:
                raise ApiError(ErrorCode.INVALID_REQUEST,
                               "A manual partition assignment was specified, but numPartitions "
                               "was not set to -1.")
            rf = None
            for a in t.assignments:
                if a.partition_index in new_parts:
                    raise ApiError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                   "Found multiple manual partition assignments for partition "
                                   f"{a.partition_index}")
                self.validate_manual_assignment(list(a.broker_ids), rf)
                rf = len(a.broker_ids)
                isr = self._isr_for(list(a.broker_ids))
                if not isr:
                    raise ApiError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                   "All brokers specified in the manual partition assignment "
                                   f"for partition {a.partition_index} are fenced or in "
                                   "controlled shutdown.")
                new_parts[a.partition_index] = self._new_partition(list(a.broker_ids), isr)
            for i in range(len(new_parts)):
                if i not in new_parts:
                    raise ApiError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                   "partitions should be a consecutive 0-based integer sequence")
        elif t.replication_factor < -1 or t.replication_factor == 0:
            raise ApiError(ErrorCode.INVALID_REPLICATION_FACTOR,
                           "Replication factor must be larger than 0, or -1 to use the default "
                           "value.")
        elif t.num_partitions < -1 or t.num_partitions == 0:
            raise ApiError(ErrorCode.INVALID_PARTITIONS,
                           "Number of partitions was set to an invalid non-positive value.")
        else:
            num = self.default_num_partitions if t.num_partitions == -1 else t.num_partitions
            rf = self.default_replication_factor if t.replication_factor == -1 \
                else t.replication_factor
            try:
                placements = self.placer.place(num, rf, self.cluster.usable_brokers())
            except ApiError as e:
                raise ApiError(ErrorCode.INVALID_REPLICATION_FACTOR,
                               f"Unable to replicate the partition {rf} time(s): {e.message}"
                               ) from None
            for pid, replicas in enumerate(placements):
                isr = self._isr_for(replicas)
                if not isr:
                    raise ApiError(ErrorCode.INVALID_REPLICATION_FACTOR,
                                   f"Unable to replicate the partition {rf} time(s): All brokers "
                                   "are currently fenced or in controlled shutdown.")
                new_parts[pid] = self._new_partition(replicas, isr)
        apply_partition_change_quota(quota, len(new_parts))
        topic_id = random_topic_id(self.id_random)
        result = CreatableTopicResult(
            name=t.name, topic_id=topic_id, error_code=ErrorCode.NONE, error_message=None,
            num_partitions=len(new_parts),
            replication_factor=len(next(iter(new_parts.values())).replicas),
            configs=[])
        if self.describe_configs is not None:
            overrides = {c.name: c.value for c in t.configs}
            result.configs = [
                CreatableTopicConfigs(name=e.name, value=e.value, read_only=e.read_only,
                                      config_source=e.source, is_sensitive=e.is_sensitive)
                for e in self.describe_configs(overrides)]
        records.append(TopicRecord(name=t.name, topic_id=topic_id))
        records.extend(config_records)     # ConfigRecords go before the PartitionRecords
        for pid in sorted(new_parts):
            records.append(new_parts[pid].to_record(topic_id, pid))
        return result

    # --- DeleteTopics ----------------------------------------------------------------------
    def delete_topic_records(self, topic_id: bytes, quota=None) -> list:
        """``quota``: the request's controller mutation quota, taken per topic (its
        partitions)."""
        if topic_id not in self.topics:
            raise ApiError(ErrorCode.UNKNOWN_TOPIC_ID)
        apply_partition_change_quota(quota, len(self.topics[topic_id].parts))
        return [RemoveTopicRecord(topic_id=topic_id)]

    # --- CreatePartitions ------------------------------------------------------------------
    def create_partitions(self, request, quota=None) -> ControllerResult:
        additional = 0
        for t in request.topics:
            topic_id = self.topics_by_name.get(t.name)
            if t.count >= 0 and topic_id is not None:
                additional += max(t.count - len(self.topics[topic_id].parts), 0)
        if additional > MAX_PARTITIONS_PER_REQUEST:
            return ControllerResult([], CreatePartitionsResponse(results=[
                CreatePartitionsTopicResult(name=t.name, error_code=ErrorCode.POLICY_VIOLATION,
                                            error_message="Excessively large number of "
                                                          "additional partitions per request.")
                for t in request.topics]))
        records: list = []
        results = []
        for t in request.topics:
            error = NONE
            try:
                self._create_partitions(t, records, quota)
            except ApiError as e:
                error = e
            results.append(CreatePartitionsTopicResult(name=t.name, error_code=error.code,
                                                       error_message=error.message))
        response = CreatePartitionsResponse(results=results)
        if request.validate_only:
            return ControllerResult([], response, atomic=True)
        return ControllerResult(records, response, atomic=True)

    def _create_partitions(self, t, records: list, quota=None) -> None:
        topic_id = self.topics_by_name.get(t.name)
        if topic_id is None:
            raise ApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None)
        topic = self.topics[topic_id]
        current = len(topic.parts)
        if t.count == current:
            raise ApiError(ErrorCode.INVALID_PARTITIONS,
                           f"Topic already has {current} partition(s).")
        if t.count < current:
            raise ApiError(ErrorCode.INVALID_PARTITIONS,
                           f"The topic {t.name} currently has {current} partition(s); "
                           f"{t.count} would not be an increase.")
        additional = t.count - current
        if t.assignments is not None and len(t.assignments) != additional:
            raise ApiError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                           f"Attempted to add {additional} additional partition(s), but only "
                           f"{len(t.assignments)} assignment(s) were specified.")
        apply_partition_change_quota(quota, additional)
        rf = len(next(iter(topic.parts.values())).replicas)
        if t.assignments is not None:
            placements = []
            for i, a in enumerate(t.assignments):
                replicas = list(a.broker_ids)
                self.validate_manual_assignment(replicas, rf)
                if not self._isr_for(replicas):
                    raise ApiError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                   "All brokers specified in the manual partition assignment "
                                   f"for partition {current + i} are fenced or in controlled "
                                   "shutdown.")
                placements.append(replicas)
        else:
            try:
                placements = self.placer.place(additional, rf, self.cluster.usable_brokers())
            except ApiError as e:
                raise ApiError(e.code, e.message) from None
        for i, replicas in enumerate(placements):
            isr = self._isr_for(replicas)
            if not isr:
                raise ApiError(ErrorCode.INVALID_REPLICATION_FACTOR,
                               f"Unable to replicate the partition {rf} time(s): All brokers "
                               "are currently fenced or in controlled shutdown.")
            records.append(self._new_partition(replicas, isr).to_record(topic.id, current + i))

    def leaderless_partitions(self) -> list[tuple[TopicControlInfo, int, PartitionRegistration]]:
        return [(t, pid, p) for t, pid, p in self.all_partitions() if p.leader == NO_LEADER]
