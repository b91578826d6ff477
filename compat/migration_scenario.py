"""KIP-848 online migration over the wire, run the same way on pykafkad and on Apache Kafka:
a classic member A (JoinGroup/SyncGroup) owns a topic's group; a ConsumerGroupHeartbeat from B
converts the group to a consumer group; A is driven through Heartbeat/JoinGroup/SyncGroup by the
consumer group's assignment; B leaves and the group converts back to a classic group that A
rejoins. The answers are normalised (member ids named) so both transcripts compare line by line.
"""

from __future__ import annotations

import time

from compat.consumer_group_scenario import (
    _hb,
    _join,
    settle,
    wait_for_coordinator,
    wait_for_topic,
    wait_for_topic_in_groups,
)
from compat.wire_client import WireClient
from wire.messages.consumer_group_describe_request import ConsumerGroupDescribeRequest
from wire.messages.consumer_protocol_assignment import ConsumerProtocolAssignment
from wire.messages.consumer_protocol_assignment import TopicPartition as AssignedPartition
from wire.messages.consumer_protocol_subscription import ConsumerProtocolSubscription
from wire.messages.describe_groups_request import DescribeGroupsRequest
from wire.messages.heartbeat_request import HeartbeatRequest
from wire.messages.join_group_request import JoinGroupRequest, JoinGroupRequestProtocol
from wire.messages.list_groups_request import ListGroupsRequest
from wire.messages.sync_group_request import SyncGroupRequest, SyncGroupRequestAssignment
from wire.primitives import Reader, Writer


def _subscription(topic: str) -> bytes:
    w = Writer()
    w.int16(1)
    ConsumerProtocolSubscription(topics=[topic], user_data=None, owned_partitions=[]).write(w, 1)
    return w.getvalue()


def _assignment(topic: str, partitions: list[int]) -> bytes:
    w = Writer()
    w.int16(1)
    ConsumerProtocolAssignment(
        assigned_partitions=[AssignedPartition(topic=topic, partitions=partitions)],
        user_data=None).write(w, 1)
    return w.getvalue()


def _read_assignment(data: bytes):
    if not data:
        return None
    r = Reader(data)
    version = r.int16()
    a = ConsumerProtocolAssignment.read(r, min(version, 3))
    return version, sorted((tp.topic, sorted(tp.partitions)) for tp in a.assigned_partitions)


def run(bootstrap: str, group: str, topic: str) -> list:
    """The transcript (``topic`` exists with 4 partitions)."""
    wait_for_topic(bootstrap, topic)
    wait_for_topic_in_groups(bootstrap, topic)
    wait_for_coordinator(bootstrap, group)
    out: list = []
    names: dict[str, str] = {}
    b = "member-b-" + group

    def name(member_id: str) -> str:
        return names.get(member_id, member_id and "?")

    with WireClient(bootstrap) as c:
        def join(member_id: str):
            r = c.request(11, 7, JoinGroupRequest(
                group_id=group, session_timeout_ms=30000, rebalance_timeout_ms=30000,
                member_id=member_id, protocol_type="consumer",
                protocols=[JoinGroupRequestProtocol(name="range", metadata=_subscription(topic)),
                           JoinGroupRequestProtocol(name="roundrobin",
                                                    metadata=_subscription(topic))]))
            return r

        def join_line(what, r):
            return (what, r.error_code, r.generation_id, r.protocol_type, r.protocol_name,
                    name(r.leader), r.skip_assignment, len(r.members))

        def sync(member_id, generation, assignments):
            r = c.request(14, 5, SyncGroupRequest(
                group_id=group, generation_id=generation, member_id=member_id,
                protocol_type="consumer", protocol_name="range",
                assignments=[SyncGroupRequestAssignment(member_id=m, assignment=a)
                             for m, a in assignments]))
            return (r.error_code, r.protocol_type, r.protocol_name,
                    _read_assignment(r.assignment))

        def heartbeat(member_id, generation):
            return c.request(12, 4, HeartbeatRequest(
                group_id=group, generation_id=generation, member_id=member_id)).error_code

        def kind():
            found = []
            for t in ("classic", "consumer"):
                lg = c.request(16, 5, ListGroupsRequest(types_filter=[t]))
                found += [(g.group_type, g.group_state) for g in lg.groups
                          if g.group_id == group]
            return found

        def describe():
            d = c.request(69, 1, ConsumerGroupDescribeRequest(group_ids=[group])).groups[0]
            return ("describe", d.error_code, d.group_state, d.group_epoch, d.assignment_epoch,
                    sorted((name(m.member_id), m.member_epoch, m.member_type,
                            sorted(p for tp in m.assignment.topic_partitions
                                   for p in tp.partitions),
                            sorted(p for tp in m.target_assignment.topic_partitions
                                   for p in tp.partitions)) for m in d.members))

        # A: a classic group of one, owning every partition
        r = join("")
        out.append(("A first join", r.error_code))
        a = r.member_id
        names[a], names[b] = "A", "B"
        r = join(a)
        out.append(join_line("A joins", r, ))
        generation = r.generation_id
        out.append(("A syncs", sync(a, generation, [(a, _assignment(topic, [0, 1, 2, 3]))])))
        out.append(("kind", kind()))
        # B's ConsumerGroupHeartbeat converts the group
        rb = _join(c, group, b, topic)
        out.append(("B joins", rb.error_code, rb.member_epoch,
                    None if rb.assignment is None else
                    sorted(p for tp in rb.assignment.topic_partitions for p in tp.partitions)))
        out.append(("kind", kind()))
        out.append(describe())
        out.append(("A heartbeat", heartbeat(a, generation)))
        out.append(("A heartbeat old generation", heartbeat(a, generation - 1)))
        out.append(("A sync old", sync(a, generation, [])))
        r = join(a)
        out.append(join_line("A rejoins", r))
        generation = r.generation_id
        out.append(("A syncs", sync(a, generation, [])))
        epoch_b = rb.member_epoch
        owned_b: list = []

        def b_owns_two():
            nonlocal epoch_b, owned_b
            r = _hb(c, group, b, epoch_b, topic_partitions=owned_b)
            epoch_b = r.member_epoch
            if r.assignment is not None:
                owned_b = r.assignment.topic_partitions
            return sum(len(tp.partitions) for tp in owned_b) == 2
        settle(b_owns_two)
        out.append(("A heartbeat", heartbeat(a, generation)))
        out.append(describe())
        dg = c.request(15, 5, DescribeGroupsRequest(groups=[group])).groups[0]
        out.append(("describe groups", dg.error_code, dg.group_state, dg.protocol_type,
                    len(dg.members)))
        # B leaves: only A (classic) remains, the group goes back to classic
        rl = _hb(c, group, b, -1)
        out.append(("B leaves", rl.error_code, rl.member_epoch))
        out.append(("kind", kind()))
        out.append(("A heartbeat", heartbeat(a, generation)))
        r = join(a)
        out.append(join_line("A rejoins", r))
        generation = r.generation_id
        out.append(("A syncs", sync(a, generation, [(a, _assignment(topic, [0, 1, 2, 3]))])))
        out.append(("kind", kind()))
        out.append(("A heartbeat", heartbeat(a, generation)))
        out.append(describe())
    return out


