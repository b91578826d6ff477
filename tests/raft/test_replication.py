"""Replication of the metadata log with a fake clock: commits, the HW rules, divergence."""

from __future__ import annotations

import pytest

from pykafkad.raft.leader_state import LeaderState
from pykafkad.raft.machine import NotLeaderError
from pykafkad.raft.quorum import Follower, Leader
from tests.raft.sim import Sim
from wire.messages.describe_quorum_request import DescribeQuorumRequest, PartitionData, TopicData
from wire.records.batch import decode_records, iter_batch_headers
from wire.records.control import decode_control_key


@pytest.fixture
def sim(tmp_path):
    s = Sim(tmp_path)
    s.run_until(lambda: len(s.leaders()) == 1 and all(
        m.leader_id == s.leaders()[0].node_id for m in s.nodes.values()))
    return s


def test_appended_records_commit_and_every_log_is_byte_identical(sim):
    leader = sim.leader()
    last = leader.append(leader.epoch, [b"a", b"b"], sim.now)
    last = leader.append(leader.epoch, [b"c"], sim.now)
    assert last == 3
    sim.run_until(lambda: all(m.high_watermark == 4 for m in sim.nodes.values()))
    logs = {n: sim.log_bytes(n) for n in sim.nodes}
    assert len(set(logs.values())) == 1
    batches = list(iter_batch_headers(logs[1]))
    # the LeaderChange control batch first, then the data batches, all of epoch 1
    first = batches[0][1]
    assert first.is_control and first.partition_leader_epoch == 1
    (rec,) = decode_records(logs[1], batches[0][0])
    assert decode_control_key(rec.key) == 2
    values = [r.value for pos, h in batches[1:] for r in decode_records(logs[1], pos)]
    assert values == [b"a", b"b", b"c"]


def test_only_the_leader_appends(sim):
    follower = next(m for m in sim.nodes.values() if not isinstance(m.quorum.state, Leader))
    with pytest.raises(NotLeaderError):
        follower.append(follower.epoch, [b"x"], sim.now)
    leader = sim.leader()
    with pytest.raises(NotLeaderError):
        leader.append(leader.epoch + 1, [b"x"], sim.now)


def test_hw_needs_a_majority(sim):
    leader = sim.leader()
    others = [n for n in sim.nodes if n != leader.node_id]
    sim.stop(others[0])
    leader.append(leader.epoch, [b"x"], sim.now)
    sim.run_until(lambda: leader.high_watermark == 2)  # the leader and one follower
    sim.stop(others[1])
    leader.append(leader.epoch, [b"y"], sim.now)
    for _ in range(100):
        sim.step(10)
    assert leader.log.end_offset == 3 and leader.high_watermark == 2


def test_hw_rules_of_the_leader_state():
    s = LeaderState(1, [1, 2, 3], epoch_start_offset=10)
    assert not s.update_local(11, 0)  # alone: no majority
    # a majority at the epoch start offset is not enough: the LeaderChange must be in
    assert not s.update_replica(2, bytes(16), 10, 11, 0)
    assert s.high_watermark is None
    assert s.update_replica(2, bytes(16), 11, 11, 0)
    assert s.high_watermark == 11
    # never backwards
    assert not s.update_replica(2, bytes(16), 5, 11, 0)
    assert s.high_watermark == 11
    # observers do not count
    assert not s.update_replica(7, bytes(16), 11, 11, 0)
    # four voters need three
    s4 = LeaderState(1, [1, 2, 3, 4], 0)
    s4.update_local(5, 0)
    s4.update_replica(2, bytes(16), 5, 5, 0)
    assert s4.high_watermark is None
    s4.update_replica(3, bytes(16), 4, 5, 0)
    assert s4.high_watermark == 4


