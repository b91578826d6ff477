"""Kafka's QuorumController as one synchronous, deterministic state machine.

``replay(record, offset)`` is the only way state changes: the node appends the records an
operation returns to the metadata log and replays them once committed (or, as Kafka's active
controller does, right after appending). ``handle(request, now_ms)`` answers one controller
API with a ControllerResult; it reads the replayed state only, so the node must replay one
operation's records before handling the next write operation (Kafka's single event queue).
Time comes in as ``now_ms``; randomness (placement, topic ids) from the seeded ``rnd``.

Wiring it into a node:
- replay every record of the metadata log (snapshot, then batches) with its offset, on every
  controller, active or not;
- on becoming the active controller call ``activate(now_ms)``; a new cluster's log starts with
  ``bootstrap_records()`` (the FeatureLevelRecords ``format`` writes);
- ``handle(request, now_ms, version=..., next_write_offset=<log end offset>)``: append
  ``result.records`` (one batch when ``result.atomic``), wait for the commit, then send
  ``result.response``; broker epochs are offsets, hence ``next_write_offset``;
- timers: ``fence_stale_brokers(now_ms)`` at ``next_fence_check_ms()`` (repeat while it
  returns records), ``balance_partition_leaders()`` every leader.imbalance.check.interval
  .seconds, ``elect_unclean_leaders()`` periodically.
"""

from __future__ import annotations

import copy
import random as _random
from collections.abc import Callable

from pykafkad.config.broker import BrokerConfig
from pykafkad.config.describe import describe_topic_configs
from pykafkad.controller import dir_assignment, leadership, reassignment
from pykafkad.controller.acl_control import AclControlManager
from pykafkad.controller.cluster_control import ClusterControlManager
from pykafkad.controller.config_control import BROKER as BROKER_RESOURCE
from pykafkad.controller.config_control import GROUP as GROUP_RESOURCE
from pykafkad.controller.config_control import TOPIC as TOPIC_RESOURCE
from pykafkad.controller.config_control import (
    ConfigurationControlManager,
    Resource,
    clear_elr_records,
    default_validator,
    group_validator,
)
from pykafkad.controller.feature_control import FeatureControlManager
from pykafkad.controller.heartbeat import BrokerControlState
from pykafkad.controller.producer_id_control import ProducerIdControlManager
from pykafkad.controller.replication_control import ReplicationControlManager
from pykafkad.controller.result import NONE, ApiError, ControllerResult
from pykafkad.controller.scram_control import ScramControlManager
from pykafkad.controller.supported_features import controller_supported_features
from pykafkad.controller.update_features import (
    FeatureUpdater,
    elr_safety_records,
    update_features,
)
from pykafkad.metadata.java_properties import java_hash_order, java_uuid_hash
from pykafkad.quotas.table import apply_changes
from pykafkad.security.authorizer import (
    ALTER,
    ALTER_CONFIGS,
    CLUSTER,
    CLUSTER_NAME,
    DELETE,
    DESCRIBE,
    GROUP,
    TOPIC,
)
from wire.errors import ErrorCode
from wire.messages.allocate_producer_ids_response import AllocateProducerIdsResponse
from wire.messages.alter_configs_response import AlterConfigsResourceResponse as LegacyResult
from wire.messages.alter_configs_response import AlterConfigsResponse
from wire.messages.alter_partition_response import AlterPartitionResponse
from wire.messages.assign_replicas_to_dirs_response import AssignReplicasToDirsResponse
from wire.messages.broker_heartbeat_response import BrokerHeartbeatResponse
from wire.messages.broker_registration_response import BrokerRegistrationResponse
from wire.messages.controller_registration_response import ControllerRegistrationResponse
from wire.messages.create_partitions_response import CreatePartitionsTopicResult
from wire.messages.delete_topics_response import DeletableTopicResult, DeleteTopicsResponse
from wire.messages.elect_leaders_response import (
    ElectLeadersResponse,
    PartitionResult,
    ReplicaElectionResult,
)
from wire.messages.incremental_alter_configs_response import (
    AlterConfigsResourceResponse,
    IncrementalAlterConfigsResponse,
)
from wire.messages.unregister_broker_response import UnregisterBrokerResponse
from wire.metadata import (
    AccessControlEntryRecord,
    BrokerRegistrationChangeRecord,
    ClearElrRecord,
    ClientQuotaRecord,
    ConfigRecord,
    FeatureLevelRecord,
    FenceBrokerRecord,
    PartitionChangeRecord,
    PartitionRecord,
    ProducerIdsRecord,
    RegisterBrokerRecord,
    RegisterControllerRecord,
    RemoveAccessControlEntryRecord,
    RemoveTopicRecord,
    RemoveUserScramCredentialRecord,
    TopicRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
    UnregisterControllerRecord,
    UserScramCredentialRecord,
)
from wire.primitives import ZERO_UUID

