"""kafka-python (pure Python client) implementations of the scenarios."""

from __future__ import annotations

import time

from compat.clients import authorization as authz
from compat.clients.cluster import (
    broker_ids,
    expect_spread,
    group_led_elsewhere,
    leaders,
)
from compat.clients.cluster import not_enough_replicas as cluster_not_enough_replicas
from compat.clients.setup import (
    BASE_TS,
    CLIENT_MAX_REQUEST,
    HEADERS,
    LARGE_OK,
    LARGE_TOO_BIG,
    LARGE_TOPIC_CONFIG,
    expect,
    large_value,
    values,
)
from compat.runner import WAIT_S, Env, NotApplicable, run_python_cells

NAME = "kafka-python"
#: poll timeout of a lone group member while it joins.  kafka-python 3.0.12 drops a join whose
#: SyncGroup answer lands just as poll() times out: the member keeps its generation but never
#: applies the assignment, so it fetches nothing (seen on a three-node Apache Kafka, where a
#: join takes more round trips).  A poll long enough for the whole join avoids the race; it
#: returns as soon as records come.
MEMBER_POLL_MS = 2000


def version() -> str:
    import kafka

    return f"kafka-python {kafka.__version__}"


def unavailable() -> str | None:
    try:
        import kafka  # noqa: F401
    except ImportError:
        return "kafka-python is not installed"
    return None


def _producer(env: Env, **conf):
    from kafka import KafkaProducer

    return KafkaProducer(**env.kafka_python(**{"acks": "all", "linger_ms": 5, **conf}))


def _send_all(producer, topic, records) -> list:
    """records: dicts of send() arguments; waits for every acknowledgement."""
    futures = [producer.send(topic, **r) for r in records]
    producer.flush(WAIT_S)
    return [f.get(WAIT_S) for f in futures]


def _consume(env: Env, topic: str, count: int, partitions=(0,), **conf) -> list:
    from kafka import KafkaConsumer, TopicPartition

    c = KafkaConsumer(**env.kafka_python(**{"enable_auto_commit": False, **conf}))
    tps = [TopicPartition(topic, p) for p in partitions]
    c.assign(tps)
    c.seek_to_beginning(*tps)
    out = []
    deadline = time.monotonic() + WAIT_S
    try:
        while len(out) < count and time.monotonic() < deadline:
            for recs in c.poll(timeout_ms=500).values():
                out.extend(recs)
    finally:
        c.close()
    out.sort(key=lambda r: (r.partition, r.offset))
    if len(out) < count:
        raise AssertionError(f"consumed {len(out)} of {count} records in {WAIT_S}s")
    return out


def produce_consume(env: Env) -> None:
    topic = env.topic()
    p = _producer(env)
    _send_all(p, topic, [{"value": v} for v in values(100)])
    p.close()
    got = _consume(env, topic, 100)
    expect([r.value for r in got], values(100), "values")
    expect([r.offset for r in got], list(range(100)), "offsets")


def codec(name: str):
    def run(env: Env) -> None:
        topic = env.topic()
        p = _producer(env, compression_type=None if name == "none" else name, linger_ms=50)
        _send_all(p, topic, [{"value": v, "key": b"k"} for v in values(200)])
        p.close()
        got = _consume(env, topic, 200)
        expect([r.value for r in got], values(200), "values")
    return run


def keys_partitioning(env: Env) -> None:
    topic = env.topic(partitions=4)
    p = _producer(env)
    keys = [f"key{i % 10}".encode() for i in range(40)]
    _send_all(p, topic, [{"key": k, "value": b"x"} for k in keys])
    _send_all(p, topic, [{"key": b"explicit", "value": str(i).encode(), "partition": i % 4}
                         for i in range(8)])
    p.close()
    got = _consume(env, topic, 48, partitions=range(4))
    where: dict[bytes, set] = {}
    for r in got:
        if r.key == b"explicit":
            expect(r.partition, int(r.value) % 4, f"partition of explicit record {r.value!r}")
        else:
            where.setdefault(r.key, set()).add(r.partition)
    expect({k: len(v) for k, v in where.items()}, {k: 1 for k in set(keys)},
           "partitions per key")


