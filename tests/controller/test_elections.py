"""Leader elections: leaders leave fenced brokers, come back with unfencing to leaderless
partitions, preferred and unclean ElectLeaders, and KIP-966's ELR (on in Kafka 4.4)."""

from __future__ import annotations

from tests.controller.support import MetadataLog
from tests.controller.test_replication_control import create_topic
from wire.errors import ErrorCode
from wire.messages.alter_partition_request import (
    AlterPartitionRequest,
    BrokerState,
    PartitionData,
    TopicData,
)
from wire.messages.elect_leaders_request import ElectLeadersRequest, TopicPartitions
from wire.messages.incremental_alter_configs_request import (
    AlterableConfig,
    AlterConfigsResource,
    IncrementalAlterConfigsRequest,
)
from wire.metadata import FeatureLevelRecord, PartitionChangeRecord


def silence(log, broker, others):
    """Let ``broker``'s session expire while ``others`` keep heartbeating."""
    for _ in range(3):
        log.now_ms += 4_000
        for b in others:
            log.heartbeat(b)
    log.tick(0)
    assert log.controller.cluster.registration(broker).fenced


def elect(log, election_type, partitions=None):
    request = ElectLeadersRequest(election_type=election_type, topic_partitions=None if
                                  partitions is None else [TopicPartitions(topic="t",
                                                                           partitions=partitions)])
    response, records = log.handle(request)
    return response, records


def set_topic_config(log, name, value):
    log.handle(IncrementalAlterConfigsRequest(resources=[AlterConfigsResource(
        resource_type=2, resource_name="t",
        configs=[AlterableConfig(name=name, config_operation=0, value=value)])]))


