"""Leaders and ISRs: AlterPartition, the leader moves that follow a broker's fencing,
unfencing or controlled shutdown, and ElectLeaders (Kafka's ReplicationControlManager,
leadership half). Every change goes through PartitionChangeBuilder.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from pykafkad.controller.partition_change import Election, PartitionChangeBuilder
from pykafkad.controller.replication_control import ReplicationControlManager, TopicControlInfo
from pykafkad.controller.result import NONE, ApiError, ControllerResult
from pykafkad.metadata.partition import (
    LEADER_RECOVERED,
    LEADER_RECOVERING,
    NO_LEADER,
    NO_LEADER_CHANGE,
    PartitionRegistration,
    validate_isr,
)
from wire.errors import ErrorCode
from wire.messages.alter_partition_response import AlterPartitionResponse
from wire.messages.alter_partition_response import PartitionData as AlterPartitionData
from wire.messages.alter_partition_response import TopicData as AlterTopicData
from wire.messages.elect_leaders_response import (
    ElectLeadersResponse,
    PartitionResult,
    ReplicaElectionResult,
)
from wire.metadata import BrokerRegistrationChangeRecord, UnregisterBrokerRecord

PREFERRED, UNCLEAN = 0, 1          # ElectLeaders election types


def builder(rc: ReplicationControlManager, topic: TopicControlInfo, pid: int,
            part: PartitionRegistration,
            acceptable: Callable[[int], bool] | None = None,
            min_isr: int | None = None) -> PartitionChangeBuilder:
    """A PartitionChangeBuilder with Kafka's LeaderAcceptor: an active broker whose replica
    directory is online."""
    is_ok = acceptable or rc.cluster.is_active

    def accept(broker: int) -> bool:
        return is_ok(broker) and rc.cluster.has_online_dir(broker, part.directory(broker))

    default_dir = rc.cluster.default_dir if rc.features.directory_assignment else None
    return PartitionChangeBuilder(part, topic.id, pid, accept,
                                  min_isr=rc.effective_min_isr(topic) if min_isr is None
                                  else min_isr,
                                  elr_enabled=rc.features.elr_enabled,
                                  default_dir=default_dir)


# --- AlterPartition ------------------------------------------------------------------------
def alter_partition(rc: ReplicationControlManager, request, version: int) -> ControllerResult:
    """AlterPartition (v2-3, topics by id) from a partition leader; v2 sends ISR ids only."""
    rc.cluster.check_broker_epoch(request.broker_id, request.broker_epoch)
    response = AlterPartitionResponse(topics=[])
    records: list = []
    for topic_data in request.topics:
        out = AlterTopicData(topic_id=topic_data.topic_id, partitions=[])
        response.topics.append(out)
        topic = rc.topics.get(topic_data.topic_id)
        if topic is None:
            for p in topic_data.partitions:
                out.partitions.append(AlterPartitionData(
                    partition_index=p.partition_index, error_code=ErrorCode.UNKNOWN_TOPIC_ID))
            continue
        for p in topic_data.partitions:
            if version < 3:
                new_isr = [(b, -1) for b in p.new_isr]
            else:
                new_isr = [(s.broker_id, s.broker_epoch) for s in p.new_isr_with_epochs]
            pid = p.partition_index
            part = topic.parts.get(pid)
            error = _validate_alter_partition(rc, request.broker_id, part, p, new_isr)
            if error != ErrorCode.NONE:
                out.partitions.append(AlterPartitionData(partition_index=pid, error_code=error))
                continue
            b = builder(rc, topic, pid, part)
            if rc.unclean_enabled(topic.name):
                b.election = Election.UNCLEAN
            b.target_isr = [broker for broker, _ in new_isr]
            b.target_leader_recovery_state = p.leader_recovery_state
            record = b.build()
            if record is not None:
                records.append(record)
                part = part.merge(record)
                if record.leader not in (request.broker_id, NO_LEADER_CHANGE):
                    # The ISR change completed a reassignment that moved the leader away.
                    out.partitions.append(AlterPartitionData(
                        partition_index=pid, error_code=ErrorCode.NEW_LEADER_ELECTED))
                    continue
            out.partitions.append(AlterPartitionData(
                partition_index=pid, error_code=ErrorCode.NONE, leader_id=part.leader,
                isr=list(part.isr), leader_recovery_state=part.leader_recovery_state,
                leader_epoch=part.leader_epoch, partition_epoch=part.partition_epoch))
    return ControllerResult(records, response)


def _validate_alter_partition(rc, broker_id: int, part: PartitionRegistration | None, p,
                              new_isr: list[tuple[int, int]]) -> ErrorCode:
    if part is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    # A leader ahead of us means we are probably no longer the active controller.
    if p.leader_epoch > part.leader_epoch or p.partition_epoch > part.partition_epoch:
        return ErrorCode.NOT_CONTROLLER
    if p.leader_epoch < part.leader_epoch:
        return ErrorCode.FENCED_LEADER_EPOCH
    if broker_id != part.leader:
        return ErrorCode.INVALID_REQUEST
    if p.partition_epoch < part.partition_epoch:
        return ErrorCode.INVALID_UPDATE_VERSION
    ids = [b for b, _ in new_isr]
    if not validate_isr(part.replicas, ids) or part.leader not in ids:
        return ErrorCode.INVALID_REQUEST
    if p.leader_recovery_state == LEADER_RECOVERING and len(ids) > 1:
        return ErrorCode.INVALID_REQUEST
    if part.leader_recovery_state == LEADER_RECOVERED and p.leader_recovery_state == LEADER_RECOVERING:
        return ErrorCode.INVALID_REQUEST
    if ineligible_replicas(rc, new_isr):
        return ErrorCode.INELIGIBLE_REPLICA
    return ErrorCode.NONE


def ineligible_replicas(rc, new_isr: list[tuple[int, int]]) -> list[tuple[int, str]]:
    """(broker, why) for every proposed ISR member that may not join (Kafka's reasons)."""
    out = []
    for broker, epoch in new_isr:
        reg = rc.cluster.registration(broker)
        if reg is None:
            out.append((broker, "not registered"))
        elif reg.in_controlled_shutdown:
            out.append((broker, "shutting down"))
        elif reg.fenced:
            out.append((broker, "fenced"))
        elif epoch != -1 and reg.epoch != epoch:
            out.append((broker, f"broker epoch mismatch: requested={epoch} VS "
                                f"expected={reg.epoch}"))
    return out


# --- leader and ISR updates for broker lifecycle changes ----------------------------------
def generate_leader_and_isr_updates(rc: ReplicationControlManager, broker_to_remove: int,
                                    broker_to_add: int, broker_unclean: int, records: list,
                                    partitions: Iterable) -> None:
    """Kafka's generateLeaderAndIsrUpdates: drop ``broker_to_remove`` (and an uncleanly
    stopped broker) from each ISR and leadership; treat ``broker_to_add`` as a fit leader."""
    def acceptable(r: int) -> bool:
        return r not in (broker_to_remove, broker_unclean) and (
            r == broker_to_add or rc.cluster.is_active(r))

    per_topic: dict[bytes, tuple[int, bool]] = {}     # configs, read once per topic
    for topic, pid, part in list(partitions):
        if topic.id not in per_topic:
            per_topic[topic.id] = (rc.effective_min_isr(topic), rc.unclean_enabled(topic.name))
        min_isr, unclean = per_topic[topic.id]
        b = builder(rc, topic, pid, part, acceptable, min_isr)
        if unclean:
            b.election = Election.UNCLEAN
        if broker_unclean != NO_LEADER:
            b.unclean_shutdown_replicas = [broker_unclean]
        b.target_isr = [r for r in part.isr if r not in (broker_to_remove, broker_unclean)]
        record = b.build()
        if record is not None:
            records.append(record)


def partitions_with_broker_in_isr(rc, broker: int):
    return [(t, pid, p) for t, pid, p in rc.all_partitions() if broker in p.isr]


def partitions_with_broker_in_elr(rc, broker: int):
    return [(t, pid, p) for t, pid, p in rc.all_partitions() if broker in p.elr]


def has_leaderships(rc, broker: int) -> bool:
    return any(p.leader == broker for _, _, p in rc.all_partitions())


def handle_broker_fenced(rc, broker_id: int, records: list) -> None:
    reg = rc.cluster.registration(broker_id)
    generate_leader_and_isr_updates(rc, broker_id, NO_LEADER, NO_LEADER, records,
                                    partitions_with_broker_in_isr(rc, broker_id))
    records.append(BrokerRegistrationChangeRecord(broker_id=broker_id, broker_epoch=reg.epoch,
                                                  fenced=1, log_dirs=None))


def handle_broker_unfenced(rc, broker_id: int, broker_epoch: int, records: list) -> None:
    records.append(BrokerRegistrationChangeRecord(broker_id=broker_id,
                                                  broker_epoch=broker_epoch, fenced=-1,
                                                  log_dirs=None))
    generate_leader_and_isr_updates(rc, NO_LEADER, broker_id, NO_LEADER, records,
                                    rc.leaderless_partitions())


def handle_broker_in_controlled_shutdown(rc, broker_id: int, broker_epoch: int,
                                         records: list) -> None:
    if not rc.cluster.in_controlled_shutdown(broker_id):
        records.append(BrokerRegistrationChangeRecord(broker_id=broker_id,
                                                      broker_epoch=broker_epoch,
                                                      in_controlled_shutdown=1, log_dirs=None))
    generate_leader_and_isr_updates(rc, broker_id, NO_LEADER, NO_LEADER, records,
                                    partitions_with_broker_in_isr(rc, broker_id))


def handle_broker_shutdown(rc, broker_id: int, clean: bool, records: list) -> None:
    """A broker back with a new incarnation leaves the ISRs of its previous one; after an
    unclean shutdown (with ELR on) it leaves the ELRs too and may not be elected."""
    if rc.features.elr_enabled and not clean:
        generate_leader_and_isr_updates(rc, NO_LEADER, NO_LEADER, broker_id, records,
                                        partitions_with_broker_in_isr(rc, broker_id))
        generate_leader_and_isr_updates(rc, NO_LEADER, NO_LEADER, broker_id, records,
                                        partitions_with_broker_in_elr(rc, broker_id))
    else:
        generate_leader_and_isr_updates(rc, broker_id, NO_LEADER, NO_LEADER, records,
                                        partitions_with_broker_in_isr(rc, broker_id))


def handle_broker_unregistered(rc, broker_id: int, broker_epoch: int, records: list) -> None:
    generate_leader_and_isr_updates(rc, broker_id, NO_LEADER, NO_LEADER, records,
                                    partitions_with_broker_in_isr(rc, broker_id))
    generate_leader_and_isr_updates(rc, broker_id, NO_LEADER, NO_LEADER, records,
                                    partitions_with_broker_in_elr(rc, broker_id))
    records.append(UnregisterBrokerRecord(broker_id=broker_id, broker_epoch=broker_epoch))


# --- ElectLeaders --------------------------------------------------------------------------
def elect_leaders(rc: ReplicationControlManager, request) -> ControllerResult:
    if request.election_type not in (PREFERRED, UNCLEAN):
        raise ApiError(ErrorCode.INVALID_REQUEST,
                       f"Unknown election type {request.election_type}")
    records: list = []
    results = []
    if request.topic_partitions is None:
        for name in sorted(rc.topics_by_name):
            topic = rc.topics[rc.topics_by_name[name]]
            res = ReplicaElectionResult(topic=name, partition_result=[])
            results.append(res)
            for pid in sorted(topic.parts):
                error = elect_leader(rc, name, pid, request.election_type, records)
                if error.code != ErrorCode.ELECTION_NOT_NEEDED:
                    res.partition_result.append(PartitionResult(
                        partition_id=pid, error_code=error.code, error_message=error.message))
    else:
        for tp in request.topic_partitions:
            res = ReplicaElectionResult(topic=tp.topic, partition_result=[])
            results.append(res)
            for pid in tp.partitions:
                error = elect_leader(rc, tp.topic, pid, request.election_type, records)
                res.partition_result.append(PartitionResult(
                    partition_id=pid, error_code=error.code, error_message=error.message))
    return ControllerResult(records, ElectLeadersResponse(error_code=ErrorCode.NONE,
                                                          replica_election_results=results))


def elect_leader(rc: ReplicationControlManager, topic_name: str, pid: int, election_type: int,
                 records: list) -> ApiError:
    topic_id = rc.topics_by_name.get(topic_name)
    if topic_id is None:
        return ApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic as {topic_name}")
    topic = rc.topics[topic_id]
    part = topic.parts.get(pid)
    if part is None:
        return ApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                        f"No such partition as {topic_name}-{pid}")
    if (election_type == PREFERRED and part.has_preferred_leader()) or \
            (election_type == UNCLEAN and part.has_leader()):
        return ApiError(ErrorCode.ELECTION_NOT_NEEDED)
    b = builder(rc, topic, pid, part)
    b.election = Election.UNCLEAN if election_type == UNCLEAN else Election.PREFERRED
    record = b.build()
    if record is None:
        return ApiError(ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE if election_type == PREFERRED
                        else ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE)
    records.append(record)
    return NONE