def headers(env: Env) -> None:
    # kafka-python cannot send a null header value (send() requires bytes): that one is left out
    sent = [(k, v) for k, v in HEADERS if v is not None]
    topic = env.topic()
    p = _producer(env)
    _send_all(p, topic, [{"value": v, "headers": sent} for v in values(10)])
    p.close()
    got = _consume(env, topic, 10)
    for r in got:
        expect([(k, v) for k, v in r.headers], sent, "headers")


def timestamps_create_time(env: Env) -> None:
    topic = env.topic()
    p = _producer(env)
    _send_all(p, topic, [{"value": v, "timestamp_ms": BASE_TS + 1000 * i}
                         for i, v in enumerate(values(20))])
    p.close()
    got = _consume(env, topic, 20)
    expect([r.timestamp for r in got], [BASE_TS + 1000 * i for i in range(20)], "timestamps")
    expect({r.timestamp_type for r in got}, {0}, "timestamp type (0 = CreateTime)")


def timestamps_log_append_time(env: Env) -> None:
    topic = env.topic(config={"message.timestamp.type": "LogAppendTime"})
    p = _producer(env)
    before = int(time.time() * 1000)
    meta = _send_all(p, topic, [{"value": v, "timestamp_ms": BASE_TS} for v in values(5)])
    after = int(time.time() * 1000)
    p.close()
    got = _consume(env, topic, 5)
    expect({r.timestamp_type for r in got}, {1}, "timestamp type (1 = LogAppendTime)")
    for r in got:
        if not before - 1000 <= r.timestamp <= after + 1000:
            raise AssertionError(f"LogAppendTime {r.timestamp} not in [{before}, {after}]")
    expect({m.timestamp for m in meta} == {got[0].timestamp}, True,
           "the produce response's log append time equals the stored timestamp")


def large_records(env: Env) -> None:
    from kafka.errors import MessageSizeTooLargeError

    topic = env.topic(config=LARGE_TOPIC_CONFIG)
    p = _producer(env, max_request_size=CLIENT_MAX_REQUEST)
    big = large_value(LARGE_OK)
    _send_all(p, topic, [{"value": big}])
    try:
        _send_all(p, topic, [{"value": large_value(LARGE_TOO_BIG)}])
        raise AssertionError("a record above max.message.bytes was accepted")
    except MessageSizeTooLargeError:
        pass
    finally:
        p.close()
    got = _consume(env, topic, 1)
    expect(len(got[0].value), LARGE_OK, "size")
    expect(got[0].value == big, True, "content intact")


def offsets_by_time(env: Env) -> None:
    from kafka import KafkaConsumer, TopicPartition

    topic = env.topic()
    p = _producer(env)
    _send_all(p, topic, [{"value": v, "timestamp_ms": BASE_TS + 1000 * i}
                         for i, v in enumerate(values(20))])
    p.close()
    c = KafkaConsumer(**env.kafka_python())
    tp = TopicPartition(topic, 0)
    try:
        between = c.offsets_for_times({tp: BASE_TS + 5500})[tp]
        expect((between.offset, between.timestamp), (6, BASE_TS + 6000), "between records")
        exact = c.offsets_for_times({tp: BASE_TS + 10_000})[tp]
        expect(exact.offset, 10, "exact timestamp")
        expect(c.offsets_for_times({tp: BASE_TS + 10_000_000})[tp], None, "after the last")
        expect(c.beginning_offsets([tp])[tp], 0, "beginning")
        expect(c.end_offsets([tp])[tp], 20, "end")
    finally:
        c.close()


def _admin(env: Env):
    from kafka.admin import KafkaAdminClient

    return KafkaAdminClient(**env.kafka_python(), request_timeout_ms=WAIT_S * 1000)


