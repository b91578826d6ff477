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
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})


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


class TopicsFileError(Exception):
    """``pykafkad-topics.json`` does not parse or has fields of the wrong type: the broker
    cannot know its topics, so it refuses to start (naming the file and the problem)."""


def _parse_topics_file(path: Path) -> tuple[list[Topic], set[bytes]]:
    try:
        raw = json.loads(path.read_bytes())
    except (ValueError, UnicodeDecodeError) as e:
        raise TopicsFileError(f"{path} is not valid JSON: {e}") from None
    except OSError as e:
        raise TopicsFileError(f"{path} cannot be read: {e.strerror or e}") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("topics", {}), dict):
        raise TopicsFileError(f"{path}: expected an object with a \"topics\" object")
    topics = []
    for name, t in raw.get("topics", {}).items():
        where = f"{path}: topic {name!r}"
        if not isinstance(t, dict):
            raise TopicsFileError(f"{where}: expected an object, got {type(t).__name__}")
        tid, partitions, configs = t.get("topic_id"), t.get("partitions"), t.get("configs", {})
        try:
            topic_id = uuid.UUID(tid).bytes if isinstance(tid, str) else None
        except ValueError:
            topic_id = None
        if topic_id is None:
            raise TopicsFileError(f"{where}: \"topic_id\" must be a UUID string, got {tid!r}")
        if type(partitions) is not int or partitions <= 0:
            raise TopicsFileError(
                f"{where}: \"partitions\" must be a positive integer, got {partitions!r}")
        if not isinstance(configs, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in configs.items()
        ):
            raise TopicsFileError(f"{where}: \"configs\" must map strings to strings")
        topics.append(Topic(name, topic_id, partitions, dict(configs)))
    deleting = raw.get("deleting", [])
    try:
        deleted_ids = {uuid.UUID(i).bytes for i in deleting}
    except (TypeError, ValueError, AttributeError):
        raise TopicsFileError(f"{path}: \"deleting\" must be a list of UUID strings") from None
    return topics, deleted_ids


class TopicRegistry:
    """The topics this broker hosts; every change is written through to disk atomically."""

    def __init__(self, data_dir: Path):
        self.path = data_dir / TOPICS_FILE
        self.topics: dict[str, Topic] = {}
        self.by_id: dict[bytes, Topic] = {}
        #: ids of deleted topics whose partition directories may still exist (a crash during
        #: DeleteTopics): their directories are deleted at the next start, never adopted
        self.deleting: set[bytes] = set()
        if self.path.exists():
            topics, self.deleting = _parse_topics_file(self.path)
            for topic in topics:
                self.topics[topic.name] = topic
                self.by_id[topic.topic_id] = topic

    def save(self) -> None:
        data: dict = {
            "version": 1, "topics": {n: t.to_json() for n, t in sorted(self.topics.items())}}
        if self.deleting:
            data["deleting"] = sorted(str(uuid.UUID(bytes=i)) for i in self.deleting)
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
        self.add_all([topic])

    def add_all(self, topics: list[Topic]) -> None:
        """Registers ``topics`` with one save (one fsync); if it cannot be saved, none is."""
        for topic in topics:
            self.topics[topic.name] = topic
            self.by_id[topic.topic_id] = topic
        try:
            self.save()
        except OSError:
            for topic in topics:
                self.discard(topic.name)
            raise

    def discard(self, name: str) -> None:
        """Forgets ``name`` in memory only (undoing an ``add`` whose save failed)."""
        topic = self.topics.pop(name, None)
        if topic is not None:
            self.by_id.pop(topic.topic_id, None)

    def remove(self, name: str) -> Topic:
        """Forgets the topic; its id stays in ``deleting`` until ``deleted`` is called.  If
        that cannot be saved, the topic stays registered."""
        return self.remove_all([name])[0]

    def remove_all(self, names: list[str]) -> list[Topic]:
        """``remove`` for several topics with one save; if it cannot be saved, all stay."""
        removed = []
        for name in names:
            topic = self.topics.pop(name)
            self.by_id.pop(topic.topic_id, None)
            self.deleting.add(topic.topic_id)
            removed.append(topic)
        try:
            self.save()
        except OSError:
            for topic in removed:
                self.deleting.discard(topic.topic_id)
                self.topics[topic.name] = topic
                self.by_id[topic.topic_id] = topic
            raise
        return removed

    def deleted(self, topic_ids: set[bytes] | None = None) -> None:
        """The directories of these deleted topics (default: all) are gone."""
        before = len(self.deleting)
        self.deleting -= self.deleting if topic_ids is None else topic_ids
        if len(self.deleting) != before:
            self.save()


def read_partition_metadata(partition_dir: str | os.PathLike) -> bytes | None:
    """The topic id in a partition directory's ``partition.metadata``; None when the file is
    missing or unreadable. (Read for every partition at start: plain os calls, no pathlib.)"""
    try:
        fd = os.open(os.path.join(partition_dir, "partition.metadata"), os.O_RDONLY)
    except OSError:
        return None
    try:
        text = os.read(fd, 4096).decode()
    except (OSError, UnicodeDecodeError):
        return None
    finally:
        os.close(fd)
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "topic_id":
            value = value.strip()
            try:
                topic_id = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
            except ValueError:
                return None
            return topic_id if len(topic_id) == 16 else None
    return None


def write_partition_metadata(partition_dir: Path, topic_id: bytes) -> None:
    """Kafka's per-partition ``partition.metadata`` file (version 0, base64 topic id)."""
    (partition_dir / "partition.metadata").write_text(
        f"version: 0\ntopic_id: {topic_id_base64(topic_id)}\n"
    )
