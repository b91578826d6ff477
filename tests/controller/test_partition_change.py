"""PartitionChangeBuilder on the partitions of Kafka's own PartitionChangeBuilderTest, with
the records Kafka's test expects at the newest record version (ELR and directory assignment
on, as in a 4.4 cluster)."""

from __future__ import annotations

import uuid

from pykafkad.controller.partition_change import Election, PartitionChangeBuilder
from pykafkad.metadata import directory_id as directories
from pykafkad.metadata.partition import NO_LEADER, PartitionRegistration
from wire.metadata import PartitionChangeRecord

U = directories.UNASSIGNED


def d(n: int) -> bytes:
    return uuid.UUID(int=1000 + n).bytes


FOO = PartitionRegistration(replicas=(2, 1, 3), directories=(d(2), d(1), U), isr=(2, 1, 3),
                            leader=1, leader_epoch=100, partition_epoch=200)
BAR = PartitionRegistration(replicas=(1, 2, 3, 4), directories=(U, d(2), d(3), d(4)),
                            isr=(1, 2, 3), removing_replicas=(1,), adding_replicas=(4,),
                            leader=1, leader_epoch=100, partition_epoch=200)
BAZ = PartitionRegistration(replicas=(2, 1, 3), directories=(d(2), d(1), d(3)), isr=(1, 3),
                            leader=3, leader_epoch=100, partition_epoch=200)
OFFLINE = PartitionRegistration(replicas=(2, 1, 3), directories=(d(2), d(1), d(3)), isr=(),
                                elr=(3,), last_known_elr=(2,), leader=-1, leader_epoch=100,
                                partition_epoch=200)
TOPIC = b"\x07" * 16


def builder(part, acceptable, *, min_isr=2, elr=True, election=Election.ONLINE,
            target_isr=None, target_replicas=None):
    b = PartitionChangeBuilder(part, TOPIC, 0, acceptable, min_isr=min_isr, elr_enabled=elr,
                               default_dir=lambda broker: U)
    b.election = election
    if target_isr is not None:
        b.target_isr = list(target_isr)
    if target_replicas is not None:
        b.target_replicas = list(target_replicas)
    return b


def foo(**kw):
    return builder(FOO, lambda r: r != 3, **kw)


def bar(**kw):
    return builder(BAR, lambda r: r != 3, **kw)


def baz(**kw):
    return builder(BAZ, lambda r: True, **kw)


def record(**fields):
    return PartitionChangeRecord(partition_id=0, topic_id=TOPIC, **fields)


def test_elect_leader():
    assert foo(election=Election.PREFERRED)._elect() == (2, False)
    assert foo()._elect() == (1, False)
    assert foo(election=Election.UNCLEAN)._elect() == (1, False)
    assert foo(target_isr=[1, 3])._elect() == (1, False)
    assert foo(election=Election.UNCLEAN, target_isr=[1, 3])._elect() == (1, False)
    assert foo(target_isr=[3])._elect() == (NO_LEADER, False)
    assert foo(election=Election.UNCLEAN, target_isr=[3])._elect() == (2, True)
    assert foo(election=Election.UNCLEAN, target_isr=[4],
               target_replicas=[2, 1, 3, 4])._elect() == (4, False)
    assert baz(election=Election.PREFERRED)._elect() == (3, False)
    assert baz()._elect() == (3, False)
    assert baz(election=Election.UNCLEAN)._elect() == (3, False)


def test_no_change():
    assert foo().build() is None
    assert foo(election=Election.UNCLEAN).build() is None
    assert bar().build() is None
    assert bar(election=Election.UNCLEAN).build() is None
    assert baz(election=Election.PREFERRED).build() is None


def test_isr_change_does_not_bump_the_leader_epoch():
    assert foo(target_isr=[2, 1]).build() == record(isr=[2, 1])


def test_isr_change_and_leader_change():
    assert foo(target_isr=[2, 3]).build() == record(isr=[2, 3], leader=2)


def test_reassignment_rearranges_replicas():
    assert foo(target_replicas=[3, 2, 1]).build() == record(replicas=[3, 2, 1],
                                                           directories=[U, d(2), d(1)])


def test_isr_enlargement_completes_reassignment():
    assert bar(target_isr=[1, 2, 3, 4]).build() == record(
        replicas=[2, 3, 4], isr=[2, 3, 4], leader=2, removing_replicas=[], adding_replicas=[],
        directories=[d(2), d(3), d(4)])


def test_revert_reassignment():
    b = bar(target_isr=[1, 2, 3], target_replicas=[1, 2, 3])
    b.target_removing, b.target_adding = [], []
    assert b.build() == record(replicas=[1, 2, 3], leader=1, removing_replicas=[],
                               adding_replicas=[], directories=[U, d(2), d(3)])


def test_removing_replica_reassignment():
    b = foo(target_replicas=[1, 2, 3])
    b.target_removing = [3]
    assert b.build() == record(replicas=[1, 2], isr=[2, 1], leader=1, directories=[d(1), d(2)])


def test_adding_replica_reassignment():
    b = foo(target_replicas=[1, 2, 3, 4])
    b.target_adding = [4]
    assert b.build() == record(replicas=[1, 2, 3, 4], adding_replicas=[4],
                               directories=[d(1), d(2), U, U])


def test_unclean_leader_election():
    assert foo(election=Election.UNCLEAN, target_isr=[3]).build() == record(
        isr=[2], leader=2, leader_recovery_state=1)
    expected = record(isr=[1], leader=1, leader_recovery_state=1,
                      eligible_leader_replicas=[], last_known_elr=[])
    offline = builder(OFFLINE, lambda r: r == 1, election=Election.UNCLEAN)
    assert offline.build() == expected
    offline = builder(OFFLINE, lambda r: r == 1, election=Election.UNCLEAN, target_isr=[2])
    assert offline.build() == expected


def _four(isr, elr=(), last_known=()):
    return PartitionRegistration(replicas=(1, 2, 3, 4), directories=(d(1), d(2), d(3), d(4)),
                                 isr=isr, elr=elr, last_known_elr=last_known, leader=1,
                                 leader_epoch=100, partition_epoch=200)


def _elr_builder(part, target_isr=None):
    b = builder(part, lambda r: r != 3, min_isr=3, election=Election.PREFERRED,
                target_isr=target_isr)
    b.use_last_known_leader = False
    return b


def test_elr_isr_shrink_below_min_isr():
    part = _four((1, 2, 3, 4))
    rec = _elr_builder(part, [1, 2]).build()
    assert rec == record(isr=[1, 2], eligible_leader_replicas=[3, 4])
    merged = part.merge(rec)
    assert (merged.elr, merged.last_known_elr) == ((3, 4), ())


def test_elr_isr_expand_above_min_isr():
    part = _four((1, 2), elr=(3,), last_known=(4,))
    rec = _elr_builder(part, [1, 2, 3]).build()
    assert rec == record(isr=[1, 2, 3], eligible_leader_replicas=[], last_known_elr=[])


def test_elr_isr_add_new_member_not_in_elr():
    part = _four((1,), elr=(3,), last_known=(2,))
    rec = _elr_builder(part, [1, 4]).build()
    assert rec == record(isr=[1, 4])
    merged = part.merge(rec)
    assert (merged.elr, merged.last_known_elr) == ((3,), (2,))


def test_elr_removes_unclean_shutdown_replicas():
    part = _four((1,), elr=(2, 3))
    b = _elr_builder(part)
    b.unclean_shutdown_replicas = [3]
    assert b.build() == record(eligible_leader_replicas=[2], last_known_elr=[3])