def test_a_diverged_follower_truncates_to_the_leader(sim):
    """A leader cut off appends records nobody gets; the others elect a new leader whose log
    differs from there; when the old leader comes back it truncates its uncommitted tail."""
    old = sim.leader()
    others = [n for n in sim.nodes if n != old.node_id]
    sim.run_until(lambda: all(sim.nodes[n].log.end_offset == 1 for n in others))
    original = sim.deliver

    def partitioned(src, out):
        if old.node_id in (src, out.destination):
            sim.nodes[src].on_failure(out.destination, out.request, sim.now)
        else:
            original(src, out)

    sim.deliver = partitioned
    old.append(old.epoch, [b"lost-1"], sim.now)
    old.append(old.epoch, [b"lost-2"], sim.now)
    sim.run_until(lambda: any(isinstance(sim.nodes[n].quorum.state, Leader) for n in others))
    new = next(sim.nodes[n] for n in others if isinstance(sim.nodes[n].quorum.state, Leader))
    new.append(new.epoch, [b"kept"], sim.now)
    sim.run_until(lambda: new.high_watermark == new.log.end_offset)
    assert old.log.end_offset == 3  # its own two uncommitted records
    sim.deliver = original
    sim.run_until(lambda: old.log.end_offset == new.log.end_offset
                  and isinstance(old.quorum.state, Follower)
                  and old.high_watermark == new.high_watermark)
    assert sim.log_bytes(old.node_id) == sim.log_bytes(new.node_id)
    values = [r.value for pos, h in iter_batch_headers(sim.log_bytes(old.node_id))
              if not h.is_control for r in decode_records(sim.log_bytes(old.node_id), pos)]
    assert values == [b"kept"]


def test_committed_records_survive_the_leader_failing(sim):
    leader = sim.leader()
    for i in range(5):
        leader.append(leader.epoch, [b"r%d" % i], sim.now)
    sim.run_until(lambda: leader.high_watermark == 6)
    committed = leader.log.read(0, 1 << 20)
    sim.stop(leader.node_id)
    sim.run_until(lambda: len(sim.leaders()) == 1)
    new = sim.leader()
    assert new.epoch > leader.epoch
    assert new.log.read(0, 1 << 20)[: len(committed)] == committed
    sim.run_until(lambda: new.high_watermark is not None and new.high_watermark > 6)


def test_a_restarted_voter_keeps_its_state_and_catches_up(sim):
    leader = sim.leader()
    follower = next(n for n in sim.nodes if n != leader.node_id)
    leader.append(leader.epoch, [b"before"], sim.now)
    sim.run_until(lambda: sim.nodes[follower].high_watermark == 2)
    sim.stop(follower)
    leader.append(leader.epoch, [b"while-down"], sim.now)
    m = sim.start(follower)
    # from its quorum-state file: a follower of the same leader in the same epoch
    assert isinstance(m.quorum.state, Follower)
    assert (m.epoch, m.leader_id) == (leader.epoch, leader.node_id)
    assert m.log.end_offset == 2
    sim.run_until(lambda: m.log.end_offset == 3 and m.high_watermark == 3)
    assert sim.log_bytes(follower) == sim.log_bytes(leader.node_id)


def test_an_observer_fetches_the_log(tmp_path):
    sim = Sim(tmp_path, voters=(1, 2, 3), observers=(7,))
    sim.run_until(lambda: len(sim.leaders()) == 1)
    leader = sim.leader()
    leader.append(leader.epoch, [b"seen-by-observer"], sim.now)
    obs = sim.nodes[7]
    sim.run_until(lambda: obs.high_watermark == 2 and obs.leader_id == leader.node_id)
    assert sim.log_bytes(7) == sim.log_bytes(leader.node_id)
    # the leader lists it as an observer, not a voter
    req = DescribeQuorumRequest(topics=[TopicData(topic_name="__cluster_metadata",
                                                  partitions=[PartitionData(partition_index=0)])])
    sim.step()  # its next fetch tells the leader how far it got
    p = leader.handle_describe_quorum(req, 2, sim.now).topics[0].partitions[0]
    assert [v.replica_id for v in p.current_voters] == [1, 2, 3]
    assert [o.replica_id for o in p.observers] == [7]
    assert p.observers[0].log_end_offset == 2
