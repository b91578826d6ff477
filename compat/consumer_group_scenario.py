"""One KIP-848 scenario, run the same way on pykafkad and on Apache Kafka: two members join a
topic's group over ConsumerGroupHeartbeat, one leaves, and the answers (errors, epochs,
assignments, ConsumerGroupDescribe, ListGroups, DescribeGroups, OffsetCommit with the member
epoch) are normalised so both brokers' transcripts can be compared line by line."""

from __future__ import annotations

import time

from compat.wire_client import WireClient
from wire.messages.consumer_group_describe_request import ConsumerGroupDescribeRequest
from wire.messages.consumer_group_heartbeat_request import (
    ConsumerGroupHeartbeatRequest,
    TopicPartitions,
)
from wire.messages.describe_groups_request import DescribeGroupsRequest
from wire.messages.find_coordinator_request import FindCoordinatorRequest
from wire.messages.list_groups_request import ListGroupsRequest
from wire.messages.metadata_request import MetadataRequest, MetadataRequestTopic
from wire.messages.offset_commit_request import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)


def _hb(c: WireClient, group: str, member: str, epoch: int, **kw):
    return c.request(68, 1, ConsumerGroupHeartbeatRequest(group_id=group, member_id=member,
                                                          member_epoch=epoch, **kw))


def _join(c, group, member, topic):
    return _hb(c, group, member, 0, rebalance_timeout_ms=30000,
               subscribed_topic_names=[topic], topic_partitions=[])


class _Owned:
    """What a member owns: the last assignment it was sent."""

    def __init__(self):
        self.last = []

    def __call__(self, assignment):
        if assignment is not None:
            self.last = [TopicPartitions(topic_id=tp.topic_id, partitions=list(tp.partitions))
                         for tp in assignment.topic_partitions]
        return self.last


def _parts(resp):
    if resp.assignment is None:
        return None
    return sorted(p for tp in resp.assignment.topic_partitions for p in tp.partitions)


def _line(what, resp, names):
    return (what, resp.error_code, resp.error_message,
            names.get(resp.member_id, resp.member_id), resp.member_epoch,
            resp.heartbeat_interval_ms, _parts(resp))


def _settled(beat, x, y, owned_by, epochs, want_x, want_y) -> bool:
    """One heartbeat each; True once x owns want_x partitions and y want_y, at one epoch."""
    beat(x)
    if y is not None:
        beat(y)

    def count(m):
        return sum(len(tp.partitions) for tp in owned_by[m].last)
    if y is None:
        return count(x) == want_x
    return count(x) == want_x and count(y) == want_y and epochs[x] == epochs[y]


def settle(condition, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the group did not settle")
        time.sleep(0.1)


def wait_for_topic(bootstrap: str, topic: str, timeout_s: float = 60) -> None:
    """Until Metadata shows the topic's partitions with leaders (Kafka's coordinator sees a
    new topic only once its metadata image has it)."""
    deadline = time.monotonic() + timeout_s
    while True:
        with WireClient(bootstrap) as c:
            md = c.request(3, 12, MetadataRequest(topics=[MetadataRequestTopic(name=topic)],
                                                  allow_auto_topic_creation=False))
        t = md.topics[0]
        if t.error_code == 0 and t.partitions and all(p.leader_id >= 0 for p in t.partitions):
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"topic {topic} not ready on {bootstrap}")
        time.sleep(0.2)


def wait_for_topic_in_groups(bootstrap: str, topic: str, timeout_s: float = 60) -> None:
    """Until a probe group's member is assigned the topic's partitions: Kafka's coordinator
    sees a new topic a moment after Metadata shows it, and a member joining before that
    would get an empty assignment (and then another epoch)."""
    deadline = time.monotonic() + timeout_s
    while True:
        group = f"probe-{topic}-{time.monotonic_ns()}"
        wait_for_coordinator(bootstrap, group)
        with WireClient(bootstrap) as c:
            r = _join(c, group, "probe", topic)
            _hb(c, group, "probe", -1)
        if r.error_code == 0 and r.assignment is not None and r.assignment.topic_partitions:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"no group coordinator sees {topic} on {bootstrap}")
        time.sleep(0.2)


