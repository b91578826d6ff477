"""Snapshots: a replica below the leader's log start is sent to the latest snapshot (Fetch's
snapshotId), fetches it with FetchSnapshot in chunks, and continues from its end offset."""

from __future__ import annotations

from pykafkad.raft import snapshots
from pykafkad.raft.config import QuorumConfig
from pykafkad.raft.quorum import Follower
from tests.raft.sim import Sim
from wire.errors import ErrorCode
from wire.messages import fetch_snapshot_request as fs


def test_a_replica_below_the_log_start_fetches_the_snapshot(tmp_path):
    sim = Sim(tmp_path, config=QuorumConfig(fetch_snapshot_max_bytes=1000))
    sim.run_until(lambda: len(sim.leaders()) == 1)
    leader = sim.leader()
    lagging = next(n for n in sim.nodes if n != leader.node_id)
    sim.run_until(lambda: sim.nodes[lagging].log.end_offset == 1)
    sim.stop(lagging)
    for i in range(5):
        leader.append(leader.epoch, [b"r%d" % i], sim.now)
    sim.run_until(lambda: leader.high_watermark == 6)
    # the metadata area snapshots the state at offset 6 (its content is opaque here)
    content = bytes(range(256)) * 20
    snapshots.path_of(leader.log.dir, 6, leader.epoch).write_bytes(content)
    leader.log.log.delete_records(6)
    assert leader.log.start_offset == 6

    m = sim.start(lagging)
    sim.run_until(lambda: m.log.start_offset == 6 and m.log.end_offset == 6
                  and m.fetching_snapshot is None)
    assert snapshots.path_of(m.log.dir, 6, leader.epoch).read_bytes() == content
    leader.append(leader.epoch, [b"after-snapshot"], sim.now)
    sim.run_until(lambda: m.high_watermark == 7 and isinstance(m.quorum.state, Follower))
    assert m.log.read(6, 1 << 20) == leader.log.read(6, 1 << 20)
    assert m.log.last_fetched_epoch() == leader.epoch


def test_fetch_snapshot_errors(tmp_path):
    sim = Sim(tmp_path, voters=(1,))
    sim.run_until(lambda: len(sim.leaders()) == 1)
    leader = sim.leader()
    snapshots.path_of(leader.log.dir, 1, 1).write_bytes(b"x" * 10)

    def fetch(offset, epoch, position, leader_epoch=None):
        req = fs.FetchSnapshotRequest(
            cluster_id=leader.cluster_id, replica_id=2, max_bytes=4,
            topics=[fs.TopicSnapshot(name="__cluster_metadata", partitions=[fs.PartitionSnapshot(
                partition=0, current_leader_epoch=leader.epoch if leader_epoch is None
                else leader_epoch, snapshot_id=fs.SnapshotId(end_offset=offset, epoch=epoch),
                position=position)])])
        return leader.handle_fetch_snapshot(req, 1, sim.now).topics[0].partitions[0]

    p = fetch(1, 1, 0)
    assert (p.error_code, p.size, p.position, bytes(p.unaligned_records)) == (0, 10, 0, b"xxxx")
    assert fetch(1, 1, 8).unaligned_records == b"xx"
    assert fetch(2, 1, 0).error_code == ErrorCode.SNAPSHOT_NOT_FOUND
    assert fetch(1, 1, 10).error_code == ErrorCode.POSITION_OUT_OF_RANGE
    assert fetch(1, 1, 0, leader_epoch=0).error_code == ErrorCode.FENCED_LEADER_EPOCH
    assert fetch(1, 1, 0, leader_epoch=5).error_code == ErrorCode.UNKNOWN_LEADER_EPOCH