# --- periodic elections --------------------------------------------------------------------
MAX_ELECTIONS_PER_IMBALANCE = 1000


def balance_partition_leaders(rc: ReplicationControlManager,
                              max_elections: int = MAX_ELECTIONS_PER_IMBALANCE
                              ) -> ControllerResult:
    """auto.leader.rebalance.enable's periodic task (Kafka's maybeBalancePartitionLeaders):
    a preferred election for every partition not led by its preferred replica, which
    happens only where that replica is in the ISR and an acceptable leader (at most
    ``max_elections`` records; the response says whether more may remain)."""
    records: list = []
    for topic_id, pid in sorted(rc.imbalanced):
        if len(records) >= max_elections:
            break
        topic = rc.topics.get(topic_id)
        part = topic.parts.get(pid) if topic is not None else None
        if part is None:
            continue
        b = builder(rc, topic, pid, part)
        b.election = Election.PREFERRED
        record = b.build()
        if record is not None:
            records.append(record)
    return ControllerResult(records, len(records) >= max_elections)


def elect_unclean_leaders(rc: ReplicationControlManager,
                          max_elections: int = MAX_ELECTIONS_PER_IMBALANCE) -> ControllerResult:
    """The periodic unclean election for leaderless partitions of topics that allow it."""
    records: list = []
    for topic, pid, _ in rc.leaderless_partitions():
        if len(records) >= max_elections:
            break
        if rc.unclean_enabled(topic.name):
            elect_leader(rc, topic.name, pid, UNCLEAN, records)
    return ControllerResult(records, len(records) >= max_elections)
