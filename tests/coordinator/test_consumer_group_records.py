"""Consumer group records as Apache Kafka 4.4 wrote them to __consumer_offsets (captured from
the reference broker: member "a" of a group on a 2-partition topic) replay here, and the same
state is written back with the same bytes."""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import Consumer, TopicCollection, TopicPartition
from confluent_kafka.admin import AdminClient, NewPartitions

from compat.consumer_group_scenario import wait_for_coordinator
from compat.wire_client import WireClient
from pykafkad.coordinator.consumer_group import records as cgr
from pykafkad.coordinator.consumer_group.group import (
    STABLE,
    UNREVOKED_PARTITIONS,
    ConsumerGroupMember,
)
from pykafkad.coordinator.consumer_group.manager import (
    ConsumerGroupManager,
    ConsumerGroupSettings,
)
from pykafkad.coordinator.metadata_hash import group_hash, topic_hash
from pykafkad.coordinator.timer import Timer
from pykafkad.testing import run_broker
from tests.integration.clients import WAIT_S, create_topic, needs_java
from tests.integration.groups_support import wait_until
from wire.messages.consumer_group_describe_request import ConsumerGroupDescribeRequest

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


# -- the same consumer group life on pykafkad and on Apache Kafka 4.4 ---------------------------

def _consumer(bootstrap: str, group: str) -> Consumer:
    return Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                     "group.protocol": "consumer", "auto.offset.reset": "earliest",
                     "enable.auto.commit": False})


def _owned(*consumers: Consumer) -> list[list[tuple[str, int]]]:
    for c in consumers:
        c.poll(0.05)
    return [sorted((tp.topic, tp.partition) for tp in c.assignment()) for c in consumers]


def _group_epoch(bootstrap: str, group: str) -> int:
    with WireClient(bootstrap) as c:
        answer = c.request(69, 1, ConsumerGroupDescribeRequest(group_ids=[group]))
    return answer.groups[0].group_epoch


def _life(bootstrap: str, prefix: str) -> tuple[str, list[int]]:
    """A plain subscription, then a regex one, a second member joining and leaving, a topic
    made that matches the regex and partitions added to one; the group epochs
    ConsumerGroupDescribe answered after each step."""
    group, plain, rx1, rx2 = (f"{prefix}-g", f"{prefix}-plain", f"{prefix}-rx1",
                              f"{prefix}-rx2")
    create_topic(bootstrap, plain, 2)
    create_topic(bootstrap, rx1, 2)
    wait_for_coordinator(bootstrap, group)
    epochs = []
    a = _consumer(bootstrap, group)
    a.subscribe([plain])
    wait_until(lambda: _owned(a) == [[(plain, 0), (plain, 1)]], "a to own the plain topic")
    epochs.append(_group_epoch(bootstrap, group))
    a.subscribe([f"^{prefix}-rx.*"])
    wait_until(lambda: _owned(a) == [[(rx1, 0), (rx1, 1)]], "a to own what its regex matches")
    epochs.append(_group_epoch(bootstrap, group))
    b = _consumer(bootstrap, group)
    b.subscribe([f"^{prefix}-rx.*"])
    wait_until(lambda: sorted(len(x) for x in _owned(a, b)) == [1, 1], "a and b to share")
    epochs.append(_group_epoch(bootstrap, group))
    b.close()
    wait_until(lambda: _owned(a) == [[(rx1, 0), (rx1, 1)]], "a to own all again")
    epochs.append(_group_epoch(bootstrap, group))
    create_topic(bootstrap, rx2, 1)
    # Kafka looks for new topics matching a regex at most every 10 s
    wait_until(lambda: len(_owned(a)[0]) == 3, "a to own the new topic", 3 * WAIT_S)
    epochs.append(_group_epoch(bootstrap, group))
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_partitions([NewPartitions(rx1, 3)])[rx1].result(WAIT_S)
    wait_until(lambda: len(_owned(a)[0]) == 4, "a to own the new partition", 3 * WAIT_S)
    epochs.append(_group_epoch(bootstrap, group))
    a.close()
    wait_until(lambda: _group_epoch(bootstrap, group) > epochs[-1], "a to leave")
    epochs.append(_group_epoch(bootstrap, group))
    return group, epochs


