"""A streams group's records in __consumer_offsets, in Kafka 4.4's schemas (group-coordinator
module; record types 17 and 19-23, every value at version 0, flexible): the group epoch
(StreamsGroupMetadata), its topology, each member's metadata, the target assignment (its
epoch and each member's tasks) and each member's current assignment.  Keys carry the record
type as their int16 version, as every coordinator record does; a null value is a tombstone.
Tagged fields Kafka may add are skipped when read and never written (their defaults apply)."""

from __future__ import annotations

from wire.primitives import Reader, Writer

METADATA = 17
MEMBER_METADATA = 19
TARGET_ASSIGNMENT_METADATA = 20
TARGET_ASSIGNMENT_MEMBER = 21
CURRENT_MEMBER_ASSIGNMENT = 22
TOPOLOGY = 23
RECORD_TYPES = frozenset({METADATA, MEMBER_METADATA, TARGET_ASSIGNMENT_METADATA,
                          TARGET_ASSIGNMENT_MEMBER, CURRENT_MEMBER_ASSIGNMENT, TOPOLOGY})
#: keys of these types name a member after the group
_MEMBER_KEYED = frozenset({MEMBER_METADATA, TARGET_ASSIGNMENT_MEMBER, CURRENT_MEMBER_ASSIGNMENT})

# StreamsGroupMember.MemberState values
MEMBER_STATES = {"STABLE": 1, "UNREVOKED_TASKS": 2, "UNRELEASED_TASKS": 3, "UNKNOWN": 127}
MEMBER_STATE_NAMES = {v: k for k, v in MEMBER_STATES.items()}


def record_type(key: bytes) -> int:
    return Reader(key).int16()


def encode_key(kind: int, group_id: str, member_id: str | None = None) -> bytes:
    w = Writer()
    w.int16(kind)
    w.string(group_id)
    if kind in _MEMBER_KEYED:
        w.string(member_id)
    return w.getvalue()


def decode_key(key: bytes) -> tuple[int, str, str | None]:
    r = Reader(key)
    kind = r.int16()
    group_id = r.string()
    return kind, group_id, r.string() if kind in _MEMBER_KEYED else None


# -- primitives ------------------------------------------------------------------------------

def _skip_tags(r: Reader) -> None:
    for _ in range(r.uvarint()):
        r.uvarint()
        r.raw(r.uvarint())


def _array(r: Reader, item) -> list:
    n = r.array_length(True)
    return [] if n <= 0 else [item(r) for _ in range(n)]


def _w_array(w: Writer, items, write) -> None:
    items = list(items)
    w.array_length(len(items), True)
    for x in items:
        write(w, x)


def _w_str(w: Writer, s) -> None:
    w.compact_string(s)


def _r_str(r: Reader) -> str:
    return r.compact_string()


def _w_int8(w: Writer, v: int) -> None:
    w.raw(bytes([v & 0xFF]))


def _r_int8(r: Reader) -> int:
    v = r.raw(1)[0]
    return v - 256 if v > 127 else v


def _w_tasks(w: Writer, tasks: dict[str, list[int]]) -> None:
    def one(w2: Writer, item):
        sub, parts = item
        _w_str(w2, sub)
        _w_array(w2, parts, lambda w3, p: w3.int32(p))
        w2.uvarint(0)
    _w_array(w, sorted(tasks.items()), one)


def _r_tasks(r: Reader) -> dict[str, list[int]]:
    def one(r2: Reader):
        sub = _r_str(r2)
        parts = _array(r2, lambda r3: r3.int32())
        _skip_tags(r2)
        return sub, parts
    return dict(_array(r, one))


def _w_kvs(w: Writer, kvs: dict[str, str]) -> None:
    def one(w2: Writer, kv):
        _w_str(w2, kv[0])
        _w_str(w2, kv[1])
        w2.uvarint(0)
    _w_array(w, sorted(kvs.items()), one)


def _r_kvs(r: Reader) -> dict[str, str]:
    def one(r2: Reader):
        k, v = _r_str(r2), _r_str(r2)
        _skip_tags(r2)
        return k, v
    return dict(_array(r, one))


def _value(write) -> bytes:
    w = Writer()
    w.int16(0)
    write(w)
    w.uvarint(0)
    return w.getvalue()


def _reader(value: bytes) -> Reader:
    r = Reader(value)
    r.int16()  # version 0
    return r


# -- values ----------------------------------------------------------------------------------

def metadata_value(epoch: int, metadata_hash: int = 0) -> bytes:
    return _value(lambda w: (w.int32(epoch), w.int64(metadata_hash)))


def read_metadata_value(value: bytes) -> dict:
    r = _reader(value)
    return {"epoch": r.int32(), "metadata_hash": r.int64()}


