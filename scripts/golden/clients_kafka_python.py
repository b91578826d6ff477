"""kafka-python's scenarios: its admin client covers most admin APIs, its consumer full and
incremental fetch sessions, its producer every codec and transactions."""

from __future__ import annotations

import contextlib

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


def find_coordinator(admin) -> None:
    """DescribeGroups starts with FindCoordinator; the former may not be served yet."""
    from kafka.errors import IncompatibleBrokerVersion

    with contextlib.suppress(IncompatibleBrokerVersion):
        admin.describe_groups(["golden-kafka-python"])


class KafkaPython(ClientDriver):
    name = "kafka-python"

    def __init__(self, bootstrap: str, node_id: int, handlers: set[int]) -> None:
        super().__init__(bootstrap, node_id, handlers)
        self.common = {"bootstrap_servers": bootstrap, "client_id": self.name}

    def admin(self) -> None:
        from kafka import TopicPartition
        from kafka.admin import (
            ConfigResource,
            ConfigResourceType,
            KafkaAdminClient,
            NewPartitions,
            NewTopic,
            OffsetSpec,
        )

        admin = KafkaAdminClient(**self.common)
        try:
            topics = [NewTopic(codec_topic(c), 1, 1) for c in CODECS]
            name = admin_topic(self.name)
            topics.append(NewTopic(name, 2, 1, topic_configs={"retention.ms": "3600000"}))
            step("kafka-python CreateTopics", lambda: admin.create_topics(topics))
            step("kafka-python DescribeCluster", admin.describe_cluster)
            step("kafka-python Metadata", lambda: admin.describe_topics([name]))
            step("kafka-python DescribeTopicPartitions",
                 lambda: admin.describe_topic_partitions([name]))
            step("kafka-python CreatePartitions",
                 lambda: admin.create_partitions({name: NewPartitions(3)}))
            topic_res = ConfigResource(ConfigResourceType.TOPIC, name)
            broker_res = ConfigResource(ConfigResourceType.BROKER, str(self.node_id))
            step("kafka-python DescribeConfigs",
                 lambda: admin.describe_configs([topic_res, broker_res]))
            step("kafka-python AlterConfigs", lambda: admin.alter_configs(
                [ConfigResource(ConfigResourceType.TOPIC, name,
                                configs={"retention.ms": "7200000"})], incremental=False))
            step("kafka-python IncrementalAlterConfigs", lambda: admin.alter_configs(
                [ConfigResource(ConfigResourceType.TOPIC, name,
                                configs={"retention.bytes": "1048576"})], incremental=True))
            tp = TopicPartition(name, 0)
            step("kafka-python DeleteRecords", lambda: admin.delete_records({tp: 0}))
            for spec in (OffsetSpec.EARLIEST, OffsetSpec.LATEST, OffsetSpec.MAX_TIMESTAMP):
                step(f"kafka-python ListOffsets {spec.name}",
                     lambda spec=spec: admin.list_partition_offsets({tp: spec}))
            step("kafka-python FindCoordinator", lambda: find_coordinator(admin))
            step("kafka-python DeleteTopics", lambda: admin.delete_topics([name]))
        finally:
            admin.close()

    def produce(self) -> None:
        from kafka import KafkaProducer

        for codec in CODECS:
            def run(codec: str = codec) -> None:
                p = KafkaProducer(**self.common, acks="all", linger_ms=100,
                                  compression_type=None if codec == "none" else codec)
                try:
                    for key, value, headers, ts in records_for(self.name, codec):
                        p.send(codec_topic(codec), key=key, value=value, headers=headers,
                               timestamp_ms=ts)
                    p.flush(WAIT_S)
                finally:
                    p.close(WAIT_S)

            step(f"kafka-python Produce {codec}", run)

    def consume(self) -> None:
        from kafka import KafkaConsumer, KafkaProducer, TopicPartition

        tps = [TopicPartition(codec_topic(c), 0) for c in CODECS]
        c = KafkaConsumer(**self.common, group_id=None, enable_auto_commit=False,
                          fetch_max_wait_ms=200)
        try:
            c.assign(tps)
            c.seek_to_beginning(*tps)

            def poll(n: int) -> None:
                poll_records(n, lambda: sum(len(v) for v in c.poll(timeout_ms=500).values()))

            step("kafka-python Fetch (full session)", lambda: poll(expected_records()))
            step("kafka-python Fetch (incremental, empty)", lambda: c.poll(timeout_ms=600))

            def more() -> None:
                p = KafkaProducer(**self.common, acks="all")
                p.send(codec_topic("none"), key=record_key(self.name, "none", 99), value=b"x",
                       timestamp_ms=BASE_TS + 99)
                p.close(WAIT_S)
                poll(1)

            step("kafka-python Fetch (incremental, records)", more)
            tp = tps[0]
            step("kafka-python ListOffsets earliest", lambda: c.beginning_offsets([tp]))
            step("kafka-python ListOffsets latest", lambda: c.end_offsets([tp]))
            step("kafka-python ListOffsets timestamp",
                 lambda: c.offsets_for_times({tp: BASE_TS + 1}))
        finally:
            c.close()

    def groups(self) -> None:
        from kafka import KafkaConsumer, TopicPartition
        from kafka.admin import KafkaAdminClient

        group = "golden-kafka-python"
        c = KafkaConsumer(codec_topic("none"), **self.common, group_id=group,
                          auto_offset_reset="earliest", enable_auto_commit=False,
                          fetch_max_wait_ms=200, heartbeat_interval_ms=200)
        try:
            poll_until(lambda: bool(c.assignment()), lambda: c.poll(timeout_ms=500))
            poll_until(lambda: False, lambda: c.poll(timeout_ms=200), 1)  # a few heartbeats
            step("kafka-python OffsetCommit", lambda: c.commit(timeout_ms=WAIT_S * 1000))
            step("kafka-python OffsetFetch", lambda: [
                c.committed(tp, timeout_ms=WAIT_S * 1000) for tp in c.assignment()])
        finally:
            c.close()  # LeaveGroup
        admin = KafkaAdminClient(**self.common)
        try:
            step("kafka-python ListGroups", admin.list_groups)
            step("kafka-python DescribeGroups", lambda: admin.describe_groups([group]))
            step("kafka-python admin OffsetFetch",
                 lambda: admin.list_group_offsets({group: None}))
            step("kafka-python OffsetDelete", lambda: admin.delete_group_offsets(
                group, [TopicPartition(codec_topic("none"), 0)]))
            step("kafka-python DeleteGroups", lambda: admin.delete_groups([group]))
        finally:
            admin.close()

    def transactions(self) -> None:
        from kafka import KafkaProducer, TopicPartition
        from kafka.admin import KafkaAdminClient
        from kafka.structs import OffsetAndMetadata

        txn_id = "golden-kafka-python-txn"
        tp = TopicPartition(codec_topic("none"), 0)
        p = KafkaProducer(**self.common, transactional_id=txn_id, acks="all",
                          max_block_ms=WAIT_S * 1000)
        try:
            p.init_transactions()
            p.begin_transaction()
            p.send(tp.topic, key=record_key(self.name, "none", 100), value=b"t",
                   timestamp_ms=BASE_TS)
            p.commit_transaction()
            p.begin_transaction()
            p.send(tp.topic, key=record_key(self.name, "none", 101), value=b"t",
                   timestamp_ms=BASE_TS)
            p.abort_transaction()
            if TXN_OFFSET_APIS <= self.handlers:
                def send_offsets() -> None:
                    p.begin_transaction()
                    try:
                        p.send_offsets_to_transaction(
                            {tp: OffsetAndMetadata(1, "", -1)}, "golden-kafka-python-txn-group")
                        p.commit_transaction()
                    except Exception:
                        with contextlib.suppress(Exception):
                            p.abort_transaction()
                        raise

                step("kafka-python AddOffsetsToTxn/TxnOffsetCommit", send_offsets)
        finally:
            p.close(WAIT_S)
        admin = KafkaAdminClient(**self.common)
        try:
            step("kafka-python DescribeProducers", lambda: admin.describe_producers([tp]))
            step("kafka-python ListTransactions", admin.list_transactions)
            step("kafka-python DescribeTransactions",
                 lambda: admin.describe_transactions([txn_id]))
        finally:
            admin.close()

    def read_committed(self) -> None:
        from kafka import KafkaConsumer, TopicPartition

        tp = TopicPartition(codec_topic("none"), 0)
        c = KafkaConsumer(**self.common, group_id=None, enable_auto_commit=False,
                          isolation_level="read_committed", fetch_max_wait_ms=200)
        try:
            c.assign([tp])
            c.seek_to_beginning(tp)
            end = c.end_offsets([tp])[tp]
            poll_until(lambda: c.position(tp) >= end, lambda: c.poll(timeout_ms=500))
        finally:
            c.close()
