"""Streams groups (KIP-1071) end to end: a real Kafka Streams application on
``group.protocol=streams`` (compat/streams_app.py: word count with a repartition topic and a
state store, two instances sharing the tasks, one stopping and the other taking over), run
against pykafkad and against Apache Kafka 4.4 with the same results (the group's
streams.num.standby.replicas=1 gives standby tasks); kafka-streams-groups
prints the same; the admin views (ListGroups, DescribeGroups, StreamsGroupDescribe) and
heartbeat refusals answer as Kafka's."""

from __future__ import annotations

import re
import time

import pytest

import wire.messages.streams_group_heartbeat_request as hb
from compat import streams_app
from compat.wire_client import WireClient
from tests.integration.clients import create_topic, needs_java
from wire.messages.describe_groups_request import DescribeGroupsRequest
from wire.messages.find_coordinator_request import FindCoordinatorRequest
from wire.messages.list_groups_request import ListGroupsRequest
from wire.messages.offset_commit_request import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from wire.messages.offset_delete_request import (
    OffsetDeleteRequest,
    OffsetDeleteRequestPartition,
    OffsetDeleteRequestTopic,
)
from wire.messages.offset_fetch_request import OffsetFetchRequest, OffsetFetchRequestGroup
from wire.messages.streams_group_describe_request import StreamsGroupDescribeRequest


def _normalize_tool(out: dict[str, str], prefix: str) -> dict:
    """kafka-streams-groups output with the run's ids (member, process, client), epochs and
    the coordinator's address replaced, rows sorted (Kafka prints them in hash order)."""
    def rows(text: str) -> list[list[str]]:
        text = text.replace(prefix, "APP")
        return [line.split() for line in text.strip().splitlines()]
    offsets = rows(out["offsets"])
    state = rows(out["state"])
    members = rows(out["members"])
    for row in members[1:]:
        # GROUP TARGET-EPOCH TOPOLOGY-EPOCH MEMBER PROTOCOL EPOCH PROCESS CLIENT-ID ASSIGNMENTS
        row[1] = row[3] = row[5] = row[6] = row[7] = "*"
    return {"offsets": [offsets[0], *sorted(offsets[1:])],
            "state": [state[0], [c for i, c in enumerate(state[1]) if i not in (1, 2)]],
            "members": members}


@needs_java
def test_kafka_streams_word_count_matches_kafka(broker, reference_kafka):
    reason = streams_app.unavailable()
    if reason:
        pytest.skip(reason)
    seen = {}
    for name, bootstrap in (("pykafkad", broker.bootstrap_servers),
                            ("kafka", reference_kafka.bootstrap_servers)):
        seen[name] = streams_app.word_count_scenario(bootstrap, "streams-wc", with_tools=True,
                                                     standby_replicas=1)
    ours, theirs = seen["pykafkad"], seen["kafka"]
    want_1 = streams_app.expected_counts(streams_app.BATCH_1)
    want_2 = streams_app.expected_counts(streams_app.BATCH_1 + streams_app.BATCH_2)
    assert ours["counts_1"] == theirs["counts_1"] == want_1
    assert ours["counts_2"] == theirs["counts_2"] == want_2
    for view in ("two_members", "one_member"):
        assert ours[view] == theirs[view], view
    # two instances split the four tasks (2 subtopologies x 2 partitions) evenly; the
    # stateful subtopology's tasks (the counts) have a standby on the other instance
    assert [len(t) for t in ours["two_members"]["active_tasks"]] == [2, 2]
    assert ours["two_members"]["standby_tasks"] == [[("1", 0)], [("1", 1)]]
    # per member, on both: 2 active and 1 standby task, never a standby of its own active
    # task, no warm-up tasks (Kafka 4.4 makes none); the one left runs all four, no standby
    assert ours["two_members"]["shape"] == theirs["two_members"]["shape"] == [(2, 1, 0)] * 2
    assert ours["one_member"]["shape"] == theirs["one_member"]["shape"] == [(4, 0, 0)]
    assert ours["two_members"]["warmup_tasks"] == theirs["two_members"]["warmup_tasks"] == 0
    assert _normalize_tool(ours["tools"], "streams-wc") == \
        _normalize_tool(theirs["tools"], "streams-wc")


def _join(c: WireClient, group: str, **changes):
    fields = dict(
        group_id=group, member_id="m1", member_epoch=0, endpoint_information_epoch=0,
        rebalance_timeout_ms=30000, topology=hb.Topology(epoch=0, subtopologies=[hb.Subtopology(
            subtopology_id="0", source_topics=["streams-src"], source_topic_regex=[],
            state_changelog_topics=[hb.TopicInfo(name=f"{group}-store-changelog", partitions=0,
                                                 replication_factor=0, topic_configs=[])],
            repartition_sink_topics=[], repartition_source_topics=[], copartition_groups=[])]),
        active_tasks=[], standby_tasks=[], warmup_tasks=[], process_id="p1",
        user_endpoint=hb.Endpoint(host="localhost", port=7070), client_tags=[],
        task_offsets=[], task_end_offsets=[])
    fields.update(changes)
    r = c.send(hb.StreamsGroupHeartbeatRequest(**fields), 1)
    return (r.error_code, r.error_message, r.member_epoch,
            [(s.status_code, re.sub(r"streams-[a-z]+", "G", s.status_detail))
             for s in r.status])


