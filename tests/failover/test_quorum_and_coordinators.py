"""Controller and coordinator failures on three combined KRaft nodes, the same scenarios on
pykafkad and on Apache Kafka 4.4 (tests/failover/outage.py):

- two of the three nodes die, so the metadata quorum has no majority: the survivor keeps
  serving the partition it leads (acks=all with its ISR of one, and fetches), and a metadata
  change through it (CreateTopics) fails with REQUEST_TIMED_OUT after Kafka's 60 s forwarding
  timeout; with the nodes back, CreateTopics works again;
- the broker coordinating an open transaction dies: the producer's commit finds the new
  coordinator (the new leader of the __transaction_state partition, which loaded the
  transaction on its election) and completes, and a read_committed consumer reads the
  transaction's records once;
- the coordinator of a KIP-848 consumer group, or of a KIP-1071 streams group, dies: the new
  leader of the group's __consumer_offsets partition loads the group, and its member goes on
  with its epoch and its partitions or tasks."""

from __future__ import annotations

from tests.failover.outage import (
    consumer_group_coordinator_dies,
    quorum_lost,
    streams_group_coordinator_dies,
    txn_coordinator_dies,
)
from wire.errors import ErrorCode


def test_without_a_quorum_the_survivor_serves_and_refuses_metadata_changes(target):
    seen = quorum_lost(target)
    assert seen["before"] == seen["produce_without_quorum"] == [""] * 3
    assert seen["consume_without_quorum"] == [b"x0", b"x1", b"x2", b"y0", b"y1", b"y2"]
    # Kafka's broker holds the forwarded request for its 60 s forwarding timeout, then
    # answers REQUEST_TIMED_OUT without a message
    assert seen["create_topics"] == (ErrorCode.REQUEST_TIMED_OUT, None)
    assert seen["create_after_recovery"] == "created"


def test_an_open_transaction_commits_after_its_coordinator_dies(target):
    seen = txn_coordinator_dies(target)
    assert seen["commit"] == "committed"
    assert seen["new_coordinator_is_a_survivor"]
    assert seen["read_committed"] == [b"t%d" % i for i in range(5)]


def test_a_consumer_group_member_keeps_its_partitions_when_the_coordinator_dies(target):
    """KIP-848: the new leader of the group's __consumer_offsets partition loads the group."""
    seen = consumer_group_coordinator_dies(target)
    assert seen == {"heartbeat": (0, True),
                    "described": (0, "Stable", [("member-a", True, [0, 1])])}, seen


def test_a_streams_group_member_keeps_its_tasks_when_the_coordinator_dies(target):
    """KIP-1071: the new leader of the group's __consumer_offsets partition loads the group."""
    seen = streams_group_coordinator_dies(target)
    assert seen == {"heartbeat": (0, True), "loaded_as_it_was": True,
                    "described": (0, "Stable", [("member-s", True, [("0", [0, 1])])])}, seen
