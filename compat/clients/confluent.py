"""confluent-kafka (librdkafka) implementations of the scenarios."""

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
    share_groups_from_earliest,
    values,
)
from compat.runner import WAIT_S, Env, run_python_cells

NAME = "confluent-kafka"


def version() -> str:
    import confluent_kafka

    v = confluent_kafka.version()
    v = v[0] if isinstance(v, tuple) else v
    return f"confluent-kafka {v} (librdkafka {confluent_kafka.libversion()[0]})"


def unavailable() -> str | None:
    try:
        import confluent_kafka  # noqa: F401
    except ImportError:
        return "confluent-kafka is not installed"
    return None


def _produce(env: Env, topic: str, records: list[dict], producer=None, **conf) -> list:
    """records: dicts of produce() arguments.  Returns the delivered messages, in order; a
    delivery error raises."""
    from confluent_kafka import Producer

    p = producer or Producer(env.librdkafka({"linger.ms": 5, **conf}))
    delivered: list = []
    errors: list = []

    def on_delivery(err, msg):
        (errors if err else delivered).append(err or msg)

    for r in records:
        p.produce(topic, on_delivery=on_delivery, **r)
        p.poll(0)
    remaining = p.flush(WAIT_S)
    if errors:
        raise errors[0] if isinstance(errors[0], Exception) else _DeliveryError(errors[0])
    if remaining:
        raise AssertionError(f"{remaining} records not delivered in {WAIT_S}s")
    return delivered


class _DeliveryError(Exception):
    def __init__(self, err):
        super().__init__(f"delivery failed: {err.name()}: {err.str()}")
        self.err = err


def _consume(env: Env, topic: str, count: int, partitions=(0,), **conf) -> list:
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    c = Consumer(env.librdkafka({"group.id": env.name("reader"), "enable.auto.commit": False,
                                 **conf}))
    c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
    out = []
    deadline = time.monotonic() + WAIT_S
    try:
        while len(out) < count and time.monotonic() < deadline:
            msg = c.poll(0.5)
            if msg is None:
                continue
            if msg.error():
                raise AssertionError(f"consume error: {msg.error()}")
            out.append(msg)
    finally:
        c.close()
    out.sort(key=lambda m: (m.partition(), m.offset()))
    if len(out) < count:
        raise AssertionError(f"consumed {len(out)} of {count} records in {WAIT_S}s")
    return out


def produce_consume(env: Env) -> None:
    topic = env.topic()
    _produce(env, topic, [{"value": v} for v in values(100)])
    got = _consume(env, topic, 100)
    expect([m.value() for m in got], values(100), "values")
    expect([m.offset() for m in got], list(range(100)), "offsets")


def codec(name: str):
    def run(env: Env) -> None:
        topic = env.topic()
        _produce(env, topic, [{"value": v, "key": b"k"} for v in values(200)],
                 **{"compression.type": name, "linger.ms": 50})
        got = _consume(env, topic, 200)
        expect([m.value() for m in got], values(200), "values")
    return run


def keys_partitioning(env: Env) -> None:
    topic = env.topic(partitions=4)
    keys = [f"key{i % 10}".encode() for i in range(40)]
    _produce(env, topic, [{"key": k, "value": b"x"} for k in keys]
             + [{"key": b"explicit", "value": str(i).encode(), "partition": i % 4}
                for i in range(8)])
    got = _consume(env, topic, 48, partitions=range(4))
    where: dict[bytes, set] = {}
    for m in got:
        if m.key() == b"explicit":
            expect(m.partition(), int(m.value()) % 4, "partition of an explicit record")
        else:
            where.setdefault(m.key(), set()).add(m.partition())
    expect({k: len(v) for k, v in where.items()}, {k: 1 for k in set(keys)},
           "partitions per key")


def headers(env: Env) -> None:
    topic = env.topic()
    _produce(env, topic, [{"value": v, "headers": HEADERS} for v in values(10)])
    for m in _consume(env, topic, 10):
        expect(m.headers(), HEADERS, "headers")


