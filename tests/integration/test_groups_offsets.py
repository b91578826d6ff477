"""Committed offsets with the stock clients: explicit, automatic, after a seek; durable across a
clean restart and a kill -9; a group resumes on a restarted broker."""

from __future__ import annotations

import time

from confluent_kafka import Consumer, TopicPartition
from kafka import KafkaConsumer
from kafka import TopicPartition as KTP
from kafka.structs import OffsetAndMetadata

from compat.kafka_broker import free_port
from pykafkad.testing import run_broker
from tests.integration.broker_process import BrokerProcess
from tests.integration.clients import WAIT_S, confluent_produce, create_topic
from tests.integration.groups_support import (
    GROUP_BROKER_CONFIG,
    GroupMember,
    confluent_conf,
    kafka_python_consumer,
    wait_until,
)

BROKER_ARGS = [arg for k, v in GROUP_BROKER_CONFIG.items() for arg in ("--set", f"{k}={v}")]


def fill(bootstrap: str, topic: str, partitions: int, per_partition: int) -> None:
    create_topic(bootstrap, topic, partitions)
    confluent_produce(bootstrap, topic, [
        {"value": f"p{p}-{i}".encode(), "partition": p}
        for p in range(partitions) for i in range(per_partition)])


def confluent_committed(bootstrap: str, group: str, topic: str, partitions) -> dict:
    """{partition: (offset, leader epoch)}.  (Metadata is compared with the client that wrote
    it: confluent-kafka reads it as a NUL-terminated string, which only librdkafka writes.)"""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        got = c.committed([TopicPartition(topic, p) for p in partitions], timeout=WAIT_S)
        return {tp.partition: (tp.offset, tp.leader_epoch) for tp in got}
    finally:
        c.close()


def kafka_python_committed(bootstrap: str, group: str, topic: str, partitions) -> dict:
    c = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:
        return {p: c.committed(KTP(topic, p), metadata=True) for p in partitions}
    finally:
        c.close()


def kafka_python_commit(bootstrap: str, group: str, offsets: dict) -> None:
    """Commits as a consumer outside group management (assign + commit)."""
    c = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:
        c.assign(list(offsets))
        c.commit(offsets)
    finally:
        c.close()


def test_commits_survive_a_clean_restart(tmp_path, topic_name):
    data = tmp_path / "data"
    with run_broker(data, config=GROUP_BROKER_CONFIG) as b:
        fill(b.bootstrap_servers, topic_name, 2, 10)
        kafka_python_commit(b.bootstrap_servers, "durable", {
            KTP(topic_name, 0): OffsetAndMetadata(4, "four", 0),
            KTP(topic_name, 1): OffsetAndMetadata(7, "", -1)})
        before = kafka_python_committed(b.bootstrap_servers, "durable", topic_name, (0, 1))
    assert before == {0: OffsetAndMetadata(4, "four", 0), 1: OffsetAndMetadata(7, "", -1)}
    with run_broker(data, config=GROUP_BROKER_CONFIG) as b:
        bs = b.bootstrap_servers
        assert kafka_python_committed(bs, "durable", topic_name, (0, 1)) == before
        assert confluent_committed(bs, "durable", topic_name, (0, 1)) == {
            0: (4, 0), 1: (7, None)}
        # a member of the group starts where the commits say
        member = GroupMember("confluent", b.bootstrap_servers, "durable", topic_name).start()
        try:
            wait_until(lambda: len(member.received) == 6 + 3, "the uncommitted records",
                       members=[member])
            assert sorted(o for p, o, _ in member.received if p == 0) == list(range(4, 10))
            assert sorted(o for p, o, _ in member.received if p == 1) == list(range(7, 10))
        finally:
            member.stop()


def test_commits_survive_kill_9(tmp_path, topic_name):
    data = tmp_path / "data"
    proc = BrokerProcess(data, *BROKER_ARGS).start()
    try:
        fill(proc.bootstrap_servers, topic_name, 3, 5)
        c = Consumer(confluent_conf(proc.bootstrap_servers, "killed"))
        c.assign([TopicPartition(topic_name, p) for p in range(3)])
        c.commit(offsets=[TopicPartition(topic_name, 0, 1), TopicPartition(topic_name, 1, 2),
                          TopicPartition(topic_name, 2, 3, "m")], asynchronous=False)
        c.close()
        kafka_python_commit(proc.bootstrap_servers, "killed-too",
                            {KTP(topic_name, 0): OffsetAndMetadata(5, "x", -1)})
        proc.kill()  # SIGKILL right after the commits were acknowledged
        proc = BrokerProcess(data, *BROKER_ARGS).start()
        assert confluent_committed(proc.bootstrap_servers, "killed", topic_name, range(3)) == {
            0: (1, None), 1: (2, None), 2: (3, None)}
        k = KafkaConsumer(bootstrap_servers=proc.bootstrap_servers, group_id="killed-too")
        assert k.committed(KTP(topic_name, 0), metadata=True) == OffsetAndMetadata(5, "x", -1)
        k.close()
    finally:
        if proc.proc.poll() is None:
            proc.kill()


