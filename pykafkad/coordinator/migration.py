"""KIP-848 online migration: a classic group becomes a consumer group and back, in place.

Kafka 4.4's rules (GroupMetadataManager.convertToConsumerGroup / convertToClassicGroup,
ConsumerGroup.fromClassicGroup, ClassicGroup.fromConsumerGroup), under
``group.consumer.migration.policy``:

* Upgrade: a ConsumerGroupHeartbeat to a non-empty classic group that uses the consumer
  embedded protocol (and is not larger than group.consumer.max.size). Parked JoinGroup and
  SyncGroup answers get REBALANCE_IN_PROGRESS, the classic group's record is tombstoned, and
  every member becomes a classic member of the consumer group at the generation as its epoch,
  keeping its partitions (its target is what it owns). The joining member then bumps the epoch.
* Downgrade: the last member speaking the consumer protocol leaves (or is fenced) while
  classic members remain (and fit in group.max.size): the consumer group's records are
  tombstoned, a Stable classic group at the group epoch is written with each member's target
  assignment, and a rebalance starts so the members rejoin as a classic group.
"""

from __future__ import annotations

import logging

from pykafkad.coordinator.consumer_group import records as cgr
from pykafkad.coordinator.consumer_group.classic_members import (
    protocol_version,
    read_assignment,
    read_subscription,
    write_assignment,
)
from pykafkad.coordinator.consumer_group.group import (
    STABLE,
    ClassicMemberMetadata,
    ConsumerGroup,
    ConsumerGroupMember,
)
from pykafkad.coordinator.group import ClassicGroup, GroupState, JoinResult, Member, SyncResult
from pykafkad.coordinator.rebalance import append_error, group_metadata_value, heartbeat_key
from pykafkad.coordinator.records import group_metadata_record, group_metadata_tombstone
from wire.errors import ErrorCode, KafkaError

log = logging.getLogger("pykafkad.coordinator")


def upgrade(coordinator, group_id: str) -> ConsumerGroup | None:
    """The consumer group a classic group becomes, or None when the policy or the group does
    not allow it (the heartbeat then answers GROUP_ID_NOT_FOUND)."""
    manager = coordinator.consumer_groups
    classic: ClassicGroup | None = coordinator.groups.get(group_id)
    if classic is None:
        return None
    if not manager.settings.upgrade_enabled:
        log.info("Cannot upgrade classic group %s to consumer group because the online "
                 "upgrade is disabled.", group_id)
        return None
    if not classic.uses_consumer_protocol:
        log.info("Cannot upgrade classic group %s to consumer group because the group does "
                 "not use the consumer embedded protocol.", group_id)
        return None
    if len(classic.members) > manager.settings.max_size:
        log.info("Cannot upgrade classic group %s to consumer group because the group size "
                 "exceeds the consumer group maximum size.", group_id)
        return None
    try:
        group = _from_classic_group(manager, classic)
    except Exception as e:  # noqa: BLE001 - the members' embedded protocol bytes
        log.warning("Cannot upgrade the classic group %s to consumer group because the "
                    "embedded consumer protocol is malformed: %s.", group_id, e)
        raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND,
                         f"Cannot upgrade the classic group {group_id} to consumer group "
                         "because the embedded consumer protocol is malformed.") from None
    # the members rejoin: the joining consumer bumps the epoch anyway
    for member in list(classic.members.values()):
        classic.complete_join(member, JoinResult(ErrorCode.REBALANCE_IN_PROGRESS,
                                                 member_id=member.member_id))
        classic.complete_sync(member, SyncResult(ErrorCode.REBALANCE_IN_PROGRESS))
        coordinator.timer.cancel(heartbeat_key(group_id, member.member_id))
    coordinator.timer.cancel(f"join-{group_id}")
    coordinator.timer.cancel(f"sync-{group_id}")
    # the conversion's records lead the joining member's (one append, as in Kafka): the
    # classic group's tombstone, then the consumer group as it was converted
    converted = manager.take_changes(group, live=True)
    group.leading_records = [group_metadata_tombstone(group_id)] + converted
    del coordinator.groups[group_id]
    for member in group.members.values():
        manager._schedule_session(group, member)
    log.info("[GroupId %s] Converted the classic group to a consumer group.", group_id)
    return group