def _wait(cond, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)  # admin state has no change notification to wait on


def admin_topics(env: Env) -> None:
    from kafka.admin import NewPartitions, NewTopic
    from kafka.errors import TopicAlreadyExistsError, UnknownTopicOrPartitionError

    name = env.name()
    admin = _admin(env)
    try:
        admin.create_topics([NewTopic(name, 3, 1, topic_configs={"retention.ms": "12345"})])
        _wait(lambda: name in admin.list_topics(), "the topic in list_topics")
        try:
            admin.create_topics([NewTopic(name, 3, 1)])
            raise AssertionError("duplicate create accepted")
        except TopicAlreadyExistsError:
            pass
        desc = admin.describe_topics([name])[0]
        expect(sorted(p["partition_index"] for p in desc["partitions"]), [0, 1, 2], "partitions")
        expect(desc["error_code"], 0, "describe error")
        admin.create_partitions({name: NewPartitions(5)})
        _wait(lambda: len(admin.describe_topics([name])[0]["partitions"]) == 5, "5 partitions")
        admin.delete_topics([name])
        _wait(lambda: name not in admin.list_topics(), "the topic to disappear")
        try:
            admin.delete_topics([name])
            raise AssertionError("deleting a missing topic succeeded")
        except UnknownTopicOrPartitionError:
            pass
    finally:
        admin.close()


def admin_configs(env: Env) -> None:
    from kafka.admin import AlterConfigOp, ConfigResource, ConfigResourceType
    from kafka.errors import InvalidConfigurationError

    topic = env.topic(config={"retention.ms": "12345"})
    admin = _admin(env)

    def configs():
        out = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)],
                                     config_filter="all")
        return out["topic"][topic]

    try:
        c = configs()
        expect(c["retention.ms"]["value"], "12345", "override")
        expect(c["retention.ms"]["config_source"], "DYNAMIC_TOPIC_CONFIG", "override source")
        expect(c["segment.bytes"]["value"], "1073741824", "default segment.bytes")
        expect(c["segment.bytes"]["config_source"], "DEFAULT_CONFIG", "default source")
        admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic, configs={
            "cleanup.policy": (AlterConfigOp.SET, "compact"),
            "retention.ms": (AlterConfigOp.DELETE, None)})], incremental=True)
        c = configs()
        expect(c["cleanup.policy"]["value"], "compact", "set cleanup.policy")
        expect(c["retention.ms"]["value"], "604800000", "deleted override back to default")
        # kafka-python reports per-resource errors as values, not exceptions
        result = admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic, configs={
            "no.such.config": "1"})], incremental=True, raise_on_unknown=False)
        error = str(result["topic"][topic])
        if InvalidConfigurationError.__name__ not in error:
            raise AssertionError(f"an unknown config name was not refused: {error}")
    finally:
        admin.close()


def admin_describe_paging(env: Env) -> None:
    big = env.topic("big", partitions=7)
    small = env.topic("small", partitions=3)
    admin = _admin(env)
    try:
        pages = []
        cursor = None
        for _ in range(20):
            page = admin.describe_topic_partitions([big, small], response_partition_limit=3,
                                                   cursor=cursor)
            pages.append([(t["name"], [p["partition_index"] for p in t["partitions"]])
                          for t in page["topics"]])
            cursor = page["next_cursor"]
            if not cursor:
                break
        expect(pages, [[(big, [0, 1, 2])], [(big, [3, 4, 5])], [(big, [6]), (small, [0, 1])],
                       [(small, [2])]], "pages")
    finally:
        admin.close()


def _group_consumer(env: Env, group: str, topic: str, **conf):
    from kafka import KafkaConsumer

    c = KafkaConsumer(**env.kafka_python(**{"group_id": group, "auto_offset_reset": "earliest",
                                            "enable_auto_commit": False, **conf}))
    c.subscribe([topic])
    return c


