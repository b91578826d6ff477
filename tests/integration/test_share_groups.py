"""Share groups (KIP-932) end to end with stock share consumers: the Java client's
KafkaShareConsumer (kafka-clients 4.4, compared line for line with Apache Kafka 4.4) and
librdkafka's ShareConsumer (confluent-kafka 2.16)."""

from __future__ import annotations

import subprocess
import time
import uuid

import pytest
from confluent_kafka import AcknowledgeType, KafkaError, KafkaException, Producer, ShareConsumer
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
)

from pykafkad.testing import run_broker
from tests.integration.clients import WAIT_S, create_led_topic, needs_java

LOCK_MS = 30_000
#: the short acquisition lock of the lock-expiry comparisons (a group config; both brokers
#: take it once group.share.min.record.lock.duration.ms allows it)
SHORT_LOCK_MS = 1000
SHORT_LOCK_BROKER = {"group.share.min.record.lock.duration.ms": str(SHORT_LOCK_MS)}


@pytest.fixture(scope="module")
def reference_kafka():
    """This module's Apache Kafka 4.4 (one JVM), allowing 1 s acquisition locks; the other
    tests here keep the default 30 s lock, so they see the same broker as elsewhere."""
    from compat.kafka_broker import run_kafka
    from tests.conftest import REFERENCE_KAFKA_VERSION

    with run_kafka(REFERENCE_KAFKA_VERSION, config=SHORT_LOCK_BROKER) as kafka:
        yield kafka


