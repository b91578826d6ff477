"""Spark's ``kafka`` format (spark-sql-kafka-0-10 and the Java kafka-clients it ships with).

Spark writes with DataFrame.write / writeStream and reads with read / readStream.  Spark 4.0's
sink ignores a ``timestamp`` column, so records with set timestamps come from the harness
(librdkafka) and Spark checks what it reads.  Spark neither administers topics nor commits
group offsets: those scenarios are n/a.  All scenarios share the process's one SparkSession.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import tempfile
import time

from compat.clients import authorization as authz
from compat.clients.setup import (
    BASE_TS,
    CLIENT_MAX_REQUEST,
    HEADERS,
    LARGE_OK,
    LARGE_TOO_BIG,
    LARGE_TOPIC_CONFIG,
    expect,
    large_value,
)
from compat.runner import WAIT_S, Env, run_python_cells

NAME = "spark"
QUERY_TIMEOUT_S = 180
HEADERS_TYPE = "array<struct<key:string,value:binary>>"


def version() -> str:
    from compat.spark import connector_jars, pyspark_version

    clients = [j.name[len("kafka-clients-"):-4] for j in connector_jars()
               if j.name.startswith("kafka-clients-")]
    return f"Spark {pyspark_version()} (kafka-clients {', '.join(clients) or '?'})"


def unavailable(pyspark_version: str | None = None) -> str | None:
    """Why the Spark column cannot run, in one line: no pyspark, no java, or no connector jars
    for this pyspark (fetched here, once, so that no Spark job fails on them later)."""
    from compat import maven
    from compat.spark import ConnectorUnavailable, connector_jars

    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "pyspark is not installed"
    if shutil.which("java") is None:
        return "java is not installed"
    try:
        connector_jars(pyspark_version)
    except ConnectorUnavailable as e:
        return str(e)
    except maven.MavenError as e:
        return str(e).splitlines()[0]
    return None


def _spark():
    from compat.spark import spark_session

    return spark_session("pykafkad-compat")


def _connection(env: Env) -> dict:
    """The connector's kafka.* options: the bootstrap and, on a secured target, the security
    settings of the Java client inside it."""
    return {"kafka.bootstrap.servers": env.bootstrap,
            **(env.security.spark_options() if env.security else {})}


def _write(env: Env, df, topic: str, **options) -> None:
    w = df.write.format("kafka").option("topic", topic)
    for k, v in {**_connection(env), **options}.items():
        w = w.option(k, v)
    w.save()


def _read(env: Env, **options):
    r = _spark().read.format("kafka")
    for k, v in {**_connection(env), **options}.items():
        r = r.option(k, v)
    return r.load()


def _rows(env: Env, topic: str, **options) -> list:
    rows = _read(env, subscribe=topic, **options).collect()
    return sorted(rows, key=lambda r: (r.partition, r.offset))


def _vals(rows) -> list[str]:
    return [bytes(r.value).decode() for r in rows]


def _df(rows, schema: str, *, one_task: bool = True):
    df = _spark().createDataFrame(rows, schema)
    return df.coalesce(1) if one_task else df  # one writing task keeps the rows' order


def vals(n: int, prefix: str = "v") -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


def produce_consume(env: Env) -> None:
    topic = env.topic()
    _write(env, _df([(v,) for v in vals(100)], "value string"), topic)
    rows = _rows(env, topic)
    expect(_vals(rows), vals(100), "values")
    expect([r.offset for r in rows], list(range(100)), "offsets")


def codec(name: str):
    def run(env: Env) -> None:
        topic = env.topic()
        _write(env, _df([("k", v) for v in vals(200)], "key string, value string"), topic,
               **{"kafka.compression.type": name, "kafka.linger.ms": "50"})
        expect(_vals(_rows(env, topic)), vals(200), "values")
    return run


def keys_partitioning(env: Env) -> None:
    topic = env.topic(partitions=4)
    keys = [f"key{i % 10}" for i in range(40)]
    rows = [(k, "x", None) for k in keys] + [("explicit", str(i), i % 4) for i in range(8)]
    _write(env, _df(rows, "key string, value string, partition int"), topic)
    where: dict[str, set] = {}
    for r in _rows(env, topic):
        k = bytes(r.key).decode()
        if k == "explicit":
            expect(r.partition, int(bytes(r.value)) % 4, "partition of an explicit record")
        else:
            where.setdefault(k, set()).add(r.partition)
    expect({k: len(v) for k, v in where.items()}, {k: 1 for k in set(keys)}, "partitions per key")


def headers(env: Env) -> None:
    topic = env.topic()
    _write(env, _df([(v, HEADERS) for v in vals(10)], f"value string, headers {HEADERS_TYPE}"),
           topic)
    for r in _rows(env, topic, includeHeaders="true"):
        expect([(h.key, None if h.value is None else bytes(h.value)) for h in r.headers],
               HEADERS, "headers")


def _produce_with_timestamps(env: Env, topic: str, n: int) -> None:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": env.harness})
    for i in range(n):
        p.produce(topic, f"v{i}".encode(), timestamp=BASE_TS + 1000 * i)
    if p.flush(WAIT_S):
        raise AssertionError("setup records not delivered")


def timestamps_create_time(env: Env) -> None:
    topic = env.topic()
    _produce_with_timestamps(env, topic, 20)
    rows = _rows(env, topic)
    expect([int(r.timestamp.replace(tzinfo=dt.UTC).timestamp() * 1000) for r in rows],
           [BASE_TS + 1000 * i for i in range(20)], "timestamps")
    expect({r.timestampType for r in rows}, {0}, "timestamp type (0 = CreateTime)")


def timestamps_log_append_time(env: Env) -> None:
    topic = env.topic(config={"message.timestamp.type": "LogAppendTime"})
    before = time.time() - 1
    _write(env, _df([(v,) for v in vals(5)], "value string"), topic)
    after = time.time() + 1
    rows = _rows(env, topic)
    expect({r.timestampType for r in rows}, {1}, "timestamp type (1 = LogAppendTime)")
    for r in rows:
        ts = r.timestamp.replace(tzinfo=dt.UTC).timestamp()
        if not before <= ts <= after:
            raise AssertionError(f"LogAppendTime {ts} not in [{before}, {after}]")


def large_records(env: Env) -> None:
    topic = env.topic(config=LARGE_TOPIC_CONFIG)
    big = large_value(LARGE_OK)
    opts = {"kafka.max.request.size": str(CLIENT_MAX_REQUEST)}
    _write(env, _df([(bytearray(big),)], "value binary"), topic, **opts)
    try:
        _write(env, _df([(bytearray(large_value(LARGE_TOO_BIG)),)], "value binary"), topic, **opts)
        raise AssertionError("a record above max.message.bytes was accepted")
    except Exception as e:  # the job fails with the producer's RecordTooLargeException
        if "RecordTooLarge" not in str(e):
            raise
    rows = _rows(env, topic)
    expect(len(rows), 1, "records")
    expect(bytes(rows[0].value) == big, True, "content intact")


def offsets_by_time(env: Env) -> None:
    topic = env.topic()
    _produce_with_timestamps(env, topic, 20)

    def offsets(**opts):
        return [r.offset for r in _rows(env, topic, **opts)]

    expect(offsets(startingOffsetsByTimestamp=json.dumps({topic: {"0": BASE_TS + 5500}}))[0], 6,
           "between records")
    expect(offsets(startingTimestamp=str(BASE_TS + 10_000))[0], 10, "exact timestamp")
    expect(offsets(startingTimestamp=str(BASE_TS + 10_000_000),
                   startingOffsetsByTimestampStrategy="latest"), [], "after the last")
    expect(offsets(endingOffsetsByTimestamp=json.dumps({topic: {"0": BASE_TS + 3000}})),
           [0, 1, 2], "ending by timestamp")


def idempotent_producer(env: Env) -> None:
    topic = env.topic(partitions=2)
    rows = [(v, i % 2) for i, v in enumerate(vals(1000))]
    _write(env, _df(rows, "value string, partition int"), topic,
           **{"kafka.enable.idempotence": "true", "kafka.acks": "all"})
    got = _rows(env, topic)
    for p in (0, 1):
        expect(_vals(r for r in got if r.partition == p),
               [v for i, v in enumerate(vals(1000)) if i % 2 == p], f"partition {p}")


def transactions(env: Env) -> None:
    from confluent_kafka import Producer

    topic = env.topic()
    # Spark reads transactional data; the transactions come from the harness (librdkafka)
    p = Producer({"bootstrap.servers": env.harness, "transactional.id": env.name("txn")})
    p.init_transactions(WAIT_S)
    for outcome, prefix in (("commit", "a"), ("abort", "b"), ("commit", "c")):
        p.begin_transaction()
        for v in vals(5, prefix):
            p.produce(topic, v.encode())
        p.flush(WAIT_S)
        (p.commit_transaction if outcome == "commit" else p.abort_transaction)(WAIT_S)
    committed = _rows(env, topic, **{"kafka.isolation.level": "read_committed"})
    expect(_vals(committed), vals(5, "a") + vals(5, "c"), "read_committed")
    everything = _rows(env, topic)
    expect(sorted(_vals(everything)), sorted(vals(5, "a") + vals(5, "b") + vals(5, "c")),
           "read_uncommitted")


def spark_batch(env: Env) -> None:
    a, b = env.topic("a", partitions=3), env.topic("b", partitions=2)
    rows = [(f"k{i}", f"v{i}", i % 3, [("i", str(i).encode())]) for i in range(30)]
    _write(env, _df(rows, f"key string, value string, partition int, headers {HEADERS_TYPE}",
                    one_task=False), a)
    _write(env, _df([(f"w{i}", i % 2) for i in range(10)], "value string, partition int"), b)
    got = _rows(env, a, includeHeaders="true")
    expect(len(got), 30, "records")
    for r in got:
        i = int(bytes(r.key).decode()[1:])
        expect((r.partition, bytes(r.value).decode(), [(h.key, bytes(h.value)) for h in r.headers]),
               (i % 3, f"v{i}", [("i", str(i).encode())]), "record")
    expect(sorted(r.offset for r in got if r.partition == 0), list(range(10)), "dense offsets")
    ranged = _read(env, subscribe=a, startingOffsets=json.dumps({a: {"0": 2, "1": -2, "2": 9}}),
                   endingOffsets=json.dumps({a: {"0": 5, "1": 1, "2": -1}})).collect()
    expect(sorted((r.partition, r.offset) for r in ranged), [(0, 2), (0, 3), (0, 4), (1, 0), (2, 9)],
           "JSON offset ranges")
    prefix = env.name()
    pattern = _read(env, subscribePattern=f"{prefix}-.*").collect()
    expect(sorted({r.topic for r in pattern}), sorted([a, b]), "subscribePattern topics")
    expect(len(pattern), 40, "subscribePattern records")
    assigned = _read(env, assign=json.dumps({a: [1], b: [0]})).collect()
    expect(sorted({(r.topic, r.partition) for r in assigned}), sorted([(a, 1), (b, 0)]), "assign")
    expect(len(assigned), 15, "assigned records")


def _run_stream(env: Env, source: str, sink: str, checkpoint: str, **options):
    r = _spark().readStream.format("kafka")
    r = r.option("subscribe", source).option("startingOffsets", "earliest")
    for k, v in {**_connection(env), **options}.items():
        r = r.option(k, v)
    w = r.load().select("key", "value").writeStream.format("kafka")
    for k, v in _connection(env).items():
        w = w.option(k, v)
    query = (w.option("topic", sink).option("checkpointLocation", checkpoint)
             .trigger(availableNow=True).start())
    if not query.awaitTermination(QUERY_TIMEOUT_S):
        query.stop()
        raise AssertionError(f"the streaming query did not finish in {QUERY_TIMEOUT_S}s")
    return [p["numInputRows"] for p in query.recentProgress]


def _write_values(env: Env, topic: str, values: list[str], partitions: int) -> None:
    _write(env, _df([(v, i % partitions) for i, v in enumerate(values)],
                    "value string, partition int"), topic)


def spark_streaming(env: Env) -> None:
    source, sink = env.topic("in", partitions=3), env.topic("out")
    checkpoint = tempfile.mkdtemp(prefix="compat-spark-cp-")
    try:
        _write_values(env, source, vals(30, "a"), 3)
        first = _run_stream(env, source, sink, checkpoint, maxOffsetsPerTrigger="8")
        expect((sum(first), max(first) <= 8), (30, True), "first run (rows, batches <= 8)")
        _write_values(env, source, vals(21, "b"), 3)
        second = _run_stream(env, source, sink, checkpoint, maxOffsetsPerTrigger="8")
        expect((sum(second), max(second) <= 8), (21, True), "restarted run")
        expect(sorted(_vals(_rows(env, sink))), sorted(vals(30, "a") + vals(21, "b")),
               "the sink has every record once")
    finally:
        shutil.rmtree(checkpoint, ignore_errors=True)


def spark_fail_on_data_loss(env: Env) -> None:
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import AdminClient, NewPartitions
    from pyspark.errors import StreamingQueryException

    source, sink = env.topic("in"), env.topic("out")
    checkpoint = tempfile.mkdtemp(prefix="compat-spark-cp-")
    admin = AdminClient({"bootstrap.servers": env.harness})
    try:
        _write_values(env, source, vals(10, "a"), 1)
        _run_stream(env, source, sink, checkpoint, failOnDataLoss="true")
        # partitions added to the topic start at offset 0: no data loss
        admin.create_partitions([NewPartitions(source, 2)])[source].result(WAIT_S)
        from compat.clients.setup import wait_for_topic
        wait_for_topic(env.harness, source, 2)
        _write_values(env, source, vals(10, "b"), 2)
        _run_stream(env, source, sink, checkpoint, failOnDataLoss="true")
        expect(len(_rows(env, sink)), 20, "records after adding a partition")
        # records deleted before the query read them: data loss
        _write(env, _df([(v, 0) for v in vals(10, "c")], "value string, partition int"), source)
        for f in admin.delete_records([TopicPartition(source, 0, 20)]).values():
            f.result(WAIT_S)
        try:
            _run_stream(env, source, sink, checkpoint, failOnDataLoss="true")
            raise AssertionError("failOnDataLoss=true did not fail on deleted records")
        except StreamingQueryException as e:
            if "lost" not in str(e).lower():
                raise
        _run_stream(env, source, sink, checkpoint, failOnDataLoss="false")
        got = _vals(_rows(env, sink))
        expect(sorted(got), sorted(vals(10, "a") + vals(10, "b") + vals(10, "c")[5:]),
               "after the loss, the query goes on from the log start")
    finally:
        shutil.rmtree(checkpoint, ignore_errors=True)


def spark_deprecated_offset_fetching(env: Env) -> None:
    key = "spark.sql.streaming.kafka.useDeprecatedOffsetFetching"
    spark = _spark()
    source, sink = env.topic("in", partitions=3), env.topic("out")
    _write_values(env, source, vals(12), 3)
    checkpoint = tempfile.mkdtemp(prefix="compat-spark-cp-")
    spark.conf.set(key, "true")
    try:
        expect(len(_rows(env, source)), 12, "batch read")
        _run_stream(env, source, sink, checkpoint)
    finally:
        spark.conf.unset(key)
        shutil.rmtree(checkpoint, ignore_errors=True)
    expect(sorted(_vals(_rows(env, sink))), sorted(vals(12)), "streamed records")


def spark_replicated(env: Env) -> None:
    """Spark's producer (acks=all) bootstrapped from one broker writes to the three leaders;
    its reader fetches from each leader (the topic is led by every broker)."""
    from compat.clients.cluster import broker_ids, expect_spread, leaders

    topic = env.topic(partitions=3, replication_factor=3, config={"min.insync.replicas": "2"})
    _write(env, _df([(f"k{i}", f"v{i}", i % 3) for i in range(60)],
                    "key string, value string, partition int", one_task=False), topic,
           **{"kafka.acks": "all", "kafka.bootstrap.servers": env.first_broker})
    rows = _read(env, subscribe=topic, **{"kafka.bootstrap.servers": env.first_broker}).collect()
    got = sorted((r.partition, bytes(r.key).decode(), bytes(r.value).decode()) for r in rows)
    expect(got, sorted((i % 3, f"k{i}", f"v{i}") for i in range(60)), "records")
    for p in range(3):
        expect(sorted(r.offset for r in rows if r.partition == p), list(range(20)),
               f"offsets of partition {p}")
    expect_spread(leaders(env.harness, topic), broker_ids(env.harness), "leaders")


def authorization(env: Env) -> None:
    """Spark's consumers are assigned their partitions (no group), so its refused read is the
    topic's READ."""
    me = authz.user(env).spark_options()
    # not idempotent: an idempotent producer also needs IDEMPOTENT_WRITE on the cluster
    writer = {**me, "kafka.enable.idempotence": "false"}
    topic, group = env.topic(), env.name("g")
    rows = _df([(v,) for v in vals(3)], "value string")
    authz.expect_call_refused(lambda: _write(env, rows, topic, **writer),
                              "TOPIC_AUTHORIZATION_FAILED", "write without an ACL")
    authz.grant(env, topic, group, authz.PRODUCE_ACLS)
    _write(env, rows, topic, **writer)
    authz.expect_call_refused(lambda: _rows(env, topic, **me), "TOPIC_AUTHORIZATION_FAILED",
                              "read without an ACL")
    authz.grant(env, topic, group, authz.CONSUME_ACLS)
    expect(_vals(_rows(env, topic, **me)), vals(3), "records read once allowed")


IMPLEMENTATIONS = {
    "authorization": authorization,
    "produce-consume": produce_consume,
    **{f"codec-{c}": codec(c) for c in ("none", "gzip", "snappy", "lz4", "zstd")},
    "keys-partitioning": keys_partitioning,
    "headers": headers,
    "timestamps-create-time": timestamps_create_time,
    "timestamps-log-append-time": timestamps_log_append_time,
    "large-records": large_records,
    "offsets-by-time": offsets_by_time,
    "idempotent-producer": idempotent_producer,
    "transactions": transactions,
    "spark-batch": spark_batch,
    "spark-streaming": spark_streaming,
    "spark-fail-on-data-loss": spark_fail_on_data_loss,
    "spark-deprecated-offset-fetching": spark_deprecated_offset_fetching,
    "spark-replicated": spark_replicated,
}


def run(bootstrap: str, scenarios: list[str], nodes=None, secured=None) -> dict:
    if any(s in IMPLEMENTATIONS for s in scenarios):
        _spark()  # the JVM starts here, not inside the first scenario's duration
    return run_python_cells(NAME, IMPLEMENTATIONS, bootstrap, scenarios, nodes, secured)