#: (operation, resource type, name) -> allowed
Authorize = Callable[[int, int, str], bool]


def _allow_everything(operation: int, resource_type: int, name: str) -> bool:
    return True


class QuorumController:
    def __init__(self, cluster_id: str, *, node_id: int = 0,
                 rnd: _random.Random | None = None,
                 session_timeout_ms: int = 9000,
                 default_num_partitions: int = 1, default_replication_factor: int = 1,
                 broker_defaults: dict[str, str] | None = None,
                 delete_topic_enable: bool = True,
                 kraft_version: int = 1,
                 config_validator=default_validator,
                 broker_config: BrokerConfig | None = None,
                 describe_configs: Callable[[dict[str, str]], list] | None = None,
                 quorum_node_ids: list[int] | None = None) -> None:
        self.node_id = node_id
        #: the voters (controller.quorum.voters): UpdateFeatures wants each registered
        self.quorum_node_ids = list(quorum_node_ids) if quorum_node_ids else [node_id]
        self.random = rnd if rnd is not None else _random.Random()
        self.kraft_version = kraft_version
        self.delete_topic_enable = delete_topic_enable
        self.features = FeatureControlManager()
        self.cluster = ClusterControlManager(cluster_id, session_timeout_ms=session_timeout_ms)
        if broker_config is not None:
            config_validator = group_validator(broker_config, config_validator)
        self.configs = ConfigurationControlManager(validator=config_validator,
                                                   existence=self._check_exists)
        self.replication = ReplicationControlManager(
            self.cluster, self.configs, self.features, rnd=self.random,
            default_num_partitions=default_num_partitions,
            default_replication_factor=default_replication_factor,
            broker_defaults=broker_defaults, describe_configs=describe_configs)
        if describe_configs is None:
            static = broker_config if broker_config is not None else BrokerConfig()
            self.replication.describe_configs = lambda overrides: describe_topic_configs(
                static, overrides)
        self.producer_ids = ProducerIdControlManager(self.cluster)
        self.acls = AclControlManager(new_id=lambda: self.random.randbytes(16))
        self.scram = ScramControlManager()
        #: the client quotas (entity -> {key: value}), which the controller mutation quota
        #: reads, as Kafka's controller's quota managers are fed from its metadata
        self.client_quotas: dict = {}
        self.mutation_quota = None
        self.last_replayed_offset = -1
        self._replayers = {
            UnregisterBrokerRecord: self.cluster.replay_unregister,
            FenceBrokerRecord: self.cluster.replay_fence,
            UnfenceBrokerRecord: self.cluster.replay_unfence,
            BrokerRegistrationChangeRecord: self.cluster.replay_change,
            TopicRecord: self.replication.replay_topic,
            PartitionRecord: self.replication.replay_partition,
            PartitionChangeRecord: self.replication.replay_partition_change,
            RemoveTopicRecord: self.replication.replay_remove_topic,
            ConfigRecord: self.configs.replay,
            ProducerIdsRecord: self.producer_ids.replay,
            FeatureLevelRecord: self.features.replay,
            ClearElrRecord: self.replication.replay_clear_elr,
            RegisterControllerRecord: self.cluster.replay_register_controller,
            UnregisterControllerRecord: self.cluster.replay_unregister_controller,
            AccessControlEntryRecord: self.acls.replay,
            RemoveAccessControlEntryRecord: self.acls.replay_remove,
            UserScramCredentialRecord: self.scram.replay,
            RemoveUserScramCredentialRecord: self.scram.replay_remove,
            ClientQuotaRecord: self._replay_client_quota,
        }
        self._handlers = {
            "BrokerRegistrationRequest": self._broker_registration,
            "BrokerHeartbeatRequest": self._broker_heartbeat,
            "UnregisterBrokerRequest": self._unregister_broker,
            "ControllerRegistrationRequest": self._controller_registration,
            "UpdateFeaturesRequest": self._update_features,
            "CreateTopicsRequest":
                lambda r, v, o: self.replication.create_topics(r, self.mutation_quota),
            "DeleteTopicsRequest": self._delete_topics,
            "CreatePartitionsRequest": self._create_partitions,
            "IncrementalAlterConfigsRequest": self._incremental_alter_configs,
            "AlterConfigsRequest": self._alter_configs,
            "AlterPartitionRequest": self._alter_partition,
            "AlterClientQuotasRequest": self._alter_client_quotas,
            "CreateAclsRequest": lambda r, v, o: self.acls.create_acls(r),
            "DeleteAclsRequest": lambda r, v, o: self.acls.delete_acls(r),
            "AlterUserScramCredentialsRequest": lambda r, v, o: self.scram.alter(r),
            "AllocateProducerIdsRequest": self._allocate_producer_ids,
            "AssignReplicasToDirsRequest": self._assign_replicas_to_dirs,
            "ElectLeadersRequest": self._elect_leaders,
            "AlterPartitionReassignmentsRequest":
                lambda r, v, o: reassignment.alter_partition_reassignments(
                    self.replication, r, 1 if v is None else v),
            "ListPartitionReassignmentsRequest":
                lambda r, v, o: reassignment.list_partition_reassignments(self.replication, r),
        }

    # --- replay ----------------------------------------------------------------------------
    def replay(self, record, offset: int) -> None:
        """Apply one committed metadata record (written at ``offset``)."""
        if isinstance(record, RegisterBrokerRecord):
            self.cluster.replay_register(record, offset)
        else:
            # Records of areas this controller does not model (NoOp, delegation tokens ...)
            # only advance the offset.
            replayer = self._replayers.get(type(record))
            if replayer is not None:
                replayer(record)
        self.last_replayed_offset = max(self.last_replayed_offset, offset)

    def _replay_client_quota(self, record: ClientQuotaRecord) -> None:
        entity = tuple(sorted((e.entity_type, e.entity_name) for e in record.entity or ()))
        apply_changes(self.client_quotas,
                      [(entity, record.key, None if record.remove else record.value)])

    # --- requests --------------------------------------------------------------------------
    def handle(self, request, now_ms: int, *, version: int | None = None,
               next_write_offset: int | None = None,
               authorize: Authorize | None = None,
               mutation_quota=None) -> ControllerResult:
        """Answer one controller API. ``next_write_offset`` is where the returned records
        will be written (default: just after the last replayed record); broker epochs are it.
        ``authorize(operation, resource type, name)`` says what the request's principal may
        do (the APIs ControllerApis authorizes per topic ask it; default: everything).
        ``mutation_quota``: the request's controller mutation quota (MutationQuota), which
        CreateTopics, DeleteTopics and CreatePartitions take partitions from; None: none."""
        self.cluster.now_ms = now_ms
        self.now_ms = now_ms
        self.authorize = authorize if authorize is not None else _allow_everything
        self.mutation_quota = mutation_quota
        offset = self.last_replayed_offset + 1 if next_write_offset is None else next_write_offset
        handler = self._handlers.get(type(request).__name__)
        if handler is None:
            raise ValueError(f"the controller does not handle {type(request).__name__}")
        return handler(request, version, offset)

    def _alter_client_quotas(self, request, version, offset) -> ControllerResult:
        """ClientQuotaControlManager: each valid entry's changes as ClientQuotaRecords."""
        from pykafkad.quotas.table import alter_changes, records_for

        response, changes = alter_changes(request)
        return ControllerResult(records_for(changes), response)

    def activate(self, now_ms: int) -> None:
        """This node became the active controller: start every registered broker's session
        afresh (Kafka's ClusterControlManager.activate), so sessions replayed while standing
        by are not taken for expired ones."""
        self.cluster.activate(now_ms)

    def fence_stale_brokers(self, now_ms: int) -> ControllerResult:
        """Fence the broker whose session expired longest ago, moving its leaderships away.

        One broker at a time, as Kafka does, so each fencing sees the previous one's effect:
        replay the records, then call again until it returns no records.
        """
        self.cluster.now_ms = now_ms
        records: list = []
        broker = self.cluster.heartbeats.find_one_stale_broker(now_ms)
        if broker is not None and self.cluster.registration(broker) is not None:
            leadership.handle_broker_fenced(self.replication, broker, records)
            self.cluster.heartbeats.fence(broker)
        return ControllerResult(records, None)

    def balance_partition_leaders(self) -> ControllerResult:
        """Preferred elections for imbalanced partitions (every leader.imbalance.check.interval
        .seconds when auto.leader.rebalance.enable); response True when more may remain."""
        return leadership.balance_partition_leaders(self.replication)

    def elect_unclean_leaders(self) -> ControllerResult:
        """Unclean elections for leaderless partitions whose topic enables them."""
        return leadership.elect_unclean_leaders(self.replication)

    def next_fence_check_ms(self) -> int | None:
        """When the next session may expire (for the node's timer)."""
        return self.cluster.heartbeats.next_check_time_ms()

    def bootstrap_records(self, features: dict[str, int] | None = None) -> list:
        """The first batch of a new cluster's metadata log (see FeatureControlManager)."""
        min_isr = int(self.replication.broker_defaults["min.insync.replicas"])
        return FeatureControlManager.bootstrap_records(features, min_insync_replicas=min_isr)

    # --- brokers ---------------------------------------------------------------------------
    def _finalized_features(self) -> dict[str, int]:
        features = dict(self.features.finalized)
        features["kraft.version"] = self.kraft_version
        return features

    def _broker_registration(self, request, version, offset) -> ControllerResult:
        try:
            records, epoch = self.cluster.register_broker(
                request, offset, self._finalized_features(), self.now_ms,
                version=4 if version is None else version,
                directory_assignment=self.features.directory_assignment,
                shutdown_handler=lambda b, clean, recs: leadership.handle_broker_shutdown(
                    self.replication, b, clean, recs))
        except ApiError as e:
            return ControllerResult([], BrokerRegistrationResponse(error_code=e.code))
        return ControllerResult(records, BrokerRegistrationResponse(
            error_code=ErrorCode.NONE, broker_epoch=epoch), atomic=True)

    def _controller_registration(self, request, version, offset) -> ControllerResult:
        try:
            records = self.cluster.register_controller(request, self.features.metadata_version)
        except ApiError as e:
            return ControllerResult([], ControllerRegistrationResponse(
                error_code=e.code, error_message=e.message))
        return ControllerResult(records, ControllerRegistrationResponse(
            error_code=ErrorCode.NONE), atomic=True)

    def _update_features(self, request, version, offset) -> ControllerResult:
        updater = FeatureUpdater(
            node_id=self.node_id, finalized=self.features.finalized,
            kraft_version=self.kraft_version,
            local={n: (lo, hi) for n, lo, hi in controller_supported_features()},
            brokers={b: dict(r.features) for b, r in sorted(self.cluster.registrations.items())},
            controllers={c: {f.name: (f.min_supported_version, f.max_supported_version)
                             for f in r.features}
                         for c, r in sorted(self.cluster.controllers.items())},
            quorum_node_ids=self.quorum_node_ids)
        min_isr = self.replication.broker_defaults["min.insync.replicas"]
        return update_features(updater, request, 2 if version is None else version,
                               lambda: elr_safety_records(self.configs.configs, min_isr))

    def _broker_heartbeat(self, request, version, offset) -> ControllerResult:
        rc, hb = self.replication, self.cluster.heartbeats
        broker_id = request.broker_id
        try:
            register_offset = self.cluster.register_offsets.get(broker_id)
            if register_offset is None:
                raise ApiError(ErrorCode.STALE_BROKER_EPOCH,
                               f"Receive a heartbeat from broker {broker_id} before "
                               "registration")
            self.cluster.check_broker_epoch(broker_id, request.broker_epoch)
        except ApiError as e:
            return ControllerResult([], BrokerHeartbeatResponse(error_code=e.code))
        current, nxt = hb.next_state(
            broker_id, want_fence=request.want_fence, want_shut_down=request.want_shut_down,
            current_metadata_offset=request.current_metadata_offset,
            register_offset=register_offset,
            has_leaderships=leadership.has_leaderships(rc, broker_id))
        records: list = []
        if current != nxt:
            if nxt in (BrokerControlState.FENCED, BrokerControlState.SHUTDOWN_NOW):
                leadership.handle_broker_fenced(rc, broker_id, records)
            elif nxt is BrokerControlState.UNFENCED:
                leadership.handle_broker_unfenced(rc, broker_id, request.broker_epoch, records)
            elif nxt is BrokerControlState.CONTROLLED_SHUTDOWN:
                leadership.handle_broker_in_controlled_shutdown(rc, broker_id,
                                                                request.broker_epoch, records)
        hb.touch(broker_id, nxt.fenced, request.current_metadata_offset, self.now_ms)
        if self.features.directory_assignment and request.offline_log_dirs:
            self._directories_offline(broker_id, request.broker_epoch,
                                      list(request.offline_log_dirs), records)
        if self.features.cordoned_log_dirs and request.cordoned_log_dirs is not None:
            reg = self.cluster.registration(broker_id)
            if reg.cordoned_dirs_changed(request.cordoned_log_dirs):
                records.append(BrokerRegistrationChangeRecord(
                    broker_id=broker_id, broker_epoch=request.broker_epoch, log_dirs=None,
                    cordoned_log_dirs=list(request.cordoned_log_dirs)))
        if nxt.in_controlled_shutdown:
            hb.maybe_update_controlled_shutdown_offset(broker_id, offset + len(records) - 1)
        return ControllerResult(records, BrokerHeartbeatResponse(
            error_code=ErrorCode.NONE,
            is_caught_up=request.current_metadata_offset >= register_offset,
            is_fenced=nxt.fenced, should_shut_down=nxt.should_shut_down))

    def _directories_offline(self, broker_id: int, epoch: int, offline: list[bytes],
                             records: list) -> None:
        reg = self.cluster.registration(broker_id)
        newly_offline = [d for d in reg.directories if d in offline]
        if not newly_offline:
            return
        parts = [(t, pid, p) for t, pid, p in self.replication.all_partitions()
                 if broker_id in p.replicas and p.directory(broker_id) in newly_offline]
        leadership.generate_leader_and_isr_updates(self.replication, broker_id, -1, -1,
                                                   records, parts)
        records.append(BrokerRegistrationChangeRecord(
            broker_id=broker_id, broker_epoch=epoch,
            log_dirs=[d for d in reg.directories if d not in offline]))

    def _unregister_broker(self, request, version, offset) -> ControllerResult:
        reg = self.cluster.registration(request.broker_id)
        if reg is None:
            return ControllerResult([], UnregisterBrokerResponse(
                error_code=ErrorCode.BROKER_ID_NOT_REGISTERED,
                error_message=f"Broker ID {request.broker_id} is not currently registered"))
        records: list = []
        leadership.handle_broker_unregistered(self.replication, request.broker_id, reg.epoch,
                                              records)
        return ControllerResult(records, UnregisterBrokerResponse(error_code=ErrorCode.NONE,
                                                                  error_message=None))

    def _assign_replicas_to_dirs(self, request, version, offset) -> ControllerResult:
        try:
            return dir_assignment.assign_replicas_to_dirs(self.replication, request)
        except ApiError as e:
            return ControllerResult([], AssignReplicasToDirsResponse(
                throttle_time_ms=0, error_code=e.code, directories=[]))

    def _allocate_producer_ids(self, request, version, offset) -> ControllerResult:
        try:
            records, block = self.producer_ids.generate_next_producer_id(request.broker_id,
                                                                         request.broker_epoch)
        except ApiError as e:
            return ControllerResult([], AllocateProducerIdsResponse(error_code=e.code))
        return ControllerResult(records, AllocateProducerIdsResponse(
            error_code=ErrorCode.NONE, producer_id_start=block.first_producer_id,
            producer_id_len=block.size))

    def _alter_partition(self, request, version, offset) -> ControllerResult:
        if not request.topics:      # Kafka answers an empty request before any check
            return ControllerResult([], AlterPartitionResponse(error_code=ErrorCode.NONE,
                                                               topics=[]))
        try:
            return leadership.alter_partition(self.replication, request,
                                              3 if version is None else version)
        except ApiError as e:
            return ControllerResult([], AlterPartitionResponse(error_code=e.code, topics=[]))

    def _elect_leaders(self, request, version, offset) -> ControllerResult:
        try:
            return leadership.elect_leaders(self.replication, request)
        except ApiError as e:
            # Kafka's ElectLeadersRequest.getErrorResponse: every partition gets the error.
            results = [ReplicaElectionResult(topic=tp.topic, partition_result=[
                PartitionResult(partition_id=p, error_code=e.code, error_message=e.message)
                for p in tp.partitions]) for tp in request.topic_partitions or []]
            return ControllerResult([], ElectLeadersResponse(
                error_code=e.code, replica_election_results=results))

    # --- topics ----------------------------------------------------------------------------
    def _create_partitions(self, request, version, offset) -> ControllerResult:
        """CreatePartitions of the topics the principal may ALTER; the others are answered
        TOPIC_AUTHORIZATION_FAILED (without a message), first, as ControllerApis does."""
        denied = [t for t in request.topics if not self.authorize(ALTER, TOPIC, t.name)]
        if not denied:
            return self.replication.create_partitions(request, self.mutation_quota)
        allowed = copy.copy(request)
        allowed.topics = [t for t in request.topics if t not in denied]
        result = self.replication.create_partitions(allowed, self.mutation_quota)
        result.response.results[:0] = [CreatePartitionsTopicResult(
            name=t.name, error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, error_message=None)
            for t in denied]
        return result

    def _delete_topics(self, request, version, offset) -> ControllerResult:
        """DeleteTopics by names (v0-5) or names/ids (v6), as ControllerApis resolves them."""
        v = 6 if version is None else version
        if not self.delete_topic_enable:
            code = ErrorCode.INVALID_REQUEST if v < 3 else ErrorCode.TOPIC_DELETION_DISABLED
            msg = "Topic deletion is disabled." if v < 3 else None
            names = list(request.topic_names or []) + [t.name for t in request.topics or []]
            return ControllerResult([], DeleteTopicsResponse(responses=[
                DeletableTopicResult(name=n, error_code=code, error_message=msg)
                for n in names]))
        results: list = []

        def answer(name, topic_id, error: ApiError) -> None:
            results.append(DeletableTopicResult(name=name, topic_id=topic_id,
                                                error_code=error.code,
                                                error_message=error.message))

        names: list[str] = []
        dup_names: set[str] = set()
        ids: list[bytes] = []
        dup_ids: set[bytes] = set()

        def add_name(name: str) -> None:
            if name in dup_names:
                return
            if name in names:
                names.remove(name)
                dup_names.add(name)
            else:
                names.append(name)

        for n in request.topic_names or []:
            add_name(n)
        for t in request.topics or []:
            if t.name is None:
                if t.topic_id == ZERO_UUID:
                    answer(None, ZERO_UUID, ApiError(ErrorCode.INVALID_REQUEST,
                                                     "Neither topic name nor id were specified."))
                elif t.topic_id in dup_ids:
                    pass
                elif t.topic_id in ids:
                    ids.remove(t.topic_id)
                    dup_ids.add(t.topic_id)
                else:
                    ids.append(t.topic_id)
            elif t.topic_id == ZERO_UUID:
                add_name(t.name)
            else:
                answer(t.name, t.topic_id, ApiError(
                    ErrorCode.INVALID_REQUEST, "You may not specify both topic name and topic id."))
        for n in sorted(dup_names):
            answer(n, ZERO_UUID, ApiError(ErrorCode.INVALID_REQUEST, "Duplicate topic name."))
        for i in sorted(dup_ids):
            answer(None, i, ApiError(ErrorCode.INVALID_REQUEST, "Duplicate topic id."))
        rc = self.replication
        # Kafka resolves the ids, then the names, each from a HashSet into a HashMap: the order
        # they reach its HashMap of ids to delete in
        ids = _resolution_order(ids, java_uuid_hash)
        names = _resolution_order(names)
        id_to_name: dict[bytes, str] = {}
        for i in ids:
            topic = rc.topics.get(i)
            if topic is None:
                answer(None, i, ApiError(ErrorCode.UNKNOWN_TOPIC_ID))
            else:
                id_to_name[i] = topic.name
        peak = len(id_to_name)  # the size Kafka's HashMap of ids grows its table for
        # ControllerApis authorizes by name: DELETE on the cluster covers every topic; an id
        # whose topic may not be described is answered without its name
        wanted = [*names, *id_to_name.values()]
        if self.authorize(DELETE, CLUSTER, CLUSTER_NAME):
            describable = deletable = set(wanted)
        else:
            describable = {n for n in wanted if self.authorize(DESCRIBE, TOPIC, n)}
            deletable = {n for n in wanted if self.authorize(DELETE, TOPIC, n)}
        for i, n in list(id_to_name.items()):
            if n not in deletable:
                answer(n if n in describable else None, i,
                       ApiError(ErrorCode.TOPIC_AUTHORIZATION_FAILED))
                del id_to_name[i]
        for n in names:
            i = rc.topics_by_name.get(n)
            if n not in describable:
                answer(n, ZERO_UUID, ApiError(ErrorCode.TOPIC_AUTHORIZATION_FAILED))
            elif i is None:
                answer(n, ZERO_UUID, ApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
            elif n not in deletable:
                answer(n, ZERO_UUID, ApiError(ErrorCode.TOPIC_AUTHORIZATION_FAILED))
            elif i in dup_ids or i in id_to_name:
                dup_ids.add(i)
                id_to_name.pop(i, None)
                answer(n, i, ApiError(ErrorCode.INVALID_REQUEST,
                                      "The provided topic name maps to an ID that was already "
                                      "supplied."))
            else:
                id_to_name[i] = n
                peak = max(peak, len(id_to_name))
        records: list = []
        # the topics are deleted in the order Kafka's HashMap of ids iterates them: where a
        # mutation quota runs out, that order says which are refused
        capacity = 16
        while peak > capacity * 3 // 4:
            capacity *= 2
        for i in java_hash_order(id_to_name, capacity, hash_of=java_uuid_hash):
            n = id_to_name[i]
            try:
                records.extend(rc.delete_topic_records(i, self.mutation_quota))
            except ApiError as e:  # the controller mutation quota
                answer(n, i, e)
                continue
            answer(n, i, NONE)
        # Kafka shuffles so positions reveal nothing about which topics exist.
        self.replication.id_random.shuffle(results)
        return ControllerResult(records, DeleteTopicsResponse(responses=results), atomic=True)

    def _check_exists(self, resource: Resource) -> None:
        rtype, name = resource
        if rtype == BROKER_RESOURCE and name:
            try:
                node = int(name)
            except ValueError:
                raise ApiError(ErrorCode.INVALID_REQUEST, f"Invalid broker name {name}") from None
            if self.cluster.registration(node) is None and node != self.node_id:
                raise ApiError(ErrorCode.BROKER_ID_NOT_REGISTERED,
                               f"No node with id {node} found.")
        elif rtype == TOPIC_RESOURCE and name not in self.replication.topics_by_name:
            raise ApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                           f"The topic '{name}' does not exist.")

    # --- configs ---------------------------------------------------------------------------
    def _incremental_alter_configs(self, request, version, offset) -> ControllerResult:
        records: list = []
        responses = []
        for res in request.resources:
            ops = [(c.name, c.config_operation, c.value) for c in res.configs]
            denied = self._config_alter_denied(res.resource_type, res.resource_name)
            recs, error = ([], denied) if denied else self.configs.incremental_alter(
                (res.resource_type, res.resource_name), ops)
            records.extend(recs)
            responses.append(AlterConfigsResourceResponse(
                error_code=error.code, error_message=error.message,
                resource_type=res.resource_type, resource_name=res.resource_name))
        records += clear_elr_records(records, self.features.elr_enabled)
        if request.validate_only:
            records = []
        return ControllerResult(records, IncrementalAlterConfigsResponse(responses=responses),
                                atomic=True)

    def _config_alter_denied(self, resource_type: int, name: str) -> ApiError | None:
        """ControllerApis' authorizeAlterResource: ALTER_CONFIGS on the cluster for a broker
        resource, on the topic for a topic, on the group for a group."""
        if resource_type == TOPIC_RESOURCE and not self.authorize(ALTER_CONFIGS, TOPIC, name):
            return ApiError(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
        if resource_type == GROUP_RESOURCE and not self.authorize(ALTER_CONFIGS, GROUP, name):
            return ApiError(ErrorCode.GROUP_AUTHORIZATION_FAILED)
        if resource_type == BROKER_RESOURCE and not self.authorize(ALTER_CONFIGS, CLUSTER,
                                                                    CLUSTER_NAME):
            return ApiError(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
        return None

    def _alter_configs(self, request, version, offset) -> ControllerResult:
        records: list = []
        responses = []
        for res in request.resources:
            denied = self._config_alter_denied(res.resource_type, res.resource_name)
            recs, error = ([], denied) if denied else self.configs.legacy_alter(
                (res.resource_type, res.resource_name), {c.name: c.value for c in res.configs})
            records.extend(recs)
            responses.append(LegacyResult(
                error_code=error.code, error_message=error.message,
                resource_type=res.resource_type, resource_name=res.resource_name))
        records += clear_elr_records(records, self.features.elr_enabled)
        if request.validate_only:
            records = []
        return ControllerResult(records, AlterConfigsResponse(responses=responses), atomic=True)


def _resolution_order(keys: list, hash_of=None) -> list:
    """The order ControllerApis meets provided topic names (or ids) in: a HashSet's, then that
    of the ``new HashMap<>(n)`` findTopicIds (findTopicNames) answers with."""
    in_set = java_hash_order(keys, hash_of=hash_of)
    capacity = 1
    while capacity < len(keys):  # HashMap.tableSizeFor
        capacity *= 2
    return java_hash_order(in_set, capacity, hash_of=hash_of)
