"""Group administration from both clients' admin APIs: list (with a state filter), describe,
list/alter/delete offsets, remove members, delete groups."""

from __future__ import annotations

import pytest
from confluent_kafka import ConsumerGroupState, ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import AdminClient
from kafka import KafkaAdminClient
from kafka import TopicPartition as KTP
from kafka.admin import ConfigResource, ConfigResourceType, MemberToRemove
from kafka.errors import GroupIdNotFoundError, NoError
from kafka.structs import OffsetAndMetadata

from pykafkad.testing import run_broker
from tests.integration.clients import WAIT_S, confluent_produce, create_topic
from tests.integration.groups_support import GROUP_BROKER_CONFIG, GroupMember, wait_until


@pytest.fixture
def kafka(tmp_path):
    with run_broker(tmp_path / "data", config=GROUP_BROKER_CONFIG) as b:
        yield b


def start_group(bootstrap: str, group: str, topic: str, n: int = 2, **conf) -> list[GroupMember]:
    members = [GroupMember("confluent", bootstrap, group, topic, **conf).start()
               for _ in range(n)]
    wait_until(lambda: sum(len(m.assignment) for m in members) == 4
               and all(m.assignment for m in members), f"group {group} formed")
    return members


def test_confluent_admin(kafka, topic_name):
    bs = kafka.bootstrap_servers
    create_topic(bs, topic_name, 4)
    confluent_produce(bs, topic_name, [{"value": b"v", "partition": p} for p in range(4)])
    admin = AdminClient({"bootstrap.servers": bs})
    members = start_group(bs, "active", topic_name)
    try:
        offsets = [TopicPartition(topic_name, p, 10 + p) for p in range(4)]
        admin.alter_consumer_group_offsets(
            [ConsumerGroupTopicPartitions("idle", offsets)])["idle"].result(WAIT_S)

        listed = admin.list_consumer_groups(request_timeout=WAIT_S).result(WAIT_S)
        states = {g.group_id: g.state for g in listed.valid}
        assert states == {"active": ConsumerGroupState.STABLE,
                          "idle": ConsumerGroupState.EMPTY}
        stable = admin.list_consumer_groups(
            states={ConsumerGroupState.STABLE}, request_timeout=WAIT_S).result(WAIT_S)
        assert [g.group_id for g in stable.valid] == ["active"]

        described = admin.describe_consumer_groups(["active", "idle"],
                                                   request_timeout=WAIT_S)
        active = described["active"].result(WAIT_S)
        assert active.state == ConsumerGroupState.STABLE
        assert active.partition_assignor == "roundrobin"
        assert len(active.members) == 2
        assigned = sorted(tp.partition for m in active.members
                          for tp in m.assignment.topic_partitions)
        assert assigned == [0, 1, 2, 3]
        assert all(m.host == "/127.0.0.1" and m.client_id == "rdkafka" for m in active.members)
        assert active.coordinator.id == kafka.broker.node_id
        idle = described["idle"].result(WAIT_S)
        assert idle.state == ConsumerGroupState.EMPTY and idle.members == []

        fetched = admin.list_consumer_group_offsets(
            [ConsumerGroupTopicPartitions("idle")])["idle"].result(WAIT_S)
        assert sorted((tp.partition, tp.offset) for tp in fetched.topic_partitions) == [
            (0, 10), (1, 11), (2, 12), (3, 13)]

        deleted = admin.delete_consumer_groups(["active", "idle"], request_timeout=WAIT_S)
        deleted["idle"].result(WAIT_S)
        with pytest.raises(Exception, match="NON_EMPTY_GROUP"):
            deleted["active"].result(WAIT_S)
        listed = admin.list_consumer_groups(request_timeout=WAIT_S).result(WAIT_S)
        assert [g.group_id for g in listed.valid] == ["active"]
    finally:
        for m in members:
            m.stop()
    admin.delete_consumer_groups(["active"])["active"].result(WAIT_S)
    assert admin.list_consumer_groups().result(WAIT_S).valid == []


