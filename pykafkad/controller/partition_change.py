"""Kafka's PartitionChangeBuilder: from a partition and target ISR / replicas / election mode,
the one PartitionChangeRecord that gets there (or none when nothing changes).

Kept to Kafka's order of steps: complete a reassignment whose targets are in sync, move
replicas to the ELR when the ISR falls below min.insync.replicas (KIP-966), elect a leader,
bump the leader epoch when replicas leave, then write only the fields that changed.
"""

from __future__ import annotations

import enum
from collections.abc import Callable

from pykafkad.metadata.partition import (
    LEADER_RECOVERING,
    NO_LEADER,
    NO_LEADER_CHANGE,
    NO_RECOVERY_STATE_CHANGE,
    PartitionRegistration,
)
from wire.metadata import PartitionChangeRecord


class Election(enum.Enum):
    PREFERRED = 0
    ONLINE = 1
    UNCLEAN = 2


def complete_reassignment(removing: list[int], adding: list[int], replicas: list[int],
                          target_isr: list[int]) -> tuple[list[int], list[int]] | None:
    """(replicas, isr) once a reassignment can finish (Kafka's maybeCompleteReassignment)."""
    if not removing and not adding:
        return None
    new_isr, new_replicas = list(target_isr), list(replicas)
    if removing:
        new_isr = [r for r in target_isr if r not in removing]
        if not new_isr:
            return None
        new_replicas = [r for r in replicas if r not in removing]
        if not new_replicas:
            return None
    if not set(new_replicas) <= set(new_isr):
        return None
    return new_replicas, new_isr


def is_no_op(r: PartitionChangeRecord) -> bool:
    return (r.isr is None and r.eligible_leader_replicas is None and r.last_known_elr is None
            and r.leader == NO_LEADER_CHANGE and r.replicas is None
            and r.removing_replicas is None and r.adding_replicas is None
            and r.leader_recovery_state == NO_RECOVERY_STATE_CHANGE and r.directories is None)


