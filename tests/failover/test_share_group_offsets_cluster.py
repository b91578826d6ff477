"""The share-group offsets admin APIs and DeleteGroups on three nodes: the group coordinator
reaches each share partition's share coordinator (the leader of the key's
__share_group_state partition, often another node) through the persister
(ReadShareGroupStateSummary, InitializeShareGroupState, DeleteShareGroupState), as Kafka's
group coordinator does.  Three groups, each coordinated by another node, read a 3-partition
topic with a librdkafka ShareConsumer; then each group's offsets are described, altered (the
leaders read the new state at the next fetch), deleted, and the groups deleted; the answers
are the same on pykafkad and on Apache Kafka 4.4 (the literals below are Kafka's)."""

from __future__ import annotations

import base64
import uuid

from confluent_kafka import AcknowledgeType
from confluent_kafka.admin import AdminClient, NewTopic

from compat.failover import FailoverTarget
from compat.wire_client import WireClient
from tests.failover.outage import wait_for
from tests.failover.share_scenario import (
    _bootstrap,
    _new_topic,
    earliest,
    poll_until,
    produce,
    share_consumer,
    topic_view,
)
from wire.messages import alter_share_group_offsets_request as alter
from wire.messages import delete_share_group_offsets_request as delete_offsets
from wire.messages import describe_share_group_offsets_request as describe
from wire.messages import read_share_group_state_summary_request as summary
from wire.messages.delete_groups_request import DeleteGroupsRequest
from wire.messages.find_coordinator_request import FindCoordinatorRequest

PARTITIONS = range(3)
RECORDS = 10


def _coordinator(bootstrap: str, key_type: int, key: str) -> tuple[int, str]:
    """(node id, "host:port") of a key's coordinator, once there is one."""
    def found():
        with WireClient(bootstrap) as w:
            (c,) = w.request(10, 6, FindCoordinatorRequest(key_type=key_type,
                                                           coordinator_keys=[key])).coordinators
        return (c.node_id, f"{c.host}:{c.port}") if c.error_code == 0 else None
    return wait_for(found, f"the coordinator of {key}")


def _groups_on_every_node(target: FailoverTarget, prefix: str) -> dict[str, tuple[int, str]]:
    """A group id per node, each coordinated by that node: {group: (node, address)}."""
    bootstrap = _bootstrap(target)
    out: dict[str, tuple[int, str]] = {}
    for i in range(200):
        group = f"{prefix}-g{i}"
        node, address = _coordinator(bootstrap, 0, group)
        if node not in {n for n, _ in out.values()}:
            out[group] = (node, address)
        if len(out) == len(target.node_ids):
            return out
    raise AssertionError(f"no group for every node: {out}")


def _describe(address: str, group: str, topic: str | None) -> list:
    topics = None if topic is None else [describe.DescribeShareGroupOffsetsRequestTopic(
        topic_name=topic, partitions=list(PARTITIONS))]
    with WireClient(address) as w:
        (g,) = w.request(90, 1, describe.DescribeShareGroupOffsetsRequest(groups=[
            describe.DescribeShareGroupOffsetsRequestGroup(group_id=group, topics=topics)
        ])).groups
    return [g.error_code] + sorted((p.partition_index, p.start_offset, p.lag, p.error_code)
                                   for t in g.topics for p in t.partitions)


def _summaries(bootstrap: str, group: str, topic_id: bytes, tid: str) -> list:
    """The stored start offset of each share partition, asked of its share coordinator."""
    out = []
    for index in PARTITIONS:
        _, address = _coordinator(bootstrap, 2, f"{group}:{tid}:{index}")
        with WireClient(address) as w:
            (p,) = w.request(87, 1, summary.ReadShareGroupStateSummaryRequest(
                group_id=group, topics=[summary.ReadStateSummaryData(topic_id=topic_id, partitions=[
                    summary.PartitionData(partition=index, leader_epoch=0)])])).results[0].partitions
        out.append((index, p.error_code, p.start_offset))
    return out


def _read(bootstrap: str, group: str, topic: str, accept_below: int | None) -> list:
    """A member reads every partition: ACCEPTs the offsets below ``accept_below`` (None:
    everything) and RELEASEs the rest (they stay to deliver).  The first offset it got of
    each partition, and how many records (None: after releases, it varies)."""
    c = share_consumer(bootstrap, group, topic)
    try:
        if accept_below is None:
            got = poll_until([c], lambda r: len(r) >= len(PARTITIONS) * (RECORDS - 2),
                             lambda m: AcknowledgeType.ACCEPT, "the records after the reset")
        else:
            got = poll_until([c], lambda r: len({(p, o) for p, o, _ in r if o < accept_below})
                             == len(PARTITIONS) * accept_below,
                             lambda m: AcknowledgeType.ACCEPT if m.offset() < accept_below
                             else AcknowledgeType.RELEASE, "the first records")
    finally:
        c.close()
    return [(index, min(o for p, o, _ in got if p == index)) for index in PARTITIONS] + [
        len(got) if accept_below is None else None]


