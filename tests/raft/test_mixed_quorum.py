"""A mixed quorum: two pykafkad voters and one Apache Kafka 4.4.0 controller (static voters,
``controller.quorum.voters``) elect a leader together, replicate the metadata log byte for
byte, and elect a new leader when the first one dies: the two implementations speak the same
KRaft on the wire."""

from __future__ import annotations

import shutil
import subprocess

import trio

from compat.kafka_broker import JAVA_OPTS, free_port, kafka_classpath
from pykafkad.raft.node import noop_record
from tests.integration.clients import needs_java
from tests.raft.quorum import CLUSTER_ID, Quorum
from wire.metadata.feature_level_record import FeatureLevelRecord

pytestmark = needs_java

KAFKA_ID = 3


def metadata_version_record(level: int) -> bytes:
    """A FeatureLevelRecord for metadata.version in Kafka's metadata record frame."""
    record = FeatureLevelRecord(name="metadata.version", feature_level=level)
    return bytes([1, FeatureLevelRecord.API_KEY, 0]) + record.encode(0)


def kafka_controller(tmp, voters: str, port: int) -> subprocess.Popen:
    props = tmp / "kafka.properties"
    props.write_text("\n".join([
        "process.roles=controller", f"node.id={KAFKA_ID}", f"controller.quorum.voters={voters}",
        f"listeners=CONTROLLER://127.0.0.1:{port}", "controller.listener.names=CONTROLLER",
        "listener.security.protocol.map=CONTROLLER:PLAINTEXT", f"log.dirs={tmp / 'kafka'}",
        # the pykafkad voters stand first, so that the test can append through the leader
        "controller.quorum.election.timeout.ms=8000", ""]))
    java = shutil.which("java")
    env = {"CLASSPATH": kafka_classpath(), "PATH": "/usr/bin:/bin"}
    subprocess.run([java, *JAVA_OPTS, "kafka.tools.StorageTool", "format", "-t", CLUSTER_ID,
                    "-c", str(props)], env=env, check=True, capture_output=True, timeout=120)
    return subprocess.Popen([java, *JAVA_OPTS, "kafka.Kafka", str(props)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def test_pykafkad_and_kafka_controllers_form_one_quorum(tmp_path):
    kafka_log = tmp_path / "kafka" / "__cluster_metadata-0" / "00000000000000000000.log"

    async def main():
        async with trio.open_nursery() as nursery:
            q = Quorum(tmp_path, nursery, voters=(1, 2))
            kafka_port = free_port()
            q.voters[KAFKA_ID] = ("127.0.0.1", kafka_port)
            spec = ",".join(f"{i}@{h}:{p}" for i, (h, p) in sorted(q.voters.items()))
            proc = await trio.to_thread.run_sync(kafka_controller, tmp_path, spec, kafka_port)
            try:
                await q.start(1)
                await q.start(2)
                leader = await q.wait_for_leader()
                epoch = leader.raft.leader_and_epoch.epoch
                # what Kafka's controllers replay must be metadata: metadata.version first
                last = leader.raft.schedule_append(epoch, [metadata_version_record(33),
                                                           noop_record(), noop_record()])
                replicas = leader.raft.machine.quorum.state.replicas.voters
                # Kafka's controller fetched everything (its fetch offset is its log end)
                await q.wait_for(lambda: replicas[KAFKA_ID].end_offset == last + 1
                                 and leader.raft.high_watermark == last + 1,
                                 "the Kafka voter to replicate the log", timeout_s=120)
                ours = q.log_bytes(leader.node_id)
                assert kafka_log.read_bytes() == ours
                # the leader dies: the other pykafkad voter and Kafka elect a new one
                q.kill(leader.node_id)
                other = next(iter(q.nodes.values()))
                await q.wait_for(lambda: other.raft.leader_and_epoch.epoch > epoch
                                 and other.raft.leader_and_epoch.leader_id in (other.node_id,
                                                                              KAFKA_ID)
                                 and (other.raft.high_watermark or 0) > last + 1,
                                 "a new leader with the Kafka voter", timeout_s=60)
                assert q.log_bytes(other.node_id)[: len(ours)] == ours
                # and the Kafka controller holds the same log as the survivor
                await q.wait_for(lambda: kafka_log.read_bytes()[: len(ours)] == ours,
                                 "Kafka's log", timeout_s=30)
                assert proc.poll() is None  # Kafka's controller took it all in its stride
            finally:
                proc.terminate()
                await trio.to_thread.run_sync(proc.wait)
            nursery.cancel_scope.cancel()

    trio.run(main)