class PartitionChangeBuilder:
    def __init__(self, partition: PartitionRegistration, topic_id: bytes, partition_id: int,
                 is_acceptable_leader: Callable[[int], bool], *, min_isr: int,
                 elr_enabled: bool = False,
                 default_dir: Callable[[int], bytes] | None = None) -> None:
        self.partition = partition
        self.topic_id = topic_id
        self.partition_id = partition_id
        self.is_acceptable_leader = is_acceptable_leader
        self.min_isr = min_isr
        self.elr_enabled = elr_enabled
        self.default_dir = default_dir
        self.election = Election.ONLINE
        self.target_isr = list(partition.isr)
        self.target_replicas = list(partition.replicas)
        self.target_removing = list(partition.removing_replicas)
        self.target_adding = list(partition.adding_replicas)
        self.target_elr = list(partition.elr)
        self.target_last_known_elr = list(partition.last_known_elr)
        self.target_leader_recovery_state = partition.leader_recovery_state
        self.target_directories = dict(zip(partition.replicas, partition.directories, strict=False))
        self.unclean_shutdown_replicas: list[int] | None = None
        self.use_last_known_leader = True

    # --- leader election -------------------------------------------------------------------
    def _valid_new_leader(self, replica: int) -> bool:
        in_isr = replica in self.target_isr or (not self.target_isr and replica in self.target_elr)
        return in_isr and self.is_acceptable_leader(replica)

    def _can_elect_last_known_leader(self) -> bool:
        if not self.elr_enabled or not self.use_last_known_leader:
            return False
        if self.target_elr or self.target_isr:
            return False
        if len(self.partition.last_known_elr) != 1:
            return False
        return self.is_acceptable_leader(self.partition.last_known_elr[0])

    def _elect(self) -> tuple[int, bool]:
        p = self.partition
        if self.election is Election.PREFERRED:
            preferred = self.target_replicas[0]
            if self._valid_new_leader(preferred):
                return preferred, False
            if self._valid_new_leader(p.leader):
                return p.leader, False
            for r in self.target_replicas[1:]:
                if self._valid_new_leader(r):
                    return r, False
            if self._can_elect_last_known_leader():
                return p.last_known_elr[0], True
            return NO_LEADER, False
        if self._valid_new_leader(p.leader):
            return p.leader, False
        for r in self.target_replicas:
            if self._valid_new_leader(r):
                return r, False
        if self._can_elect_last_known_leader():
            return p.last_known_elr[0], True
        if self.election is Election.UNCLEAN:
            for r in self.target_replicas:
                if self.is_acceptable_leader(r):
                    return r, True
        return NO_LEADER, False

    def _try_election(self, record: PartitionChangeRecord) -> None:
        node, unclean = self._elect()
        if node == self.partition.leader:
            return
        if node in self.target_elr:
            self.target_isr = [node]
            self.target_elr = [r for r in self.target_elr if r != node]
        record.leader = node
        if unclean:
            record.isr = [node]
            if self.partition.leader_recovery_state != LEADER_RECOVERING:
                record.leader_recovery_state = LEADER_RECOVERING

    # --- ELR (KIP-966) ---------------------------------------------------------------------
    def _populate_target_elr(self) -> None:
        if not self.elr_enabled:
            return
        if len(self.target_isr) >= self.min_isr:
            self.target_elr, self.target_last_known_elr = [], []
            return
        isr = set(self.target_isr)
        candidates = list(dict.fromkeys(self.target_elr + list(self.partition.isr)))
        unclean = self.unclean_shutdown_replicas or ()
        self.target_elr = [r for r in candidates if r not in isr and r not in unclean]
        candidates = list(dict.fromkeys(candidates + self.target_last_known_elr))
        self.target_last_known_elr = [r for r in candidates
                                      if r not in isr and r not in self.target_elr]

    def _update_record_elr(self, record: PartitionChangeRecord) -> None:
        clean_election = record.isr is None
        if not clean_election or not self.elr_enabled:
            self.target_elr, self.target_last_known_elr = [], []
        if self.target_elr != list(self.partition.elr):
            record.eligible_leader_replicas = list(self.target_elr)
        p = self.partition
        if self.use_last_known_leader and len(p.last_known_elr) == 1 and (
                record.leader == NO_LEADER
                or (record.leader == NO_LEADER_CHANGE and p.leader == NO_LEADER)):
            self.target_last_known_elr = list(p.last_known_elr)
        if self.use_last_known_leader:
            return
        if self.target_last_known_elr != list(p.last_known_elr):
            record.last_known_elr = list(self.target_last_known_elr)

    def _update_last_known_leader(self, record: PartitionChangeRecord) -> None:
        if not self.use_last_known_leader or not self.elr_enabled:
            return
        p = self.partition
        if record.isr is not None and not record.isr and (
                len(p.last_known_elr) != 1 or p.last_known_elr[0] != p.leader):
            record.last_known_elr = [p.leader]
        elif (record.leader >= 0 or (p.leader != NO_LEADER and record.leader != NO_LEADER)) \
                and p.last_known_elr:
            record.last_known_elr = []

    # --- build -----------------------------------------------------------------------------
    def build(self) -> PartitionChangeRecord | None:
        p = self.partition
        record = PartitionChangeRecord(partition_id=self.partition_id, topic_id=self.topic_id)
        done = complete_reassignment(self.target_removing, self.target_adding,
                                     self.target_replicas, self.target_isr)
        if done is not None:
            self.target_replicas, self.target_isr = done
            self.target_removing, self.target_adding = [], []
        self._populate_target_elr()
        self._try_election(record)
        # A replica leaving the replica set bumps the leader epoch (KIP-841 fencing).
        if record.leader == NO_LEADER_CHANGE and not set(p.replicas) <= set(self.target_replicas):
            record.leader = p.leader
        self._update_record_elr(record)
        if record.isr is None and (self.target_isr or self.elr_enabled) \
                and self.target_isr != list(p.isr):
            record.isr = list(self.target_isr)
        self._update_last_known_leader(record)
        self._set_assignment_changes(record)
        if self.target_leader_recovery_state != p.leader_recovery_state:
            record.leader_recovery_state = self.target_leader_recovery_state
        return None if is_no_op(record) else record

    def _set_assignment_changes(self, record: PartitionChangeRecord) -> None:
        p = self.partition
        if self.target_replicas:
            if self.default_dir is not None:
                dirs = [self.target_directories.get(r) or self.default_dir(r)
                        for r in self.target_replicas]
                if dirs != list(p.directories):
                    record.directories = dirs
            if self.target_replicas != list(p.replicas):
                record.replicas = list(self.target_replicas)
        if self.target_removing != list(p.removing_replicas):
            record.removing_replicas = list(self.target_removing)
        if self.target_adding != list(p.adding_replicas):
            record.adding_replicas = list(self.target_adding)
