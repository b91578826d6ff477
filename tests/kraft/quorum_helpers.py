"""What the KRaft tests read from a running cluster: a node's metadata log replayed into a
MetadataImage (the project's own decoder; Kafka's kafka-dump-log confirms the same records),
the quorum's leader by DescribeQuorum, and CreateTopics sent straight to the controllers
(raw frames: Kafka 4.4's Java Admin refuses createTopics through bootstrap.controllers)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path

from compat.kafka_tools import run_tool
from compat.wire_client import WireClient
from pykafkad.metadata.delta import MetadataDelta
from pykafkad.metadata.image import MetadataImage
from pykafkad.metadata.serde import decode_record
from wire.errors import ErrorCode
from wire.messages.create_topics_request import CreatableTopic, CreateTopicsRequest
from wire.messages.describe_quorum_request import (
    DescribeQuorumRequest,
    PartitionData,
    TopicData,
)
from wire.records.batch import decode_records, iter_batch_headers

METADATA_DIR = "__cluster_metadata-0"
WAIT_S = 30


def metadata_log(node) -> Path:
    return node.spec.data_dir / "data" / METADATA_DIR


def read_records(log_dir: Path) -> list:
    """The metadata records of every complete batch of the log's segments (a tail being
    written is skipped)."""
    out = []
    for segment in sorted(log_dir.glob("*.log")):
        data = segment.read_bytes()
        try:
            for pos, header in iter_batch_headers(data):
                if header.is_control or pos + header.size > len(data):
                    continue
                out += [decode_record(r.value)[0] for r in decode_records(data, pos)]
        except ValueError:
            pass  # a torn tail
    return out


def record_offsets(log_dir: Path) -> list[int]:
    """The offsets of read_records' records, in the same order."""
    out = []
    for segment in sorted(log_dir.glob("*.log")):
        data = segment.read_bytes()
        try:
            for pos, header in iter_batch_headers(data):
                if header.is_control or pos + header.size > len(data):
                    continue
                out += range(header.base_offset, header.last_offset + 1)
        except ValueError:
            pass
    return out


def read_image(log_dir: Path) -> MetadataImage:
    return MetadataDelta().replay_all(read_records(log_dir)).apply()


def broker_states(node) -> dict[int, bool]:
    """{broker id: fenced} as the node's metadata log says."""
    return {b: reg.fenced for b, reg in read_image(metadata_log(node)).cluster.items()}


def wait_for(condition: Callable[[], object], what: str, timeout: float = WAIT_S):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def describe_quorum(host: str, port: int):
    with WireClient(f"{host}:{port}", timeout=5) as c:
        r = c.request(55, 2, DescribeQuorumRequest(topics=[TopicData(
            topic_name="__cluster_metadata", partitions=[PartitionData(partition_index=0)])]))
    return r.topics[0].partitions[0]


def active_controller(nodes) -> tuple[int, int] | None:
    """(leader id, epoch) as the leader itself answers DescribeQuorum, else None."""
    for n in nodes:
        if not n.running:
            continue
        try:
            p = describe_quorum(n.host, n.controller_port)
        except OSError:
            continue
        if p.error_code == ErrorCode.NONE and p.leader_id == n.node_id:
            return p.leader_id, p.leader_epoch
    return None


def create_topic_on_controller(host: str, port: int, name: str, partitions: int, rf: int,
                               *, validate_only: bool = False):
    with WireClient(f"{host}:{port}") as c:
        r = c.request(19, 7, CreateTopicsRequest(
            topics=[CreatableTopic(name=name, num_partitions=partitions, replication_factor=rf,
                                   assignments=[], configs=[])],
            timeout_ms=30000, validate_only=validate_only))
    return r.topics[0]


def dump_metadata_log(node) -> list[dict]:
    """kafka-dump-log --cluster-metadata-decoder on the node's first segment: its records."""
    segment = metadata_log(node) / "00000000000000000000.log"
    out = run_tool("kafka-dump-log", ["--cluster-metadata-decoder", "--files", str(segment)],
                   check=True).stdout
    assert "isvalid: false" not in out
    return [json.loads(m) for m in re.findall(r"payload: (\{\"type\".*\})", out)]


def parse_status(out: str) -> dict[str, str]:
    return dict(re.split(r":\s+", line, maxsplit=1) for line in out.splitlines()
                if re.match(r"^\w+:\s", line))


def parse_table(out: str) -> tuple[list[str], list[list[str]]]:
    rows = [[c.strip() for c in line.split("\t") if c.strip()] for line in out.splitlines()
            if line.strip()]
    return rows[0], rows[1:]
