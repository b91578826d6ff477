"""The share coordinator's records (KIP-932): WriteShareGroupState writes a ShareSnapshot for a
new share partition, then ShareUpdate deltas, and a new snapshot once
share.coordinator.snapshot.update.records.per.snapshot updates have followed the last one;
ReadShareGroupState answers the merged state.  Held to Apache Kafka 4.4 (one broker each,
the setting at 2)."""

from __future__ import annotations

import base64
import uuid

import pytest
from confluent_kafka import Consumer, TopicPartition

from compat.wire_client import WireClient
from pykafkad.testing import run_broker
from tests.failover.outage import wait_for
from tests.failover.share_scenario import state_partition
from tests.integration.clients import WAIT_S, create_topic, needs_java
from wire.messages import initialize_share_group_state_request as init_req
from wire.messages import read_share_group_state_request as read_req
from wire.messages import write_share_group_state_request as write_req
from wire.messages.find_coordinator_request import FindCoordinatorRequest
from wire.messages.metadata_request import MetadataRequest, MetadataRequestTopic

CONFIG = {"share.coordinator.snapshot.update.records.per.snapshot": "2",
          "share.coordinator.state.topic.replication.factor": "1",
          "share.coordinator.state.topic.min.isr": "1"}
#: (start offset, [(first, last, state, count)]) of each write: acknowledgements moving on
WRITES = [(0, [(0, 4, 0, 1)]), (0, [(0, 1, 2, 1)]), (2, [(2, 2, 2, 1)]), (3, [(3, 4, 0, 2)]),
          (3, [(3, 3, 4, 2)]), (4, [(5, 6, 0, 1)]), (4, [(4, 4, 2, 2)]), (5, [(5, 5, 2, 1)])]


@pytest.fixture(scope="module")
def pykafkad_target(tmp_path_factory):
    with run_broker(tmp_path_factory.mktemp("share-records"), config=CONFIG) as b:
        yield b.bootstrap_servers


@pytest.fixture(scope="module")
def kafka_target():
    from compat.kafka_broker import run_kafka

    with run_kafka(config=CONFIG) as k:
        yield k.bootstrap_servers


@pytest.fixture(params=["pykafkad", pytest.param("kafka", marks=needs_java)])
def bootstrap(request):
    return request.getfixturevalue(f"{request.param}_target")


def _write(client, group, topic_id, start, batches):
    return client.request(85, 1, write_req.WriteShareGroupStateRequest(group_id=group, topics=[
        write_req.WriteStateData(topic_id=topic_id, partitions=[write_req.PartitionData(
            partition=0, state_epoch=0, leader_epoch=0, start_offset=start,
            state_batches=[write_req.StateBatch(*b) for b in batches])])]))


def _initialize(client, group, topic_id):
    r = client.request(83, 0, init_req.InitializeShareGroupStateRequest(group_id=group, topics=[
        init_req.InitializeStateData(topic_id=topic_id, partitions=[init_req.PartitionData(
            partition=0, state_epoch=0, start_offset=0)])]))
    code = r.results[0].partitions[0].error_code
    # Kafka's share coordinator answers UNKNOWN_TOPIC_OR_PARTITION until its own metadata
    # image holds the topic just created (seen under load): not yet, as a coordinator load
    return None if code in (3, 14, 15, 16) else code