def test_group_resumes_on_a_restarted_broker(tmp_path, topic_name):
    """A member keeps its membership across a broker restart: the group is reloaded Stable from
    __consumer_offsets and the member goes on consuming with the same assignment."""
    data = tmp_path / "data"
    port = free_port()
    with run_broker(data, config=GROUP_BROKER_CONFIG, port=port) as b:
        fill(b.bootstrap_servers, topic_name, 2, 5)
        member = GroupMember("confluent", b.bootstrap_servers, "resume", topic_name,
                             session_ms=10_000).start()
        wait_until(lambda: len(member.received) == 10, "the first records")
        assigned = member.assignment
    try:
        with run_broker(data, config=GROUP_BROKER_CONFIG, port=port) as b:
            # the restarted leader of __consumer_offsets loads its groups after it is ready
            wait_until(lambda: b.call(lambda: "resume" in b.broker.groups.coordinator.groups),
                       "the restarted coordinator to load the group")
            group = b.call(lambda: b.broker.groups.coordinator.groups["resume"])
            assert group.state.value == "Stable" and len(group.members) == 1
            confluent_produce(b.bootstrap_servers, topic_name,
                              [{"value": b"after", "partition": p} for p in (0, 1)])
            wait_until(lambda: len(member.received) == 12, "records produced after the restart")
            assert member.assignment == assigned
            assert [o for p, o, _ in member.received[10:]] == [5, 5]
    finally:
        member.stop()


def test_kafka_python_auto_commit(tmp_path, topic_name):
    with run_broker(tmp_path / "d", config=GROUP_BROKER_CONFIG) as b:
        fill(b.bootstrap_servers, topic_name, 2, 10)
        c = kafka_python_consumer(topic_name, b.bootstrap_servers, "auto",
                                  enable_auto_commit=True, auto_commit_interval_ms=100)
        got = 0
        deadline = time.monotonic() + WAIT_S
        while got < 20 and time.monotonic() < deadline:
            got += sum(len(r) for r in c.poll(timeout_ms=100).values())
        assert got == 20
        wait_until(lambda: (c.poll(timeout_ms=50) or True) and all(
            c.committed(KTP(topic_name, p)) == 10 for p in (0, 1)), "the auto-commit")
        c.close()
        # kafka-python commits the leader epoch of the last record it consumed
        assert confluent_committed(b.bootstrap_servers, "auto", topic_name, (0, 1)) == {
            0: (10, 0), 1: (10, 0)}


def test_confluent_auto_commit_on_close(tmp_path, topic_name):
    with run_broker(tmp_path / "d", config=GROUP_BROKER_CONFIG) as b:
        fill(b.bootstrap_servers, topic_name, 2, 10)
        member = GroupMember("confluent", b.bootstrap_servers, "auto-c", topic_name,
                             commit=False, **{"enable.auto.commit": True,
                                              "auto.commit.interval.ms": 100})
        member.start()
        wait_until(lambda: len(member.received) == 20, "every record")
        member.stop()  # close() commits the final positions
        committed = confluent_committed(b.bootstrap_servers, "auto-c", topic_name, (0, 1))
        assert {p: o for p, (o, _) in committed.items()} == {0: 10, 1: 10}


def test_seek_then_commit(tmp_path, topic_name):
    with run_broker(tmp_path / "d", config=GROUP_BROKER_CONFIG) as b:
        bs = b.bootstrap_servers
        fill(bs, topic_name, 1, 20)
        tp = KTP(topic_name, 0)
        c = kafka_python_consumer(topic_name, bs, "seek")
        wait_until(lambda: c.poll(timeout_ms=50) is not None and c.assignment() == {tp},
                   "the assignment")
        c.seek(tp, 5)
        c.commit()  # commits the position after the seek
        # (read back with another consumer: this one may answer committed() from an offset
        # fetch it started before the commit)
        assert kafka_python_committed(bs, "seek", topic_name, [0]) == {
            0: OffsetAndMetadata(5, "", -1)}
        c.commit({tp: OffsetAndMetadata(8, "checkpoint", 0)})
        assert kafka_python_committed(bs, "seek", topic_name, [0]) == {
            0: OffsetAndMetadata(8, "checkpoint", 0)}
        c.close()
        # confluent: seek and commit explicit offsets with a leader epoch
        cc = Consumer(confluent_conf(bs, "seek"))
        cc.subscribe([topic_name])
        first = None
        deadline = time.monotonic() + WAIT_S
        while first is None and time.monotonic() < deadline:
            msg = cc.poll(0.1)
            if msg is not None and msg.error() is None:
                first = msg.offset()
        assert first == 8, "the group resumed from the committed offset"
        cc.seek(TopicPartition(topic_name, 0, 15))
        cc.commit(offsets=[TopicPartition(topic_name, 0, 15, "fifteen", 0)], asynchronous=False)
        [committed] = cc.committed([TopicPartition(topic_name, 0)], timeout=WAIT_S)
        assert (committed.offset, committed.metadata, committed.leader_epoch) == (15, "fifteen", 0)
        cc.close()