def offsets_through_the_persister(target: FailoverTarget) -> dict:
    bootstrap = _bootstrap(target)
    prefix = f"share-off-{uuid.uuid4().hex[:6]}"
    topic, topic_id, _ = _new_topic(target, prefix)
    tid = base64.urlsafe_b64encode(topic_id).decode().rstrip("=")
    produce(bootstrap, topic, PARTITIONS, RECORDS)
    groups = _groups_on_every_node(target, prefix)
    seen: dict = {"elsewhere": 0}
    for n, (group, (node, address)) in enumerate(sorted(groups.items(), key=lambda g: g[1][0])):
        earliest(bootstrap, group)
        out = seen[f"group on node {n}"] = {}
        seen["elsewhere"] += sum(_coordinator(bootstrap, 2, f"{group}:{tid}:{i}")[0] != node
                                 for i in PARTITIONS)
        out["read"] = _read(bootstrap, group, topic, 4)
        out["described"] = _describe(address, group, None)
        out["described topic"] = _describe(address, group, topic)
        with WireClient(address) as w:
            altered = w.request(91, 0, alter.AlterShareGroupOffsetsRequest(
                group_id=group, topics=[alter.AlterShareGroupOffsetsRequestTopic(
                    topic_name=topic, partitions=[alter.AlterShareGroupOffsetsRequestPartition(
                        partition_index=i, start_offset=2) for i in PARTITIONS])]))
        out["altered"] = [altered.error_code] + sorted(
            (p.partition_index, p.error_code) for t in altered.responses for p in t.partitions)
        out["described after alter"] = _describe(address, group, topic)
        out["read after alter"] = _read(bootstrap, group, topic, None)
        out["described after read"] = _describe(address, group, topic)
        if n == 0:
            with WireClient(address) as w:
                deleted = w.request(92, 0, delete_offsets.DeleteShareGroupOffsetsRequest(
                    group_id=group, topics=[delete_offsets.DeleteShareGroupOffsetsRequestTopic(
                        topic_name=topic)]))
            out["offsets deleted"] = [deleted.error_code] + [
                r.error_code for r in deleted.responses]
            out["described after delete"] = _describe(address, group, topic)
            out["stored after delete"] = _summaries(bootstrap, group, topic_id, tid)
        with WireClient(address) as w:
            (r,) = w.request(42, 2, DeleteGroupsRequest(groups_names=[group])).results
        out["group deleted"] = r.error_code
        out["stored after group delete"] = _summaries(bootstrap, group, topic_id, tid)
    seen["elsewhere"] = seen["elsewhere"] > 0
    return seen


def test_share_group_offsets_through_the_persister(target):
    seen = offsets_through_the_persister(target)
    assert seen["elsewhere"], "no share state led away from its group coordinator"
    for n in range(3):
        out = seen[f"group on node {n}"]
        assert out["read"] == [(0, 0), (1, 0), (2, 0), None], out
        # (partition, start, lag, error): the start offset persisted with the ACCEPTs of 0-3
        # is still 0 (it moves at the next fetch), and they are counted delivered
        assert out["described"] == [0, (0, 0, 6, 0), (1, 0, 6, 0), (2, 0, 6, 0)], out
        assert out["described topic"] == out["described"], out
        assert out["altered"] == [0, (0, 0), (1, 0), (2, 0)], out
        assert out["described after alter"] == [0, (0, 2, 8, 0), (1, 2, 8, 0), (2, 2, 8, 0)], out
        assert out["read after alter"] == [(0, 2), (1, 2), (2, 2), 24], out
        assert out["described after read"] == [0, (0, 2, 0, 0), (1, 2, 0, 0), (2, 2, 0, 0)], out
        assert out["group deleted"] == 0, out
        assert out["stored after group delete"] == [(0, 0, -1), (1, 0, -1), (2, 0, -1)], out
    first = seen["group on node 0"]
    assert first["offsets deleted"] == [0, 0], first
    assert first["described after delete"] == [0, (0, -1, -1, 0), (1, -1, -1, 0), (2, -1, -1, 0)]
    assert first["stored after delete"] == [(0, 0, -1), (1, 0, -1), (2, 0, -1)], first


def lag_where_the_coordinator_has_no_replica(target: FailoverTarget) -> dict:
    """A topic of one replica a partition (each on its own node, mostly not the group
    coordinator's): the lag needs each leader's latest offset, which Kafka's group
    coordinator asks for (ListOffsets)."""
    bootstrap = _bootstrap(target)
    prefix = f"share-rf1-{uuid.uuid4().hex[:6]}"
    topic = f"{prefix}-t"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, len(PARTITIONS), 1)])[topic].result(30)
    parts = wait_for(lambda: (lambda v: v[1] if len(v[1]) == len(PARTITIONS) and all(
        leader >= 0 for leader, _ in v[1].values()) else None)(topic_view(bootstrap, topic)),
        "the topic's leaders")
    produce(bootstrap, topic, PARTITIONS, RECORDS)
    group, (node, address) = next(iter(_groups_on_every_node(target, prefix).items()))
    earliest(bootstrap, group)
    _read(bootstrap, group, topic, 4)
    return {"led elsewhere": sum(leader != node for leader, _ in parts.values()),
            "described": _describe(address, group, topic)}


def test_lag_of_partitions_the_coordinator_does_not_host(target):
    seen = lag_where_the_coordinator_has_no_replica(target)
    assert seen["led elsewhere"] >= 2, seen
    assert seen["described"] == [0, (0, 0, 6, 0), (1, 0, 6, 0), (2, 0, 6, 0)], seen
