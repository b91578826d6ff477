"""replication-offset-checkpoint on the in-process broker: a clean shutdown writes every hosted
partition's high watermark, and a restarted leader starts its HW from that file (clamped to
its log), not from its log end: records its followers may not have stay unexposed."""

from __future__ import annotations

from confluent_kafka import Consumer, TopicPartition

from pykafkad.log.checkpoint import read_offsets, write_offsets
from pykafkad.replica.hw_checkpoint import REPLICATION_OFFSET_CHECKPOINT
from tests.integration.clients import WAIT_S, confluent_produce, create_topic
from tests.kraft.released_broker import run_released
from tests.replica.support import lead, on_broker

FOLLOWER = 2
#: long enough that only the clean shutdown writes the file during a test
NO_TIMER = {"replica.high.watermark.checkpoint.interval.ms": "3600000"}


def _values(n: int, start: int = 0):
    return [{"value": f"v{i}".encode()} for i in range(start, start + n)]


def high_watermark(bootstrap: str, topic: str) -> int:
    """The HW as a stock consumer is told it (ListOffsets latest)."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "hw-probe"})
    try:
        return c.get_watermark_offsets(TopicPartition(topic, 0), timeout=WAIT_S)[1]
    finally:
        c.close()


def test_a_restarted_leader_starts_its_high_watermark_from_the_checkpoint(tmp_path, topic_name):
    data = tmp_path / "data"
    checkpoint = data / REPLICATION_OFFSET_CHECKPOINT
    with run_released(data, config=NO_TIMER) as kafka:
        create_topic(kafka.bootstrap_servers, topic_name)
        confluent_produce(kafka.bootstrap_servers, topic_name, _values(10))
        # a follower joins the ISR and never fetches: acks=1 records stay above the HW
        lead(kafka, topic_name, replicas=[1, FOLLOWER], isr=[1, FOLLOWER], leader_epoch=1)
        confluent_produce(kafka.bootstrap_servers, topic_name, _values(5, 10), acks="1")
        assert high_watermark(kafka.bootstrap_servers, topic_name) == 10
        assert not checkpoint.exists()
    assert read_offsets(checkpoint) == {(topic_name, 0): 10}  # written at the clean shutdown
    assert checkpoint.read_text() == f"0\n1\n{topic_name} 0 10\n"

    with run_released(data, config=NO_TIMER) as kafka:
        part = lead(kafka, topic_name, replicas=[1, FOLLOWER], isr=[1, FOLLOWER],
                    leader_epoch=2)
        assert on_broker(kafka, lambda: (part.log_end_offset, part.high_watermark)) == (15, 10)
        assert high_watermark(kafka.bootstrap_servers, topic_name) == 10

    # a checkpoint past the log end (a log cut short) is clamped to the log end
    write_offsets(checkpoint, {(topic_name, 0): 99})
    with run_released(data, config=NO_TIMER) as kafka:
        part = lead(kafka, topic_name, replicas=[1, FOLLOWER], isr=[1, FOLLOWER],
                    leader_epoch=3)
        assert on_broker(kafka, lambda: part.high_watermark) == 15


def test_partitions_not_used_since_start_keep_their_checkpointed_entries(tmp_path, topic_name):
    """A single node hosts a partition on first use; the file keeps the others' entries (a
    KRaft broker hosts all of them once the first metadata image is in)."""
    data = tmp_path / "data"
    other = topic_name + "-other"
    with run_released(data, config=NO_TIMER) as kafka:
        for t in (topic_name, other):
            create_topic(kafka.bootstrap_servers, t)
            confluent_produce(kafka.bootstrap_servers, t, _values(3))
    assert read_offsets(data / REPLICATION_OFFSET_CHECKPOINT) == {(topic_name, 0): 3,
                                                                  (other, 0): 3}
    with run_released(data, config=NO_TIMER) as kafka:
        confluent_produce(kafka.bootstrap_servers, topic_name, _values(2, 3))
    assert read_offsets(data / REPLICATION_OFFSET_CHECKPOINT) == {(topic_name, 0): 5,
                                                                  (other, 0): 3}