def timestamps_create_time(env: Env) -> None:
    from confluent_kafka import TIMESTAMP_CREATE_TIME

    topic = env.topic()
    _produce(env, topic, [{"value": v, "timestamp": BASE_TS + 1000 * i}
                          for i, v in enumerate(values(20))])
    got = _consume(env, topic, 20)
    expect([m.timestamp() for m in got],
           [(TIMESTAMP_CREATE_TIME, BASE_TS + 1000 * i) for i in range(20)], "timestamps")


def timestamps_log_append_time(env: Env) -> None:
    from confluent_kafka import TIMESTAMP_LOG_APPEND_TIME

    topic = env.topic(config={"message.timestamp.type": "LogAppendTime"})
    before = int(time.time() * 1000)
    delivered = _produce(env, topic, [{"value": v, "timestamp": BASE_TS} for v in values(5)])
    after = int(time.time() * 1000)
    got = _consume(env, topic, 5)
    for m in got:
        kind, ts = m.timestamp()
        expect(kind, TIMESTAMP_LOG_APPEND_TIME, "timestamp type")
        if not before - 1000 <= ts <= after + 1000:
            raise AssertionError(f"LogAppendTime {ts} not in [{before}, {after}]")
    expect({d.timestamp() for d in delivered}, {got[0].timestamp()},
           "the delivery report carries the log append time")


def large_records(env: Env) -> None:
    from confluent_kafka import KafkaError

    topic = env.topic(config=LARGE_TOPIC_CONFIG)
    big = large_value(LARGE_OK)
    conf = {"message.max.bytes": CLIENT_MAX_REQUEST}
    _produce(env, topic, [{"value": big}], **conf)
    try:
        _produce(env, topic, [{"value": large_value(LARGE_TOO_BIG)}], **conf)
        raise AssertionError("a record above max.message.bytes was accepted")
    except _DeliveryError as e:
        expect(e.err.code(), KafkaError.MSG_SIZE_TOO_LARGE, "error of the refused record")
    got = _consume(env, topic, 1)
    expect(len(got[0].value()), LARGE_OK, "size")
    expect(got[0].value() == big, True, "content intact")


def offsets_by_time(env: Env) -> None:
    from confluent_kafka import Consumer, TopicPartition

    topic = env.topic()
    _produce(env, topic, [{"value": v, "timestamp": BASE_TS + 1000 * i}
                          for i, v in enumerate(values(20))])
    c = Consumer(env.librdkafka({"group.id": env.name("g")}))
    try:
        def lookup(ts):
            return c.offsets_for_times([TopicPartition(topic, 0, ts)], timeout=WAIT_S)[0].offset

        expect(lookup(BASE_TS + 5500), 6, "between records")
        expect(lookup(BASE_TS + 10_000), 10, "exact timestamp")
        expect(lookup(BASE_TS + 10_000_000), -1, "after the last (OFFSET_END)")
        expect(c.get_watermark_offsets(TopicPartition(topic, 0), timeout=WAIT_S), (0, 20),
               "watermarks")
    finally:
        c.close()


def _admin(env: Env):
    from confluent_kafka.admin import AdminClient

    return AdminClient(env.librdkafka())


def _wait(cond, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)  # admin state has no change notification to wait on


def _error_name(fut) -> str | None:
    from confluent_kafka import KafkaException

    try:
        fut.result(WAIT_S)
        return None
    except KafkaException as e:
        return e.args[0].name()