def test_kafka_python_admin(kafka, topic_name):
    bs = kafka.bootstrap_servers
    create_topic(bs, topic_name, 4)
    other = topic_name + "-old"
    create_topic(bs, other, 1)
    admin = KafkaAdminClient(bootstrap_servers=bs)
    confluent_produce(bs, topic_name, [{"value": b"v", "partition": p} for p in range(4)])
    members = start_group(bs, "team", topic_name)
    try:
        admin.alter_group_offsets("team-offsets", {
            KTP(topic_name, 0): OffsetAndMetadata(3, "meta", -1)})
        groups = {g["group_id"]: g for g in admin.list_groups()}
        assert groups["team"]["group_state"] == "Stable"
        assert groups["team"]["protocol_type"] == "consumer"
        assert groups["team-offsets"]["protocol_type"] == ""
        empty = admin.list_groups(states_filter=["Empty"])
        assert [g["group_id"] for g in empty] == ["team-offsets"]

        described = admin.describe_groups(["team", "missing"])
        team = described["team"]
        assert team["group_state"] == "Stable" and team["protocol_data"] == "roundrobin"
        assert len(team["members"]) == 2 and team["error"] is None
        assignment = team["members"][0]["member_assignment"]
        assert assignment["assigned_partitions"][0]["topic"] == topic_name
        assert described["missing"]["group_state"] == "Dead"

        offsets = admin.list_group_offsets({"team-offsets": None})["team-offsets"]
        assert offsets == {KTP(topic_name, 0): OffsetAndMetadata(3, "meta", -1)}

        # offsets of a topic the group subscribes to cannot be deleted; others can
        admin.alter_group_offsets("team-offsets", {KTP(other, 0): OffsetAndMetadata(1, "", -1)})
        result = admin.delete_group_offsets("team-offsets", [KTP(other, 0), KTP(topic_name, 0)])
        assert result == {KTP(other, 0): NoError, KTP(topic_name, 0): NoError}
        assert admin.list_group_offsets("team-offsets")["team-offsets"] == {}
        wait_until(lambda: admin.list_group_offsets("team")["team"], "the team's commits")
        result = admin.delete_group_offsets("team", [KTP(topic_name, 0)])
        assert result[KTP(topic_name, 0)].__name__ == "GroupSubscribedToTopicError"
        with pytest.raises(GroupIdNotFoundError):
            admin.delete_group_offsets("missing", [KTP(topic_name, 0)])

        # a static member (gone without leaving, as static members do) is removed by its
        # instance id
        static = GroupMember("confluent", bs, "statics", topic_name,
                             **{"group.instance.id": "s-1"}).start()
        wait_until(lambda: len(static.assignment) == 4, "the static member assigned")
        static.stop()
        assert len(admin.describe_groups(["statics"])["statics"]["members"]) == 1
        removed = admin.remove_group_members("statics", [MemberToRemove(group_instance_id="s-1")])
        assert list(removed.values()) == [NoError]
        assert admin.describe_groups(["statics"])["statics"]["members"] == []

        # the internal topic, created on first use, is Kafka's
        [internal] = admin.describe_topics(["__consumer_offsets"])
        assert internal["is_internal"] and len(internal["partitions"]) == 50
        configs = admin.describe_configs([ConfigResource(
            ConfigResourceType.TOPIC, "__consumer_offsets", ["cleanup.policy"])])
        assert configs["topic"]["__consumer_offsets"]["cleanup.policy"]["value"] == "compact"

        deleted = admin.delete_groups(["team", "team-offsets", "missing"])
        assert deleted == {"team": "NonEmptyGroupError", "team-offsets": "OK",
                           "missing": "GroupIdNotFoundError"}
    finally:
        for m in members:
            m.stop()
    assert admin.delete_groups(["team"]) == {"team": "OK"}
    admin.close()
