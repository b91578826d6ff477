"""Which requests a rule's filters match: the topics, partitions, groups and transactional
ids each API names, found in the decoded request."""

from __future__ import annotations

import pytest

from pykafkad.faults.matching import group_ids, topic_partitions, transactional_ids
from pykafkad.faults.rules import FaultRuleError, FaultRules, api_key_of, error_code_of
from wire.messages.add_partitions_to_txn_request import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnTopic,
)
from wire.messages.fetch_request import FetchPartition, FetchRequest, FetchTopic
from wire.messages.find_coordinator_request import FindCoordinatorRequest
from wire.messages.metadata_request import MetadataRequest, MetadataRequestTopic
from wire.messages.offset_fetch_request import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopics,
)
from wire.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData

TOPIC_ID = bytes(range(1, 17))


def test_topics_and_partitions_of_each_request_shape():
    produce = ProduceRequest(transactional_id="tx", topic_data=[TopicProduceData(
        name="a", partition_data=[PartitionProduceData(index=0), PartitionProduceData(index=2)])])
    assert topic_partitions(produce) == [("a", 0), ("a", 2)]
    assert transactional_ids(produce) == ["tx"]
    fetch_by_id = FetchRequest(topics=[FetchTopic(topic_id=TOPIC_ID, partitions=[
        FetchPartition(partition=1)])])
    assert topic_partitions(fetch_by_id, {TOPIC_ID: "b"}.get) == [("b", 1)]
    metadata = MetadataRequest(topics=[MetadataRequestTopic(name="c")])
    assert topic_partitions(metadata) == [("c", None)]
    txn = AddPartitionsToTxnRequest(v3_and_below_transactional_id="t2", v3_and_below_topics=[
        AddPartitionsToTxnTopic(name="d", partitions=[3, 4])])
    assert (topic_partitions(txn), transactional_ids(txn)) == ([("d", 3), ("d", 4)], ["t2"])


def test_groups_and_coordinator_keys():
    offsets = OffsetFetchRequest(groups=[OffsetFetchRequestGroup(group_id="g1", topics=[
        OffsetFetchRequestTopics(name="e", partition_indexes=[0])])])
    assert group_ids(offsets) == ["g1"]
    assert topic_partitions(offsets) == [("e", 0)]
    assert group_ids(FindCoordinatorRequest(key="g2", key_type=0)) == ["g2"]
    assert transactional_ids(FindCoordinatorRequest(key_type=1, coordinator_keys=["t3"])) == ["t3"]
    assert group_ids(FindCoordinatorRequest(key_type=1, coordinator_keys=["t3"])) == []


def test_rules_fire_in_order_and_spent_ones_stay_listed():
    rules = FaultRules()
    first = rules.add("Produce", error="NOT_LEADER_OR_FOLLOWER", count=1, partition=2)
    second = rules.add(0, delay_ms=5, count=None)
    request = ProduceRequest(topic_data=[TopicProduceData(
        name="a", partition_data=[PartitionProduceData(index=0)])])
    fire = rules.by_key[0]
    assert rules.take(fire, request, lambda _id: None) is second  # partition 2 not named
    request.topic_data[0].partition_data[0].index = 2
    assert rules.take(rules.by_key[0], request, lambda _id: None) is first
    assert [r.count for r in rules.list()] == [0, None]
    assert rules.clear(first.rule_id) == 1 and rules.clear() == 1 and rules.by_key == {}


def test_names_and_numbers():
    assert api_key_of("OffsetForLeaderEpoch") == api_key_of("offset_for_leader_epoch") == 23
    assert error_code_of("not_leader_or_follower") == error_code_of(6) == 6
    with pytest.raises(FaultRuleError, match="unknown API key 999"):
        api_key_of(999)
    with pytest.raises(FaultRuleError, match="count must be at least 1"):
        FaultRules().add("Fetch", delay_ms=1, count=0)


def test_a_rule_for_every_api_is_one_rule():
    rules = FaultRules()
    rule = rules.add("*", delay_ms=3, count=2)
    assert len(rules.by_key) > 70 and [r.rule_id for r in rules.list()] == [rule.rule_id]
    assert rules.take(rules.by_key[0], ProduceRequest(), lambda _id: None) is rule
    assert rules.take(rules.by_key[1], FetchRequest(), lambda _id: None) is rule
    assert rules.by_key == {} and rules.list()[0].as_dict()["api"] == "*"
    with pytest.raises(FaultRuleError, match="api='\\*' takes delay_ms or close"):
        rules.add("*", error="NOT_LEADER_OR_FOLLOWER")
