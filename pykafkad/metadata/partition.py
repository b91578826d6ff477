"""PartitionRegistration: one partition's replicas, ISR, leader and epochs (Kafka's class of the
same name), built from a PartitionRecord and changed only by merging PartitionChangeRecords, as
Kafka's replay does.  One class for the metadata image, the controller and the replica layer."""

from __future__ import annotations

from dataclasses import dataclass

from pykafkad.metadata import directory_id
from wire.metadata.partition_change_record import PartitionChangeRecord
from wire.metadata.partition_record import PartitionRecord

#: PartitionChangeRecord.leader: the leader does not change (and its epoch is not bumped)
NO_LEADER_CHANGE = -2
#: no leader: the partition is offline
NO_LEADER = -1

#: Kafka's DirectoryId sentinels (pykafkad.metadata.directory_id)
MIGRATING_DIRECTORY = directory_id.MIGRATING

#: LeaderRecoveryState: RECOVERED (0), RECOVERING (1); -1 in a change record: no change
LEADER_RECOVERED = 0
LEADER_RECOVERING = 1
NO_RECOVERY_STATE_CHANGE = -1


class InvalidPartitionChange(ValueError):
    """A change record that cannot apply to the partition as it is."""


def _default_to_migrating(directories, n: int) -> tuple[bytes, ...]:
    """Kafka's defaultToMigrating: no directories, or only MIGRATING ones (a record written
    before log directories, KIP-858, existed), are read as every replica MIGRATING; any other
    list is kept as it is."""
    if not directories or all(d == MIGRATING_DIRECTORY for d in directories):
        return (MIGRATING_DIRECTORY,) * n
    return tuple(directories)


def _change_recovery_state(current: int, change: int) -> int:
    """Kafka's LeaderRecoveryState.changeTo: -1 keeps the state, else the new valid state."""
    if change == NO_RECOVERY_STATE_CHANGE:
        return current
    if change not in (LEADER_RECOVERED, LEADER_RECOVERING):
        raise InvalidPartitionChange(f"Value {change} is not a valid leader recovery state")
    return change


@dataclass(frozen=True)
class PartitionRegistration:
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int
    leader_epoch: int = 0
    partition_epoch: int = 0
    removing_replicas: tuple[int, ...] = ()
    adding_replicas: tuple[int, ...] = ()
    directories: tuple[bytes, ...] = ()
    elr: tuple[int, ...] = ()
    last_known_elr: tuple[int, ...] = ()
    leader_recovery_state: int = LEADER_RECOVERED

    @classmethod
    def from_record(cls, r: PartitionRecord) -> PartitionRegistration:
        replicas = tuple(r.replicas or ())
        if r.directories and len(r.directories) != len(replicas):
            raise InvalidPartitionChange(
                "The lengths for replicas and directories do not match: " + repr(r))
        return cls(
            replicas=replicas,
            isr=tuple(r.isr or ()),
            leader=r.leader,
            leader_epoch=r.leader_epoch,
            partition_epoch=r.partition_epoch,
            removing_replicas=tuple(r.removing_replicas or ()),
            adding_replicas=tuple(r.adding_replicas or ()),
            directories=_default_to_migrating(r.directories, len(replicas)),
            elr=tuple(r.eligible_leader_replicas or ()),
            last_known_elr=tuple(r.last_known_elr or ()),
            leader_recovery_state=r.leader_recovery_state,
        )

    def merge(self, r: PartitionChangeRecord) -> PartitionRegistration:
        """The registration after ``r``, as Kafka's PartitionRegistration.merge: a null field
        keeps its value; any leader but NO_LEADER_CHANGE (-2), even NO_LEADER (-1) or the same
        broker, bumps the leader epoch; every change bumps the partition epoch.  Directories
        follow Kafka's checkDirectories / defaultToMigrating: a record's directories must match
        its own replicas; without any, the old ones stay (read as MIGRATING for the new
        replicas when they were all MIGRATING)."""
        replicas = self.replicas if r.replicas is None else tuple(r.replicas)
        if r.directories is None:
            directories = self.directories
        else:
            if r.replicas is not None and r.directories and len(r.directories) != len(replicas):
                raise InvalidPartitionChange(
                    "The lengths for replicas and directories do not match: " + repr(r))
            directories = tuple(r.directories)
        if r.leader == NO_LEADER_CHANGE:
            leader, leader_epoch = self.leader, self.leader_epoch
        else:
            leader, leader_epoch = r.leader, self.leader_epoch + 1
        return PartitionRegistration(
            replicas=replicas,
            isr=self.isr if r.isr is None else tuple(r.isr),
            leader=leader,
            leader_epoch=leader_epoch,
            partition_epoch=self.partition_epoch + 1,
            removing_replicas=(self.removing_replicas if r.removing_replicas is None
                               else tuple(r.removing_replicas)),
            adding_replicas=(self.adding_replicas if r.adding_replicas is None
                             else tuple(r.adding_replicas)),
            directories=_default_to_migrating(directories, len(replicas)),
            elr=self.elr if r.eligible_leader_replicas is None else tuple(r.eligible_leader_replicas),
            last_known_elr=self.last_known_elr if r.last_known_elr is None else tuple(r.last_known_elr),
            leader_recovery_state=_change_recovery_state(self.leader_recovery_state,
                                                         r.leader_recovery_state),
        )

    def to_record(self, topic_id: bytes, partition_id: int) -> PartitionRecord:
        return PartitionRecord(
            partition_id=partition_id,
            topic_id=topic_id,
            replicas=list(self.replicas),
            isr=list(self.isr),
            removing_replicas=list(self.removing_replicas),
            adding_replicas=list(self.adding_replicas),
            leader=self.leader,
            leader_recovery_state=self.leader_recovery_state,
            leader_epoch=self.leader_epoch,
            partition_epoch=self.partition_epoch,
            directories=list(self.directories),
            eligible_leader_replicas=list(self.elr) or None,
            last_known_elr=list(self.last_known_elr) or None,
        )

    def has_leader(self) -> bool:
        return self.leader != NO_LEADER

    @property
    def preferred_replica(self) -> int:
        return self.replicas[0] if self.replicas else NO_LEADER

    def has_preferred_leader(self) -> bool:
        return self.leader == self.preferred_replica

    @property
    def is_reassigning(self) -> bool:
        return bool(self.removing_replicas or self.adding_replicas)

    def has_replica(self, broker_id: int) -> bool:
        return broker_id in self.replicas

    def directory(self, broker_id: int) -> bytes:
        """The log directory of ``broker_id``'s replica; ValueError when it is not a replica
        (Kafka's IllegalArgumentException: asking is a caller's bug)."""
        try:
            i = self.replicas.index(broker_id)
        except ValueError:
            raise ValueError(f"Replica {broker_id} is not assigned to this partition.") from None
        return self.directories[i]


def validate_isr(replicas: tuple[int, ...], isr: list[int]) -> bool:
    """Kafka's Replicas.validateIsr: distinct, non-negative members of the replica set."""
    if not isr:
        return True
    if min(isr) < 0 or len(set(isr)) != len(isr):
        return False
    return set(isr) <= set(replicas)
