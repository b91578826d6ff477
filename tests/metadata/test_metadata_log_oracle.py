"""The metadata log both ways with Apache Kafka 4.4.0: a ``__cluster_metadata-0`` log pykafkad
writes is read by Kafka's kafka-dump-log as the same records, and the log a real Kafka writes
replays with pykafkad's serde into an image with its topic, broker and features."""

from __future__ import annotations

import base64
import json
import re
import time
from pathlib import Path

import pytest

from pykafkad.log.config import LogConfig
from pykafkad.log.partition import PartitionLog
from pykafkad.metadata.batches import build_metadata_batch, decode_batches
from pykafkad.metadata.delta import MetadataDelta
from pykafkad.metadata.loader import MetadataLoader
from pykafkad.metadata.serde import encode_record
from tests.integration.clients import WAIT_S, create_topic, needs_java
from wire.messages._base import Struct
from wire.metadata import (
    BrokerRegistrationChangeRecord,
    ClientQuotaRecord,
    ConfigRecord,
    FeatureLevelRecord,
    FenceBrokerRecord,
    PartitionChangeRecord,
    PartitionRecord,
    ProducerIdsRecord,
    RegisterBrokerRecord,
    RemoveTopicRecord,
    TopicRecord,
    UnfenceBrokerRecord,
)
from wire.metadata.client_quota_record import EntityData
from wire.metadata.register_broker_record import BrokerEndpoint, BrokerFeature

pytestmark = needs_java

T1 = bytes.fromhex("5d95156302e646a8ba0ca5c4d090ecc2")
T2 = bytes.fromhex("0f3c8a64c9f04d1e9bb2a0e5e2b7f011")
DIR = bytes.fromhex("c1a1f0e0b4d84f0c8a0e7d8e3f0a1b2c")


def kafka_json(value):
    """A record field as Kafka's generated JSON converters print it."""
    if isinstance(value, Struct):
        return {_camel(f[0]): kafka_json(getattr(value, f[0])) for f in value._FIELDS}
    if isinstance(value, list):
        return [kafka_json(v) for v in value]
    if isinstance(value, bytes) and len(value) == 16:
        return base64.urlsafe_b64encode(value).decode().rstrip("=")
    return value


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def record_type(record) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", type(record).__name__).upper()


def metadata_records() -> list[list[tuple[object, int]]]:
    """Three batches of records at the versions Kafka 4.4 writes them."""
    broker = RegisterBrokerRecord(
        broker_id=1, incarnation_id=T2, broker_epoch=5,
        end_points=[BrokerEndpoint("PLAINTEXT", "localhost", 9092, 0)],
        features=[BrokerFeature("metadata.version", 7, 33)], rack="r1", fenced=True,
        in_controlled_shutdown=False, log_dirs=[DIR])
    partitions = [PartitionRecord(partition_id=p, topic_id=T1, replicas=[1], isr=[1],
                                  removing_replicas=[], adding_replicas=[], leader=1,
                                  leader_epoch=0, partition_epoch=0, directories=[DIR])
                  for p in range(3)]
    return [
        [(FeatureLevelRecord("metadata.version", 33), 0), (broker, 3),
         (UnfenceBrokerRecord(id=1, epoch=5), 0)],
        [(TopicRecord("orders", T1), 0), *[(p, 2) for p in partitions],
         (ConfigRecord(2, "orders", "retention.ms", "1000"), 0),
         (PartitionChangeRecord(partition_id=1, topic_id=T1, isr=[1], leader=1), 2)],
        [(ProducerIdsRecord(broker_id=1, broker_epoch=5, next_producer_id=1000), 0),
         (ClientQuotaRecord([EntityData("client-id", "c1")], "producer_byte_rate", 1024.0), 0),
         (BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=5, fenced=0,
                                         in_controlled_shutdown=1, log_dirs=[]), 2),
         (FenceBrokerRecord(id=1, epoch=5), 0),
         (ConfigRecord(2, "orders", "retention.ms", None), 0),
         (RemoveTopicRecord(T1), 0)],
    ]


def test_kafka_dump_log_reads_a_metadata_log_pykafkad_wrote(tmp_path: Path) -> None:
    from compat.kafka_tools import run_tool

    log_dir = tmp_path / "__cluster_metadata-0"
    log = PartitionLog.open(log_dir, LogConfig(), lambda: int(time.time() * 1000))
    batches = metadata_records()
    for batch in batches:
        log.append(build_metadata_batch(batch, epoch=1), leader_epoch=1)
    log.flush()
    log.close()
    proc = run_tool("kafka-dump-log", ["--cluster-metadata-decoder", "--files",
                                       str(log_dir / "00000000000000000000.log")])
    assert proc.returncode == 0, proc.stderr
    payloads = [json.loads(m) for m in re.findall(r"payload: (\{.*\})$", proc.stdout, re.M)]
    expected = [(r, v) for batch in batches for r, v in batch]
    assert len(payloads) == len(expected), proc.stdout
    for payload, (record, version) in zip(payloads, expected, strict=True):
        assert (payload["type"], payload["version"]) == (record_type(record), version)
        ours = kafka_json(record)
        # every field Kafka prints (it leaves out tagged fields at their defaults) is ours
        assert {k: ours[k] for k in payload["data"]} == payload["data"]
    assert len(re.findall(r"^baseOffset: ", proc.stdout, re.M)) == 3
    # and the log replays into the image those records make
    data = (log_dir / "00000000000000000000.log").read_bytes()
    image = MetadataDelta().replay_all(
        r for b in decode_batches(data, strict=True) for r, _ in b.records).apply()
    assert image.topics.get("orders") is None and image.cluster[1].fenced
    assert image.producer_ids == 1000


