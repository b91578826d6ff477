"""The interface the broker side builds on, in-process on a real one-voter combined node:
``SharedServer.metadata_listener(publisher)`` sees every committed change as (delta, image,
manifest), a publisher added late gets the whole image at once, and ``ControllerChannel.send``
reaches the active controller."""

from __future__ import annotations

import re

import trio

from compat.kafka_tools import run_tool
from pykafkad.broker import Broker
from pykafkad.config import BrokerConfig
from pykafkad.kraft.kraft_server import KafkaRaftServer
from pykafkad.launcher import free_ports, random_cluster_id
from pykafkad.metadata.delta import MetadataDelta
from pykafkad.metadata.properties import MetaProperties
from pykafkad.metadata.snapshot import read_snapshot
from pykafkad.server import Server, served_listeners
from tests.integration.clients import needs_java
from tests.kraft.quorum_helpers import read_records, record_offsets
from wire.messages.create_topics_request import CreatableTopic, CreateTopicsRequest

WAIT_S = 30


class Recorder:
    def __init__(self):
        self.updates = []
        self.changed = trio.Event()

    def on_metadata_update(self, delta, image, manifest) -> None:
        self.updates.append((delta, image, manifest))
        self.changed.set()
        self.changed = trio.Event()

    async def wait_for(self, condition) -> None:
        while not any(condition(*u) for u in self.updates):
            await self.changed.wait()


def one_voter_node(data_dir, extra: dict[str, str] | None = None) -> KafkaRaftServer:
    broker_port, controller_port = free_ports(2)
    config = BrokerConfig.from_sources(None, {
        "process.roles": "broker,controller", "node.id": "1",
        "controller.quorum.voters": f"1@127.0.0.1:{controller_port}",
        "listeners": f"PLAINTEXT://127.0.0.1:{broker_port},"
                     f"CONTROLLER://127.0.0.1:{controller_port}",
        "controller.listener.names": "CONTROLLER", "log.dirs": str(data_dir), **(extra or {})})
    MetaProperties(1, random_cluster_id(), 1, random_cluster_id()).write(data_dir)
    broker = Broker(config, data_dir)
    server = Server(broker, "", 0, listeners=served_listeners(config))
    return KafkaRaftServer(config, data_dir, broker, server)


def test_publishers_see_committed_changes_and_the_channel_reaches_the_controller(tmp_path):
    node = one_voter_node(tmp_path / "data")
    early, late = Recorder(), Recorder()
    node.shared.metadata_listener(early)
    out = {}

    async def main():
        async with trio.open_nursery() as nursery:
            with trio.fail_after(WAIT_S):
                await nursery.start(node.run)  # ready: this broker is registered, unfenced
                response = await node.channel.send(CreateTopicsRequest(
                    topics=[CreatableTopic(name="h-kraft-pub", num_partitions=2,
                                           replication_factor=1, assignments=[], configs=[])],
                    timeout_ms=30000, validate_only=False))
                out["created"] = response.topics[0]
                await early.wait_for(lambda d, i, m: "h-kraft-pub" in d.created_topics)
                node.shared.add_publisher(late)
                out["image"] = node.shared.image
            node.request_shutdown()

    trio.run(main)
    created = out["created"]
    assert (created.error_code, created.num_partitions) == (0, 2)
    offsets = [m.offset for _, _, m in early.updates]
    assert offsets == sorted(offsets) and len(set(offsets)) == len(offsets)
    assert not any(m.from_snapshot for _, _, m in early.updates)
    delta, image, manifest = next(u for u in early.updates
                                  if "h-kraft-pub" in u[0].created_topics)
    assert delta.created_topics["h-kraft-pub"] == created.topic_id
    assert len(image.topics.get("h-kraft-pub").partitions) == 2
    assert image.offset == manifest.offset
    assert image.cluster[1].fenced is False
    # the late publisher: one update, the whole image as a delta from the empty one
    (first_delta, first_image, _), *_ = late.updates
    assert first_image is out["image"]
    assert first_delta.created_topics == {"h-kraft-pub": created.topic_id}


@needs_java
def test_snapshots_are_taken_every_so_many_bytes_and_kafka_reads_them(tmp_path):
    """metadata.log.max.record.bytes.between.snapshots: the loader writes a snapshot of the
    image once that many bytes were committed since the last one; Kafka's kafka-dump-log
    decodes it, and it holds what replaying the log up to its end offset gives."""
    node = one_voter_node(tmp_path / "data", {
        "metadata.log.max.record.bytes.between.snapshots": "2000"})
    snapshots_dir = node.shared.metadata_log_dir / "__cluster_metadata-0"

    async def main():
        async with trio.open_nursery() as nursery:
            with trio.fail_after(WAIT_S):
                await nursery.start(node.run)
                for i in range(10):
                    await node.channel.send(CreateTopicsRequest(
                        topics=[CreatableTopic(name=f"h-kraft-snap-{i}", num_partitions=3,
                                               replication_factor=1, assignments=[],
                                               configs=[])],
                        timeout_ms=30000, validate_only=False))
                while not list(snapshots_dir.glob("*.checkpoint")):
                    await trio.sleep(0.05)
            node.request_shutdown()

    trio.run(main)
    (path,) = sorted(snapshots_dir.glob("*.checkpoint"))[-1:]
    end_offset = int(path.name.split("-")[0])
    snapshot = read_snapshot(path)
    records = read_records(snapshots_dir)
    replayed = MetadataDelta().replay_all(
        r for r, offset in zip(records, record_offsets(snapshots_dir), strict=True)
        if offset < end_offset).apply()
    from_snapshot = MetadataDelta().replay_all(snapshot.records()).apply()
    assert from_snapshot.topics.by_name.keys() == replayed.topics.by_name.keys()
    assert from_snapshot.cluster == replayed.cluster
    out = run_tool("kafka-dump-log", ["--cluster-metadata-decoder", "--files", str(path)],
                   check=True).stdout
    assert "isvalid: false" not in out
    topics = re.findall(r'"type":"TOPIC_RECORD".*?"name":"([^"]+)"', out)
    assert sorted(topics) == sorted(replayed.topics.by_name)
    assert f"Snapshot end offset: {end_offset}, epoch:" in out and "SnapshotHeader" in out