def admin_topics(env: Env) -> None:
    from confluent_kafka import TopicCollection
    from confluent_kafka.admin import NewPartitions, NewTopic

    name = env.name()
    admin = _admin(env)
    admin.create_topics([NewTopic(name, 3, 1, config={"retention.ms": "12345"})])[name].result(WAIT_S)
    _wait(lambda: name in admin.list_topics(timeout=WAIT_S).topics, "the topic in metadata")
    expect(_error_name(admin.create_topics([NewTopic(name, 3, 1)])[name]),
           "TOPIC_ALREADY_EXISTS", "duplicate create")
    desc = admin.describe_topics(TopicCollection([name]))[name].result(WAIT_S)
    expect([p.id for p in desc.partitions], [0, 1, 2], "partitions")
    admin.create_partitions([NewPartitions(name, 5)])[name].result(WAIT_S)
    _wait(lambda: len(admin.list_topics(name, timeout=WAIT_S).topics[name].partitions) == 5,
          "5 partitions")
    admin.delete_topics([name])[name].result(WAIT_S)
    _wait(lambda: name not in admin.list_topics(timeout=WAIT_S).topics, "the topic to go")
    expect(_error_name(admin.delete_topics([name])[name]), "UNKNOWN_TOPIC_OR_PART",
           "deleting a missing topic")


def admin_configs(env: Env) -> None:
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource

    topic = env.topic(config={"retention.ms": "12345"})
    admin = _admin(env)
    res = ConfigResource("topic", topic)

    def configs():
        return admin.describe_configs([res])[res].result(WAIT_S)

    c = configs()
    expect((c["retention.ms"].value, c["retention.ms"].is_default), ("12345", False), "override")
    expect((c["segment.bytes"].value, c["segment.bytes"].is_default), ("1073741824", True),
           "default segment.bytes")
    alter = ConfigResource("topic", topic, incremental_configs=[
        ConfigEntry("cleanup.policy", "compact", incremental_operation=AlterConfigOpType.SET),
        ConfigEntry("retention.ms", None, incremental_operation=AlterConfigOpType.DELETE)])
    admin.incremental_alter_configs([alter])[alter].result(WAIT_S)
    c = configs()
    expect(c["cleanup.policy"].value, "compact", "set cleanup.policy")
    expect((c["retention.ms"].value, c["retention.ms"].is_default), ("604800000", True),
           "deleted override back to default")
    bad = ConfigResource("topic", topic, incremental_configs=[
        ConfigEntry("no.such.config", "1", incremental_operation=AlterConfigOpType.SET)])
    expect(_error_name(admin.incremental_alter_configs([bad])[bad]), "INVALID_CONFIG",
           "unknown config name")


def _group_consumer(env: Env, group: str, topic: str, **conf):
    from confluent_kafka import Consumer

    c = Consumer(env.librdkafka({"group.id": group, "auto.offset.reset": "earliest",
                                 "enable.auto.commit": False, **conf}))
    c.subscribe([topic])
    return c


def consumer_group(env: Env) -> None:
    two_members(env)


def consumer_group_protocol(env: Env) -> None:
    two_members(env, **{"group.protocol": "consumer"})


def two_members(env: Env, **conf) -> None:
    """The consumer-group scenario, its members configured with ``conf``."""
    from confluent_kafka import TopicPartition

    topic = env.topic(partitions=4)
    group = env.name("group")
    _produce(env, topic, [{"value": v, "partition": i % 4} for i, v in enumerate(values(40))])
    seen: dict = {}

    def poll(c, timeout):
        m = c.poll(timeout)
        if m is not None and not m.error():
            seen[(m.partition(), m.offset())] = m.value()

    a = _group_consumer(env, group, topic, **conf)
    b = None
    try:
        deadline = time.monotonic() + WAIT_S
        while len(a.assignment()) < 4 and time.monotonic() < deadline:
            poll(a, 0.2)
        expect(len(a.assignment()), 4, "partitions of the only member")
        b = _group_consumer(env, group, topic, **conf)
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            poll(a, 0.05)
            poll(b, 0.05)
            pa = {tp.partition for tp in a.assignment()}
            pb = {tp.partition for tp in b.assignment()}
            if pa and pb and len(pa | pb) == 4 and not pa & pb and len(seen) == 40:
                break
        pa = {tp.partition for tp in a.assignment()}
        pb = {tp.partition for tp in b.assignment()}
        expect((len(pa), len(pb), pa & pb, pa | pb), (2, 2, set(), {0, 1, 2, 3}),
               "assignments after the rebalance")
        expect(len(seen), 40, "records consumed by the group")
        # each member commits the end of its own partitions (it may have read none of them)
        for member, parts in ((a, pa), (b, pb)):
            member.commit(offsets=[TopicPartition(topic, q, 10) for q in parts],
                          asynchronous=False)
    finally:
        a.close()
        if b is not None:
            b.close()
    _produce(env, topic, [{"value": b"late", "partition": i} for i in range(4)])
    c = _group_consumer(env, group, topic, **conf)
    try:
        got = []
        deadline = time.monotonic() + WAIT_S
        while len(got) < 4 and time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is not None and not m.error():
                got.append((m.partition(), m.value()))
        expect(sorted(got), [(i, b"late") for i in range(4)],
               "a new member resumes after the committed offsets")
    finally:
        c.close()