@pytest.fixture(scope="module")
def kafka_metadata(reference_kafka):
    """The reference broker's metadata log, read once it holds a 3-partition topic."""
    topic = f"h-metadata-{int(time.time() * 1000)}"
    create_topic(reference_kafka.bootstrap_servers, topic, partitions=3)
    log_dir = reference_kafka.data_dir / "logs" / "__cluster_metadata-0"
    deadline = time.monotonic() + WAIT_S
    while True:
        batches = [b for seg in sorted(log_dir.glob("*.log"))
                   for b in decode_batches(seg.read_bytes())]
        image = MetadataLoader().handle_commit(batches)  # Kafka wraps its bootstrap in a transaction
        topic_image = image.topics.get(topic)
        if topic_image is not None and len(topic_image.partitions) == 3:
            return reference_kafka, topic, batches, image
        if time.monotonic() > deadline:
            raise AssertionError(f"{topic} never appeared in {log_dir}")
        time.sleep(0.1)  # Kafka appends the records asynchronously: poll the file


def test_a_real_kafka_metadata_log_replays_into_an_image(kafka_metadata) -> None:
    kafka, topic, batches, image = kafka_metadata
    assert image.offset == batches[-1].last_offset
    assert image.metadata_version == 33  # 4.4-IV2, what format gave it
    assert image.features.level("transaction.version") == 2
    broker = image.cluster[1]
    assert not broker.fenced and broker.listener("PLAINTEXT").port == kafka.port
    assert broker.supported_features["metadata.version"][1] >= 33
    assert 1 in image.controllers
    t = image.topics.get(topic)
    assert image.topics.get(t.id) is t
    for p in t.partitions.values():
        assert (p.replicas, p.isr, p.leader) == ((1,), (1,), 1)
        assert p.leader_epoch >= 0 and len(p.directories) == 1
    changes = MetadataDelta().replay_all(image.records()).local_changes(1)
    assert {(topic, i) for i in range(3)} <= set(changes.leaders)


def test_kafkas_records_reencode_to_the_same_bytes(kafka_metadata) -> None:
    kafka, _topic, batches, _image = kafka_metadata
    log_dir = kafka.data_dir / "logs" / "__cluster_metadata-0"
    from wire.records.batch import decode_records, iter_batch_headers

    count = 0
    for seg in sorted(log_dir.glob("*.log")):
        data = seg.read_bytes()
        for pos, header in iter_batch_headers(data):
            if header.is_control:
                continue
            for rec in decode_records(data, pos):
                from pykafkad.metadata.serde import decode_record

                record, version = decode_record(rec.value)
                assert encode_record(record, version) == rec.value
                count += 1
    assert count >= sum(len(b.records) for b in batches)


def test_image_records_rebuild_what_kafka_built(kafka_metadata) -> None:
    _kafka, _topic, _batches, image = kafka_metadata
    rebuilt = MetadataDelta().replay_all(image.records()).apply(image.offset, image.epoch)
    assert rebuilt == image


def test_kafka_dump_log_reads_a_snapshot_of_kafkas_image(kafka_metadata, tmp_path: Path) -> None:
    """The image rebuilt from a real Kafka's log, written as a snapshot by pykafkad, is read by
    kafka-dump-log record for record."""
    from compat.kafka_tools import run_tool
    from pykafkad.metadata.snapshot import write_snapshot

    _kafka, topic, _batches, image = kafka_metadata
    records = image.records()
    path = write_snapshot(tmp_path / "__cluster_metadata-0", image.offset + 1, image.epoch,
                          records, last_contained_log_timestamp=0)
    proc = run_tool("kafka-dump-log", ["--cluster-metadata-decoder", "--files", str(path)])
    assert proc.returncode == 0, proc.stderr
    assert f"Snapshot end offset: {image.offset + 1}, epoch: {image.epoch}" in proc.stdout
    payloads = [json.loads(m) for m in re.findall(r"payload: (\{.*\})$", proc.stdout, re.M)]
    assert len(payloads) == len(records)
    for payload, record in zip(payloads, records, strict=True):
        assert payload["type"] == record_type(record)
        ours = kafka_json(record)
        assert {k: ours[k] for k in payload["data"]} == payload["data"]
    assert any(p["data"].get("name") == topic for p in payloads)
