"""Elections of the quorum state machine with a fake clock (no sockets)."""

from __future__ import annotations

import json

import pytest

from pykafkad.raft.quorum import Candidate, Follower, Leader, Prospective, Unattached
from tests.raft.sim import Sim


@pytest.fixture
def sim(tmp_path):
    return Sim(tmp_path)


def test_three_voters_elect_exactly_one_leader(sim):
    sim.run_until(lambda: len(sim.leaders()) == 1 and all(
        isinstance(m.quorum.state, Follower) for m in sim.nodes.values()
        if m is not sim.leaders()[0]))
    leader = sim.leader()
    assert leader.epoch == 1
    for m in sim.nodes.values():
        assert m.epoch == 1 and m.leader_id == leader.node_id


def test_single_voter_leads_at_once(tmp_path):
    sim = Sim(tmp_path, voters=(1,))
    m = sim.nodes[1]
    sim.run_until(lambda: isinstance(m.quorum.state, Leader))
    assert m.epoch == 1
    # the LeaderChange record at the start of the epoch is committed by the leader alone
    assert m.log.end_offset == 1 and m.high_watermark == 1
    # and it has no timer left: a lone leader checks no quorum, so its loop sleeps (a past
    # check-quorum deadline here made the single-node broker spin at full CPU)
    sim.now += 10 * m.config.check_quorum_timeout_ms
    m.poll(sim.now)
    assert isinstance(m.quorum.state, Leader) and m.next_deadline(sim.now) == float("inf")


def test_fresh_voter_is_unattached_and_prevotes_without_bumping_its_epoch(sim):
    m = sim.nodes[1]
    assert isinstance(m.quorum.state, Unattached) and m.epoch == 0
    sim.now = m.quorum.state.election_deadline
    outs = m.poll(sim.now)
    assert isinstance(m.quorum.state, Prospective) and m.epoch == 0
    votes = [o.request.topics[0].partitions[0] for o in outs]
    assert {o.destination for o in outs} == {2, 3}
    # a prospective asks in its current epoch: it has not bumped it (Kafka 4's pre-vote)
    assert all(p.pre_vote and p.replica_epoch == 0 for p in votes)
    # a pre-vote does not touch the file: a prospective has not voted in a new epoch
    assert not (m.log.dir / "quorum-state").exists()


def test_quorum_state_file_is_kafkas_json(sim):
    sim.run_until(lambda: len(sim.leaders()) == 1)
    leader = sim.leader()
    data = json.loads((leader.log.dir / "quorum-state").read_text())
    assert data == {"clusterId": "", "leaderId": leader.node_id, "leaderEpoch": 1,
                    "votedId": -1, "appliedOffset": 0,
                    "currentVoters": [{"voterId": 1}, {"voterId": 2}, {"voterId": 3}],
                    "data_version": 0}


def test_election_timeouts_are_randomized_within_kafkas_bounds(sim):
    t = sim.config.election_timeout_ms
    deadlines = set()
    for m in sim.nodes.values():
        d = m.quorum.state.election_deadline
        assert t <= d < 2 * t
        deadlines.add(d)
    assert len(deadlines) > 1


def test_partitioned_follower_does_not_disturb_the_leader(sim):
    """Pre-vote (KIP-996): a voter cut off from the quorum keeps pre-voting for epoch+1 but
    the others, who hear from their leader, refuse, so the epoch never moves."""
    sim.run_until(lambda: len(sim.leaders()) == 1)
    leader = sim.leader()
    follower = next(n for n in sim.nodes if n != leader.node_id)
    sim.run_until(lambda: all(m.leader_id == leader.node_id for m in sim.nodes.values()))
    # cut the follower off from the leader only: it can still reach the third voter
    other = next(n for n in sim.nodes if n not in (leader.node_id, follower))
    original = sim.deliver

    pre_votes = []

    def deliver(src, out):
        if {src, out.destination} == {leader.node_id, follower}:
            sim.nodes[src].on_failure(out.destination, out.request, sim.now)
        else:
            if src == follower and type(out.request).__name__ == "VoteRequest":
                pre_votes.append(out.request.topics[0].partitions[0])
            original(src, out)

    sim.deliver = deliver
    for _ in range(1000):
        sim.step(10)
    # it pre-voted (in its epoch, 1) after each fetch timeout, and each time the third voter,
    # which hears from the leader, refused, so it went back to following the leader it had
    assert pre_votes and all(p.pre_vote and p.replica_epoch == 1 for p in pre_votes)
    assert isinstance(sim.nodes[follower].quorum.state, Follower | Prospective)
    assert sim.nodes[other].epoch == 1 and isinstance(sim.nodes[other].quorum.state, Follower)
    assert leader.epoch == 1 and isinstance(leader.quorum.state, Leader)
    assert sim.nodes[follower].epoch == 1


