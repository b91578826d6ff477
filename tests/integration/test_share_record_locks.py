"""share.partition.max.record.locks (group config; broker default
group.share.partition.max.record.locks, 2000): the share-partition leader caps the records in
flight per share partition, as Kafka's SharePartition does.  The window counted is
[SPSO, SPEO); a fetch acquires at most what is left of the cap, but a batch-optimized fetch
takes the whole batch holding its last record, so the window can pass the cap by part of a
batch; at the cap nothing new is acquired until records are acknowledged.  Compared with a
live Kafka 4.4 through librdkafka's ShareConsumer."""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import AcknowledgeType, Producer, ShareConsumer

from pykafkad.testing import run_broker
from tests.integration.clients import WAIT_S, create_led_topic, needs_java
from tests.integration.test_share_groups import _earliest

CAP = 100  # the smallest share.partition.max.record.locks both brokers accept
BATCH = 70
BATCHES = 3


def _produce_batches(bootstrap: str, topic: str) -> None:
    """BATCHES record batches of BATCH records (a flush per batch)."""
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 60_000})
    for b in range(BATCHES):
        for i in range(BATCH):
            p.produce(topic, b"b%d-%d" % (b, i), partition=0)
        assert p.flush(WAIT_S) == 0


def _scenario(bootstrap: str, prefix: str, group_config: bool = True) -> list:
    """The offset ranges of each non-empty poll, every record ACCEPTed as it comes (the cap
    as a group config, or else the broker's)."""
    topic, group = f"{prefix}-locks", f"{prefix}-locks-g"
    create_led_topic(bootstrap, topic)
    if group_config:
        _earliest(bootstrap, group, share_partition_max_record_locks=str(CAP))
    else:
        _earliest(bootstrap, group)
    _produce_batches(bootstrap, topic)
    c = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group,
                       "share.acknowledgement.mode": "explicit", "max.poll.records": 1000})
    c.subscribe([topic])
    polls = []
    try:
        deadline = time.monotonic() + WAIT_S
        while sum(z - a + 1 for a, z in polls) < BATCH * BATCHES:
            assert time.monotonic() < deadline, polls
            got = c.poll(0.5)
            for m in got:
                assert m.error() is None, m.error()
                c.acknowledge(m, AcknowledgeType.ACCEPT)
            if got:
                offsets = [m.offset() for m in got]
                polls.append((min(offsets), max(offsets)))
                assert len(offsets) == max(offsets) - min(offsets) + 1, offsets
                c.commit_sync(WAIT_S)
    finally:
        c.close()
    return polls


def test_in_flight_records_are_capped_at_whole_batches():
    prefix = f"share-{uuid.uuid4().hex[:8]}"
    with run_broker() as b:
        polls = _scenario(b.bootstrap_servers, prefix)
    # 100 left of the cap: the first batch (70) and the whole second one (140 in flight);
    # the third only once those are acknowledged
    assert polls == [(0, 2 * BATCH - 1), (2 * BATCH, 3 * BATCH - 1)]


def test_the_broker_default_caps_groups_without_their_own():
    prefix = f"share-{uuid.uuid4().hex[:8]}"
    with run_broker(config={"group.share.partition.max.record.locks": str(CAP)}) as b:
        polls = _scenario(b.bootstrap_servers, prefix, group_config=False)
    assert polls == [(0, 2 * BATCH - 1), (2 * BATCH, 3 * BATCH - 1)]


@pytest.fixture(scope="module")
def reference_kafka():
    from compat.kafka_broker import run_kafka
    from tests.conftest import REFERENCE_KAFKA_VERSION

    with run_kafka(REFERENCE_KAFKA_VERSION) as kafka:
        yield kafka


@needs_java
def test_in_flight_cap_like_kafka(reference_kafka):
    prefix = f"share-{uuid.uuid4().hex[:8]}"
    with run_broker() as b:
        ours = _scenario(b.bootstrap_servers, prefix)
    assert ours == _scenario(reference_kafka.bootstrap_servers, prefix)
