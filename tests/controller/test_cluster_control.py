"""Broker registration, heartbeats, fencing and controlled shutdown, driven through
BrokerRegistration / BrokerHeartbeat requests and replayed records with a fake clock."""

from __future__ import annotations

import uuid

from tests.controller.support import MetadataLog
from wire.errors import ErrorCode
from wire.metadata import (
    BrokerRegistrationChangeRecord,
    PartitionChangeRecord,
    RegisterBrokerRecord,
)


def test_registration_epoch_is_the_offset_of_the_record_and_the_broker_starts_fenced():
    log = MetadataLog()
    offset = log.end_offset
    response, records = log.register(1)
    assert response.error_code == 0
    assert [type(r) for r in records] == [RegisterBrokerRecord]
    assert response.broker_epoch == offset == records[0].broker_epoch
    reg = log.controller.cluster.registration(1)
    assert reg.fenced and reg.epoch == offset
    assert reg.listeners == (("PLAINTEXT", "localhost", 9093, 0),)


def test_broker_is_unfenced_only_once_caught_up_to_its_registration():
    log = MetadataLog()
    log.register(1)
    response, records = log.heartbeat(1, caught_up=False)
    assert (response.is_fenced, response.is_caught_up, records) == (True, False, [])
    response, records = log.heartbeat(1)
    assert (response.is_fenced, response.is_caught_up) == (False, True)
    assert len(records) == 1 and isinstance(records[0], BrokerRegistrationChangeRecord)
    assert records[0].fenced == -1
    assert log.controller.cluster.is_active(1)


def test_registration_errors_are_kafkas():
    log = MetadataLog()
    response, records = log.register(1, cluster_id="other")
    assert response.error_code == ErrorCode.INCONSISTENT_CLUSTER_ID and records == []
    response, _ = log.register(1, mv_range=(7, 20))
    assert response.error_code == ErrorCode.UNSUPPORTED_VERSION
    log.start_brokers(1)
    # Another incarnation while the session is alive: DUPLICATE_BROKER_REGISTRATION.
    response, records = log.register(1, incarnation=uuid.uuid4().bytes)
    assert response.error_code == ErrorCode.DUPLICATE_BROKER_REGISTRATION and records == []
    # The same incarnation re-registering keeps its epoch and state.
    epoch = log.epochs[1]
    response, records = log.register(1)
    assert response.error_code == 0 and response.broker_epoch == epoch
    assert records[0].fenced is False


def test_new_incarnation_after_session_expiry_gets_a_new_epoch():
    log = MetadataLog()
    log.start_brokers(1)
    old_epoch = log.epochs[1]
    log.tick(9_001)
    assert log.controller.cluster.registration(1).fenced
    response, records = log.register(1, incarnation=uuid.uuid4().bytes)
    assert response.error_code == 0 and response.broker_epoch > old_epoch


def test_stale_epoch_heartbeat_is_refused():
    log = MetadataLog()
    log.start_brokers(1)
    response, records = log.heartbeat(1, epoch=log.epochs[1] + 100)
    assert response.error_code == ErrorCode.STALE_BROKER_EPOCH and records == []


def test_session_expiry_fences_the_broker_and_moves_its_leaders():
    log = MetadataLog()
    log.start_brokers(1, 2, 3)
    from tests.controller.test_replication_control import create_topic
    create_topic(log, "t", 6, 3)
    led_by_1 = [p for p in range(6) if log.partition("t", p).leader == 1]
    assert led_by_1
    # Brokers 2 and 3 keep heartbeating; broker 1 goes silent past broker.session.timeout.ms.
    for _ in range(3):
        log.now_ms += 4_000
        log.heartbeat(2)
        log.heartbeat(3)
    fenced = log.tick(0)
    assert len(fenced) == 1
    assert isinstance(fenced[0][-1], BrokerRegistrationChangeRecord) and fenced[0][-1].fenced == 1
    assert all(isinstance(r, PartitionChangeRecord) for r in fenced[0][:-1])
    for p in range(6):
        part = log.partition("t", p)
        assert 1 not in part.isr and part.leader in (2, 3)
        if p in led_by_1:
            assert part.leader_epoch == 1
    assert log.controller.cluster.registration(1).fenced


def test_controlled_shutdown_moves_leaders_then_lets_the_broker_go():
    log = MetadataLog()
    log.start_brokers(1, 2)
    from tests.controller.test_replication_control import create_topic
    create_topic(log, "t", 4, 2)
    response, records = log.heartbeat(1, want_shut_down=True)
    assert response.is_fenced is False
    assert log.controller.cluster.in_controlled_shutdown(1)
    assert all(log.partition("t", p).leader == 2 for p in range(4))
    assert all(log.partition("t", p).isr == (2,) for p in range(4))
    # Once broker 2 has caught up past the shutdown records, broker 1 may stop.
    log.heartbeat(2)
    response, records = log.heartbeat(1, want_shut_down=True)
    assert response.should_shut_down is True
    assert log.controller.cluster.registration(1).fenced