def run_static(bootstrap: str, group: str, topic: str) -> list:
    """Static members across the migration: a restarted classic static member replaces its old
    member id inside a consumer group (the old id is fenced), and a classic static member that
    replaces the last consumer-protocol static member turns the group classic again."""
    wait_for_topic(bootstrap, topic)
    wait_for_topic_in_groups(bootstrap, topic)
    wait_for_coordinator(bootstrap, group)
    out: list = []
    with WireClient(bootstrap) as c:
        def join(member_id: str, instance: str):
            return c.request(11, 7, JoinGroupRequest(
                group_id=group, session_timeout_ms=30000, rebalance_timeout_ms=30000,
                member_id=member_id, group_instance_id=instance, protocol_type="consumer",
                protocols=[JoinGroupRequestProtocol(name="range",
                                                    metadata=_subscription(topic))]))

        def sync(member_id, instance, generation, assignments):
            r = c.request(14, 5, SyncGroupRequest(
                group_id=group, generation_id=generation, member_id=member_id,
                group_instance_id=instance, protocol_type="consumer", protocol_name="range",
                assignments=[SyncGroupRequestAssignment(member_id=m, assignment=a)
                             for m, a in assignments]))
            return r.error_code, _read_assignment(r.assignment)

        def heartbeat(member_id, instance, generation):
            return c.request(12, 4, HeartbeatRequest(
                group_id=group, generation_id=generation, member_id=member_id,
                group_instance_id=instance)).error_code

        def kind():
            lg = c.request(16, 5, ListGroupsRequest(types_filter=[]))
            return [(g.group_type, g.group_state) for g in lg.groups if g.group_id == group]

        def describe():
            d = c.request(69, 1, ConsumerGroupDescribeRequest(group_ids=[group])).groups[0]
            return ("describe", d.error_code, d.group_state, d.group_epoch, d.assignment_epoch,
                    sorted((m.instance_id, m.member_epoch, m.member_type,
                            sorted(p for tp in m.assignment.topic_partitions
                                   for p in tp.partitions),
                            sorted(p for tp in m.target_assignment.topic_partitions
                                   for p in tp.partitions)) for m in d.members))

        r = join("", "i-a")
        a = r.member_id
        out.append(("A joins", r.error_code, r.generation_id, r.leader == a))
        out.append(("A syncs", sync(a, "i-a", r.generation_id,
                                    [(a, _assignment(topic, [0, 1, 2, 3]))])))
        rs = _hb(c, group, "s-1", 0, instance_id="i-s", rebalance_timeout_ms=30000,
                 subscribed_topic_names=[topic], topic_partitions=[])
        out.append(("S joins", rs.error_code, rs.member_epoch, kind()))
        # A restarts: a JoinGroup with no member id and its instance id
        r = join("", "i-a")
        a2 = r.member_id
        out.append(("A restarts", r.error_code, r.generation_id, a2 != a, r.leader,
                    r.protocol_name))
        out.append(("old A heartbeat", heartbeat(a, "i-a", r.generation_id)))
        out.append(("new A syncs", sync(a2, "i-a", r.generation_id, [])))
        out.append(describe())
        # S's instance restarts as a classic consumer: the group is classic again
        r = join("", "i-s")
        s2 = r.member_id
        out.append(("S restarts classic", r.error_code, r.generation_id, r.leader,
                    r.protocol_name, kind()))
        generation = r.generation_id
        out.append(("new S syncs", sync(s2, "i-s", generation, [])))
        out.append(("new A heartbeat", heartbeat(a2, "i-a", generation)))
        out.append(("old S heartbeat", _hb(c, group, "s-1", rs.member_epoch,
                                           instance_id="i-s").error_code))
        out.append(("kind", kind()))
    return out


