"""A consumer group's records in __consumer_offsets: what changed since the last write, in
the order Kafka writes it, and the replay of the records read back (mixed into
ConsumerGroupManager, which provides ``groups`` and ``write``)."""

from __future__ import annotations

from pykafkad.coordinator.consumer_group import records as cgr
from pykafkad.coordinator.consumer_group.group import ConsumerGroup, ConsumerGroupMember


class GroupRecords:
    def persist(self, group: ConsumerGroup) -> None:
        """Writes what changed since the group's last records (tombstones for what is gone),
        in the order Kafka writes them, so either broker can replay the partition."""
        records, persisted = self.changes(group, live=self.groups.get(group.group_id) is group)
        if records:
            self.write(group.group_id, records)
            group.leading_records = []
            group.persisted = persisted

    def take_changes(self, group: ConsumerGroup, live: bool) -> list:
        """The records of what changed (see ``changes``), now counted as written."""
        records, group.persisted = self.changes(group, live)
        group.leading_records = []
        return records

    def changes(self, group: ConsumerGroup, live: bool) -> tuple[list, dict[bytes, bytes]]:
        """The records of what changed since the group's last ones (all of them for a new
        group; tombstones only when not ``live``) and what is then written."""
        gid = group.group_id
        now: dict[bytes, tuple[int, bytes]] = {}
        unwritten = group.initial_epochs_unwritten
        if live:
            if not (unwritten and group.group_epoch == 1):
                now[cgr.key(cgr.GROUP_METADATA, gid)] = (
                    cgr.GROUP_METADATA,
                    cgr.group_metadata_value(group.group_epoch, group.metadata_hash))
            if not (unwritten and group.assignment_epoch == 1):
                now[cgr.key(cgr.TARGET_ASSIGNMENT_METADATA, gid)] = (
                    cgr.TARGET_ASSIGNMENT_METADATA,
                    cgr.target_metadata_value(group.assignment_epoch,
                                              group.assignment_timestamp))
            for m in group.members.values():
                m.sync_assignment_epochs()
                now[cgr.key(cgr.MEMBER_METADATA, gid, m.member_id)] = (
                    cgr.MEMBER_METADATA, cgr.member_value(m))
                now[cgr.key(cgr.CURRENT_MEMBER_ASSIGNMENT, gid, m.member_id)] = (
                    cgr.CURRENT_MEMBER_ASSIGNMENT, cgr.current_assignment_value(m))
            for member_id, parts in group.target.items():
                now[cgr.key(cgr.TARGET_ASSIGNMENT_MEMBER, gid, member_id)] = (
                    cgr.TARGET_ASSIGNMENT_MEMBER, cgr.target_member_value(parts))
            for rx, topics in group.resolved_regexes.items():
                version, at = group.regex_resolutions.get(rx, (0, 0))
                now[cgr.key(cgr.REGULAR_EXPRESSION, gid, rx)] = (
                    cgr.REGULAR_EXPRESSION, cgr.regex_value(topics, version, at))
        old = group.persisted
        gone = [(k, cgr.record_type(k)) for k in old if k not in now]
        changed = [(k, t, v) for k, (t, v) in now.items() if old.get(k) != v]
        epoch_key = cgr.key(cgr.GROUP_METADATA, gid)
        # Kafka tombstones a pre-4.1 ConsumerGroupPartitionMetadata with the next epoch
        # bump, and always when the group is deleted
        partition_metadata_gone = (not live or (group.has_partition_metadata_record and any(
            k == epoch_key for k, _t, _v in changed)))
        if not gone and not changed and not group.leading_records:
            return [], old
        first = {cgr.CURRENT_MEMBER_ASSIGNMENT: 0, cgr.TARGET_ASSIGNMENT_MEMBER: 1,
                 cgr.MEMBER_METADATA: 2, cgr.REGULAR_EXPRESSION: 3}
        upsert = {cgr.MEMBER_METADATA: 0, cgr.REGULAR_EXPRESSION: 1, cgr.GROUP_METADATA: 2,
                  cgr.TARGET_ASSIGNMENT_MEMBER: 3, cgr.TARGET_ASSIGNMENT_METADATA: 4,
                  cgr.CURRENT_MEMBER_ASSIGNMENT: 5}
        last = {cgr.TARGET_ASSIGNMENT_METADATA: 0, cgr.PARTITION_METADATA: 1,
                cgr.GROUP_METADATA: 2}
        if partition_metadata_gone:
            gone.append((cgr.key(cgr.PARTITION_METADATA, gid), cgr.PARTITION_METADATA))
        records = [(k, None) for k, t in sorted(gone, key=lambda g: first.get(g[1], 9))
                   if t in first]
        for k, _t, v in sorted(changed, key=lambda c: upsert[c[1]]):
            records.append((k, v))
            if k == epoch_key and live and partition_metadata_gone:
                records.append((cgr.key(cgr.PARTITION_METADATA, gid), None))
        records += [(k, None) for k, t in sorted(gone, key=lambda g: last.get(g[1], 9))
                    if t not in first and (live is False or t != cgr.PARTITION_METADATA)]
        if live and partition_metadata_gone:
            group.has_partition_metadata_record = False
        return group.leading_records + records, {k: v for k, (_t, v) in now.items()}

    def replay(self, key: bytes, value: bytes | None) -> None:
        """One consumer-group record read back from __consumer_offsets."""
        kind, gid, member_id = cgr.decode_key(key)
        group = self.groups.get(gid)
        if value is None:
            if group is None:
                return
            group.persisted.pop(key, None)
            if kind == cgr.GROUP_METADATA:
                del self.groups[gid]
            elif kind == cgr.MEMBER_METADATA:
                group.members.pop(member_id, None)
            elif kind == cgr.TARGET_ASSIGNMENT_MEMBER:
                group.target.pop(member_id, None)
            elif kind == cgr.PARTITION_METADATA:
                group.has_partition_metadata_record = False
            elif kind == cgr.REGULAR_EXPRESSION:
                group.resolved_regexes.pop(member_id, None)
                group.regex_resolutions.pop(member_id, None)
            return
        if group is None:
            group = self.groups[gid] = ConsumerGroup(gid)
            group.subscription_metadata = None
        if kind == cgr.PARTITION_METADATA:
            # Kafka 4.4 no longer reads what it holds (the metadata hash replaced it)
            group.has_partition_metadata_record = True
            return
        group.persisted[key] = value
        if kind == cgr.GROUP_METADATA:
            group.group_epoch, group.metadata_hash = cgr.read_group_metadata(value)
        elif kind == cgr.TARGET_ASSIGNMENT_METADATA:
            group.assignment_epoch, group.assignment_timestamp = cgr.read_target_metadata(value)
        elif kind == cgr.REGULAR_EXPRESSION:
            topics, version, at = cgr.read_regex(value)
            group.resolved_regexes[member_id] = topics
            group.regex_resolutions[member_id] = (version, at)
        elif kind == cgr.TARGET_ASSIGNMENT_MEMBER:
            group.target[member_id] = cgr.read_target_member(value)
        elif kind == cgr.MEMBER_METADATA:
            member = group.members.setdefault(member_id, ConsumerGroupMember(member_id))
            cgr.read_member(member, value)
        elif kind == cgr.CURRENT_MEMBER_ASSIGNMENT:
            member = group.members.setdefault(member_id, ConsumerGroupMember(member_id))
            cgr.read_current_assignment(member, value)
