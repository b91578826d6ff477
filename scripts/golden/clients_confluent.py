"""confluent-kafka's scenarios (librdkafka): its admin client, idempotent producers in every
codec, a consumer that validates a seek with a leader epoch (KIP-320), groups, transactions."""

from __future__ import annotations

import contextlib
import time
import warnings

from .common import (
    BASE_TS,
    CODECS,
    TXN_OFFSET_APIS,
    WAIT_S,
    ClientDriver,
    admin_topic,
    codec_topic,
    expected_records,
    poll_records,
    poll_until,
    record_key,
    records_for,
    step,
)


class Confluent(ClientDriver):
    name = "confluent-kafka"

    def __init__(self, bootstrap: str, node_id: int, handlers: set[int]) -> None:
        super().__init__(bootstrap, node_id, handlers)
        self.common = {"bootstrap.servers": bootstrap, "client.id": self.name}

    def admin(self) -> None:
        from confluent_kafka import TopicCollection, TopicPartition
        from confluent_kafka.admin import (
            AdminClient,
            AlterConfigOpType,
            ConfigEntry,
            ConfigResource,
            NewPartitions,
            NewTopic,
            OffsetSpec,
        )

        admin = AdminClient(self.common)
        name = admin_topic(self.name)

        def wait(futures) -> None:
            for f in (futures.values() if isinstance(futures, dict) else [futures]):
                f.result(WAIT_S)

        step("confluent CreateTopics", lambda: wait(admin.create_topics(
            [NewTopic(name, 2, 1, config={"retention.ms": "3600000"})])))
        step("confluent Metadata", lambda: admin.list_topics(timeout=WAIT_S))
        step("confluent DescribeTopics", lambda: wait(admin.describe_topics(
            TopicCollection([name]))))
        step("confluent DescribeCluster", lambda: wait(admin.describe_cluster()))
        step("confluent CreatePartitions",
             lambda: wait(admin.create_partitions([NewPartitions(name, 3)])))
        res = ConfigResource("topic", name)
        step("confluent DescribeConfigs", lambda: wait(admin.describe_configs(
            [res, ConfigResource("broker", str(self.node_id))])))
        def alter_configs() -> None:  # deprecated by the client, still sent by users
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                wait(admin.alter_configs(
                    [ConfigResource("topic", name, set_config={"retention.ms": "7200000"})]))

        step("confluent AlterConfigs", alter_configs)
        step("confluent IncrementalAlterConfigs", lambda: wait(admin.incremental_alter_configs(
            [ConfigResource("topic", name, incremental_configs=[
                ConfigEntry("retention.bytes", "1048576",
                            incremental_operation=AlterConfigOpType.SET)])])))
        step("confluent DeleteRecords",
             lambda: wait(admin.delete_records([TopicPartition(name, 0, 0)])))
        tp = TopicPartition(name, 0)
        for spec in (OffsetSpec.earliest(), OffsetSpec.latest(), OffsetSpec.max_timestamp(),
                     OffsetSpec.for_timestamp(BASE_TS)):
            step(f"confluent ListOffsets {type(spec).__name__}",
                 lambda spec=spec: wait(admin.list_offsets({tp: spec})))
        step("confluent DeleteTopics", lambda: wait(admin.delete_topics([name])))

    def produce(self) -> None:
        from confluent_kafka import Producer

        for codec in CODECS:
            def run(codec: str = codec) -> None:
                p = Producer({**self.common, "linger.ms": 100, "compression.type": codec,
                              "enable.idempotence": True})
                errors = []
                for key, value, headers, ts in records_for(self.name, codec):
                    p.produce(codec_topic(codec), key=key, value=value, headers=headers,
                              timestamp=ts, on_delivery=lambda err, _m: err and errors.append(err))
                if p.flush(WAIT_S) or errors:
                    raise RuntimeError(f"not delivered: {errors}")

            step(f"confluent Produce {codec}", run)

    def consume(self) -> None:
        from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

        c = Consumer({**self.common, "group.id": "golden-confluent", "enable.auto.commit": False,
                      "enable.partition.eof": False, "fetch.wait.max.ms": 200})
        try:
            c.assign([TopicPartition(codec_topic(x), 0, OFFSET_BEGINNING) for x in CODECS])

            def poll_one() -> int:
                m = c.poll(0.5)
                return int(m is not None and m.error() is None)

            def poll(n: int) -> None:
                poll_records(n, poll_one)

            step("confluent Fetch", lambda: poll(expected_records()))

            def more() -> None:
                p = Producer(self.common)
                p.produce(codec_topic("none"), key=record_key(self.name, "none", 99), value=b"x",
                          timestamp=BASE_TS + 99)
                p.flush(WAIT_S)
                poll(1)

            step("confluent Fetch (more records)", more)
            tp = TopicPartition(codec_topic("none"), 0)
            step("confluent ListOffsets watermarks",
                 lambda: c.get_watermark_offsets(tp, timeout=WAIT_S, cached=False))
            step("confluent ListOffsets timestamp", lambda: c.offsets_for_times(
                [TopicPartition(tp.topic, 0, BASE_TS + 1)], timeout=WAIT_S))

            def validate() -> None:  # a seek with a leader epoch is validated (KIP-320)
                c.seek(TopicPartition(tp.topic, 0, 1, leader_epoch=0))
                poll(1)

            step("confluent OffsetForLeaderEpoch", validate)
        finally:
            c.close()

    def groups(self) -> None:
        from confluent_kafka import Consumer, ConsumerGroupTopicPartitions
        from confluent_kafka.admin import AdminClient

        group = "golden-confluent-group"
        c = Consumer({**self.common, "group.id": group, "auto.offset.reset": "earliest",
                      "enable.auto.commit": False, "fetch.wait.max.ms": 200,
                      "heartbeat.interval.ms": 200})
        try:
            c.subscribe([codec_topic("none")])
            poll_until(lambda: bool(c.assignment()), lambda: c.poll(0.5))
            poll_until(lambda: False, lambda: c.poll(0.2), 1)  # a few heartbeats
            step("confluent OffsetCommit", lambda: c.commit(asynchronous=False))
            step("confluent OffsetFetch", lambda: c.committed(c.assignment(), timeout=WAIT_S))
        finally:
            c.close()  # LeaveGroup

        admin = AdminClient(self.common)

        def each(futures) -> None:
            for f in futures.values():
                f.result(WAIT_S)

        step("confluent ListGroups", lambda: admin.list_consumer_groups().result(WAIT_S))
        step("confluent DescribeGroups", lambda: each(admin.describe_consumer_groups([group])))
        step("confluent admin OffsetFetch", lambda: each(admin.list_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group)])))
        step("confluent DeleteGroups", lambda: each(admin.delete_consumer_groups([group])))

    def transactions(self) -> None:
        from confluent_kafka import Consumer, Producer, TopicPartition

        topic = codec_topic("none")
        p = Producer({**self.common, "transactional.id": "golden-confluent-txn"})
        p.init_transactions(WAIT_S)
        p.begin_transaction()
        p.produce(topic, key=record_key(self.name, "none", 100), value=b"t", timestamp=BASE_TS)
        p.commit_transaction(WAIT_S)
        p.begin_transaction()
        p.produce(topic, key=record_key(self.name, "none", 101), value=b"t", timestamp=BASE_TS)
        p.abort_transaction(WAIT_S)
        if TXN_OFFSET_APIS <= self.handlers:
            def send_offsets() -> None:
                c = Consumer({**self.common, "group.id": "golden-confluent-txn-group"})
                p.begin_transaction()
                try:
                    p.send_offsets_to_transaction([TopicPartition(topic, 0, 1)],
                                                  c.consumer_group_metadata(), WAIT_S)
                    p.commit_transaction(WAIT_S)
                except Exception:
                    with contextlib.suppress(Exception):
                        p.abort_transaction(WAIT_S)
                    raise
                finally:
                    c.close()

            step("confluent AddOffsetsToTxn/TxnOffsetCommit", send_offsets)

    def read_committed(self) -> None:
        from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

        c = Consumer({**self.common, "group.id": "golden-confluent", "enable.auto.commit": False,
                      "enable.partition.eof": True, "isolation.level": "read_committed"})
        try:
            c.assign([TopicPartition(codec_topic("none"), 0, OFFSET_BEGINNING)])
            deadline = time.monotonic() + WAIT_S
            while time.monotonic() < deadline:
                m = c.poll(0.5)
                if m is not None and m.error() and m.error().code() == KafkaError._PARTITION_EOF:
                    break
        finally:
            c.close()
