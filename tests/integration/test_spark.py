"""Spark's ``kafka`` format (spark-sql-kafka-0-10, Java kafka-clients inside) against pykafkad.

The broker here caps DescribeTopicPartitions pages at 2 partitions
(``max.request.partition.size.limit``), so every multi-partition topic Spark's driver looks at
goes through cursor paging in Java's ``Admin.describeTopics``.
"""

from __future__ import annotations

import json

import pytest
from confluent_kafka import TopicPartition
from confluent_kafka.admin import AdminClient, NewPartitions

from pykafkad.testing import run_broker
from tests.integration.clients import WAIT_S, confluent_produce, create_topic
from tests.integration.spark_support import (
    needs_spark,
    new_topic,
    reader,
    run_available_now,
    spark,  # noqa: F401  (fixture)
    stream_reader,
    values,
)

pytestmark = needs_spark

BASE_TS = 1_700_000_000_000


@pytest.fixture(scope="module")
def kafka(tmp_path_factory):
    config = {"max.request.partition.size.limit": "2"}
    with run_broker(tmp_path_factory.mktemp("spark") / "data", config=config) as b:
        yield b


def produce_numbered(bootstrap, topic, partitions, per_partition, *, ts=None):
    """``p<partition>-<i>`` values; with ``ts``, record i of each partition at ts + 1000 i."""
    confluent_produce(bootstrap, topic, [
        {"value": f"p{p}-{i}".encode(), "partition": p,
         "timestamp": ts + 1000 * i if ts is not None else None}
        for p in range(partitions) for i in range(per_partition)
    ])


def test_batch_write_keys_values_headers_partitions(spark, kafka):  # noqa: F811
    bs = kafka.bootstrap_servers
    topic = new_topic()
    create_topic(bs, topic, partitions=3)
    rows = [(f"k{i}", f"v{i}", i % 3, [("h", f"{i}".encode()), ("dup", b"a"), ("dup", b"b")])
            for i in range(30)]
    df = spark.createDataFrame(
        rows, "key string, value string, partition int, "
              "headers array<struct<key:string,value:binary>>")
    df.write.format("kafka").option("kafka.bootstrap.servers", bs).option("topic", topic).save()

    got = reader(spark, bs, subscribe=topic, includeHeaders="true").load().collect()
    assert len(got) == 30
    by_part = {}
    for r in got:
        by_part.setdefault(r.partition, []).append(r)
    assert sorted(by_part) == [0, 1, 2]
    for p, recs in by_part.items():
        recs.sort(key=lambda r: r.offset)
        assert [r.offset for r in recs] == list(range(10))  # dense offsets from 0
        for r in recs:
            i = int(bytes(r.key).decode()[1:])
            assert i % 3 == p and bytes(r.value).decode() == f"v{i}"
            assert [(h.key, bytes(h.value)) for h in r.headers] == [
                ("h", str(i).encode()), ("dup", b"a"), ("dup", b"b")]
            assert r.topic == topic and r.timestampType == 0


def test_batch_read_offset_ranges(spark, kafka):  # noqa: F811
    bs = kafka.bootstrap_servers
    topic = new_topic()
    create_topic(bs, topic, partitions=2)
    produce_numbered(bs, topic, 2, 10, ts=BASE_TS)

    def read(**opts):
        rows = reader(spark, bs, subscribe=topic, **opts).load().collect()
        return sorted((r.partition, r.offset) for r in rows)

    everything = [(p, o) for p in range(2) for o in range(10)]
    assert read() == everything
    assert read(startingOffsets="earliest", endingOffsets="latest") == everything
    assert read(startingOffsets=json.dumps({topic: {"0": 3, "1": -2}}),
                endingOffsets=json.dumps({topic: {"0": 7, "1": -1}})) == (
        [(0, o) for o in range(3, 7)] + [(1, o) for o in range(10)])
    # by timestamp: the first offset whose timestamp is >= the one given
    assert read(startingOffsetsByTimestamp=json.dumps({topic: {"0": BASE_TS + 5000,
                                                               "1": BASE_TS + 8500}}),
                endingOffsetsByTimestamp=json.dumps({topic: {"0": BASE_TS + 7000,
                                                             "1": BASE_TS + 60_000}})) == (
        [(0, 5), (0, 6)] + [(1, 9)])
    assert read(startingTimestamp=str(BASE_TS + 9000)) == [(0, 9), (1, 9)]