def _admin_views(bootstrap: str) -> dict:
    create_topic(bootstrap, "streams-src", 3)
    out: dict = {}
    with WireClient(bootstrap) as c:
        deadline = time.monotonic() + 60
        while c.send(FindCoordinatorRequest(key_type=0, coordinator_keys=["streams-a"]),
                     6).coordinators[0].error_code:
            assert time.monotonic() < deadline, "no group coordinator"
            time.sleep(0.2)
        out["join"] = _join(c, "streams-a")
        # the coordinator may still be loading; Kafka answers -1 until it sees streams-src
        while out["join"][0] in (-1, 14, 15, 16):
            assert time.monotonic() < deadline, f"the group coordinator answers {out['join']}"
            time.sleep(0.2)
            out["join"] = _join(c, "streams-a")
        out["missing_source"] = _join(c, "streams-b", topology=hb.Topology(epoch=0, subtopologies=[
            hb.Subtopology(subtopology_id="0", source_topics=["streams-nosuch"],
                           source_topic_regex=[], state_changelog_topics=[],
                           repartition_sink_topics=[], repartition_source_topics=[],
                           copartition_groups=[])]))
        out["missing_source_no_endpoint"] = _join(
            c, "streams-c", user_endpoint=None, topology=hb.Topology(epoch=0, subtopologies=[
                hb.Subtopology(subtopology_id="0", source_topics=["streams-nosuch"],
                               source_topic_regex=[], state_changelog_topics=[],
                               repartition_sink_topics=[], repartition_source_topics=[],
                               copartition_groups=[])]))
        out["refused"] = [
            _join(c, "streams-a", member_epoch=3),
            _join(c, "streams-a", member_id=""),
            _join(c, "streams-a", rebalance_timeout_ms=-1),
            _join(c, "streams-a", active_tasks=None),
            _join(c, "streams-a", member_epoch=-3, topology=None),
            _join(c, "streams-a", member_epoch=4, topology=None, member_id="x"),
            _join(c, "streams-a", topology=hb.Topology(epoch=0, subtopologies=[])),
            _join(c, "streams-d", topology=hb.Topology(epoch=0, subtopologies=[hb.Subtopology(
                subtopology_id="0", source_topics=[], source_topic_regex=["streams-.*"],
                state_changelog_topics=[], repartition_sink_topics=[],
                repartition_source_topics=[], copartition_groups=[])])),
            _join(c, "streams-d", member_epoch=1, topology=None),
        ]
        deleted = c.send(OffsetDeleteRequest(group_id="streams-a", topics=[
            OffsetDeleteRequestTopic(name=t, partitions=[OffsetDeleteRequestPartition(
                partition_index=0)]) for t in ("streams-src", "streams-other")]), 0)
        out["offset_delete"] = sorted((t.name, [p.error_code for p in t.partitions])
                                      for t in deleted.topics)
        out["offset_fetch"] = [c.send(OffsetFetchRequest(groups=[OffsetFetchRequestGroup(
            group_id="streams-a", member_id=member, member_epoch=epoch, topics=None)],
            require_stable=True), 9).groups[0].error_code
            for member, epoch in (("m1", 1), ("m1", 5), ("zz", 1), (None, -1))]
        listed = c.send(ListGroupsRequest(states_filter=[], types_filter=["streams"]), 5)
        out["listed"] = sorted((g.group_id, g.protocol_type, g.group_state, g.group_type)
                               for g in listed.groups if g.group_id in ("streams-a", "streams-b",
                                                                        "streams-c"))
        # the session's reference broker holds other tests' groups: only this test's count
        out["listed_classic"] = [g.group_id for g in c.send(ListGroupsRequest(
            states_filter=[], types_filter=["classic"]), 5).groups
            if g.group_id in ("streams-a", "streams-b", "streams-c")]
        for v in (5, 6):
            g = c.send(DescribeGroupsRequest(groups=["streams-a"],
                                             include_authorized_operations=False), v).groups[0]
            out[f"describe_groups_v{v}"] = (g.error_code, g.error_message, g.group_state)
        d = c.send(StreamsGroupDescribeRequest(group_ids=["streams-a", "streams-none"],
                                               include_authorized_operations=False), 0).groups
        out["streams_describe"] = [
            (g.error_code, g.error_message, g.group_state,
             [(m.member_id, m.member_epoch, m.process_id, m.user_endpoint.port
               if m.user_endpoint else None) for m in g.members]) for g in d]
    return out


