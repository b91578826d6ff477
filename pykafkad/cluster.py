"""Topics, partitions and topic ids of this single-node cluster, persisted in the data dir.

Kafka keeps topic metadata in its KRaft metadata log; pykafkad keeps the same facts (name,
topic id, partition count, config overrides) in ``pykafkad-topics.json`` beside the partition
directories, and writes Kafka's ``partition.metadata`` file into each partition directory.
"""

from __future__ import annotations

import base64
import json
import os
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from wire.errors import ErrorCode, KafkaError

TOPICS_FILE = "pykafkad-topics.json"
MAX_TOPIC_NAME = 249
_LEGAL = re.compile(r"^[a-zA-Z0-9._-]+$")
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


def validate_topic_name(name: str | None) -> None:
    """Kafka's rules (org.apache.kafka.common.internals.Topic.validate)."""
    if not name:
        raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, "Topic name is illegal, it can't be empty")
    if name in (".", ".."):
        raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, "Topic name cannot be \".\" or \"..\"")
    if len(name) > MAX_TOPIC_NAME:
        raise KafkaError(
            ErrorCode.INVALID_TOPIC_EXCEPTION,
            f"Topic name is illegal, it can't be longer than {MAX_TOPIC_NAME} characters, "
            f"topic name: {name}",
        )
    if not _LEGAL.match(name):
        raise KafkaError(
            ErrorCode.INVALID_TOPIC_EXCEPTION,
            f"Topic name {name} is illegal, it contains a character other than ASCII "
            "alphanumerics, '.', '_' and '-'",
        )


@dataclass
class Topic:
    name: str
    topic_id: bytes
    num_partitions: int
    configs: dict[str, str] = field(default_factory=dict)

    @property
    def is_internal(self) -> bool:
        return self.name in INTERNAL_TOPICS

    def to_json(self) -> dict:
        return {
            "topic_id": str(uuid.UUID(bytes=self.topic_id)),
            "partitions": self.num_partitions,
            "configs": self.configs,
        }


def new_topic_id() -> bytes:
    """A random non-zero UUID whose base64 form does not start with '-' (as Kafka's Uuid)."""
    while True:
        b = uuid.uuid4().bytes
        if base64.urlsafe_b64encode(b)[:1] != b"-" and b != bytes(16):
            return b


def topic_id_base64(topic_id: bytes) -> str:
    return base64.urlsafe_b64encode(topic_id).decode().rstrip("=")


class TopicRegistry:
    """The topics this broker hosts; every change is written through to disk atomically."""

    def __init__(self, data_dir: Path):
        self.path = data_dir / TOPICS_FILE
        self.topics: dict[str, Topic] = {}
        self.by_id: dict[bytes, Topic] = {}
        if self.path.exists():
            raw = json.loads(self.path.read_text())
            for name, t in raw.get("topics", {}).items():
                topic = Topic(
                    name, uuid.UUID(t["topic_id"]).bytes, int(t["partitions"]), dict(t["configs"])
                )
                self.topics[name] = topic
                self.by_id[topic.topic_id] = topic

    def save(self) -> None:
        data = {"version": 1, "topics": {n: t.to_json() for n, t in sorted(self.topics.items())}}
        tmp = self.path.with_suffix(".tmp")
        try:
            with open(tmp, "w") as f:
                json.dump(data, f, indent=1)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except OSError:  # e.g. disk full: the file on disk stays as it was
            tmp.unlink(missing_ok=True)
            raise

    def get(self, name: str) -> Topic | None:
        return self.topics.get(name)

    def add(self, topic: Topic) -> None:
        """Registers ``topic``; if it cannot be saved, it is not registered either."""
        self.topics[topic.name] = topic
        self.by_id[topic.topic_id] = topic
        try:
            self.save()
        except OSError:
            self.discard(topic.name)
            raise

    def discard(self, name: str) -> None:
        """Forgets ``name`` in memory only (undoing an ``add`` whose save failed)."""
        topic = self.topics.pop(name, None)
        if topic is not None:
            self.by_id.pop(topic.topic_id, None)

    def remove(self, name: str) -> Topic:
        """Unregisters ``name``; if that cannot be saved, it stays registered."""
        topic = self.topics.pop(name)
        self.by_id.pop(topic.topic_id, None)
        try:
            self.save()
        except OSError:
            self.topics[name] = topic
            self.by_id[topic.topic_id] = topic
            raise
        return topic


def write_partition_metadata(partition_dir: Path, topic_id: bytes) -> None:
    """Kafka's per-partition ``partition.metadata`` file (version 0, base64 topic id)."""
    (partition_dir / "partition.metadata").write_text(
        f"version: 0\ntopic_id: {topic_id_base64(topic_id)}\n"
    )