def _from_classic_group(manager, classic: ClassicGroup) -> ConsumerGroup:
    group = ConsumerGroup(classic.group_id, group_epoch=classic.generation_id,
                          assignment_epoch=classic.generation_id)
    protocol = classic.protocol_name or ""
    for cm in classic.members.values():
        subscription = read_subscription(cm.metadata(protocol))
        assigned: dict[bytes, set[int]] = {}
        for topic, partitions in read_assignment(cm.assignment):
            found = manager.topics.lookup(topic)
            if found is not None and partitions:
                assigned.setdefault(found[0], set()).update(partitions)
        member = ConsumerGroupMember(
            cm.member_id, instance_id=cm.group_instance_id, rack_id=subscription.rack_id,
            client_id=cm.client_id, client_host=cm.client_host,
            rebalance_timeout_ms=cm.rebalance_timeout_ms,
            subscribed_topic_names=list(subscription.topics or []),
            member_epoch=classic.generation_id, previous_member_epoch=classic.generation_id,
            state=STABLE, assigned=assigned,
            classic=ClassicMemberMetadata(cm.session_timeout_ms,
                                          [(n, bytes(m)) for n, m in cm.protocols]))
        group.members[cm.member_id] = member
        group.target[cm.member_id] = {t: set(ps) for t, ps in assigned.items()}
    return group


def downgrade(coordinator, group: ConsumerGroup, leaving_member_id: str) -> bool:
    """Converts the consumer group back to a classic group when ``leaving_member_id`` is its
    last consumer-protocol member; False when it stays a consumer group."""
    manager = coordinator.consumer_groups
    gid = group.group_id
    if not group.all_members_use_classic_protocol_except(leaving_member_id):
        return False
    if len(group.members) <= 1:
        return False
    if not manager.settings.downgrade_enabled:
        log.info("Cannot downgrade consumer group %s to classic group because the online "
                 "downgrade is disabled.", gid)
        return False
    if len(group.members) - 1 > coordinator.config.max_group_size:
        log.info("Cannot downgrade consumer group %s to classic group because its group size "
                 "is greater than classic group max size.", gid)
        return False
    convert_to_classic(coordinator, group, leaving_member_id)
    return True


def convert_to_classic(coordinator, group: ConsumerGroup, leaving_member_id: str | None) -> None:
    """Writes the consumer group's tombstones and the classic group that replaces it. A member
    leaving (``leaving_member_id``) starts a rebalance; a static member's replacement does not
    (the classic group is Stable with everyone's target assignment)."""
    manager = coordinator.consumer_groups
    gid = group.group_id
    classic = _from_consumer_group(coordinator, group, leaving_member_id)
    # one write: the consumer group's tombstones in Kafka's order, then the classic group
    # (a replaced static member's records, written before, are tombstoned too)
    ids = list(group.members)
    for key in group.persisted:
        kind, _gid, member_id = cgr.decode_key(key)
        if kind != cgr.REGULAR_EXPRESSION and member_id is not None and member_id not in ids:
            ids.append(member_id)
    records = [(cgr.key(cgr.CURRENT_MEMBER_ASSIGNMENT, gid, m), None) for m in ids]
    records += [(cgr.key(cgr.TARGET_ASSIGNMENT_MEMBER, gid, m), None) for m in ids]
    records.append((cgr.key(cgr.TARGET_ASSIGNMENT_METADATA, gid), None))
    records += [(cgr.key(cgr.MEMBER_METADATA, gid, m), None) for m in ids]
    records += [(cgr.key(cgr.REGULAR_EXPRESSION, gid, rx), None) for rx in group.resolved_regexes]
    records.append((cgr.key(cgr.PARTITION_METADATA, gid), None))
    records.append((cgr.key(cgr.GROUP_METADATA, gid), None))
    records.append(group_metadata_record(
        gid, group_metadata_value(classic, classic.group_assignment())))
    try:
        coordinator.storage.append(gid, records)
    except KafkaError as e:
        raise KafkaError(append_error(e.code), e.message) from None
    manager.cancel_all_timers(group)
    del manager.groups[gid]
    group.persisted = {}
    membership = coordinator.membership
    coordinator.groups[gid] = classic
    for member in classic.members.values():
        membership._reschedule_heartbeat(classic, member)
    if leaving_member_id is not None:
        membership._prepare_rebalance(classic, f"Downgrade group {gid} from consumer to classic.")
    log.info("[GroupId %s] Converted the consumer group to a classic group.", gid)


def _from_consumer_group(coordinator, group: ConsumerGroup,
                         leaving_member_id: str | None) -> ClassicGroup:
    classic = ClassicGroup(group.group_id, coordinator.clock, GroupState.STABLE,
                           generation_id=group.group_epoch, protocol_type="consumer",
                           state_timestamp=coordinator.clock())
    for m in group.members.values():
        if m.member_id == leaving_member_id or m.classic is None:
            continue
        classic.add(Member(m.member_id, m.instance_id, m.client_id, m.client_host,
                           m.rebalance_timeout_ms, m.classic.session_timeout_ms, "consumer",
                           list(m.classic.protocols)))
    classic.protocol_name = classic.select_protocol()
    classic.subscribed_topics = classic.compute_subscribed_topics()
    topics = coordinator.consumer_groups
    for member in classic.members.values():
        target = group.target.get(member.member_id, {})
        member.assignment = write_assignment(
            topics.topic_partitions(target),
            protocol_version(member.metadata(classic.protocol_name)))
    return classic