def test_killing_the_leader_elects_a_new_one_with_a_higher_epoch(sim):
    sim.run_until(lambda: len(sim.leaders()) == 1)
    old = sim.leader()
    sim.run_until(lambda: all(m.leader_id == old.node_id for m in sim.nodes.values()))
    sim.stop(old.node_id)
    sim.run_until(lambda: len(sim.leaders()) == 1)
    new = sim.leader()
    assert new.node_id != old.node_id and new.epoch > 1


def test_graceful_resignation_hands_over_before_any_fetch_timeout(sim):
    sim.run_until(lambda: len(sim.leaders()) == 1)
    old = sim.leader()
    sim.run_until(lambda: all(m.leader_id == old.node_id for m in sim.nodes.values()))
    start = sim.now
    old.resign(sim.now)
    successors = old.quorum.state.preferred_successors
    assert sorted(successors) == sorted(n for n in sim.nodes if n != old.node_id)
    sim.step()
    # EndQuorumEpoch shortened the followers' fetch timeouts by their place in the list
    # (Kafka's strict exponential backoff: 0 for the first, more for the others)
    deadlines = [sim.nodes[n].quorum.state for n in successors]
    assert all(isinstance(d, Follower | Prospective) for d in deadlines)
    sim.run_until(lambda: any(isinstance(sim.nodes[n].quorum.state, Leader) for n in successors))
    new = next(sim.nodes[n] for n in successors if isinstance(sim.nodes[n].quorum.state, Leader))
    assert new.epoch == 2
    assert sim.now - start < sim.config.fetch_timeout_ms


def test_end_quorum_epoch_backoff_is_kafkas_strict_exponential(sim):
    m = sim.nodes[1]
    assert m._end_epoch_backoff([1, 2]) == 0
    assert m._end_epoch_backoff([2, 1]) == 500
    assert m._end_epoch_backoff([2, 1, 3]) == 250
    assert m._end_epoch_backoff([2, 3, 1]) == 500
    assert m._end_epoch_backoff([2, 3]) == 1000


def test_vote_granting_rules(sim):
    m = sim.nodes[1]
    from wire.messages import vote_request as vr

    def vote(candidate, epoch, last_epoch, last_offset, pre_vote=False):
        part = vr.PartitionData(partition_index=0, replica_epoch=epoch, replica_id=candidate,
                                last_offset_epoch=last_epoch, last_offset=last_offset,
                                pre_vote=pre_vote)
        req = vr.VoteRequest(cluster_id=sim.nodes[2].cluster_id, voter_id=1,
                             topics=[vr.TopicData(topic_name="__cluster_metadata",
                                                  partitions=[part])])
        p = m.handle_vote(req, 2, sim.now).topics[0].partitions[0]
        return p.error_code, p.vote_granted

    # invalid: the last epoch must be below the candidate's epoch
    assert vote(2, 1, 1, 0) == (42, False)
    assert vote(2, 1, 0, 0) == (0, True)
    assert m.quorum.state.voted_id == 2
    # one vote per epoch, but the same candidate may ask again
    assert vote(3, 1, 0, 0) == (0, False)
    assert vote(2, 1, 0, 0) == (0, True)
    # pre-votes do not count as a vote, and may come from a replica with a record of its epoch
    assert vote(3, 1, 0, 0, pre_vote=True) == (0, True)
    assert vote(3, 1, 1, 0, pre_vote=True) == (0, True)
    assert m.epoch == 1 and m.quorum.state.voted_id == 2
    # a higher epoch: a new vote
    assert vote(3, 2, 0, 0) == (0, True)
    assert m.epoch == 2 and m.quorum.state.voted_id == 3
    # an older epoch: fenced
    assert vote(2, 1, 0, 0) == (74, False)