def _group_records(bootstrap: str, group: str) -> list[tuple[bytes, bytes | None]]:
    """The group's consumer-group records in __consumer_offsets, in log order."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{uuid.uuid4().hex[:6]}",
                  "enable.auto.commit": False})
    try:
        n = len(c.list_topics("__consumer_offsets", timeout=WAIT_S)
                .topics["__consumer_offsets"].partitions)
        c.assign([TopicPartition("__consumer_offsets", i, 0) for i in range(n)])
        ends = {i: c.get_watermark_offsets(TopicPartition("__consumer_offsets", i),
                                           timeout=WAIT_S)[1] for i in range(n)}
        read = {i: 0 for i in range(n)}
        out = []

        def all_read():
            for m in c.consume(500, 0.2):
                if m.error() is not None:
                    continue
                read[m.partition()] = m.offset() + 1
                if cgr.record_type(m.key()) in cgr.TYPES and \
                        cgr.decode_key(m.key())[1] == group:
                    out.append((m.offset(), m.key(), m.value()))
            return all(read[i] >= ends[i] for i in range(n))
        wait_until(all_read, "__consumer_offsets to be read")
    finally:
        c.close()
    return [(k, v) for _o, k, v in sorted(out, key=lambda r: r[0])]


def _topic_ids(bootstrap: str, names: list[str]) -> dict[bytes, str]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    out = {}
    for name, f in admin.describe_topics(TopicCollection(names)).items():
        tid = f.result(WAIT_S).topic_id
        out[(tid.get_most_significant_bits() % 2**64).to_bytes(8, "big")
            + (tid.get_least_significant_bits() % 2**64).to_bytes(8, "big")] = name
    return out


def _transcript(records, prefix: str, names: dict[bytes, str]) -> list[tuple]:
    """The records with the broker's own values masked: member ids numbered by first
    appearance, topic ids and the prefix replaced by the topics' short names, each metadata
    hash by the topics (and partition counts) it is KIP-1101's hash of, times by whether
    they are set."""
    short = {tid: name.removeprefix(prefix + "-") for tid, name in names.items()}
    by_name = {name: tid for tid, name in names.items()}
    # every hash the life can produce: a set of topics, rx1 with 2 or 3 partitions
    hashes = {0: "none"}
    for combo in (["plain"], ["rx1"], ["rx1", "rx2"]):
        for rx1_partitions in (2, 3):
            counts = {"plain": 2, "rx1": rx1_partitions, "rx2": 1}
            topics = {f"{prefix}-{t}": topic_hash(by_name[f"{prefix}-{t}"], f"{prefix}-{t}",
                                                  [[]] * counts[t]) for t in combo}
            hashes[group_hash(topics) & (2**64 - 1)] = "+".join(f"{t}:{counts[t]}"
                                                                for t in combo)
    members: dict[str, str] = {}

    def mid(member_id):
        return members.setdefault(member_id, f"m{len(members)}")

    def parts(p, epochs=None):
        return sorted((short[t], sorted((i, (epochs or {}).get(t, {}).get(i)) for i in ps))
                      for t, ps in p.items())

    out = []
    for key, value in records:
        kind, _group, second = cgr.decode_key(key)
        if kind == cgr.REGULAR_EXPRESSION:
            second = second.replace(prefix, "P")
        elif second is not None:
            second = mid(second)
        if value is None:
            out.append((kind, second, None))
            continue
        if kind == cgr.GROUP_METADATA:
            epoch, h = cgr.read_group_metadata(value)
            shown = (epoch, hashes.get(h & (2**64 - 1), f"unknown {h:x}"))
        elif kind == cgr.TARGET_ASSIGNMENT_METADATA:
            epoch, at = cgr.read_target_metadata(value)
            shown = (epoch, at > 0)
        elif kind == cgr.TARGET_ASSIGNMENT_MEMBER:
            shown = parts(cgr.read_target_member(value))
        elif kind == cgr.CURRENT_MEMBER_ASSIGNMENT:
            m = ConsumerGroupMember("x")
            cgr.read_current_assignment(m, value)
            shown = (m.member_epoch, m.previous_member_epoch, m.state,
                     parts(m.assigned, m.assignment_epochs),
                     parts(m.pending_revocation, m.assignment_epochs))
        elif kind == cgr.MEMBER_METADATA:
            m = ConsumerGroupMember("x")
            cgr.read_member(m, value)
            shown = (m.instance_id, m.rack_id, m.client_id, m.client_host,
                     [n.replace(prefix, "P") for n in m.subscribed_topic_names],
                     (m.subscribed_topic_regex or "").replace(prefix, "P"),
                     m.rebalance_timeout_ms, m.server_assignor, m.classic)
        elif kind == cgr.REGULAR_EXPRESSION:
            topics, version, at = cgr.read_regex(value)
            shown = (sorted(t.replace(prefix, "P") for t in topics), version >= 0, at > 0)
        else:
            shown = value.hex()
        out.append((kind, second, shown))
    return out


def _regex_resolution_first(transcript: list[tuple]) -> list[tuple]:
    """Kafka resolves a regex in the background and writes what it matched with the epoch
    bump that follows (a regex record, then the group's) when it is done: a member's
    heartbeat just before may be written before or after them.  Both brokers' transcripts
    get those two records moved ahead of the member assignments written just before."""
    out: list[tuple] = []
    i = 0
    while i < len(transcript):
        if transcript[i][0] == cgr.REGULAR_EXPRESSION and i + 1 < len(transcript) \
                and transcript[i + 1][0] == cgr.GROUP_METADATA:
            at = len(out)
            while at > 0 and out[at - 1][0] == cgr.CURRENT_MEMBER_ASSIGNMENT:
                at -= 1
            out[at:at] = transcript[i:i + 2]
            i += 2
            continue
        out.append(transcript[i])
        i += 1
    return out


def _members_in_order(transcript: list[tuple]) -> list[tuple]:
    """Kafka writes the same record of several members in its hash map's order of their
    (random) member ids: such a run of records is put in the order of the members' numbers."""
    out: list[tuple] = []
    for rec in transcript:
        run = len(out)
        while run > 0 and out[run - 1][0] == rec[0] and out[run - 1][1] is not None:
            run -= 1
        out.append(rec)
        if rec[1] is not None:
            out[run:] = sorted(out[run:], key=lambda r: r[1])
    return out


def _regex_first_life(bootstrap: str, prefix: str) -> tuple[str, list[int]]:
    """A new group whose first member subscribes by regex: its join bumps nothing (the regex
    is not resolved yet), the resolution does."""
    group, rx1 = f"{prefix}-g", f"{prefix}-rx1"
    create_topic(bootstrap, rx1, 2)
    wait_for_coordinator(bootstrap, group)
    a = _consumer(bootstrap, group)
    a.subscribe([f"^{prefix}-rx.*"])
    wait_until(lambda: _owned(a) == [[(rx1, 0), (rx1, 1)]], "a to own what its regex matches")
    epochs = [_group_epoch(bootstrap, group)]
    a.close()
    wait_until(lambda: _group_epoch(bootstrap, group) > epochs[-1], "a to leave")
    return group, epochs + [_group_epoch(bootstrap, group)]


def _run_life(bootstrap: str) -> dict:
    prefix = "cgrec" + uuid.uuid4().hex[:6]
    group, epochs = _life(bootstrap, prefix)
    names = _topic_ids(bootstrap, [f"{prefix}-{t}" for t in ("plain", "rx1", "rx2")])
    raw = _group_records(bootstrap, group)
    rx_prefix = "cgrx" + uuid.uuid4().hex[:6]
    rx_group, rx_epochs = _regex_first_life(bootstrap, rx_prefix)
    rx_names = _topic_ids(bootstrap, [f"{rx_prefix}-rx1"])
    rx_names[bytes(16)], rx_names[bytes(15) + b"1"] = f"{rx_prefix}-plain", f"{rx_prefix}-rx2"
    return {"epochs": epochs, "records": _transcript(raw, prefix, names), "raw": raw,
            "names": names, "regex_first_epochs": rx_epochs,
            "regex_first_records": _transcript(_group_records(bootstrap, rx_group), rx_prefix,
                                               rx_names)}


@pytest.fixture(scope="module")
def pykafkad_life(tmp_path_factory):
    with run_broker(tmp_path_factory.mktemp("cg-records")) as b:
        yield _run_life(b.bootstrap_servers)


@pytest.fixture(scope="module")
def kafka_life():
    from compat.kafka_broker import run_kafka

    with run_kafka(config={"group.initial.rebalance.delay.ms": "0"}) as k:
        yield _run_life(k.bootstrap_servers)


#: the group epochs after each step: the regex brings two bumps (the member's new
#: subscription, then what the regex resolved to), each later step one
EPOCHS = [2, 4, 5, 6, 7, 8, 9]


def test_pykafkad_writes_a_consumer_group_life_as_kafka_44_does(pykafkad_life):
    epochs, records = pykafkad_life["epochs"], pykafkad_life["records"]
    assert epochs == EPOCHS
    kinds = [(kind, shown if kind == cgr.GROUP_METADATA else None)
             for kind, _second, shown in records if kind in (cgr.GROUP_METADATA,
                                                             cgr.REGULAR_EXPRESSION)]
    # the epoch records, each with the hash of the topics subscribed then, and the regex's
    assert kinds == [
        (3, (2, "plain:2")), (3, (3, "none")), (16, None), (3, (4, "rx1:2")),
        (3, (5, "rx1:2")), (3, (6, "rx1:2")), (16, None), (3, (7, "rx1:2+rx2:1")),
        (3, (8, "rx1:3+rx2:1")), (16, None), (3, (9, "none"))], kinds


@needs_java
def test_the_same_life_on_kafka_44_writes_the_same_records(pykafkad_life, kafka_life):
    kafka_epochs, kafka_records = kafka_life["epochs"], kafka_life["records"]
    epochs, records = pykafkad_life["epochs"], pykafkad_life["records"]
    assert kafka_epochs == EPOCHS
    assert epochs == kafka_epochs
    records, kafka_records = (_members_in_order(_regex_resolution_first(records)),
                              _members_in_order(_regex_resolution_first(kafka_records)))
    first = next((i for i, (mine, theirs) in enumerate(
        zip(records, kafka_records, strict=False))
                  if mine != theirs), min(len(records), len(kafka_records)))
    assert records == kafka_records, (first, records[first:first + 4],
                                      kafka_records[first:first + 4])


@needs_java
def test_kafka_44s_records_of_the_life_replay_here(kafka_life):
    """Kafka's records up to the last member's leaving load as the group Kafka had then, and
    pykafkad would write nothing new for it (its records are Kafka's, byte for byte)."""
    raw, names = kafka_life["raw"], kafka_life["names"]
    leaving = next(i for i, (k, v) in enumerate(raw)
                   if v is None and cgr.record_type(k) == cgr.CURRENT_MEMBER_ASSIGNMENT
                   and i > len(raw) - 8)
    manager = ConsumerGroupManager(ConsumerGroupSettings(), Timer(lambda: 0), lambda: 0)
    for key, value in raw[:leaving]:
        manager.replay(key, value)
    (group,) = manager.groups.values()
    (member,) = group.members.values()
    ids = {name.rsplit("-", 1)[1]: tid for tid, name in names.items()}
    assert (group.group_epoch, group.assignment_epoch) == (8, 8)
    assert member.assigned == {ids["rx1"]: {0, 1, 2}, ids["rx2"]: {0}}
    assert member.assignment_epochs == {ids["rx1"]: {0: 4, 1: 6, 2: 8}, ids["rx2"]: {0: 7}}
    assert group.resolved_regexes == {member.subscribed_topic_regex: {
        names[ids["rx1"]], names[ids["rx2"]]}}
    assert group.metadata_hash == group_hash({
        names[ids["rx1"]]: topic_hash(ids["rx1"], names[ids["rx1"]], [[]] * 3),
        names[ids["rx2"]]: topic_hash(ids["rx2"], names[ids["rx2"]], [[]])})
    rewritten, _persisted = manager.changes(group, live=True)
    assert [(cgr.record_type(k), v) for k, v in rewritten] == []


def test_a_new_groups_first_member_by_regex_bumps_once_its_regex_is_resolved(pykafkad_life):
    assert pykafkad_life["regex_first_epochs"] == [2, 3]
    assert [(kind, shown if kind == cgr.GROUP_METADATA else None)
            for kind, _m, shown in pykafkad_life["regex_first_records"]
            if kind in (cgr.GROUP_METADATA, cgr.REGULAR_EXPRESSION)] == [
        (16, None), (3, (2, "rx1:2")), (16, None), (3, (3, "none"))]


@needs_java
def test_the_regex_first_life_on_kafka_44_writes_the_same_records(pykafkad_life, kafka_life):
    assert kafka_life["regex_first_epochs"] == pykafkad_life["regex_first_epochs"]
    assert _members_in_order(_regex_resolution_first(kafka_life["regex_first_records"])) == \
        _members_in_order(_regex_resolution_first(pykafkad_life["regex_first_records"]))


def test_a_pre_4_1_partition_metadata_record_is_tombstoned_with_the_next_bump():
    """Kafka 4.4 no longer reads ConsumerGroupPartitionMetadata: a group that still has one
    writes its tombstone right after the next epoch record, and a deleted group always
    writes one (Kafka's group tombstones include it)."""
    manager = ConsumerGroupManager(ConsumerGroupSettings(), Timer(lambda: 0), lambda: 0)
    manager.replay(cgr.key(cgr.GROUP_METADATA, "g"), cgr.group_metadata_value(5, 0))
    manager.replay(cgr.key(cgr.TARGET_ASSIGNMENT_METADATA, "g"), cgr.target_metadata_value(5, 0))
    manager.replay(cgr.key(cgr.PARTITION_METADATA, "g"), bytes.fromhex("0000000000"))
    group = manager.groups["g"]
    assert manager.changes(group, live=True)[0] == []
    group.group_epoch += 1
    records = manager.take_changes(group, live=True)
    assert [(cgr.record_type(k), v is None) for k, v in records] == [
        (cgr.GROUP_METADATA, False), (cgr.PARTITION_METADATA, True)]
    group.assignment_epoch += 1
    assert [cgr.record_type(k) for k, _v in manager.take_changes(group, live=True)] == [
        cgr.TARGET_ASSIGNMENT_METADATA]
    del manager.groups["g"]
    assert [(cgr.record_type(k), v) for k, v in manager.take_changes(group, live=False)] == [
        (cgr.TARGET_ASSIGNMENT_METADATA, None), (cgr.PARTITION_METADATA, None),
        (cgr.GROUP_METADATA, None)]
