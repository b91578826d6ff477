"""Consumer group records as Apache Kafka 4.4 wrote them to __consumer_offsets (captured from
the reference broker: member "a" of a group on a 2-partition topic) replay here, and the same
state is written back with the same bytes."""

from __future__ import annotations

from pykafkad.coordinator.consumer_group import records as cgr
from pykafkad.coordinator.consumer_group.group import (
    STABLE,
    UNREVOKED_PARTITIONS,
    ConsumerGroupMember,
)
from pykafkad.coordinator.consumer_group.metadata_hash import group_hash, topic_hash

TOPIC_ID = bytes.fromhex("90592b0713d64aacb2b1683cde2dc374")
#: ConsumerGroupMemberMetadataValue; Kafka ends it with its tagged field 0, the member's
#: ClassicMemberMetadata, here null (one presence byte 0)
MEMBER = ("000000001070796b61666b61642d636f6d7061740b2f3132372e302e302e3102106b69703834382d62"
          "2d31613538306401000075300001000100")
#: ConsumerGroupCurrentMemberAssignmentValue (epoch 3, previous 2, partition 0; Kafka tags
#: each topic with its partitions' assignment epochs)
CURRENT = ("00000000000300000002000290592b0713d64aacb2b1683cde2dc3740200000000010005020000000201"
           "00")
#: ConsumerGroupTargetAssignmentMemberValue (partition 1)
TARGET = "00000290592b0713d64aacb2b1683cde2dc37402000000010000"
#: ConsumerGroupMetadataValue (epoch 4, with Kafka's metadata hash as tagged field 0)
GROUP = "00000000000401000842c345b0131a1410"


def test_kafka_records_replay_and_encode_back():
    m = ConsumerGroupMember("a")
    cgr.read_member(m, bytes.fromhex(MEMBER))
    assert (m.client_id, m.client_host, m.subscribed_topic_names, m.subscribed_topic_regex,
            m.rebalance_timeout_ms, m.server_assignor, m.instance_id, m.rack_id) == (
        "pykafkad-compat", "/127.0.0.1", ["kip848-b-1a580d"], None, 30000, None, None, None)
    assert m.classic is None
    assert cgr.member_value(m).hex() == MEMBER
    cgr.read_current_assignment(m, bytes.fromhex(CURRENT))
    assert (m.member_epoch, m.previous_member_epoch, m.state, m.assigned,
            m.pending_revocation) == (3, 2, STABLE, {TOPIC_ID: {0}}, {})
    assert cgr.read_target_member(bytes.fromhex(TARGET)) == {TOPIC_ID: {1}}
    assert cgr.target_member_value({TOPIC_ID: {1}}).hex() == TARGET
    assert cgr.read_epoch(bytes.fromhex(GROUP)) == 4
    assert cgr.read_group_metadata(bytes.fromhex(GROUP)) == (4, 0x42c345b0131a1410)
    assert cgr.group_metadata_value(4, 0x42c345b0131a1410).hex() == GROUP
    # the hash is KIP-1101's, of the one topic (2 partitions, no racks)
    assert group_hash({"kip848-b-1a580d": topic_hash(TOPIC_ID, "kip848-b-1a580d", [[], []])}) \
        == 0x42c345b0131a1410
    assert cgr.current_assignment_value(m).hex() == CURRENT


def test_keys_are_kafkas_record_types():
    key = cgr.key(cgr.CURRENT_MEMBER_ASSIGNMENT, "g", "m")
    assert key.hex() == "0008" + "0001" + "67" + "0001" + "6d"
    assert cgr.decode_key(key) == (cgr.CURRENT_MEMBER_ASSIGNMENT, "g", "m")
    assert cgr.decode_key(cgr.key(cgr.GROUP_METADATA, "g")) == (cgr.GROUP_METADATA, "g", None)


#: ConsumerGroupMemberMetadataValue of a classic member (JoinGroup with "range" and
#: "roundrobin", session timeout 30 s) inside a consumer group, as Kafka 4.4 wrote it when the
#: group was upgraded
CLASSIC_MEMBER = (
    "000000001070796b61666b61642d636f6d7061740b2f3132372e302e302e3102066361702d7401000075300001"
    "00460100007530030672616e67651600010000000100056361702d74ffffffff00000000000b726f756e64726f"
    "62696e1600010000000100056361702d74ffffffff000000000000")


def test_a_classic_members_metadata_reads_and_writes_as_kafkas():
    m = ConsumerGroupMember("a")
    cgr.read_member(m, bytes.fromhex(CLASSIC_MEMBER))
    assert m.subscribed_topic_names == ["cap-t"]
    assert m.classic is not None
    assert m.classic.session_timeout_ms == 30000
    assert [name for name, _ in m.classic.protocols] == ["range", "roundrobin"]
    assert m.classic.protocol_name == "range"
    assert cgr.member_value(m).hex() == CLASSIC_MEMBER


RX1 = bytes.fromhex("22a6120a69284b93865a1c0c3f958367")
#: Kafka 4.4's records of a member revoking partition 1 of a topic (epoch 4, previous 4):
#: the partitions pending revocation carry their assignment epochs too
REVOKING = ("00000000000400000004010222a6120a69284b93865a1c0c3f9583670200000000010005020000000402"
            "22a6120a69284b93865a1c0c3f9583670200000001010005020000000400")
#: ConsumerGroupRegularExpressionValue: the topics, the metadata version and the time
REGEX = ("0000030f6b3834386139613338372d7278310f6b3834386139613338372d7278320000000000000077000001a2"
         "24f87c5700")
#: ConsumerGroupTargetAssignmentMetadataValue with its assignment timestamp (tag 0), and as
#: Kafka writes it for an emptied group (no timestamp)
TARGET_METADATA = "000000000007010008000001a224f88fe0"
TARGET_METADATA_EMPTY = "00000000000900"
#: ConsumerGroupMetadataValue of an emptied group: a hash of 0 is left out
GROUP_EMPTY = "00000000000900"


def test_kafka_44_tagged_fields_replay_and_encode_back():
    m = ConsumerGroupMember("a")
    cgr.read_current_assignment(m, bytes.fromhex(REVOKING))
    assert (m.member_epoch, m.previous_member_epoch, m.state, m.assigned,
            m.pending_revocation) == (4, 4, UNREVOKED_PARTITIONS, {RX1: {0}}, {RX1: {1}})
    assert m.assignment_epochs == {RX1: {0: 4, 1: 4}}
    assert cgr.current_assignment_value(m).hex() == REVOKING
    topics, version, at = cgr.read_regex(bytes.fromhex(REGEX))
    assert (topics, version, at) == ({"k848a9a387-rx1", "k848a9a387-rx2"}, 0x77, 0x1a224f87c57)
    assert cgr.regex_value(topics, version, at).hex() == REGEX
    assert cgr.read_target_metadata(bytes.fromhex(TARGET_METADATA)) == (7, 0x1a224f88fe0)
    assert cgr.target_metadata_value(7, 0x1a224f88fe0).hex() == TARGET_METADATA
    assert cgr.target_metadata_value(9, 0).hex() == TARGET_METADATA_EMPTY
    assert cgr.group_metadata_value(9, 0).hex() == GROUP_EMPTY
    assert cgr.read_group_metadata(bytes.fromhex(GROUP_EMPTY)) == (9, 0)
    key = cgr.key(cgr.REGULAR_EXPRESSION, "g", "(^x.*)")
    assert cgr.decode_key(key) == (cgr.REGULAR_EXPRESSION, "g", "(^x.*)")