def test_vote_is_refused_to_a_candidate_with_a_shorter_log(sim):
    sim.run_until(lambda: len(sim.leaders()) == 1)
    leader = sim.leader()
    leader.append(leader.epoch, [b"x"], sim.now)
    sim.run_until(lambda: all(m.log.end_offset == 2 for m in sim.nodes.values()))
    m = next(x for x in sim.nodes.values() if x is not leader)
    # (last epoch, end offset) compared as Kafka's OffsetAndEpoch: epoch first
    assert not m._is_log_up_to_date(1, 1)
    assert m._is_log_up_to_date(1, 2) and m._is_log_up_to_date(2, 0)
    assert not m._is_log_up_to_date(0, 5)
    # a follower that hears from its leader refuses even an up-to-date pre-vote
    assert m.quorum.can_grant_vote(9, True, True) is False
    # an unattached voter grants it by the log alone
    from pykafkad.raft.quorum import Unattached
    m.quorum.state = Unattached(m.epoch, float("inf"))
    assert m.quorum.can_grant_vote(9, True, True) and not m.quorum.can_grant_vote(9, False, True)


def test_a_voter_that_voted_for_itself_restarts_as_candidate(tmp_path):
    sim = Sim(tmp_path, voters=(1, 2, 3))
    sim.stop(2)
    sim.stop(3)
    m = sim.nodes[1]
    sim.run_until(lambda: isinstance(m.quorum.state, Prospective), max_ms=10_000)
    # no one answers: it stays prospective, its epoch unchanged
    for _ in range(300):
        sim.step(10)
    assert m.epoch == 0 and not isinstance(m.quorum.state, Candidate | Leader)


def test_a_leader_cut_off_from_the_majority_resigns(sim):
    """Check-quorum: a leader that no voter has fetched from for 1.5 fetch timeouts steps
    down, so clients stop talking to a leader that can commit nothing."""
    sim.run_until(lambda: len(sim.leaders()) == 1)
    leader = sim.leader()
    sim.run_until(lambda: all(m.leader_id == leader.node_id for m in sim.nodes.values()))
    original = sim.deliver

    def cut(src, out):
        if leader.node_id in (src, out.destination):
            sim.nodes[src].on_failure(out.destination, out.request, sim.now)
        else:
            original(src, out)

    sim.deliver = cut
    start = sim.now
    sim.run_until(lambda: not isinstance(leader.quorum.state, Leader))
    assert sim.now - start >= sim.config.check_quorum_timeout_ms
    assert sim.now - start < sim.config.check_quorum_timeout_ms + 100
    # meanwhile the others elected a new leader in a higher epoch
    sim.run_until(lambda: any(isinstance(m.quorum.state, Leader) for n, m in sim.nodes.items()
                              if n != leader.node_id))



def test_end_quorum_epoch_place_counts_only_this_nodes_directory(sim):
    """A v1 EndQuorumEpoch names candidates with their directories: an entry with this node's
    id but another directory is another replica's place (Kafka's endEpochElectionBackoff)."""
    from wire.messages import end_quorum_epoch_request as eqe

    sim.run_until(lambda: len(sim.leaders()) == 1)
    leader = sim.leader()
    sim.run_until(lambda: all(m.leader_id == leader.node_id for m in sim.nodes.values()))
    f = next(m for m in sim.nodes.values() if m is not leader)

    def end_epoch(*directories: bytes) -> int:
        req = eqe.EndQuorumEpochRequest(
            cluster_id=leader.cluster_id,
            topics=[eqe.TopicData(topic_name="__cluster_metadata", partitions=[eqe.PartitionData(
                partition_index=0, leader_id=leader.node_id, leader_epoch=leader.epoch,
                preferred_candidates=[eqe.ReplicaInfo(candidate_id=f.node_id,
                                                      candidate_directory_id=d)
                                      for d in directories])])])
        f.handle_end_quorum_epoch(req, 1, sim.now)
        return f.quorum.state.fetch_deadline - sim.now

    assert end_epoch(bytes(15) + b"\x63", f.directory_id) == 500
    assert end_epoch(bytes(16), f.directory_id) == 0
    assert end_epoch(bytes(15) + b"\x63") == sim.config.election_backoff_max_ms