@needs_java
def test_streams_group_admin_views_match_kafka(broker, reference_kafka):
    ours = _admin_views(broker.bootstrap_servers)
    theirs = _admin_views(reference_kafka.bootstrap_servers)
    assert ours == theirs
    assert ours["join"][3][1][0] == 3  # MISSING_INTERNAL_TOPICS
    assert ours["offset_delete"] == [("streams-other", [3]), ("streams-src", [86])]
    assert ours["offset_fetch"] == [0, 113, 25, 0]  # STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID
    assert ours["missing_source"][0] == -1  # Kafka 4.4's answer (with a user endpoint)
    assert ours["missing_source_no_endpoint"][3][1] == (1, "Source topics G are missing.")
    assert ours["listed"] == [("streams-a", "streams", "NotReady", "streams"),
                              ("streams-c", "streams", "NotReady", "streams")]


def _describe_view(bootstrap: str) -> tuple:
    g = streams_app.describe(bootstrap, "streams-a")
    return (g.error_code, g.group_state, g.group_epoch, g.assignment_epoch,
            g.topology.epoch if g.topology else None,
            sorted((m.member_id, m.member_epoch, m.process_id, m.user_endpoint.port,
                    [(t.subtopology_id, list(t.partitions)) for t in m.assignment.active_tasks])
                   for m in g.members))


@needs_java
def test_streams_group_records_survive_a_restart_and_kafka_reads_them(tmp_path):
    """The group's records are written in Kafka's schemas (kafka-dump-log --offsets-decoder
    decodes every one) and a restarted broker serves the same group, members and tasks."""
    from compat.kafka_tools import run_tool
    from pykafkad.testing import run_broker

    config = {"group.streams.initial.rebalance.delay.ms": "0"}
    with run_broker(tmp_path / "data", config=config) as b:
        create_topic(b.bootstrap_servers, "streams-src", 3)
        with WireClient(b.bootstrap_servers) as c:
            deadline = time.monotonic() + 60
            while c.send(FindCoordinatorRequest(key_type=0, coordinator_keys=["streams-a"]),
                         6).coordinators[0].error_code:  # creates __consumer_offsets
                assert time.monotonic() < deadline, "no group coordinator"
                time.sleep(0.2)
            joined = _join(c, "streams-a")
            while joined[0] in (14, 15, 16):
                assert time.monotonic() < deadline, joined
                time.sleep(0.2)
                joined = _join(c, "streams-a")
            while True:  # heartbeats until the internal topic exists and tasks are assigned
                r = c.send(hb.StreamsGroupHeartbeatRequest(
                    group_id="streams-a", member_id="m1", member_epoch=joined[2],
                    endpoint_information_epoch=0), 1)
                assert r.error_code == 0
                if r.active_tasks:
                    break
                assert time.monotonic() < deadline, r.status
                time.sleep(0.2)
            committed = c.send(OffsetCommitRequest(
                group_id="streams-a", generation_id_or_member_epoch=r.member_epoch,
                member_id="m1", group_instance_id=None, topics=[OffsetCommitRequestTopic(
                    name="streams-src", partitions=[OffsetCommitRequestPartition(
                        partition_index=1, committed_offset=42, committed_leader_epoch=-1,
                        committed_metadata="")])]), 9)
            assert committed.topics[0].partitions[0].error_code == 0
        before = _describe_view(b.bootstrap_servers)
    assert before[1] == "Stable" and before[5][0][4] == [("0", [0, 1, 2])]
    with run_broker(tmp_path / "data", config=config) as b:
        deadline = time.monotonic() + 60
        while (after := _describe_view(b.bootstrap_servers))[0] in (14, 15, 16):
            assert time.monotonic() < deadline, after
            time.sleep(0.2)
        assert after == before
        with WireClient(b.bootstrap_servers) as c:  # the offsets stay the streams group's
            listed = c.send(ListGroupsRequest(states_filter=[], types_filter=[]), 5).groups
            assert [(g.group_id, g.group_type) for g in listed] == [("streams-a", "streams")]
            fetched = c.send(OffsetFetchRequest(groups=[OffsetFetchRequestGroup(
                group_id="streams-a", member_id="m1", member_epoch=before[5][0][1],
                topics=None)], require_stable=True), 9).groups[0]
            assert [(t.name, [(p.partition_index, p.committed_offset) for p in t.partitions])
                    for t in fetched.topics] == [("streams-src", [(1, 42)])]
    segments = [str(p) for p in (tmp_path / "data").glob("__consumer_offsets-*/*.log")
                if p.stat().st_size > 0]
    out = run_tool("kafka-dump-log", ["--offsets-decoder", "--print-data-log", "--files",
                                      ",".join(segments)], check=True).stdout
    types = set(re.findall(r'key: \{"type":"(\d+)"', out))
    assert {"17", "19", "20", "21", "22", "23"} <= types, out[-2000:]
    assert "Error at offset" not in out, out[-2000:]
    assert '"userEndpoint":{"host":"localhost","port":7070}' in out