def topology_value(t: dict) -> bytes:
    """``t``: {"epoch", "subtopologies": [{"id", "source_topics", "source_topic_regex",
    "changelog": [topic], "repartition_sinks", "repartition_sources": [topic],
    "copartition_groups": [(sources, regexes, repartition_sources)]}]}; a topic is
    {"name", "partitions", "replication_factor", "configs"}."""
    def topic(w: Writer, x):
        _w_str(w, x["name"])
        w.int32(x["partitions"])
        w.int16(x["replication_factor"])
        _w_kvs(w, x["configs"])
        w.uvarint(0)

    def group(w: Writer, g):
        for idx in g:
            _w_array(w, idx, lambda w2, i: w2.int16(i))
        w.uvarint(0)

    def sub(w: Writer, s):
        _w_str(w, s["id"])
        _w_array(w, s["source_topics"], _w_str)
        _w_array(w, s["source_topic_regex"], _w_str)
        _w_array(w, s["changelog"], topic)
        _w_array(w, s["repartition_sinks"], _w_str)
        _w_array(w, s["repartition_sources"], topic)
        _w_array(w, s["copartition_groups"], group)
        w.uvarint(0)
    return _value(lambda w: (w.int32(t["epoch"]), _w_array(w, t["subtopologies"], sub)))


def read_topology_value(value: bytes) -> dict:
    r = _reader(value)

    def topic(r2: Reader):
        out = {"name": _r_str(r2), "partitions": r2.int32(),
               "replication_factor": r2.int16(), "configs": _r_kvs(r2)}
        _skip_tags(r2)
        return out

    def group(r2: Reader):
        out = tuple(_array(r2, lambda r3: r3.int16()) for _ in range(3))
        _skip_tags(r2)
        return out

    def sub(r2: Reader):
        out = {"id": _r_str(r2), "source_topics": _array(r2, _r_str),
               "source_topic_regex": _array(r2, _r_str), "changelog": _array(r2, topic),
               "repartition_sinks": _array(r2, _r_str),
               "repartition_sources": _array(r2, topic),
               "copartition_groups": _array(r2, group)}
        _skip_tags(r2)
        return out
    return {"epoch": r.int32(), "subtopologies": _array(r, sub)}


def member_metadata_value(m: dict) -> bytes:
    def write(w: Writer):
        w.compact_string(m["instance_id"])
        w.compact_string(m["rack_id"])
        _w_str(w, m["client_id"])
        _w_str(w, m["client_host"])
        w.int32(m["rebalance_timeout_ms"])
        w.int32(m["topology_epoch"])
        _w_str(w, m["process_id"])
        if m["user_endpoint"] is None:  # a nullable struct: a presence byte first
            _w_int8(w, -1)
        else:
            _w_int8(w, 1)
            _w_str(w, m["user_endpoint"][0])
            w.uint16(m["user_endpoint"][1])
            w.uvarint(0)
        _w_kvs(w, m["client_tags"])
    return _value(write)


def read_member_metadata_value(value: bytes) -> dict:
    r = _reader(value)
    out = {"instance_id": r.compact_nullable_string(), "rack_id": r.compact_nullable_string(),
           "client_id": _r_str(r), "client_host": _r_str(r),
           "rebalance_timeout_ms": r.int32(), "topology_epoch": r.int32(),
           "process_id": _r_str(r)}
    out["user_endpoint"] = None
    if _r_int8(r) >= 0:
        out["user_endpoint"] = (_r_str(r), r.uint16())
        _skip_tags(r)
    out["client_tags"] = _r_kvs(r)
    return out


def target_assignment_metadata_value(epoch: int) -> bytes:
    return _value(lambda w: w.int32(epoch))


def read_target_assignment_metadata_value(value: bytes) -> int:
    return _reader(value).int32()


def tasks_value(active, standby, warmup) -> bytes:
    return _value(lambda w: (_w_tasks(w, active), _w_tasks(w, standby), _w_tasks(w, warmup)))


def read_tasks_value(value: bytes) -> tuple[dict, dict, dict]:
    r = _reader(value)
    return _r_tasks(r), _r_tasks(r), _r_tasks(r)


def current_assignment_value(member_epoch: int, previous_epoch: int, state: str,
                             assigned: tuple, pending: tuple) -> bytes:
    def write(w: Writer):
        w.int32(member_epoch)
        w.int32(previous_epoch)
        _w_int8(w, MEMBER_STATES.get(state, 0))
        for tasks in (*assigned, *pending):
            _w_tasks(w, tasks)
    return _value(write)


def read_current_assignment_value(value: bytes) -> dict:
    r = _reader(value)
    out = {"member_epoch": r.int32(), "previous_member_epoch": r.int32(),
           "state": MEMBER_STATE_NAMES.get(_r_int8(r), "STABLE")}
    tasks = [_r_tasks(r) for _ in range(6)]
    out["assigned"], out["pending"] = tasks[:3], tasks[3:]
    return out
