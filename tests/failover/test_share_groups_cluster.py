"""Share groups on three KRaft nodes (tests/failover/share_scenario.py), on pykafkad and on
Apache Kafka 4.4: members read a topic led by several brokers, and the share-partition state
lives with the share coordinator, so it outlives the coordinator's and the leader's death."""

from __future__ import annotations

from tests.failover.share_scenario import (
    state_survives_failovers,
    three_clients_read_everything,
    two_members_read_everything,
)
from tests.integration.clients import needs_java


def test_two_share_consumers_read_every_record_once(target):
    seen = two_members_read_everything(target)
    assert seen == {"leaders": 3, "records": 30, "twice": 0}, seen


@needs_java
def test_librdkafka_and_java_members_read_every_record_once(target):
    seen = three_clients_read_everything(target)
    assert seen == {"leaders": 3, "records": 30, "twice": 0, "java_read_some": True}, seen


def test_share_state_survives_the_coordinator_and_the_leader(target):
    seen = state_survives_failovers(target)
    assert seen["first"] == list(range(10))
    assert seen["coordinator_is_not_the_leader"]
    assert seen["second"] == list(range(4, 10)), seen
    # accepted records never come back; the ones the dead leader had handed out do, their
    # second delivery (Kafka's leader never writes an acquisition, only what changed)
    assert seen["third"] == [(7, 2), (8, 2), (9, 2)], seen
