"""FindCoordinator on a KRaft broker: the coordinator of a group (or transactional id) is the
leader of its partition of __consumer_offsets (__transaction_state), as Kafka's.  While the
internal topic does not exist the broker asks the active controller to create it (with
offsets.topic.replication.factor / transaction.state.log.replication.factor: the controller
refuses with INVALID_REPLICATION_FACTOR until enough brokers are registered) and answers
COORDINATOR_NOT_AVAILABLE meanwhile, as Kafka's AutoTopicCreationManager does."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import trio

from pykafkad.coordinator.partitioning import partition_for
from wire.errors import ErrorCode
from wire.messages.create_topics_request import (
    CreatableTopic,
    CreatableTopicConfig,
    CreateTopicsRequest,
)

log = logging.getLogger("pykafkad.kraft.coordinator")

GROUP_METADATA_TOPIC = "__consumer_offsets"
TRANSACTION_STATE_TOPIC = "__transaction_state"
SHARE_GROUP_STATE_TOPIC = "__share_group_state"


def internal_topic(config: Any, name: str) -> CreatableTopic:
    """The topic Kafka's broker asks the controller for (its internal-topic configs)."""
    if name == GROUP_METADATA_TOPIC:
        num, rf = config["offsets.topic.num.partitions"], config["offsets.topic.replication.factor"]
        configs = {"cleanup.policy": "compact",
                   "segment.bytes": str(config["offsets.topic.segment.bytes"]),
                   "compression.type": "producer"}
    elif name == SHARE_GROUP_STATE_TOPIC:
        from pykafkad.coordinator.share_group import state_store

        num = state_store.NUM_PARTITIONS
        # Kafka's default is 3 (share.coordinator.state.topic.replication.factor); pykafkad
        # follows the offsets topic's, which fits the cluster it runs in
        rf = config["offsets.topic.replication.factor"]
        configs = dict(state_store._TOPIC_CONFIGS)  # noqa: SLF001 - the topic's own configs
    else:
        num = config["transaction.state.log.num.partitions"]
        rf = config["transaction.state.log.replication.factor"]
        configs = {"cleanup.policy": "compact", "compression.type": "uncompressed",
                   "min.insync.replicas": str(config["transaction.state.log.min.isr"]),
                   "unclean.leader.election.enable": "false",
                   "segment.bytes": str(config["transaction.state.log.segment.bytes"])}
    return CreatableTopic(name=name, num_partitions=num, replication_factor=rf,
                          assignments=[], configs=[CreatableTopicConfig(k, v)
                                                   for k, v in configs.items()])


class AutoTopicCreationManager:
    """Kafka's DefaultAutoTopicCreationManager: CreateTopics to the active controller for a
    topic a client asked for (Metadata, FindCoordinator), one request in flight per name;
    the callers answer LEADER_NOT_AVAILABLE / COORDINATOR_NOT_AVAILABLE meanwhile."""

    def __init__(self, broker: Any, channel: Any, spawn: Callable[..., None]):
        self.broker = broker
        self.channel = channel
        self.spawn = spawn
        self._creating: set[str] = set()

    def create_topic(self, name: str) -> bool:
        """Asks for a topic with num.partitions / default.replication.factor, as
        auto.create.topics.enable does; False when auto-creation is off."""
        config = self.broker.config
        if not config["auto.create.topics.enable"]:
            return False
        self.create(CreatableTopic(name=name, num_partitions=config["num.partitions"],
                                   replication_factor=config["default.replication.factor"],
                                   assignments=[], configs=[]))
        return True

    def create(self, topic: CreatableTopic) -> None:
        if topic.name in self._creating:
            return
        self._creating.add(topic.name)
        self.spawn(self._send_create, topic)

    async def _send_create(self, topic: CreatableTopic) -> None:
        name = topic.name
        try:
            response = await self.channel.send(CreateTopicsRequest(topics=[topic],
                                                                   timeout_ms=30000))
            for t in response.topics:
                if t.error_code and t.error_code != ErrorCode.TOPIC_ALREADY_EXISTS:
                    log.info("creating %s: %s %s", name, ErrorCode(t.error_code).name,
                             t.error_message or "")
        except (trio.TooSlowError, OSError) as e:
            log.info("creating %s failed: %r", name, e)
        finally:
            self._creating.discard(name)


class CoordinatorLocator:
    def __init__(self, broker: Any, creation: AutoTopicCreationManager):
        self.broker = broker
        self.creation = creation

    def find(self, topic_name: str, key: str, listener_name: str) -> tuple[int, Any]:
        """(error code, the coordinator's BrokerNode or None)."""
        topic = self.broker.topics.get(topic_name)
        if topic is None:
            self._create(topic_name)
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, None
        index = partition_for(key, topic.num_partitions)
        cache = self.broker.metadata_cache
        view = cache.partition(topic_name, index)
        node = cache.broker_endpoint(view.leader, listener_name) if view.leader >= 0 else None
        if node is None:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, None
        return ErrorCode.NONE, node

    def _create(self, name: str) -> None:
        self.creation.create(internal_topic(self.broker.config, name))