def test_preferred_election_moves_leadership_back():
    log = MetadataLog()
    log.start_brokers(1, 2)
    create_topic(log, "t", -1, -1, assignments=[[1, 2]])
    silence(log, 1, [2])
    assert log.partition("t", 0).leader == 2 and log.partition("t", 0).isr == (2,)
    response, records = elect(log, 0, [0])
    assert records == []
    assert response.replica_election_results[0].partition_result[0].error_code == \
        ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE
    # Broker 1 comes back (same incarnation), rejoins the ISR, then a preferred election.
    log.register(1)
    log.heartbeat(1)
    assert log.controller.cluster.is_active(1)
    part = log.partition("t", 0)
    log.handle(AlterPartitionRequest(broker_id=2, broker_epoch=log.epochs[2], topics=[TopicData(
        topic_id=log.topic_id("t"), partitions=[PartitionData(
            partition_index=0, leader_epoch=part.leader_epoch,
            partition_epoch=part.partition_epoch,
            new_isr_with_epochs=[BrokerState(broker_id=b, broker_epoch=log.epochs[b])
                                 for b in (2, 1)])])]))
    response, records = elect(log, 0, [0])
    assert len(records) == 1
    assert response.replica_election_results[0].partition_result[0].error_code == 0
    assert log.partition("t", 0).leader == 1
    response, records = elect(log, 0, [0])
    result = response.replica_election_results[0].partition_result[0]
    assert (result.error_code, result.error_message) == (
        ErrorCode.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition.")
    # All partitions: those already led by their preferred replica are left out.
    response, records = elect(log, 0, None)
    assert records == [] and response.replica_election_results[0].partition_result == []


def test_unknown_partition_election():
    log = MetadataLog()
    log.start_brokers(1)
    create_topic(log, "t")
    response, _ = elect(log, 0, [4])
    result = response.replica_election_results[0].partition_result[0]
    assert (result.error_code, result.error_message) == (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "No such partition as t-4")


def test_last_isr_member_fenced_leaves_the_partition_leaderless_with_elr():
    """Kafka 4.4 finalizes eligible.leader.replicas.version=1: the ISR may empty out and the
    last member is remembered in the ELR; it leads again when it is back."""
    log = MetadataLog()
    log.start_brokers(1, 2)
    create_topic(log, "t", -1, -1, assignments=[[1]])
    silence(log, 1, [2])
    part = log.partition("t", 0)
    assert part.leader == -1 and part.isr == () and part.elr == (1,)
    log.register(1)
    _, records = log.heartbeat(1)
    part = log.partition("t", 0)
    assert part.leader == 1 and part.isr == (1,) and part.elr == ()


def test_without_elr_the_isr_keeps_its_last_member():
    log = MetadataLog()
    log.apply_records([FeatureLevelRecord(name="eligible.leader.replicas.version",
                                          feature_level=0)])
    log.start_brokers(1, 2)
    create_topic(log, "t", -1, -1, assignments=[[1]])
    silence(log, 1, [2])
    part = log.partition("t", 0)
    assert part.leader == -1 and part.isr == (1,) and part.elr == ()


def test_unclean_election_picks_a_live_replica_outside_the_isr():
    log = MetadataLog()
    log.start_brokers(1, 2)
    create_topic(log, "t", -1, -1, assignments=[[1, 2]])
    silence(log, 2, [1])                  # ISR shrinks to [1]
    log.register(2)
    log.heartbeat(2)                      # 2 is back but not in the ISR
    silence(log, 1, [2])                  # the last ISR member goes away
    part = log.partition("t", 0)
    assert part.leader == -1
    response, records = elect(log, 1, [0])
    assert response.replica_election_results[0].partition_result[0].error_code == 0
    part = log.partition("t", 0)
    assert part.leader == 2 and part.isr == (2,) and part.leader_recovery_state == 1
    response, _ = elect(log, 1, [0])
    assert response.replica_election_results[0].partition_result[0].error_code == \
        ErrorCode.ELECTION_NOT_NEEDED


def test_unclean_leader_election_enable_elects_on_fencing():
    log = MetadataLog()
    log.start_brokers(1, 2)
    create_topic(log, "t", -1, -1, assignments=[[1, 2]])
    set_topic_config(log, "unclean.leader.election.enable", "true")
    silence(log, 2, [1])
    log.register(2)
    log.heartbeat(2)
    silence(log, 1, [2])
    part = log.partition("t", 0)
    assert part.leader == 2 and part.isr == (2,)


def _fenced_last_replica(log):
    log.start_brokers(1, 2)
    create_topic(log, "t", -1, -1, assignments=[[1]])
    old_epoch = log.epochs[1]
    silence(log, 1, [2])
    assert log.partition("t", 0).elr == (1,)
    return old_epoch


def test_clean_restart_of_the_last_elr_member_leads_again_cleanly():
    log = MetadataLog()
    old_epoch = _fenced_last_replica(log)
    response, records = log.register(1, incarnation=b"\x05" * 16, previous_epoch=old_epoch)
    assert response.error_code == 0 and len(records) == 1      # just the RegisterBrokerRecord
    log.heartbeat(1)
    part = log.partition("t", 0)
    assert (part.leader, part.isr, part.elr, part.leader_recovery_state) == (1, (1,), (), 0)


def test_unclean_restart_leaves_the_elr_and_recovers_as_last_known_leader():
    """A new incarnation that did not shut down cleanly (previous_broker_epoch is not its
    registered epoch) leaves the ELR; coming back it is elected only as the last known leader,
    which is an unclean election (leader recovery state RECOVERING)."""
    log = MetadataLog()
    _fenced_last_replica(log)
    response, records = log.register(1, incarnation=b"\x06" * 16, previous_epoch=-1)
    assert response.error_code == 0 and len(records) == 2
    part = log.partition("t", 0)
    assert (part.leader, part.isr, part.elr, part.last_known_elr) == (-1, (), (), (1,))
    log.heartbeat(1)
    part = log.partition("t", 0)
    assert (part.leader, part.isr, part.leader_recovery_state) == (1, (1,), 1)


def test_periodic_rebalance_moves_leadership_back_to_the_preferred_replica():
    log = MetadataLog()
    log.start_brokers(1, 2)
    create_topic(log, "t", -1, -1, assignments=[[1, 2], [2, 1]])
    silence(log, 1, [2])
    assert [log.partition("t", p).leader for p in range(2)] == [2, 2]
    # Kafka's imbalancedPartitions: what the controller's balance task walks and schedules on
    assert log.controller.replication.imbalanced == {(log.topic_id("t"), 0)}
    result = log.controller.balance_partition_leaders()
    assert (result.records, result.response) == ([], False)      # 1 is not back yet
    log.register(1)
    log.heartbeat(1)
    part = log.partition("t", 0)
    log.handle(AlterPartitionRequest(broker_id=2, broker_epoch=log.epochs[2], topics=[TopicData(
        topic_id=log.topic_id("t"), partitions=[PartitionData(
            partition_index=0, leader_epoch=part.leader_epoch,
            partition_epoch=part.partition_epoch,
            new_isr_with_epochs=[BrokerState(broker_id=b, broker_epoch=log.epochs[b])
                                 for b in (2, 1)])])]))
    result = log.controller.balance_partition_leaders()
    assert len(result.records) == 1 and result.response is False
    log.apply_records(result.records)
    assert [log.partition("t", p).leader for p in range(2)] == [1, 2]
    assert log.controller.replication.imbalanced == set()


def test_periodic_unclean_election_only_where_the_topic_allows_it():
    log = MetadataLog()
    log.start_brokers(1, 2)
    create_topic(log, "t", -1, -1, assignments=[[1, 2]])
    silence(log, 2, [1])
    log.register(2)
    log.heartbeat(2)
    silence(log, 1, [2])
    assert log.partition("t", 0).leader == -1
    assert log.controller.elect_unclean_leaders().records == []
    set_topic_config(log, "unclean.leader.election.enable", "true")
    result = log.controller.elect_unclean_leaders()
    log.apply_records(result.records)
    assert log.partition("t", 0).leader == 2


def test_unknown_election_type_fails_every_partition():
    log = MetadataLog()
    log.start_brokers(1)
    create_topic(log, "t", 2, 1)
    response, records = elect(log, 7, [0, 1])
    assert records == [] and response.error_code == ErrorCode.INVALID_REQUEST
    assert [(p.partition_id, p.error_code, p.error_message)
            for p in response.replica_election_results[0].partition_result] == [
        (0, ErrorCode.INVALID_REQUEST, "Unknown election type 7"),
        (1, ErrorCode.INVALID_REQUEST, "Unknown election type 7")]


def test_kafkas_fence_multiple_brokers_scenario():
    """ReplicationControlManagerTest.testFenceMultipleBrokers."""
    log = MetadataLog()
    log.start_brokers(0, 1, 2, 3, 4)
    create_topic(log, "foo", -1, -1, assignments=[[1, 2, 3], [2, 3, 4], [0, 2, 1]])
    for _ in range(3):
        log.now_ms += 4_000
        for b in (0, 1, 4):
            log.heartbeat(b)
    log.tick(0)
    assert all(log.controller.cluster.registration(b).fenced for b in (2, 3))
    p0, p1, p2 = (log.partition("foo", p) for p in range(3))
    assert (p0.replicas, p0.isr, p0.leader) == ((1, 2, 3), (1,), 1)
    assert (p1.replicas, p1.isr, p1.leader) == ((2, 3, 4), (4,), 4)
    assert (p2.replicas, p2.isr) == ((0, 2, 1), (0, 1)) and p2.leader != 2


def test_kafkas_balance_partition_leaders_scenario():
    """ReplicationControlManagerTest.testBalancePartitionLeaders: brokers 0 and 1 start
    fenced; once each is back in the ISR the rebalance hands it its preferred leadership."""
    log = MetadataLog()
    for b in range(5):
        log.register(b)
    for b in (2, 3, 4):
        log.heartbeat(b)
    create_topic(log, "foo", -1, -1, assignments=[[1, 2, 3], [2, 3, 4], [0, 2, 1]])
    assert [log.partition("foo", p).leader for p in range(3)] == [2, 2, 2]

    def expand(partition, isr):
        part = log.partition("foo", partition)
        response, _ = log.handle(AlterPartitionRequest(
            broker_id=2, broker_epoch=log.epochs[2], topics=[TopicData(
                topic_id=log.topic_id("foo"), partitions=[PartitionData(
                    partition_index=partition, leader_epoch=part.leader_epoch,
                    partition_epoch=part.partition_epoch,
                    new_isr_with_epochs=[BrokerState(broker_id=b, broker_epoch=-1)
                                         for b in isr])])]))
        p = response.topics[0].partitions[0]
        return p.error_code, p.leader_id, p.leader_epoch, p.isr, p.partition_epoch

    log.heartbeat(1)
    assert expand(0, [1, 2, 3]) == (0, 2, 0, [1, 2, 3], 1)
    result = log.controller.balance_partition_leaders()
    assert result.records == [PartitionChangeRecord(partition_id=0, topic_id=log.topic_id("foo"),
                                                    leader=1)]
    assert result.response is False
    log.apply_records(result.records)
    log.heartbeat(0)
    assert expand(2, [0, 2, 1]) == (0, 2, 0, [0, 2, 1], 1)
    result = log.controller.balance_partition_leaders()
    assert result.records == [PartitionChangeRecord(partition_id=2, topic_id=log.topic_id("foo"),
                                                    leader=0)]
    log.apply_records(result.records)
    assert all(log.partition("foo", p).has_preferred_leader() for p in range(3))


def test_changing_min_insync_replicas_clears_the_elr():
    """KIP-966: a min.insync.replicas change is followed by a ClearElrRecord, whose replay
    empties the ELRs (a topic's, or every topic's for a cluster-level change)."""
    from wire.metadata import ClearElrRecord

    log = MetadataLog()
    log.start_brokers(1, 2)
    create_topic(log, "t", -1, -1, assignments=[[1]])
    silence(log, 1, [2])
    assert log.partition("t", 0).elr == (1,)
    epoch = log.partition("t", 0).partition_epoch
    response, records = log.handle(IncrementalAlterConfigsRequest(resources=[
        AlterConfigsResource(resource_type=4, resource_name="", configs=[
            AlterableConfig(name="min.insync.replicas", config_operation=0, value="1")])]))
    assert [type(r) for r in records][-1] is ClearElrRecord and records[-1].topic_name == ""
    part = log.partition("t", 0)
    assert (part.elr, part.last_known_elr, part.partition_epoch) == ((), (), epoch + 1)
    result, records = create_topic(log, "u", 1, 1, configs={"min.insync.replicas": "1"})
    assert [type(r).__name__ for r in records][:3] == ["TopicRecord", "ConfigRecord",
                                                       "ClearElrRecord"]
    assert records[2].topic_name == "u"