def offset_commit(env: Env) -> None:
    from confluent_kafka import Consumer, TopicPartition

    topic = env.topic()
    group = env.name("group")
    _produce(env, topic, [{"value": v} for v in values(10)])
    c = Consumer(env.librdkafka({"group.id": group, "enable.auto.commit": False}))
    try:
        c.assign([TopicPartition(topic, 0)])
        c.commit(offsets=[TopicPartition(topic, 0, 5, metadata="meta")], asynchronous=False)
        got = c.committed([TopicPartition(topic, 0)], timeout=WAIT_S)[0]
        expect((got.offset, got.metadata), (5, "meta"), "committed offset and metadata")
    finally:
        c.close()
    c = Consumer(env.librdkafka({"group.id": group, "enable.auto.commit": False,
                                 "auto.offset.reset": "error"}))
    try:
        c.assign([TopicPartition(topic, 0)])
        first = None
        deadline = time.monotonic() + WAIT_S
        while first is None and time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is not None:
                if m.error():
                    raise AssertionError(f"consume error: {m.error()}")
                first = m.offset()
        expect(first, 5, "a new member starts at the committed offset")
    finally:
        c.close()


def idempotent_producer(env: Env) -> None:
    topic = env.topic(partitions=2)
    _produce(env, topic, [{"value": v, "partition": i % 2} for i, v in enumerate(values(1000))],
             **{"enable.idempotence": True, "max.in.flight.requests.per.connection": 5})
    got = _consume(env, topic, 1000, partitions=(0, 1))
    for part in (0, 1):
        expect([m.value() for m in got if m.partition() == part],
               [v for i, v in enumerate(values(1000)) if i % 2 == part], f"partition {part}")


def _txn_producer(env: Env):
    from confluent_kafka import Producer

    p = Producer(env.librdkafka({"transactional.id": env.name("txn"), "linger.ms": 5}))
    p.init_transactions(WAIT_S)
    return p


def transactions(env: Env) -> None:
    topic = env.topic()
    p = _txn_producer(env)
    for outcome, prefix in (("commit", "a"), ("abort", "b"), ("commit", "c")):
        p.begin_transaction()
        for v in values(5, prefix):
            p.produce(topic, v)
        p.flush(WAIT_S)
        (p.commit_transaction if outcome == "commit" else p.abort_transaction)(WAIT_S)
    committed = _consume(env, topic, 10, **{"isolation.level": "read_committed"})
    expect([m.value() for m in committed], values(5, "a") + values(5, "c"), "read_committed")
    everything = _consume(env, topic, 15, **{"isolation.level": "read_uncommitted"})
    expect(sorted(m.value() for m in everything),
           sorted(values(5, "a") + values(5, "b") + values(5, "c")), "read_uncommitted")