def test_subscribe_pattern_and_assign(spark, kafka):  # noqa: F811
    bs = kafka.bootstrap_servers
    prefix = new_topic("pat")
    a, b, other = f"{prefix}-a", f"{prefix}-b", new_topic("other")
    for t in (a, b, other):
        create_topic(bs, t, partitions=3)
        produce_numbered(bs, t, 3, 2)
    rows = reader(spark, bs, subscribePattern=f"{prefix}-.*").load().collect()
    assert sorted({r.topic for r in rows}) == [a, b] and len(rows) == 12
    rows = reader(spark, bs, subscribe=f"{a},{other}").load().collect()
    assert sorted({r.topic for r in rows}) == sorted([a, other]) and len(rows) == 12
    rows = reader(spark, bs, assign=json.dumps({a: [0, 2], b: [1]})).load().collect()
    assert sorted((r.topic, r.partition) for r in rows) == sorted(
        [(a, 0), (a, 0), (a, 2), (a, 2), (b, 1), (b, 1)])
    assert sorted(values(r for r in rows if r.topic == a)) == ["p0-0", "p0-1", "p2-0", "p2-1"]


def test_min_partitions_splits_offset_ranges(spark, kafka):  # noqa: F811
    bs = kafka.bootstrap_servers
    topic = new_topic()
    create_topic(bs, topic, partitions=2)
    produce_numbered(bs, topic, 2, 50)
    df = reader(spark, bs, subscribe=topic, minPartitions="6").load()
    assert df.rdd.getNumPartitions() >= 6
    assert sorted(values(df.collect())) == sorted(f"p{p}-{i}" for p in range(2) for i in range(50))


def test_streaming_topic_to_topic_survives_restart(spark, kafka, tmp_path):  # noqa: F811
    """A checkpointed query, stopped and restarted: every record arrives exactly once (no
    failure happens, so the at-least-once sink writes no duplicates)."""
    bs = kafka.bootstrap_servers
    source, sink = new_topic("src"), new_topic("sink")
    create_topic(bs, source, partitions=3)
    create_topic(bs, sink, partitions=1)
    produce_numbered(bs, source, 3, 10)
    checkpoint = str(tmp_path / "checkpoint")

    def run():
        df = stream_reader(spark, bs, subscribe=source, startingOffsets="earliest",
                           maxOffsetsPerTrigger="8").load()
        out = df.selectExpr("CAST(key AS STRING) AS key", "value")
        query = run_available_now(out, checkpoint, **{"kafka.bootstrap.servers": bs,
                                                      "topic": sink})
        return [p["numInputRows"] for p in query.recentProgress]

    first = run()
    assert sum(first) == 30 and max(first) <= 8 and len(first) >= 4
    produce_numbered(bs, source, 3, 14)  # p<n>-0..13 again: 42 more records
    second = run()
    assert sum(second) == 42 and max(second) <= 8
    got = values(reader(spark, bs, subscribe=sink).load().collect())
    expected = [f"p{p}-{i}" for p in range(3) for i in range(10)] + [
        f"p{p}-{i}" for p in range(3) for i in range(14)]
    assert sorted(got) == sorted(expected)


def test_streaming_picks_up_new_partitions_without_data_loss(spark, kafka, tmp_path):  # noqa: F811
    """failOnDataLoss=true (the default) must not fire for partitions added to a topic: they
    start at offset 0, as on Kafka."""
    bs = kafka.bootstrap_servers
    source, sink = new_topic("src"), new_topic("sink")
    create_topic(bs, source, partitions=2)
    create_topic(bs, sink, partitions=1)
    produce_numbered(bs, source, 2, 5)
    checkpoint = str(tmp_path / "checkpoint")

    def run():
        df = stream_reader(spark, bs, subscribe=source, startingOffsets="earliest",
                           failOnDataLoss="true").load()
        run_available_now(df.select("value"), checkpoint,
                          **{"kafka.bootstrap.servers": bs, "topic": sink})

    run()
    admin = AdminClient({"bootstrap.servers": bs})
    admin.create_partitions([NewPartitions(source, 5)])[source].result(WAIT_S)
    produce_numbered(bs, source, 5, 3)
    run()
    got = values(reader(spark, bs, subscribe=sink).load().collect())
    assert sorted(got) == sorted(
        [f"p{p}-{i}" for p in range(2) for i in range(5)]
        + [f"p{p}-{i}" for p in range(5) for i in range(3)])


