"""Metadata log trimming (Kafka's KafkaMetadataLog.maybeClean): once a snapshot is taken
(metadata.log.max.record.bytes.between.snapshots), the snapshots before the latest one and
the log segments (metadata.log.segment.bytes; Kafka's test-only internal.metadata.log.segment.bytes here) wholly
before it are deleted while the log and
its snapshots exceed metadata.max.retention.bytes. A node that was down while its peers'
log start moved past its log end catches up through the leader's snapshot (Fetch answers
it with the snapshot id, FetchSnapshot sends it), then through the log after it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from compat.kafka_broker import kafka_config_error
from compat.kafka_tools import run_tool
from pykafkad.launcher import NodeFailedError
from pykafkad.raft import snapshots
from pykafkad.testing import run_cluster
from tests.integration.clients import WAIT_S, needs_java
from tests.kraft.test_broker_replication import active_controller, node_bootstrap, wait_for

pytestmark = needs_java

#: internal.metadata.log.segment.bytes: Kafka's test-only override (metadata.log.segment.bytes
#: is at least 8 MiB)
CONFIG = {"internal.metadata.log.segment.bytes": "2048",
          "metadata.log.max.record.bytes.between.snapshots": "4096",
          "metadata.max.retention.bytes": "1"}


def metadata_dir(cluster, node_id: int) -> Path:
    return cluster.data_dir / f"node-{node_id}" / "data" / "__cluster_metadata-0"


def log_start(cluster, node_id: int) -> int:
    """The base offset of the node's first metadata log segment."""
    return min(int(p.stem) for p in metadata_dir(cluster, node_id).glob("*.log"))


def log_end_offsets(bootstrap: str) -> dict[int, int]:
    out = run_tool("kafka-metadata-quorum", ["--bootstrap-server", bootstrap, "describe",
                                             "--replication"], check=True).stdout
    return {int(m[0]): int(m[1]) for m in re.findall(r"^(\d+)\s+\S+\s+(\d+)", out, re.M)}


def topics_on(bootstrap: str) -> set[str]:
    return set(AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=WAIT_S).topics)


def test_log_is_trimmed_and_a_lagging_node_catches_up_from_the_snapshot(tmp_path):
    with run_cluster(3, config=CONFIG, data_dir=tmp_path / "trim") as cluster:
        ids = sorted(cluster.nodes)
        lagging = next(n for n in ids if n != active_controller(cluster))
        survivor = next(n for n in ids if n != lagging)
        bootstrap = node_bootstrap(cluster, survivor)
        cluster.stop(lagging)
        stopped_at = log_end_offsets(bootstrap)[lagging]
        admin = AdminClient({"bootstrap.servers": bootstrap})
        created: list[str] = []
        while log_start(cluster, survivor) <= stopped_at:
            batch = [f"trim-{len(created) + i}" for i in range(10)]
            for f in admin.create_topics([NewTopic(t, 1, 2) for t in batch]).values():
                f.result(WAIT_S)
            created += batch
            assert len(created) < 2000, "the metadata log was never trimmed"
        for node_id in ids:
            if node_id == lagging:
                continue
            wait_for(lambda n=node_id: log_start(cluster, n) > 0, f"node {node_id} trimmed")
            # only the latest snapshot is kept (retention 1 byte), the log starts at it
            snaps = snapshots.list_snapshots(metadata_dir(cluster, node_id))
            assert len(snaps) == 1 and snaps[0][0] >= log_start(cluster, node_id)
        leader_start = log_start(cluster, survivor)
        assert leader_start > stopped_at
        cluster.start(lagging)
        wait_for(lambda: set(created) <= topics_on(node_bootstrap(cluster, lagging)),
                 f"node {lagging} knows every topic created while it was down")
        fetched = snapshots.list_snapshots(metadata_dir(cluster, lagging))
        assert fetched and fetched[-1][0] >= leader_start
        assert log_start(cluster, lagging) > stopped_at


def test_segment_bytes_below_kafkas_minimum_is_refused_as_kafka_refuses_it(tmp_path):
    props = {"metadata.log.segment.bytes": "2048"}
    with pytest.raises(NodeFailedError) as refused, \
            run_cluster(1, config=props, data_dir=tmp_path / "ours"):
        pass
    base = {"process.roles": "broker,controller", "node.id": "1",
            "controller.quorum.voters": "1@127.0.0.1:19999",
            "listeners": "PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:19999",
            "controller.listener.names": "CONTROLLER", "log.dirs": str(tmp_path / "kafka/logs")}
    status, message = kafka_config_error({**base, **props}, tmp_path / "kafka")
    assert status == 1 and message == (
        "Invalid value 2048 for configuration metadata.log.segment.bytes: Value must be at "
        "least 8388608")
    assert f"pykafkad: {message}" in str(refused.value)