def transactions_offsets(env: Env) -> None:
    from confluent_kafka import Consumer, TopicPartition

    source, sink = env.topic("in"), env.topic("out")
    group = env.name("group")
    _produce(env, source, [{"value": v} for v in values(10)])
    c = _group_consumer(env, group, source)
    t = _txn_producer(env)
    try:
        got = []
        deadline = time.monotonic() + WAIT_S
        while len(got) < 10 and time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is not None and not m.error():
                got.append(m)
        expect(len(got), 10, "input records")
        t.begin_transaction()
        for m in got:
            t.produce(sink, m.value().upper())
        t.send_offsets_to_transaction([TopicPartition(source, 0, 10)],
                                      c.consumer_group_metadata(), WAIT_S)
        t.commit_transaction(WAIT_S)
    finally:
        c.close()
    out = _consume(env, sink, 10, **{"isolation.level": "read_committed"})
    expect([m.value() for m in out], [v.upper() for v in values(10)], "output")
    check = Consumer(env.librdkafka({"group.id": group}))
    try:
        got = check.committed([TopicPartition(source, 0)], timeout=WAIT_S)[0].offset
        expect(got, 10, "input offset committed with the transaction")
    finally:
        check.close()


# ------------------------------------------------------------------ cluster scenarios
def _one_broker(env: Env) -> dict:
    return env.librdkafka({"bootstrap.servers": env.first_broker})


def replicated_acks_all(env: Env) -> None:
    from confluent_kafka import TopicCollection

    topic = env.topic(partitions=3, replication_factor=3, config={"min.insync.replicas": "2"})
    sent = values(300)
    _produce(env, topic, [{"value": v, "partition": i % 3} for i, v in enumerate(sent)],
             **{"acks": "all", "enable.idempotence": True})
    got = _consume(env, topic, 300, partitions=range(3))
    for part in range(3):
        expect([m.value() for m in got if m.partition() == part], sent[part::3],
               f"partition {part}")
    admin = _admin(env)
    desc = admin.describe_topics(TopicCollection([topic]))[topic].result(WAIT_S)
    brokers = {n.id for n in admin.describe_cluster().result(WAIT_S).nodes}
    expect([len(p.replicas) for p in desc.partitions], [3, 3, 3], "replicas per partition")
    expect([sorted(n.id for n in p.isr) for p in desc.partitions],
           [sorted(n.id for n in p.replicas) for p in desc.partitions], "ISR = replicas")
    expect_spread({p.id: p.leader.id for p in desc.partitions}, brokers, "leaders")


def leaders_on_several_brokers(env: Env) -> None:
    from confluent_kafka.admin import AdminClient

    for rf in (1, 3):
        topic = env.topic(f"rf{rf}", partitions=6, replication_factor=rf)
        _produce(env, topic, [{"value": f"p{i % 6}-{i // 6}".encode(), "partition": i % 6}
                              for i in range(60)], **_one_broker(env))
        got = _consume(env, topic, 60, partitions=range(6), **_one_broker(env))
        for part in range(6):
            expect([m.value() for m in got if m.partition() == part],
                   [f"p{part}-{j}".encode() for j in range(10)], f"rf={rf} partition {part}")
        md = AdminClient(_one_broker(env)).list_topics(topic, timeout=WAIT_S)
        expect_spread({p.id: p.leader for p in md.topics[topic].partitions.values()},
                      set(md.brokers), f"rf={rf} leaders")