def group_records(bootstrap: str, group: str) -> list:
    """The group's records in __consumer_offsets, in order, normalised: record type, member
    (named by first appearance), tombstone or the value's meaning (epochs, partitions,
    classic metadata) without ids, timestamps or Kafka's optional hashes."""
    from confluent_kafka import Consumer, TopicPartition

    from pykafkad.coordinator.consumer_group import records as cgr
    from pykafkad.coordinator.consumer_group.group import ConsumerGroupMember
    from pykafkad.coordinator.records import decode_group_metadata_value

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "records-reader-" + group,
                  "enable.auto.commit": False, "enable.partition.eof": True})
    try:
        parts = c.list_topics("__consumer_offsets", timeout=10).topics["__consumer_offsets"]
        c.assign([TopicPartition("__consumer_offsets", p, 0) for p in parts.partitions])
        pending = set(parts.partitions)
        raw = []
        deadline = time.monotonic() + 30
        while pending and time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is None:
                continue
            if m.error():
                pending.discard(m.partition())
                continue
            raw.append((m.offset(), m.key(), m.value()))
    finally:
        c.close()
    names: dict[str, str] = {}

    def who(member_id):
        return names.setdefault(member_id, f"m{len(names)}")

    out = []
    for _offset, key, value in sorted(raw, key=lambda r: r[0]):
        kind = int.from_bytes(key[:2], "big")
        if kind == 2:
            if not key[4:].decode(errors="replace") == group:
                continue
            if value is None:
                out.append(("classic", None))
                continue
            v = decode_group_metadata_value(value)
            out.append(("classic", v.protocol_type, v.generation, v.protocol,
                        v.leader and who(v.leader),
                        [(who(m.member_id), m.session_timeout, _read_assignment(m.assignment))
                         for m in v.members]))
            continue
        if kind not in cgr.TYPES:
            continue
        _kind, gid, member_id = cgr.decode_key(key)
        if gid != group:
            continue
        member = who(member_id) if member_id is not None else None
        if value is None:
            out.append((kind, member, None))
        elif kind in (cgr.GROUP_METADATA, cgr.TARGET_ASSIGNMENT_METADATA):
            out.append((kind, member, cgr.read_epoch(value)))
        elif kind == cgr.TARGET_ASSIGNMENT_MEMBER:
            out.append((kind, member, sorted(p for ps in cgr.read_target_member(value).values()
                                             for p in ps)))
        elif kind == cgr.MEMBER_METADATA:
            m = ConsumerGroupMember(member_id)
            cgr.read_member(m, value)
            out.append((kind, member, m.instance_id, m.subscribed_topic_names,
                        m.rebalance_timeout_ms, None if m.classic is None else
                        (m.classic.session_timeout_ms, [n for n, _ in m.classic.protocols])))
        elif kind == cgr.CURRENT_MEMBER_ASSIGNMENT:
            m = ConsumerGroupMember(member_id)
            cgr.read_current_assignment(m, value)
            out.append((kind, member, m.member_epoch, m.previous_member_epoch, m.state,
                        sorted(p for ps in m.assigned.values() for p in ps),
                        sorted(p for ps in m.pending_revocation.values() for p in ps)))
        else:
            out.append((kind, member, "value"))
    # records of one kind written together (one per member) come in the order of a hash map
    # on Kafka: each such run is compared sorted
    runs: list[list] = []
    for line in out:
        if runs and runs[-1][0][0] == line[0]:
            runs[-1].append(line)
        else:
            runs.append([line])
    return [line for run in runs for line in sorted(run, key=repr)]
