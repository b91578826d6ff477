"""Carrying a data dir written by the single-node pykafkad into the metadata log, once: the
records for its topics (pykafkad-topics.json) with the same topic ids, partition counts and
config overrides, this node the only replica and leader of each partition. The active
controller appends them with the bootstrap records of an empty log; the old files stay in
place, no longer read for topics.  Its group configs (pykafkad-group-configs.json) come
along as ConfigRecords, which is where Kafka keeps them; client-metrics subscriptions stay in
their own store.
"""

from __future__ import annotations

import logging
from pathlib import Path

from pykafkad.cluster import TOPICS_FILE, TopicRegistry
from wire.metadata import ConfigRecord, PartitionRecord, TopicRecord

log = logging.getLogger("pykafkad.kraft.migration")

TOPIC_RESOURCE, GROUP_RESOURCE = 2, 32


def single_node_records(data_dir: Path, node_id: int, directory_id: bytes,
                        leader_epoch: int = 0) -> list:
    """The records for the topics of ``data_dir``'s pykafkad-topics.json (none without it),
    then for its group configs."""
    records = _topic_records(data_dir, node_id, directory_id, leader_epoch)
    return records + _group_config_records(data_dir)


def _group_config_records(data_dir: Path) -> list:
    from pykafkad.coordinator.group_configs import GROUP_CONFIGS_FILE, GroupConfigStore

    if not (Path(data_dir) / GROUP_CONFIGS_FILE).exists():
        return []
    store = GroupConfigStore(Path(data_dir))
    return [ConfigRecord(resource_type=GROUP_RESOURCE, resource_name=group, name=key,
                         value=value)
            for group in store.names() for key, value in sorted(store.get(group).items())]


def _topic_records(data_dir: Path, node_id: int, directory_id: bytes, leader_epoch: int) -> list:
    if not (Path(data_dir) / TOPICS_FILE).exists():
        return []
    registry = TopicRegistry(Path(data_dir))
    records: list = []
    for name in sorted(registry.topics):
        topic = registry.topics[name]
        records.append(TopicRecord(name=topic.name, topic_id=topic.topic_id))
        for pid in range(topic.num_partitions):
            records.append(PartitionRecord(
                partition_id=pid, topic_id=topic.topic_id, replicas=[node_id], isr=[node_id],
                removing_replicas=[], adding_replicas=[], leader=node_id,
                leader_epoch=leader_epoch, partition_epoch=0, directories=[directory_id]))
        for key in sorted(topic.configs):
            records.append(ConfigRecord(resource_type=TOPIC_RESOURCE, resource_name=topic.name,
                                        name=key, value=topic.configs[key]))
    if records:
        log.info("Migrating %d topics of the single-node data dir %s into the metadata log "
                 "(same topic ids, partitions and configs); %s stays in place but is no longer "
                 "read.", len(registry.topics), data_dir, TOPICS_FILE)
    return records