def group_coordinator_elsewhere(env: Env) -> None:
    from confluent_kafka import Consumer, TopicPartition
    from confluent_kafka.admin import AdminClient

    group, coordinator, home = group_led_elsewhere(env)
    topic = env.topic(replication_factor=3)
    _produce(env, topic, [{"value": v} for v in values(10)])
    conf = {**_one_broker(env), "group.id": group, "enable.auto.commit": False}
    c = Consumer({**conf, "auto.offset.reset": "earliest"})
    try:
        c.subscribe([topic])
        got = []
        deadline = time.monotonic() + WAIT_S
        while len(got) < 10 and time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is not None and not m.error():
                got.append(m.value())
        expect(got, values(10), "records read by the group")
        c.commit(offsets=[TopicPartition(topic, 0, 6)], asynchronous=False)
    finally:
        c.close()
    admin = AdminClient(_one_broker(env))  # kept: a collected client never completes its futures
    found = admin.describe_consumer_groups([group])[group].result(WAIT_S)
    expect(found.coordinator.id, coordinator,
           f"the group's coordinator (bootstrapped from broker {home})")
    c = Consumer({**conf, "auto.offset.reset": "error"})
    try:
        c.subscribe([topic])
        first = None
        deadline = time.monotonic() + WAIT_S
        while first is None and time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is not None:
                if m.error():
                    raise AssertionError(f"consume error: {m.error()}")
                first = m.offset()
        expect(first, 6, "a new member resumes from the committed offset")
    finally:
        c.close()


def transaction_across_brokers(env: Env) -> None:
    from confluent_kafka import Producer

    topic = env.topic(partitions=3, replication_factor=3)
    expect_spread(leaders(env.harness, topic), broker_ids(env.harness), "leaders")
    p = Producer({**_one_broker(env), "transactional.id": env.name("txn"), "linger.ms": 5})
    p.init_transactions(WAIT_S)
    for outcome, prefix in (("commit", "a"), ("abort", "b"), ("commit", "c")):
        p.begin_transaction()
        for i, v in enumerate(values(9, prefix)):
            p.produce(topic, v, partition=i % 3)
        p.flush(WAIT_S)
        (p.commit_transaction if outcome == "commit" else p.abort_transaction)(WAIT_S)
    committed = _consume(env, topic, 18, partitions=range(3),
                         **{**_one_broker(env), "isolation.level": "read_committed"})
    for part in range(3):
        expect([m.value() for m in committed if m.partition() == part],
               values(9, "a")[part::3] + values(9, "c")[part::3], f"read_committed {part}")
    everything = _consume(env, topic, 27, partitions=range(3),
                          **{**_one_broker(env), "isolation.level": "read_uncommitted"})
    expect(len(everything), 27, "read_uncommitted")


def not_enough_replicas(env: Env) -> None:
    def produce(topic: str, value: str) -> str | None:
        try:
            _produce(env, topic, [{"value": value.encode()}], **{
                "acks": "all", "enable.idempotence": False, "message.send.max.retries": 0})
            return None
        except _DeliveryError as e:
            return e.err.name()

    cluster_not_enough_replicas(env, produce, "NOT_ENOUGH_REPLICAS")


def authorization(env: Env) -> None:
    from confluent_kafka import Consumer, KafkaException, Producer

    me = authz.user(env)
    topic, group = env.topic(), env.name("g")
    conf = {"bootstrap.servers": env.bootstrap, **me.librdkafka}
    producer = Producer({**conf, "linger.ms": 5, "message.timeout.ms": WAIT_S * 1000})
    try:
        _produce(env, topic, [{"value": b"refused"}], producer=producer)
        raise AssertionError("a produce without WRITE was accepted")
    except (_DeliveryError, KafkaException) as e:
        err = e.err if isinstance(e, _DeliveryError) else e.args[0]
        authz.expect_refused(err.name(), "TOPIC_AUTHORIZATION_FAILED", "produce without an ACL")
    authz.grant(env, topic, group, authz.PRODUCE_ACLS)
    # a new producer: the refused one keeps the topic's refusal until its next metadata refresh
    _produce(env, topic, [{"value": v} for v in values(3)], producer=Producer(conf))
    consumer = Consumer({**conf, "group.id": group, "auto.offset.reset": "earliest",
                         "enable.auto.commit": False})
    try:
        consumer.subscribe([topic])
        errors = []
        deadline = time.monotonic() + WAIT_S
        while not errors and time.monotonic() < deadline:
            m = consumer.poll(0.5)
            if m is not None and m.error():
                errors.append(m.error().name())
            elif m is not None:
                raise AssertionError("a group consumer without READ was served")
        authz.expect_refused(errors, "GROUP_AUTHORIZATION_FAILED", "consume without an ACL")
    finally:
        consumer.close()
    authz.grant(env, topic, group, authz.CONSUME_ACLS)
    consumer = _group_consumer(env, group, topic, **me.librdkafka)
    try:
        got = []
        deadline = time.monotonic() + WAIT_S
        while len(got) < 3 and time.monotonic() < deadline:
            m = consumer.poll(0.5)
            if m is not None and m.error():
                raise AssertionError(f"consuming once allowed: {m.error()}")
            if m is not None:
                got.append(m.value())
        expect(got, values(3), "records read once allowed")
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()


