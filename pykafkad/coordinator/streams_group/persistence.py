"""A streams group as the set of records that describe it in __consumer_offsets, and back.

After each change the coordinator writes only the records whose value changed, and
tombstones for the ones that went away (a member left, the group was deleted), so the log
holds what Kafka's holds for the group; on load the latest record per key rebuilds the
group (Kafka's replay of StreamsGroup* records)."""

from __future__ import annotations

from pykafkad.coordinator.streams_group import records as rec
from pykafkad.coordinator.streams_group.assignor import TaskSets
from pykafkad.coordinator.streams_group.group import StreamsGroup, StreamsMember
from pykafkad.coordinator.streams_group.topology import InternalTopic, Subtopology, Topology


def _by_sub(tasks) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for sub, p in sorted(tasks):
        out.setdefault(sub, []).append(p)
    return out


def _flat(by_sub: dict[str, list[int]]) -> set:
    return {(s, p) for s, ps in by_sub.items() for p in ps}


def _sets(t: TaskSets) -> tuple:
    return _by_sub(t.active), _by_sub(t.standby), _by_sub(t.warmup)


def _task_sets(three) -> TaskSets:
    return TaskSets(_flat(three[0]), _flat(three[1]), _flat(three[2]))


def _topic(t: InternalTopic) -> dict:
    return {"name": t.name, "partitions": t.partitions,
            "replication_factor": t.replication_factor, "configs": t.configs}


def snapshot(group: StreamsGroup) -> dict[bytes, bytes]:
    gid = group.group_id
    out = {rec.encode_key(rec.METADATA, gid): rec.metadata_value(group.group_epoch)}
    if group.topology is not None:
        out[rec.encode_key(rec.TOPOLOGY, gid)] = rec.topology_value({
            "epoch": group.topology.epoch,
            "subtopologies": [{
                "id": s.subtopology_id, "source_topics": s.source_topics,
                "source_topic_regex": [], "changelog": [_topic(t) for t in s.changelog_topics],
                "repartition_sinks": s.repartition_sink_topics,
                "repartition_sources": [_topic(t) for t in s.repartition_source_topics],
                "copartition_groups": [(src, [], rep) for src, rep in s.copartition_groups]}
                for s in group.topology.subtopologies]})
    for m in group.members.values():
        out[rec.encode_key(rec.MEMBER_METADATA, gid, m.member_id)] = rec.member_metadata_value({
            "instance_id": m.instance_id, "rack_id": m.rack_id, "client_id": m.client_id,
            "client_host": m.client_host, "rebalance_timeout_ms": m.rebalance_timeout_ms,
            "topology_epoch": m.topology_epoch, "process_id": m.process_id,
            "user_endpoint": m.user_endpoint, "client_tags": m.client_tags})
        out[rec.encode_key(rec.CURRENT_MEMBER_ASSIGNMENT, gid, m.member_id)] = \
            rec.current_assignment_value(m.member_epoch, m.previous_member_epoch, m.state,
                                         _sets(m.assigned), _sets(m.pending_revocation))
    for mid, tasks in group.target.items():
        out[rec.encode_key(rec.TARGET_ASSIGNMENT_MEMBER, gid, mid)] = \
            rec.tasks_value(*_sets(tasks))
    out[rec.encode_key(rec.TARGET_ASSIGNMENT_METADATA, gid)] = \
        rec.target_assignment_metadata_value(group.target_epoch)
    return out


def rebuild(group_id: str, records: dict[bytes, bytes], created_ms: int) -> StreamsGroup | None:
    """The group the latest records describe; None when its metadata record is gone."""
    group = StreamsGroup(group_id, created_ms)
    found = False
    for key, value in records.items():
        kind, _, mid = rec.decode_key(key)
        if kind == rec.METADATA:
            group.group_epoch = rec.read_metadata_value(value)["epoch"]
            found = True
        elif kind == rec.TOPOLOGY:
            t = rec.read_topology_value(value)

            def topics(xs):
                return [InternalTopic(x["name"], x["partitions"], x["replication_factor"],
                                      x["configs"]) for x in xs]
            group.topology = Topology(t["epoch"], [Subtopology(
                s["id"], s["source_topics"], s["repartition_sinks"], topics(s["changelog"]),
                topics(s["repartition_sources"]),
                [(list(g[0]), list(g[2])) for g in s["copartition_groups"]])
                for s in t["subtopologies"]])
        elif kind == rec.TARGET_ASSIGNMENT_METADATA:
            group.target_epoch = rec.read_target_assignment_metadata_value(value)
        elif kind == rec.TARGET_ASSIGNMENT_MEMBER:
            group.target[mid] = _task_sets(rec.read_tasks_value(value))
        elif kind in (rec.MEMBER_METADATA, rec.CURRENT_MEMBER_ASSIGNMENT):
            m = group.members.setdefault(mid, StreamsMember(mid, "", ""))
            if kind == rec.MEMBER_METADATA:
                for name, v in rec.read_member_metadata_value(value).items():
                    setattr(m, name, v)
            else:
                a = rec.read_current_assignment_value(value)
                m.member_epoch = a["member_epoch"]
                m.previous_member_epoch = a["previous_member_epoch"]
                m.state = a["state"]
                m.assigned = _task_sets(a["assigned"])
                m.pending_revocation = _task_sets(a["pending"])
    return group if found else None