def _earliest(bootstrap: str, group: str, **more: str) -> None:
    """share.auto.offset.reset=earliest as a group config (the default, latest, would skip
    the records produced before the first fetch), and ``more`` group configs (dots as _)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    configs = {"share.auto.offset.reset": "earliest",
               **{k.replace("_", "."): v for k, v in more.items()}}
    res = ConfigResource(ConfigResource.Type.GROUP, group, incremental_configs=[
        ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET)
        for k, v in configs.items()])
    for f in admin.incremental_alter_configs([res]).values():
        f.result(WAIT_S)


def _wait_for_lag(bootstrap: str, group: str, topic: str, lag: int) -> None:
    """Until DescribeShareGroupOffsets gives partition 0 of ``topic`` ``lag`` (what the
    share coordinator has written)."""
    from compat.wire_client import WireClient
    from wire.messages import describe_share_group_offsets_request as describe

    deadline = time.monotonic() + WAIT_S
    with WireClient(bootstrap) as w:
        while True:
            (g,) = w.request(90, 1, describe.DescribeShareGroupOffsetsRequest(groups=[
                describe.DescribeShareGroupOffsetsRequestGroup(group_id=group, topics=[
                    describe.DescribeShareGroupOffsetsRequestTopic(topic_name=topic,
                                                                   partitions=[0])])])).groups
            seen = [p.lag for t in g.topics for p in t.partitions]
            if seen == [lag]:
                return
            assert time.monotonic() < deadline, f"lag {seen}, not {lag}"
            time.sleep(0.1)


def _produce(bootstrap: str, topic: str, n: int) -> None:
    p = Producer({"bootstrap.servers": bootstrap})
    for i in range(n):
        p.produce(topic, b"v%d" % i, partition=0)
    assert p.flush(WAIT_S) == 0


def _share_consumer(bootstrap: str, group: str, topic: str) -> ShareConsumer:
    c = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group,
                       "share.acknowledgement.mode": "explicit"})
    c.subscribe([topic])
    return c


def _poll_until(consumer, done, ack, what: str) -> list:
    """Polls (acknowledging each record with ``ack(message)`` and committing) until
    ``done(received)``; returns the (offset, delivery count) of every record received."""
    received = []
    deadline = time.monotonic() + WAIT_S
    while not done(received):
        assert time.monotonic() < deadline, f"{what}: got {received}"
        for m in consumer.poll(0.5):
            assert m.error() is None, m.error()
            received.append((m.offset(), m.delivery_count()))
            consumer.acknowledge(m, ack(m))
        consumer.commit_sync()
    return received


@needs_java
def test_java_share_consumers_like_kafka(broker, reference_kafka):
    """compat/java/ShareConsumerProbe.java on both brokers: two KafkaShareConsumers of one
    group on one partition get all 20 records, none twice; a RELEASEd record comes back with
    delivery counts 1, 2, 3; a REJECTed one is never redelivered."""
    from compat import maven
    from compat.clients import java
    from compat.kafka_specs import SPECS_VERSION

    source = java.SOURCE.with_name("ShareConsumerProbe.java")
    cp = maven.classpath(java.jars_dir(SPECS_VERSION))
    prefix = f"share-{uuid.uuid4().hex[:8]}"
    lines = {}
    for side, bootstrap in (("pykafkad", broker.bootstrap_servers),
                            ("kafka", reference_kafka.bootstrap_servers)):
        p = subprocess.run(["java", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", cp,
                            str(source), bootstrap, prefix],
                           capture_output=True, text=True, timeout=240)
        assert p.returncode == 0, p.stderr[-3000:]
        lines[side] = [line for line in p.stdout.splitlines() if line.startswith("##")]
    assert lines["pykafkad"] == lines["kafka"] == [
        "##TWO records=20 twice=0", "##RELEASED offset0=[1, 2, 3]", "##REJECTED offset1=[1]",
        "##ACCEPTED 19", "##DONE"]


def test_librdkafka_share_consumer_acknowledgements_survive_a_restart(tmp_path):
    """ACCEPTed records stay consumed across a broker restart (the share-partition state in
    __share_group_state); RELEASEd ones are delivered again, with their delivery count; a
    record released at every delivery is archived at group.share.delivery.count.limit (5)."""
    topic, group = "share-restart", "share-restart-g"
    with run_broker(tmp_path / "data") as b:
        bs = b.bootstrap_servers
        create_led_topic(bs, topic)
        _earliest(bs, group)
        _produce(bs, topic, 10)
        c = _share_consumer(bs, group, topic)
        try:
            first = _poll_until(
                c, lambda got: {o for o, _ in got} >= set(range(10)),
                lambda m: AcknowledgeType.ACCEPT if m.offset() < 5 else AcknowledgeType.RELEASE,
                "the first deliveries")
        finally:
            c.close()
        assert [d for o, d in first if o < 5] == [1] * 5
        # the close's acknowledgements may still be on their way (librdkafka does not wait
        # for them): the restart waits until they are written (5 records left to deliver)
        _wait_for_lag(bs, group, topic, 5)
    with run_broker(tmp_path / "data") as b:
        c = _share_consumer(b.bootstrap_servers, group, topic)
        try:
            again = _poll_until(
                c, lambda got: sum(1 for o, _ in got if o == 9) >= 4,
                lambda m: AcknowledgeType.ACCEPT if m.offset() < 9 else AcknowledgeType.RELEASE,
                "the redeliveries")
            # offset 9 was delivered once before the restart; the limit stops it at 5
            late = _poll_until(c, lambda got: True, lambda m: AcknowledgeType.ACCEPT, "more")
        finally:
            c.close()
    assert {o for o, _ in again} == set(range(5, 10))
    nine = [d for o, d in again if o == 9]
    assert nine == sorted(nine) and nine[-1] == 5 and nine[0] >= 2
    assert all(o != 9 for o, _ in late)


def test_acquisition_lock_expiry_redelivers_to_another_member(tmp_path):
    """A record acquired and never acknowledged is given to another member once
    group.share.record.lock.duration.ms passes on the broker's (fake) clock, with delivery
    count 2; until then the other member gets nothing."""
    now = [1_800_000_000_000]
    with run_broker(tmp_path / "data", clock=lambda: now[0]) as b:
        bs = b.bootstrap_servers
        topic, group = "share-locks", "share-locks-g"
        create_led_topic(bs, topic)
        _earliest(bs, group)
        _produce(bs, topic, 3)
        holder = _share_consumer(bs, group, topic)
        other = _share_consumer(bs, group, topic)
        try:
            held = []
            deadline = time.monotonic() + WAIT_S
            while len(held) < 3:
                assert time.monotonic() < deadline, held
                held += [(m.offset(), m.delivery_count()) for m in holder.poll(0.5)]
            assert held == [(0, 1), (1, 1), (2, 1)]
            assert len(other.poll(1.0)) == 0  # the locks hold
            now[0] += LOCK_MS
            got = _poll_until(other, lambda r: len(r) >= 3, lambda m: AcknowledgeType.ACCEPT,
                              "the expired records")
            assert got == [(0, 2), (1, 2), (2, 2)]
        finally:
            other.close()
            holder.close()


def _wire_answers(bootstrap: str, prefix: str, topic: str, group: str, classic: str) -> list:
    """Raw-frame answers no client asks for: the share coordinator's reads of the group's
    share partition (and of an uninitialized one), and the one group-id namespace (a classic
    id in ShareGroupHeartbeat / ShareGroupDescribe, a share id in JoinGroup)."""
    from compat.wire_client import WireClient
    from wire.messages import read_share_group_state_request as read
    from wire.messages import read_share_group_state_summary_request as summary
    from wire.messages.join_group_request import JoinGroupRequest, JoinGroupRequestProtocol
    from wire.messages.metadata_request import MetadataRequest, MetadataRequestTopic
    from wire.messages.share_group_describe_request import ShareGroupDescribeRequest
    from wire.messages.share_group_heartbeat_request import ShareGroupHeartbeatRequest

    out: list = []
    with WireClient(bootstrap) as w:
        tid = w.request(3, 12, MetadataRequest(
            topics=[MetadataRequestTopic(name=topic)],
            allow_auto_topic_creation=False)).topics[0].topic_id
        for g in (group, prefix + "-none"):
            (p,) = w.request(84, 0, read.ReadShareGroupStateRequest(group_id=g, topics=[
                read.ReadStateData(topic_id=tid, partitions=[
                    read.PartitionData(partition=0, leader_epoch=0)])])).results[0].partitions
            out.append((p.error_code, p.error_message, p.start_offset,
                        [(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count)
                         for b in p.state_batches]))
            (s,) = w.request(87, 1, summary.ReadShareGroupStateSummaryRequest(
                group_id=g, topics=[summary.ReadStateSummaryData(topic_id=tid, partitions=[
                    summary.PartitionData(partition=0, leader_epoch=0)])])).results[0].partitions
            out.append((s.error_code, s.start_offset, s.leader_epoch, s.delivery_complete_count))
        hb = w.request(76, 1, ShareGroupHeartbeatRequest(
            group_id=classic, member_id=uuid.uuid4().hex[:22], member_epoch=0,
            subscribed_topic_names=[topic]))
        (described,) = w.request(77, 1, ShareGroupDescribeRequest(
            group_ids=[classic], include_authorized_operations=False)).groups
        join = w.request(11, 9, JoinGroupRequest(
            group_id=group, session_timeout_ms=10000, rebalance_timeout_ms=10000, member_id="",
            protocol_type="consumer",
            protocols=[JoinGroupRequestProtocol(name="range", metadata=b"")]))
    out.append((hb.error_code, hb.error_message.replace(prefix, "<p>")))
    out.append((described.error_code, described.error_message.replace(prefix, "<p>"),
                described.group_state))
    out.append((join.error_code, join.generation_id, join.member_id, join.protocol_name))
    return out


def _share_admin_session(bootstrap: str, prefix: str) -> tuple[list[str], list]:
    """One share group's life as the admin side sees it: a share consumer ACCEPTs records 0-8
    and REJECTs 9 while a classic group exists next to it; then kafka-share-groups (state
    with the member in, list, offsets, reset to earliest, offsets, delete: 6 tool runs, each
    JVM costs seconds) and the raw-frame answers of ``_wire_answers``.  Tool lines naming
    other groups (the reference broker is shared) are dropped, the coordinator is masked."""
    from confluent_kafka import Consumer

    from compat.kafka_tools import run_tool

    topic, group, classic = prefix + "-t", prefix + "-g", prefix + "-classic"
    create_led_topic(bootstrap, topic)
    _earliest(bootstrap, group)
    _produce(bootstrap, topic, 10)
    lines: list[str] = []

    def tool(*args: str) -> None:
        p = run_tool("kafka-share-groups", ["--bootstrap-server", bootstrap, *args])
        lines.append(f"$ {' '.join(args)} -> {p.returncode}")
        for line in (p.stdout + p.stderr).splitlines():
            if line.strip() and (prefix in line or not line.startswith(("share-", "%"))):
                lines.append(" ".join(line.replace(bootstrap, "<coordinator>").split()))

    classic_consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": classic})
    c = _share_consumer(bootstrap, group, topic)
    try:
        classic_consumer.subscribe([topic])
        _poll_until(c, lambda got: len(got) >= 10,
                    lambda m: AcknowledgeType.REJECT if m.offset() == 9 else AcknowledgeType.ACCEPT,
                    "all")
        deadline = time.monotonic() + WAIT_S
        while not classic_consumer.assignment():
            assert time.monotonic() < deadline, "the classic group never formed"
            classic_consumer.poll(0.2)
        tool("--describe", "--group", group, "--state")
    finally:
        c.close()
        classic_consumer.close()
    answers = _wire_answers(bootstrap, prefix, topic, group, classic)
    tool("--list")
    tool("--describe", "--group", group)
    tool("--reset-offsets", "--group", group, "--topic", topic, "--to-earliest", "--execute")
    tool("--describe", "--group", group)
    tool("--delete", "--group", group)
    return lines, answers


@needs_java
def test_share_group_admin_like_kafka(broker, reference_kafka):
    """kafka-share-groups prints for pykafkad what it prints for Apache Kafka 4.4; the share
    coordinator's ReadShareGroupState / ReadShareGroupStateSummary give the same start offset,
    state batches and delivery complete count (and Kafka's error and message for an
    uninitialized share partition); a classic id in the share APIs and a share id in JoinGroup
    get Kafka's errors.  (State epochs are left out: Kafka's is the group epoch at which it
    initialized the share partition, pykafkad's 0.)"""
    prefix = f"share-adm-{uuid.uuid4().hex[:8]}"
    ours = _share_admin_session(broker.bootstrap_servers, prefix)
    kafka = _share_admin_session(reference_kafka.bootstrap_servers, prefix)
    assert ours[0] == kafka[0]
    assert ours[1] == kafka[1]
    assert f"{prefix}-g {prefix}-t 0 0 10" in kafka[0]  # the reset, described
    assert kafka[1][0][3] == [(0, 8, 2, 1), (9, 9, 4, 1)]


