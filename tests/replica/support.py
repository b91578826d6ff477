"""A partition led by the in-process broker with followers that exist only as the replica ids
of raw follower Fetches: the registration the controller will hand in, applied through the real
``ReplicaManager.apply``."""

from __future__ import annotations

import time

from confluent_kafka.admin import AdminClient

from pykafkad.replica import LocalChanges, PartitionRegistration
from tests.integration.clients import WAIT_S


class Clock:
    """The broker's clock in milliseconds, moved by the test (replica.lag.time.max.ms)."""

    def __init__(self) -> None:
        self.now = int(time.time() * 1000)  # near real time: record timestamps are checked

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> None:
        self.now += ms


def lead(kafka, topic: str, *, replicas: list[int], isr: list[int], leader_epoch: int,
         partition_epoch: int = 1, index: int = 0):
    """Makes the broker leader of ``topic``-``index`` with this assignment; the Partition."""
    broker = kafka.broker

    def apply():
        t = broker.topics.get(topic)
        registration = PartitionRegistration(
            replicas=replicas, isr=isr, leader=broker.node_id, leader_epoch=leader_epoch,
            partition_epoch=partition_epoch)
        broker.replicas.apply(LocalChanges(leaders={(topic, index): (t.topic_id, registration)}))
        return broker.replicas.get_partition(topic, index)

    return kafka.call(apply)


def follow(kafka, topic: str, *, replicas: list[int], isr: list[int], leader: int,
           leader_epoch: int, partition_epoch: int = 1, index: int = 0):
    """Makes the broker a follower of ``topic``-``index`` (led by ``leader``)."""
    broker = kafka.broker

    def apply():
        t = broker.topics.get(topic)
        registration = PartitionRegistration(
            replicas=replicas, isr=isr, leader=leader, leader_epoch=leader_epoch,
            partition_epoch=partition_epoch)
        broker.replicas.apply(LocalChanges(followers={(topic, index): (t.topic_id, registration)}))
        return broker.replicas.get_partition(topic, index)

    return kafka.call(apply)


def on_broker(kafka, fn, *args):
    """Runs ``fn`` on the broker's thread (between requests)."""
    return kafka.call(fn, *args)


def metadata_partition(bootstrap: str, topic: str, index: int = 0):
    """What a stock client (confluent-kafka's Metadata) is told of the partition."""
    md = AdminClient({"bootstrap.servers": bootstrap}).list_topics(topic, timeout=WAIT_S)
    return md.topics[topic].partitions[index]


def wait_until(condition, what: str):
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)
