"""A partition's state as the controller sees it (Kafka's PartitionRegistration).

Built from a PartitionRecord and changed only by merging PartitionChangeRecords, exactly as
Kafka's replay does: a leader change bumps the leader epoch, every change bumps the partition
epoch.
"""

from __future__ import annotations

from dataclasses import dataclass

from pykafkad.controller import directories
from wire.metadata import PartitionChangeRecord, PartitionRecord

NO_LEADER = -1
NO_LEADER_CHANGE = -2
RECOVERED, RECOVERING = 0, 1          # LeaderRecoveryState
RECOVERY_NO_CHANGE = -1


@dataclass(frozen=True)
class PartitionRegistration:
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int
    leader_epoch: int = 0
    partition_epoch: int = 0
    removing_replicas: tuple[int, ...] = ()
    adding_replicas: tuple[int, ...] = ()
    leader_recovery_state: int = RECOVERED
    directories: tuple[bytes, ...] = ()
    elr: tuple[int, ...] = ()
    last_known_elr: tuple[int, ...] = ()

    @classmethod
    def from_record(cls, r: PartitionRecord) -> PartitionRegistration:
        replicas = tuple(r.replicas or ())
        dirs = tuple(r.directories or ()) or (directories.MIGRATING,) * len(replicas)
        return cls(
            replicas=replicas, isr=tuple(r.isr or ()), leader=r.leader,
            leader_epoch=r.leader_epoch, partition_epoch=r.partition_epoch,
            removing_replicas=tuple(r.removing_replicas or ()),
            adding_replicas=tuple(r.adding_replicas or ()),
            leader_recovery_state=r.leader_recovery_state, directories=dirs,
            elr=tuple(r.eligible_leader_replicas or ()),
            last_known_elr=tuple(r.last_known_elr or ()),
        )

    def merge(self, r: PartitionChangeRecord) -> PartitionRegistration:
        replicas = self.replicas if r.replicas is None else tuple(r.replicas)
        if r.directories is not None:
            dirs = tuple(r.directories)
        elif len(self.directories) == len(replicas):
            dirs = self.directories
        else:
            dirs = (directories.MIGRATING,) * len(replicas)
        if r.leader == NO_LEADER_CHANGE:
            leader, leader_epoch = self.leader, self.leader_epoch
        else:
            leader, leader_epoch = r.leader, self.leader_epoch + 1

        def pick(new, old):
            return old if new is None else tuple(new)

        return PartitionRegistration(
            replicas=replicas, isr=pick(r.isr, self.isr), leader=leader,
            leader_epoch=leader_epoch, partition_epoch=self.partition_epoch + 1,
            removing_replicas=pick(r.removing_replicas, self.removing_replicas),
            adding_replicas=pick(r.adding_replicas, self.adding_replicas),
            leader_recovery_state=(self.leader_recovery_state
                                   if r.leader_recovery_state == RECOVERY_NO_CHANGE
                                   else r.leader_recovery_state),
            directories=dirs,
            elr=pick(r.eligible_leader_replicas, self.elr),
            last_known_elr=pick(r.last_known_elr, self.last_known_elr),
        )

    def to_record(self, topic_id: bytes, partition_id: int) -> PartitionRecord:
        return PartitionRecord(
            partition_id=partition_id, topic_id=topic_id, replicas=list(self.replicas),
            isr=list(self.isr), removing_replicas=list(self.removing_replicas),
            adding_replicas=list(self.adding_replicas), leader=self.leader,
            leader_recovery_state=self.leader_recovery_state, leader_epoch=self.leader_epoch,
            partition_epoch=self.partition_epoch, directories=list(self.directories),
            eligible_leader_replicas=list(self.elr) if self.elr else None,
            last_known_elr=list(self.last_known_elr) if self.last_known_elr else None,
        )

    @property
    def preferred_replica(self) -> int:
        return self.replicas[0] if self.replicas else NO_LEADER

    def has_preferred_leader(self) -> bool:
        return self.leader == self.preferred_replica

    def has_leader(self) -> bool:
        return self.leader != NO_LEADER

    @property
    def is_reassigning(self) -> bool:
        return bool(self.removing_replicas or self.adding_replicas)

    def directory(self, replica: int) -> bytes:
        try:
            return self.directories[self.replicas.index(replica)]
        except (ValueError, IndexError):
            return directories.UNASSIGNED


def validate_isr(replicas: tuple[int, ...], isr: list[int]) -> bool:
    """Kafka's Replicas.validateIsr: distinct, non-negative members of the replica set."""
    if not isr:
        return True
    if min(isr) < 0 or len(set(isr)) != len(isr):
        return False
    return set(isr) <= set(replicas)
