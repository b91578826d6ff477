"""The controller's state is built only by replaying records: after a busy scenario, a
standby controller that replays the same metadata log holds exactly the active one's state."""

from __future__ import annotations

from pykafkad.controller import QuorumController
from tests.controller.support import MetadataLog
from tests.controller.test_elections import silence
from tests.controller.test_reassignment import isr_change, reassign
from tests.controller.test_replication_control import create_topic
from wire.messages.allocate_producer_ids_request import AllocateProducerIdsRequest
from wire.messages.delete_topics_request import DeleteTopicsRequest


def state(c: QuorumController):
    rc = c.replication
    return (
        {t.name: (t.id, dict(t.parts)) for t in rc.topics.values()},
        dict(c.cluster.registrations), dict(c.cluster.register_offsets),
        {k: dict(v) for k, v in c.configs.configs.items()},
        c.producer_ids.next_block, dict(c.features.finalized),
    )


def test_a_standby_replaying_the_log_has_the_active_controllers_state():
    log = MetadataLog()
    log.start_brokers(1, 2, 3, 4)
    create_topic(log, "t", -1, -1, assignments=[[1, 2]])
    create_topic(log, "u", 6, 3, configs={"min.insync.replicas": "2"})
    create_topic(log, "gone", 2, 2)
    log.handle(DeleteTopicsRequest(topic_names=["gone"], topics=[]), version=5)
    reassign(log, [3, 4])
    isr_change(log, 1, [1, 2, 3, 4])
    log.handle(AllocateProducerIdsRequest(broker_id=2, broker_epoch=log.epochs[2]))
    silence(log, 4, [1, 2, 3])
    log.heartbeat(2, want_shut_down=True)
    log.register(4)
    log.heartbeat(4)

    standby = QuorumController(log.cluster_id)
    for offset, record in enumerate(log.records):
        standby.replay(record, offset)
    assert state(standby) == state(log.controller)