def _read_committed_scenario(bootstrap: str, prefix: str) -> list:
    """A transaction of three records aborted, then one of one record committed, read by a
    share group with share.isolation.level=read_committed: (offset, value, delivery count)
    of everything delivered until the committed record, then of a last empty-handed poll."""
    topic, group = f"{prefix}-txn", f"{prefix}-txn-g"
    create_led_topic(bootstrap, topic)
    _earliest(bootstrap, group, share_isolation_level="read_committed")
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"{prefix}-tx"})
    p.init_transactions(WAIT_S)
    for values in ([b"aborted-0", b"aborted-1", b"aborted-2"], [b"committed-0"]):
        p.begin_transaction()
        for v in values:
            p.produce(topic, v, partition=0)
        assert p.flush(WAIT_S) == 0
        if values[0].startswith(b"aborted"):
            p.abort_transaction(WAIT_S)
        else:
            p.commit_transaction(WAIT_S)
    c = _share_consumer(bootstrap, group, topic)
    got = []
    try:
        deadline = time.monotonic() + WAIT_S
        while not any(v == b"committed-0" for _, v, _ in got):
            assert time.monotonic() < deadline, got
            for m in c.poll(0.5):
                assert m.error() is None, m.error()
                got.append((m.offset(), m.value(), m.delivery_count()))
                c.acknowledge(m, AcknowledgeType.ACCEPT)
            c.commit_sync()
        # the committed record is the last one: anything aborted would have come before it
        got += [(m.offset(), m.value(), m.delivery_count()) for m in c.poll(1.0)]
    finally:
        c.close()
    return got