def share_group(env: Env) -> None:
    from confluent_kafka import AcknowledgeType, ShareConsumer

    topic, two, acks = env.topic(), env.name("two"), env.name("acks")
    share_groups_from_earliest(env.harness, two, acks)
    _produce(env, topic, [{"value": v} for v in values(20)])

    def member(group: str):
        c = ShareConsumer(env.librdkafka({"group.id": group,
                                          "share.acknowledgement.mode": "explicit"}))
        c.subscribe([topic])
        return c

    def polled(c) -> list:
        out = list(c.poll(0.2))
        failed = [m.error() for m in out if m.error()]
        if failed:
            raise AssertionError(f"share fetch: {failed[0]}")
        return out

    seen: dict[int, int] = {}
    members = [member(two), member(two)]
    try:
        deadline = time.monotonic() + WAIT_S
        while len(seen) < 20 and time.monotonic() < deadline:
            for c in members:
                for m in polled(c):
                    seen[m.offset()] = seen.get(m.offset(), 0) + 1
                    c.acknowledge(m, AcknowledgeType.ACCEPT)
                c.commit_sync(WAIT_S)
    finally:
        for c in members:
            c.close()
    expect((len(seen), max(seen.values(), default=0)), (20, 1),
           "records read by two members, each once")
    deliveries: dict[int, list[int]] = {}
    done: set[int] = set()
    c = member(acks)
    try:
        deadline = time.monotonic() + WAIT_S
        while len(done) < 19 and time.monotonic() < deadline:
            for m in polled(c):
                deliveries.setdefault(m.offset(), []).append(m.delivery_count())
                if m.offset() == 0 and len(deliveries[0]) < 3:
                    c.acknowledge(m, AcknowledgeType.RELEASE)
                elif m.offset() == 1:
                    c.acknowledge(m, AcknowledgeType.REJECT)
                else:
                    c.acknowledge(m, AcknowledgeType.ACCEPT)
                    done.add(m.offset())
            c.commit_sync(WAIT_S)
    finally:
        c.close()
    expect((deliveries.get(0), deliveries.get(1), len(done)), ([1, 2, 3], [1], 19),
           "delivery counts of the released and the rejected record, records accepted")


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
    # librdkafka describes topics with Metadata: it has no DescribeTopicPartitions paging
    "consumer-group": consumer_group,
    "offset-commit": offset_commit,
    "idempotent-producer": idempotent_producer,
    "transactions": transactions,
    "transactions-offsets": transactions_offsets,
    "authorization": authorization,
    "consumer-group-protocol": consumer_group_protocol,
    "share-group": share_group,
    "replicated-acks-all": replicated_acks_all,
    "leaders-on-several-brokers": leaders_on_several_brokers,
    "group-coordinator-elsewhere": group_coordinator_elsewhere,
    "transaction-across-brokers": transaction_across_brokers,
    "not-enough-replicas": not_enough_replicas,
}


def run(bootstrap: str, scenarios: list[str], nodes=None, secured=None) -> dict:
    return run_python_cells(NAME, IMPLEMENTATIONS, bootstrap, scenarios, nodes, secured)