def _record_types(bootstrap: str, index: int, group: str, n: int) -> list[int]:
    """The record types (0 snapshot, 1 update) of the group's records in its state
    partition."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{uuid.uuid4().hex[:6]}",
                  "enable.auto.commit": False})
    c.assign([TopicPartition("__share_group_state", index, 0)])
    out: list[int] = []
    try:
        def more():
            for m in c.consume(100, 0.5):
                if m.error() is None and group.encode() in m.key():
                    out.append(int.from_bytes(m.key()[:2], "big"))
            return len(out) >= n
        # Kafka makes and loads the 50 partitions of __share_group_state on first use, which
        # on a loaded machine can take more than one usual wait
        wait_for(more, "the share coordinator's records", 3 * WAIT_S)
    finally:
        c.close()
    return out


def test_a_write_before_initialization_is_refused(bootstrap):
    topic = f"share-uninit-{uuid.uuid4().hex[:6]}"
    create_topic(bootstrap, topic)
    with WireClient(bootstrap, timeout=30) as client:
        topic_id = client.request(3, 12, MetadataRequest(
            topics=[MetadataRequestTopic(name=topic)], allow_auto_topic_creation=False)
        ).topics[0].topic_id
        key = f"g:{base64.urlsafe_b64encode(topic_id).decode().rstrip('=')}:0"
        wait_for(lambda: client.request(10, 6, FindCoordinatorRequest(
            key_type=2, coordinator_keys=[key])).coordinators[0].error_code == 0,
            "the share coordinator", WAIT_S)
        answers = []

        def written():
            r = _write(client, "g", topic_id, 0, WRITES[0][1]).results[0].partitions[0]
            if r.error_code in (14, 15, 16):
                return None
            answers.append((r.error_code, r.error_message))
            return True
        wait_for(written, "an answer", WAIT_S)
    assert answers == [(42, "Write operation on uninitialized share partition not allowed.")]


def test_updates_then_a_snapshot_every_n_updates(bootstrap, request):
    topic = f"share-rec-{uuid.uuid4().hex[:6]}"
    group = f"{topic}-g"
    create_topic(bootstrap, topic)
    with WireClient(bootstrap, timeout=30) as client:
        topic_id = client.request(3, 12, MetadataRequest(
            topics=[MetadataRequestTopic(name=topic)], allow_auto_topic_creation=False)
        ).topics[0].topic_id
        key = f"{group}:{base64.urlsafe_b64encode(topic_id).decode().rstrip('=')}:0"

        def found():  # the share coordinator (__share_group_state is made on first lookup)
            r = client.request(10, 6, FindCoordinatorRequest(key_type=2, coordinator_keys=[key]))
            return r.coordinators[0].error_code == 0
        wait_for(found, "the share coordinator", WAIT_S)
        codes = [_retry(lambda: _initialize(client, group, topic_id))]
        for start, batches in WRITES:
            def written(start=start, batches=batches):
                r = _write(client, group, topic_id, start, batches)
                code = r.results[0].partitions[0].error_code
                return None if code in (14, 15, 16) else code  # state topic still coming
            codes.append(_retry(written))
        read = client.request(84, 0, read_req.ReadShareGroupStateRequest(group_id=group, topics=[
            read_req.ReadStateData(topic_id=topic_id, partitions=[
                read_req.PartitionData(partition=0, leader_epoch=0)])]))
    p = read.results[0].partitions[0]
    state = (p.error_code, p.start_offset, [(b.first_offset, b.last_offset, b.delivery_state,
                                             b.delivery_count) for b in p.state_batches])
    assert codes == [0] * (len(WRITES) + 1)
    assert state == (0, 5, [(5, 5, 2, 1), (6, 6, 0, 1)]), state
    if request.node.callspec.params["bootstrap"] == "kafka":
        # Kafka wrote this sequence in the runs that read it back, but its records in
        # __share_group_state were sometimes not there to read within the wait when other
        # suites ran before (seen in full runs, never alone; cause not found): the records
        # are read from pykafkad only, the answers compared on both
        return
    types = _record_types(bootstrap, state_partition(group, topic_id, 0), group,
                          len(WRITES) + 1)
    # the initial snapshot, then two updates and a snapshot, over and over
    assert types == [0, 1, 1, 0, 1, 1, 0, 1, 1], types


def _retry(write):
    holder = {}

    def attempt():
        code = write()
        if code is None:
            return None
        holder["code"] = code
        return True
    wait_for(attempt, "a write", WAIT_S)
    return holder["code"]