def test_unleading_broker_asking_to_shut_down_is_let_go_at_once():
    log = MetadataLog()
    log.start_brokers(1)
    response, _ = log.heartbeat(1, want_shut_down=True)
    assert response.should_shut_down is True and response.is_fenced is True


def test_cordoning_every_log_dir_keeps_new_replicas_off_the_broker():
    """KIP-1066: a heartbeat listing cordoned dirs records them; a broker whose dirs are all
    cordoned gets no new replicas and cannot be named in a manual assignment."""
    from tests.controller.test_replication_control import create_topic
    from wire.messages.broker_heartbeat_request import BrokerHeartbeatRequest

    log = MetadataLog()
    log.start_brokers(1, 2)
    dirs = list(log.controller.cluster.registration(2).directories)
    request = BrokerHeartbeatRequest(broker_id=2, broker_epoch=log.epochs[2],
                                     current_metadata_offset=log.end_offset - 1,
                                     offline_log_dirs=[], cordoned_log_dirs=dirs)
    response, records = log.handle(request)
    assert [(type(r), r.cordoned_log_dirs) for r in records] == [
        (BrokerRegistrationChangeRecord, dirs)]
    assert log.handle(request)[1] == []          # unchanged: nothing more to write
    create_topic(log, "t", 4, 1)
    assert {log.partition("t", p).replicas for p in range(4)} == {(1,)}
    result, _ = create_topic(log, "u", 2, 2)
    assert result.error_code == ErrorCode.INVALID_REPLICATION_FACTOR
    assert result.error_message.endswith("because only 1 broker(s) are registered or some "
                                         "brokers have all their log directories cordoned.")
    result, _ = create_topic(log, "v", -1, -1, assignments=[[2]])
    assert (result.error_code, result.error_message) == (
        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        "The manual partition assignment includes broker 2, but all its log directories are "
        "cordoned.")


def test_a_standby_that_becomes_active_starts_sessions_afresh():
    """A controller that replayed the log while standing by (no clock of its own) must not
    take every broker's session for expired when it becomes active."""
    from pykafkad.controller import QuorumController

    active = MetadataLog()
    active.start_brokers(1, 2)
    standby = QuorumController(active.controller.cluster.cluster_id)
    for offset, record in enumerate(active.records):
        standby.replay(record, offset)
    now = active.now_ms + 60_000
    standby.activate(now)
    assert standby.fence_stale_brokers(now).records == []
    fenced = standby.fence_stale_brokers(now + 9_001).records
    assert isinstance(fenced[-1], BrokerRegistrationChangeRecord) and fenced[-1].fenced == 1


def test_offline_log_dir_moves_leadership_away():
    from tests.controller.test_replication_control import create_topic
    from wire.messages.broker_heartbeat_request import BrokerHeartbeatRequest

    log = MetadataLog()
    log.start_brokers(1, 2)
    create_topic(log, "t", -1, -1, assignments=[[1, 2], [2, 1]])
    dirs = list(log.controller.cluster.registration(1).directories)
    assert log.partition("t", 0).directory(1) == dirs[0]
    response, records = log.handle(BrokerHeartbeatRequest(
        broker_id=1, broker_epoch=log.epochs[1], current_metadata_offset=log.end_offset - 1,
        offline_log_dirs=dirs))
    assert response.error_code == 0
    assert isinstance(records[-1], BrokerRegistrationChangeRecord) and records[-1].log_dirs == []
    for p in range(2):
        part = log.partition("t", p)
        assert part.leader == 2 and part.isr == (2,)


def test_first_heartbeat_records_the_cordoned_dirs_once():
    """As Kafka 4.4's own metadata log shows: the heartbeat that unfences a new broker also
    records its (empty) cordoned dirs, which the registration left unset; after that an
    unchanged list writes nothing."""
    from wire.messages.broker_heartbeat_request import BrokerHeartbeatRequest

    log = MetadataLog()
    log.register(1)

    def beat():
        return log.handle(BrokerHeartbeatRequest(
            broker_id=1, broker_epoch=log.epochs[1], current_metadata_offset=log.end_offset - 1,
            offline_log_dirs=[], cordoned_log_dirs=[]))[1]

    records = beat()
    assert [(r.fenced, r.cordoned_log_dirs) for r in records] == [(-1, None), (0, [])]
    assert beat() == []