def test_fail_on_data_loss_as_on_kafka(spark, kafka, tmp_path):  # noqa: F811
    """Records deleted before a restarted query reads them are data loss: failOnDataLoss=true
    stops the query, failOnDataLoss=false goes on from the new log start."""
    from pyspark.errors import StreamingQueryException

    bs = kafka.bootstrap_servers
    source, sink = new_topic("src"), new_topic("sink")
    create_topic(bs, source, partitions=1)
    create_topic(bs, sink, partitions=1)
    produce_numbered(bs, source, 1, 10)
    checkpoint = str(tmp_path / "checkpoint")

    def run(fail_on_data_loss):
        df = stream_reader(spark, bs, subscribe=source, startingOffsets="earliest",
                           failOnDataLoss=fail_on_data_loss).load()
        return run_available_now(df.select("value"), checkpoint,
                                 **{"kafka.bootstrap.servers": bs, "topic": sink})

    run("true")
    confluent_produce(bs, source, [{"value": f"p0-{i}".encode()} for i in range(10, 20)])
    admin = AdminClient({"bootstrap.servers": bs})
    futures = admin.delete_records([TopicPartition(source, 0, 15)])
    for f in futures.values():
        assert f.result(WAIT_S).low_watermark == 15
    with pytest.raises(StreamingQueryException) as info:
        run("true")
    assert "lost" in str(info.value).lower()
    run("false")
    got = values(reader(spark, bs, subscribe=sink).load().collect())
    assert sorted(got) == sorted([f"p0-{i}" for i in range(10)] + [f"p0-{i}" for i in range(15, 20)])


def test_read_committed_skips_aborted_transactions(spark, kafka):  # noqa: F811
    from confluent_kafka import Producer

    bs = kafka.bootstrap_servers
    topic = new_topic("txn")
    create_topic(bs, topic, partitions=1)
    p = Producer({"bootstrap.servers": bs, "transactional.id": new_topic("tid")})
    p.init_transactions(WAIT_S)
    for outcome, batch in (("commit", "a"), ("abort", "b"), ("commit", "c")):
        p.begin_transaction()
        for i in range(5):
            p.produce(topic, f"{batch}{i}".encode())
        p.flush(WAIT_S)
        (p.commit_transaction if outcome == "commit" else p.abort_transaction)(WAIT_S)

    committed = reader(spark, bs, subscribe=topic,
                       **{"kafka.isolation.level": "read_committed"}).load().collect()
    assert values(sorted(committed, key=lambda r: r.offset)) == [
        *(f"a{i}" for i in range(5)), *(f"c{i}" for i in range(5))]
    everything = reader(spark, bs, subscribe=topic).load().collect()
    assert len(everything) == 15  # read_uncommitted: aborted data too, never the markers


def test_deprecated_consumer_offset_fetching(spark, kafka, tmp_path):  # noqa: F811
    """spark.sql.streaming.kafka.useDeprecatedOffsetFetching=true: the driver finds offsets
    with a subscribed consumer (consumer-group protocol) instead of the admin client."""
    bs = kafka.bootstrap_servers
    source, sink = new_topic("src"), new_topic("sink")
    create_topic(bs, source, partitions=3)
    create_topic(bs, sink, partitions=1)
    produce_numbered(bs, source, 3, 4)
    key = "spark.sql.streaming.kafka.useDeprecatedOffsetFetching"
    spark.conf.set(key, "true")
    try:
        rows = reader(spark, bs, subscribe=source).load().collect()
        assert len(rows) == 12
        df = stream_reader(spark, bs, subscribe=source, startingOffsets="earliest").load()
        run_available_now(df.select("value"), str(tmp_path / "cp"),
                          **{"kafka.bootstrap.servers": bs, "topic": sink})
    finally:
        spark.conf.unset(key)
    got = values(reader(spark, bs, subscribe=sink).load().collect())
    assert sorted(got) == sorted(f"p{p}-{i}" for p in range(3) for i in range(4))