def wait_for_coordinator(bootstrap: str, group: str, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        with WireClient(bootstrap) as c:
            r = c.request(10, 4, FindCoordinatorRequest(key_type=0, coordinator_keys=[group]))
            if r.coordinators[0].error_code == 0:
                d = c.request(69, 1, ConsumerGroupDescribeRequest(group_ids=[group]))
                if d.groups[0].error_code in (0, 69):  # GROUP_ID_NOT_FOUND: served
                    return
        if time.monotonic() > deadline:
            raise AssertionError(f"no coordinator for {group} on {bootstrap}")
        time.sleep(0.2)


def run(bootstrap: str, group: str, topic: str) -> list:
    """The transcript (``topic`` exists with 2 partitions)."""
    wait_for_topic(bootstrap, topic)
    wait_for_topic_in_groups(bootstrap, topic)
    wait_for_coordinator(bootstrap, group)
    a, b = "member-a-" + group, "member-b-" + group
    names = {a: "A", b: "B"}
    out: list = []
    owned_by = {a: _Owned(), b: _Owned()}
    with WireClient(bootstrap) as c:
        # bad requests
        out.append(_line("no member id", _hb(c, group, "", 0, rebalance_timeout_ms=1,
                                             subscribed_topic_names=[topic],
                                             topic_partitions=[]), names))
        out.append(_line("no rebalance timeout", _hb(c, group, a, 0,
                                                     subscribed_topic_names=[topic],
                                                     topic_partitions=[]), names))
        out.append(_line("no subscription", _hb(c, group, a, 0, rebalance_timeout_ms=1,
                                                topic_partitions=[]), names))
        out.append(_line("bad epoch", _hb(c, group, a, -3), names))
        out.append(_line("bad assignor", _hb(c, group, a, 0, rebalance_timeout_ms=1,
                                             subscribed_topic_names=[topic],
                                             server_assignor="sticky", topic_partitions=[]),
                         names))
        out.append(_line("unknown group", _hb(c, group, a, 3), names))
        # A joins and gets both partitions
        ra = _join(c, group, a, topic)
        out.append(_line("A joins", ra, names))
        out.append(_line("A unknown member", _hb(c, group, "nobody", 1), names))
        out.append(_line("A fenced (ahead)", _hb(c, group, a, ra.member_epoch + 5), names))
        ra = _hb(c, group, a, ra.member_epoch, topic_partitions=owned_by[a](ra.assignment))
        out.append(_line("A heartbeat", ra, names))
        owned_by[a](ra.assignment)
        # B joins: A gives one partition up before B gets it (the new target may wait for
        # group.consumer.assignment.interval.ms, so both heartbeat until they settle)
        rb = _join(c, group, b, topic)
        out.append(_line("B joins", rb, names))
        epochs = {a: ra.member_epoch, b: rb.member_epoch}

        def beat(member):
            r = _hb(c, group, member, epochs[member],
                    topic_partitions=owned_by[member](None))
            if r.error_code:
                raise AssertionError(f"heartbeat of {names[member]}: {r.error_code}")
            before = owned_by[member].last
            owned_by[member](r.assignment)
            epochs[member] = r.member_epoch
            return r, before

        settle(lambda: _settled(beat, a, b, owned_by, epochs, 1, 1))
        out.append(("settled", [(names[m], epochs[m] - epochs[a],
                                 sorted(p for tp in owned_by[m].last for p in tp.partitions))
                                for m in (a, b)]))
        rb = _hb(c, group, b, epochs[b], topic_partitions=owned_by[b].last)
        d = c.request(69, 1, ConsumerGroupDescribeRequest(group_ids=[group, group + "-none"],
                                                          include_authorized_operations=True))
        for g in sorted(d.groups, key=lambda g: g.group_id):
            out.append(("describe", g.error_code, g.error_message, g.group_state,
                        g.group_epoch, g.assignment_epoch, g.assignor_name,
                        g.authorized_operations,
                        sorted((names.get(m.member_id, m.member_id), m.member_epoch,
                                m.client_id, m.client_host, m.instance_id, m.rack_id,
                                tuple(m.subscribed_topic_names), m.subscribed_topic_regex,
                                tuple((tp.topic_name, tuple(tp.partitions))
                                      for tp in m.assignment.topic_partitions),
                                tuple((tp.topic_name, tuple(tp.partitions))
                                      for tp in m.target_assignment.topic_partitions),
                                m.member_type) for m in g.members)))
        # commits: the generation id is the member epoch
        for what, epoch, member in (("commit", rb.member_epoch, b),
                                    ("commit stale", rb.member_epoch - 1, b),
                                    ("commit unknown", rb.member_epoch, "nobody")):
            r = c.request(8, 9, OffsetCommitRequest(
                group_id=group, generation_id_or_member_epoch=epoch, member_id=member,
                topics=[OffsetCommitRequestTopic(name=topic, partitions=[
                    OffsetCommitRequestPartition(partition_index=0, committed_offset=0)])]))
            out.append((what, [p.error_code for t in r.topics for p in t.partitions]))
        lg = c.request(16, 5, ListGroupsRequest(types_filter=["consumer"]))
        out.append(("list consumer", lg.error_code,
                    [(g.protocol_type, g.group_state, g.group_type)
                     for g in lg.groups if g.group_id == group]))
        lg = c.request(16, 5, ListGroupsRequest(types_filter=["classic"]))
        out.append(("list classic", [g.group_id for g in lg.groups if g.group_id == group]))
        for v in (5, 6):
            dg = c.request(15, v, DescribeGroupsRequest(groups=[group]))
            g = dg.groups[0]
            out.append(("describe groups", v, g.error_code, g.error_message, g.group_state,
                        g.protocol_type, g.protocol_data, len(g.members)))
        # A leaves, B takes everything
        out.append(_line("A leaves", _hb(c, group, a, -1), names))
        out.append(_line("A leaves again", _hb(c, group, a, -1), names))
        settle(lambda: _settled(beat, b, None, owned_by, epochs, 2, 0))
        out.append(("B takes all", sorted(p for tp in owned_by[b].last for p in tp.partitions)))
        out.append(_line("B leaves", _hb(c, group, b, -1), names))
        d = c.request(69, 1, ConsumerGroupDescribeRequest(group_ids=[group]))
        g = d.groups[0]
        out.append(("describe empty", g.error_code, g.group_state, g.group_epoch,
                    g.assignment_epoch, len(g.members)))
    out.extend(_static_members(bootstrap, group + "-static", topic))
    return out


def _static_members(bootstrap: str, group: str, topic: str) -> list:
    """A static member leaves with epoch -2 and its instance id comes back as a new member."""
    wait_for_coordinator(bootstrap, group)
    names = {"s-1": "S1", "s-2": "S2"}
    out: list = []

    def static(c, member, epoch, instance="i1", **kw):
        if epoch == 0:
            kw.setdefault("rebalance_timeout_ms", 30000)
            kw.setdefault("subscribed_topic_names", [topic])
            kw.setdefault("topic_partitions", [])
        return _hb(c, group, member, epoch, instance_id=instance, **kw)

    def describe(c):
        g = c.request(69, 1, ConsumerGroupDescribeRequest(group_ids=[group])).groups[0]
        return ("describe", g.group_state, g.group_epoch, g.assignment_epoch,
                sorted((names.get(m.member_id, m.member_id), m.instance_id, m.member_epoch,
                        tuple(p for tp in m.assignment.topic_partitions for p in tp.partitions))
                       for m in g.members))

    with WireClient(bootstrap) as c:
        s1 = static(c, "s-1", 0)
        out.append(_line("S1 joins", s1, names))
        out.append(_line("S2 same instance", static(c, "s-2", 0), names))
        out.append(_line("wrong member id", static(c, "s-x", s1.member_epoch), names))
        out.append(_line("unknown instance", static(c, "s-1", s1.member_epoch, "i9"), names))
        out.append(_line("-2 without instance", _hb(c, group, "s-1", -2), names))
        out.append(_line("S1 leaves -2", static(c, "s-1", -2), names))
        out.append(describe(c))
        out.append(_line("S1 heartbeats after", static(c, "s-1", s1.member_epoch), names))
        out.append(_line("S2 takes over", static(c, "s-2", 0), names))
        out.append(describe(c))
        out.append(_line("S2 leaves -1", static(c, "s-2", -1), names))
        out.append(describe(c))
    return out