@needs_java
def test_read_committed_share_group_skips_aborted_transactions_like_kafka(reference_kafka,
                                                                          tmp_path):
    """The share-partition leader archives the records of aborted transactions instead of
    acquiring them (Kafka's filterAbortedTransactionalAcquiredRecords): only the committed
    record is delivered, at offset 4 (after three aborted records and the abort marker)."""
    prefix = f"share-{uuid.uuid4().hex[:8]}"
    with run_broker(tmp_path / "data") as b:
        ours = _read_committed_scenario(b.bootstrap_servers, prefix)
    theirs = _read_committed_scenario(reference_kafka.bootstrap_servers, prefix)
    assert ours == theirs == [(4, b"committed-0", 1)]


def _lock_expiry_scenario(bootstrap: str, prefix: str, expire) -> list:
    """One member acquires a record under a 1 s lock and lets it expire (``expire()``); its
    late ACCEPT is refused at commit_sync, and the record comes back to the same member with
    delivery count 2.  Returns what was seen, in order."""
    topic, group = f"{prefix}-lock", f"{prefix}-lock-g"
    create_led_topic(bootstrap, topic)
    _earliest(bootstrap, group, share_record_lock_duration_ms=str(SHORT_LOCK_MS))
    _produce(bootstrap, topic, 1)
    c = _share_consumer(bootstrap, group, topic)
    seen = []
    try:
        first = []
        deadline = time.monotonic() + WAIT_S
        while not first:
            assert time.monotonic() < deadline, "nothing delivered"
            first = c.poll(0.5)
        seen += [("delivered", m.offset(), m.delivery_count()) for m in first]
        expire()
        c.acknowledge(first[0], AcknowledgeType.ACCEPT)
        for err in c.commit_sync(WAIT_S).values():
            assert err is None or isinstance(err, KafkaException), err
            seen.append(("commit", None if err is None else err.args[0].code()))
        again = []
        deadline = time.monotonic() + WAIT_S
        while not again:
            assert time.monotonic() < deadline, seen
            again = c.poll(0.5)
        seen += [("delivered", m.offset(), m.delivery_count()) for m in again]
        for m in again:
            c.acknowledge(m, AcknowledgeType.ACCEPT)
        seen += [("commit", None if e is None else e.args[0].code())
                 for e in c.commit_sync(WAIT_S).values()]
    finally:
        c.close()
    return seen


