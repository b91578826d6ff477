"""Interoperability on the wire with Kafka's KafkaRaftClient: a pykafkad RaftClient observes
the reference Apache Kafka's controller quorum (Fetch of __cluster_metadata, and FetchSnapshot
when Kafka answers with a snapshot id) and ends up with Kafka's bytes."""

from __future__ import annotations

import random
import re
from pathlib import Path

import trio

from compat.kafka_broker import formatted_cluster_id
from pykafkad.raft.client import RaftClient
from tests.integration.clients import needs_java
from tests.raft.quorum import WAIT_S

pytestmark = needs_java


def test_an_observer_follows_kafkas_quorum(tmp_path, reference_kafka):
    props = (reference_kafka.data_dir / "server.properties").read_text()
    host, port = re.search(r"controller\.quorum\.voters=1@(\S+):(\d+)", props).groups()
    log_dirs = re.search(r"log\.dirs=(\S+)", props).group(1)
    cluster_id = formatted_cluster_id(reference_kafka.data_dir)
    result = {}

    async def main():
        client = RaftClient(99, bytes(15) + b"\x63", {1: (host, int(port))}, tmp_path,
                            cluster_id, rng=random.Random(1))
        async with trio.open_nursery() as nursery:
            await nursery.start(client.run)
            with trio.fail_after(WAIT_S):
                while not (client.high_watermark or 0) > 0:
                    await trio.sleep(0.05)
            result["leader"] = client.leader_and_epoch
            result["hw"] = client.high_watermark
            result["start"] = client.log.start_offset
            result["bytes"] = client.log.read(client.log.start_offset, 1 << 30)
            nursery.cancel_scope.cancel()

    trio.run(main)
    assert result["leader"].leader_id == 1 and result["leader"].epoch >= 1
    kafka_dir = Path(log_dirs.split(",")[0]) / "__cluster_metadata-0"
    ours = result["bytes"]
    # our log is a prefix of Kafka's segment from the same start offset (appended as fetched)
    segment = kafka_dir / f"{result['start']:020d}.log"
    assert ours and segment.read_bytes()[: len(ours)] == ours
    # a snapshot fetched with FetchSnapshot is Kafka's file, byte for byte
    for snap in tmp_path.glob("__cluster_metadata-0/*.checkpoint"):
        assert snap.read_bytes() == (kafka_dir / snap.name).read_bytes()