def consumer_group(env: Env) -> None:
    from kafka.structs import OffsetAndMetadata

    topic = env.topic(partitions=4)
    group = env.name("group")
    p = _producer(env)
    _send_all(p, topic, [{"value": v, "partition": i % 4} for i, v in enumerate(values(40))])
    a = _group_consumer(env, group, topic)
    b = None
    seen: dict = {}
    try:
        deadline = time.monotonic() + WAIT_S
        while len(a.assignment()) < 4 and time.monotonic() < deadline:
            for recs in a.poll(timeout_ms=MEMBER_POLL_MS, max_records=1).values():
                for r in recs:
                    seen[(r.partition, r.offset)] = r.value
        expect(len(a.assignment()), 4, "partitions of the only member")
        a.commit()
        b = _group_consumer(env, group, topic)
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            for c in (a, b):
                for recs in c.poll(timeout_ms=MEMBER_POLL_MS // 2).values():
                    for r in recs:
                        seen[(r.partition, r.offset)] = r.value
            pa, pb = a.assignment(), b.assignment()
            # both members past the rebalance: a stale member still holds all four
            if pa and pb and not pa & pb and len(pa | pb) == 4 and len(seen) == 40:
                break
        pa, pb = {tp.partition for tp in a.assignment()}, {tp.partition for tp in b.assignment()}
        expect((len(pa), len(pb), pa & pb, pa | pb), (2, 2, set(), {0, 1, 2, 3}),
               "assignments after the rebalance")
        expect(len(seen), 40, "records consumed by the group")
        # each member commits the end of its own partitions, which it may not have read
        # itself (the other member read them before the rebalance), as the other clients do
        for member in (a, b):
            member.commit({tp: OffsetAndMetadata(10, "", -1) for tp in member.assignment()})
    finally:
        a.close()
        if b is not None:
            b.close()
    _send_all(p, topic, [{"value": b"late", "partition": i} for i in range(4)])
    p.close()
    c = _group_consumer(env, group, topic)
    try:
        got = []
        deadline = time.monotonic() + WAIT_S
        while len(got) < 4 and time.monotonic() < deadline:
            for recs in c.poll(timeout_ms=MEMBER_POLL_MS).values():
                got.extend(recs)
        expect(sorted((r.partition, r.value) for r in got), [(i, b"late") for i in range(4)],
               "a new member resumes after the committed offsets")
    finally:
        c.close()


def offset_commit(env: Env) -> None:
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    topic = env.topic()
    group = env.name("group")
    p = _producer(env)
    _send_all(p, topic, [{"value": v} for v in values(10)])
    p.close()
    tp = TopicPartition(topic, 0)
    c = KafkaConsumer(**env.kafka_python(), group_id=group, enable_auto_commit=False)
    try:
        c.assign([tp])
        c.commit({tp: OffsetAndMetadata(5, "meta", -1)})
        expect(c.committed(tp), 5, "committed offset")
        md = c.committed(tp, metadata=True)
        expect(md.metadata, "meta", "committed metadata")
    finally:
        c.close()
    c = KafkaConsumer(**env.kafka_python(), group_id=group, enable_auto_commit=False,
                      auto_offset_reset="none")
    try:
        c.assign([tp])
        recs = []
        deadline = time.monotonic() + WAIT_S
        while not recs and time.monotonic() < deadline:
            for rs in c.poll(timeout_ms=200).values():
                recs.extend(rs)
        expect(recs[0].offset if recs else None, 5, "a new member starts at the committed offset")
    finally:
        c.close()


def idempotent_producer(env: Env) -> None:
    topic = env.topic(partitions=2)
    p = _producer(env, enable_idempotence=True, max_in_flight_requests_per_connection=5)
    _send_all(p, topic, [{"value": v, "partition": i % 2} for i, v in enumerate(values(1000))])
    p.close()
    got = _consume(env, topic, 1000, partitions=(0, 1))
    for part in (0, 1):
        expect([r.value for r in got if r.partition == part],
               [v for i, v in enumerate(values(1000)) if i % 2 == part], f"partition {part}")


def _txn_producer(env: Env):
    p = _producer(env, transactional_id=env.name("txn"))
    p.init_transactions()
    return p


def transactions(env: Env) -> None:
    topic = env.topic()
    p = _txn_producer(env)
    for outcome, prefix in (("commit", "a"), ("abort", "b"), ("commit", "c")):
        p.begin_transaction()
        for v in values(5, prefix):
            p.send(topic, v)
        p.flush(WAIT_S)
        (p.commit_transaction if outcome == "commit" else p.abort_transaction)()
    p.close()
    committed = _consume(env, topic, 10, isolation_level="read_committed")
    expect([r.value for r in committed], values(5, "a") + values(5, "c"), "read_committed")
    everything = _consume(env, topic, 15)
    expect(sorted(r.value for r in everything),
           sorted(values(5, "a") + values(5, "b") + values(5, "c")), "read_uncommitted")


def transactions_offsets(env: Env) -> None:
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    source, sink = env.topic("in"), env.topic("out")
    group = env.name("group")
    p = _producer(env)
    _send_all(p, source, [{"value": v} for v in values(10)])
    p.close()
    c = _group_consumer(env, group, source)
    tp = TopicPartition(source, 0)
    t = _txn_producer(env)
    try:
        got = []
        deadline = time.monotonic() + WAIT_S
        while len(got) < 10 and time.monotonic() < deadline:
            for recs in c.poll(timeout_ms=MEMBER_POLL_MS).values():
                got.extend(recs)
        expect(len(got), 10, "input records")
        t.begin_transaction()
        for r in got:
            t.send(sink, r.value.upper())
        t.send_offsets_to_transaction({tp: OffsetAndMetadata(10, "", -1)}, c.group_metadata())
        t.commit_transaction()
    finally:
        t.close()
        c.close()
    out = _consume(env, sink, 10, isolation_level="read_committed")
    expect([r.value for r in out], [v.upper() for v in values(10)], "output")
    check = KafkaConsumer(**env.kafka_python(), group_id=group)
    try:
        expect(check.committed(tp), 10, "input offset committed with the transaction")
    finally:
        check.close()


# ------------------------------------------------------------------ cluster scenarios
def replicated_acks_all(env: Env) -> None:
    topic = env.topic(partitions=3, replication_factor=3, config={"min.insync.replicas": "2"})
    sent = values(300)
    p = _producer(env, acks="all", enable_idempotence=True)
    _send_all(p, topic, [{"value": v, "partition": i % 3} for i, v in enumerate(sent)])
    p.close()
    got = _consume(env, topic, 300, partitions=range(3))
    for part in range(3):
        expect([r.value for r in got if r.partition == part], sent[part::3], f"partition {part}")
    admin = _admin(env)
    try:
        desc = admin.describe_topics([topic])[0]["partitions"]
        brokers = {b["broker_id"] for b in admin.describe_cluster()["brokers"]}
    finally:
        admin.close()
    desc.sort(key=lambda p: p["partition_index"])
    expect([len(p["replica_nodes"]) for p in desc], [3, 3, 3], "replicas per partition")
    expect([sorted(p["isr_nodes"]) for p in desc], [sorted(p["replica_nodes"]) for p in desc],
           "ISR = replicas")
    expect_spread({p["partition_index"]: p["leader_id"] for p in desc}, brokers, "leaders")


def leaders_on_several_brokers(env: Env) -> None:
    from kafka.admin import KafkaAdminClient

    for rf in (1, 3):
        topic = env.topic(f"rf{rf}", partitions=6, replication_factor=rf)
        p = _producer(env, bootstrap_servers=env.first_broker)
        _send_all(p, topic, [{"value": f"p{i % 6}-{i // 6}".encode(), "partition": i % 6}
                             for i in range(60)])
        p.close()
        got = _consume(env, topic, 60, partitions=range(6), bootstrap_servers=env.first_broker)
        for part in range(6):
            expect([r.value for r in got if r.partition == part],
                   [f"p{part}-{j}".encode() for j in range(10)], f"rf={rf} partition {part}")
        admin = KafkaAdminClient(**env.kafka_python(bootstrap_servers=env.first_broker))
        try:
            desc = admin.describe_topics([topic])[0]["partitions"]
            brokers = {b["broker_id"] for b in admin.describe_cluster()["brokers"]}
        finally:
            admin.close()
        expect_spread({q["partition_index"]: q["leader_id"] for q in desc}, brokers,
                      f"rf={rf} leaders")


def group_coordinator_elsewhere(env: Env) -> None:
    from kafka import KafkaConsumer, TopicPartition
    from kafka.errors import CommitFailedError, RebalanceInProgressError
    from kafka.structs import OffsetAndMetadata

    group, coordinator, home = group_led_elsewhere(env)
    topic = env.topic(replication_factor=3)
    p = _producer(env)
    _send_all(p, topic, [{"value": v} for v in values(10)])
    p.close()
    tp = TopicPartition(topic, 0)
    c = KafkaConsumer(**env.kafka_python(bootstrap_servers=env.first_broker), group_id=group,
                      enable_auto_commit=False, auto_offset_reset="earliest")
    try:
        c.subscribe([topic])
        got = []
        deadline = time.monotonic() + WAIT_S
        while len(got) < 10 and time.monotonic() < deadline:
            for recs in c.poll(timeout_ms=MEMBER_POLL_MS).values():
                got.extend(r.value for r in recs)
        expect(got, values(10), "records read by the group")
        while True:
            try:
                c.commit({tp: OffsetAndMetadata(6, "", -1)})
                break
            except (RebalanceInProgressError, CommitFailedError):
                # kafka-python sometimes rejoins right after its first assignment (its
                # metadata snapshot races the join); the commit goes in the next generation
                if time.monotonic() > deadline:
                    raise
                c.poll(timeout_ms=200)
        # the coordinator this client found (FindCoordinator) and committed to; kafka-python
        # names its dedicated connection "coordinator-<node id>"
        found = str(c._coordinator.coordinator_id).removeprefix("coordinator-")
        expect(int(found), coordinator,
               f"the group's coordinator (bootstrapped from broker {home})")
    finally:
        c.close()
    # the next reader of the group takes the partition by assign(): its position comes from
    # the committed offset (OffsetFetch to the coordinator elsewhere)
    c = KafkaConsumer(**env.kafka_python(bootstrap_servers=env.first_broker), group_id=group,
                      enable_auto_commit=False, auto_offset_reset="none")
    try:
        c.assign([tp])
        first = None
        deadline = time.monotonic() + WAIT_S
        while first is None and time.monotonic() < deadline:
            for recs in c.poll(timeout_ms=200).values():
                first = recs[0].offset
        expect(first, 6, "a new reader resumes from the committed offset")
    finally:
        c.close()


def transaction_across_brokers(env: Env) -> None:
    topic = env.topic(partitions=3, replication_factor=3)
    expect_spread(leaders(env.harness, topic), broker_ids(env.harness), "leaders")
    p = _producer(env, bootstrap_servers=env.first_broker, transactional_id=env.name("txn"))
    p.init_transactions()
    try:
        for outcome, prefix in (("commit", "a"), ("abort", "b"), ("commit", "c")):
            p.begin_transaction()
            for i, v in enumerate(values(9, prefix)):
                p.send(topic, v, partition=i % 3)
            p.flush(WAIT_S)
            (p.commit_transaction if outcome == "commit" else p.abort_transaction)()
    finally:
        p.close()
    committed = _consume(env, topic, 18, partitions=range(3), isolation_level="read_committed",
                         bootstrap_servers=env.first_broker)
    for part in range(3):
        expect([r.value for r in committed if r.partition == part],
               values(9, "a")[part::3] + values(9, "c")[part::3], f"read_committed {part}")
    expect(len(_consume(env, topic, 27, partitions=range(3))), 27, "read_uncommitted")


def not_enough_replicas(env: Env) -> None:
    from kafka.errors import KafkaError

    def produce(topic: str, value: str) -> str | None:
        p = _producer(env, enable_idempotence=False, retries=0)
        try:
            _send_all(p, topic, [{"value": value.encode()}])
            return None
        except KafkaError as e:
            return type(e).__name__
        finally:
            p.close()

    cluster_not_enough_replicas(env, produce, "NotEnoughReplicasError")


def _na(reason: str):
    def run(env: Env) -> None:
        raise NotApplicable(reason)
    return run


def authorization(env: Env) -> None:
    from kafka import KafkaConsumer, KafkaProducer

    me = authz.user(env)
    topic, group = env.topic(), env.name("g")
    conf = {"bootstrap_servers": env.bootstrap, **me.kafka_python}
    # not idempotent: an idempotent producer also needs IDEMPOTENT_WRITE on the cluster
    producer_conf = {**conf, "acks": "all", "enable_idempotence": False,
                     "max_block_ms": WAIT_S * 1000}
    producer = KafkaProducer(**producer_conf)
    try:
        authz.expect_call_refused(lambda: producer.send(topic, b"refused").get(WAIT_S),
                                  "TOPIC_AUTHORIZATION_FAILED", "produce without an ACL")
    finally:
        producer.close()
    authz.grant(env, topic, group, authz.PRODUCE_ACLS)
    producer = KafkaProducer(**producer_conf)
    try:
        _send_all(producer, topic, [{"value": v} for v in values(3)])
    finally:
        producer.close()
    consumer = KafkaConsumer(**conf, group_id=group, auto_offset_reset="earliest",
                             enable_auto_commit=False)
    try:
        consumer.subscribe([topic])
        authz.expect_call_refused(lambda: consumer.poll(timeout_ms=WAIT_S * 1000),
                                  "GROUP_AUTHORIZATION_FAILED", "consume without an ACL")
    finally:
        consumer.close()
    authz.grant(env, topic, group, authz.CONSUME_ACLS)
    consumer = _group_consumer(env, group, topic, **me.kafka_python)
    try:
        got = []
        deadline = time.monotonic() + WAIT_S
        while len(got) < 3 and time.monotonic() < deadline:
            for recs in consumer.poll(timeout_ms=500).values():
                got.extend(r.value for r in recs)
        expect(got, values(3), "records read once allowed")
        consumer.commit()
    finally:
        consumer.close()


IMPLEMENTATIONS = {
    "produce-consume": produce_consume,
    **{f"codec-{c}": codec(c) for c in ("none", "gzip", "snappy", "lz4", "zstd")},
    "keys-partitioning": keys_partitioning,
    "headers": headers,
    "timestamps-create-time": timestamps_create_time,
    "timestamps-log-append-time": timestamps_log_append_time,
    "large-records": large_records,
    "offsets-by-time": offsets_by_time,
    "admin-topics": admin_topics,
    "admin-configs": admin_configs,
    "admin-describe-paging": admin_describe_paging,
    "consumer-group": consumer_group,
    "offset-commit": offset_commit,
    "idempotent-producer": idempotent_producer,
    "transactions": transactions,
    "transactions-offsets": transactions_offsets,
    "authorization": authorization,
    "replicated-acks-all": replicated_acks_all,
    "leaders-on-several-brokers": leaders_on_several_brokers,
    "group-coordinator-elsewhere": group_coordinator_elsewhere,
    "transaction-across-brokers": transaction_across_brokers,
    "not-enough-replicas": not_enough_replicas,
}


def run(bootstrap: str, scenarios: list[str], nodes=None, secured=None) -> dict:
    return run_python_cells(NAME, IMPLEMENTATIONS, bootstrap, scenarios, nodes, secured)