@needs_java
def test_acknowledgement_after_lock_expiry_like_kafka(reference_kafka, tmp_path):
    """An ACCEPT sent after the acquisition lock expired is INVALID_RECORD_STATE, and the
    record is redelivered to the same (only) member with delivery count 2, which it can then
    accept.  pykafkad runs on a fake clock moved past the lock; Kafka's lock runs on its own
    timer, so there the wait is for the wall clock to pass the lock (with a margin for
    Kafka's timing wheel), a condition with its own deadline, not a timed assertion."""
    prefix = f"share-{uuid.uuid4().hex[:8]}"
    now = [1_800_000_000_000]

    def move_clock():
        now[0] += SHORT_LOCK_MS

    def wait_for_kafka_lock():
        passed = time.monotonic() + 2 * SHORT_LOCK_MS / 1000
        while time.monotonic() < passed:
            time.sleep(0.05)

    with run_broker(tmp_path / "data", config=SHORT_LOCK_BROKER, clock=lambda: now[0]) as b:
        ours = _lock_expiry_scenario(b.bootstrap_servers, prefix, move_clock)
    theirs = _lock_expiry_scenario(reference_kafka.bootstrap_servers, prefix,
                                   wait_for_kafka_lock)
    assert ours == theirs == [("delivered", 0, 1), ("commit", KafkaError.INVALID_RECORD_STATE),
                              ("delivered", 0, 2), ("commit", None)]
