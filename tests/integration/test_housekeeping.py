"""Housekeeping never stalls requests: while the broker's own cleaner is in the middle of
compacting a large partition, stock clients produce to and fetch from another topic."""

from __future__ import annotations

import threading

from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from pykafkad.testing import run_broker
from tests.integration.clients import WAIT_S, confluent_consume, confluent_produce, create_topic
from tests.integration.groups_support import wait_until

KEYS = 200
ROUNDS = 20
RETAINED_RECORDS = 40
COMPACTED_CONFIG = {"cleanup.policy": "compact", "segment.bytes": "1048576"}


def test_clients_are_served_while_the_cleaner_is_mid_run(tmp_path, topic_name):
    compacted, other = f"{topic_name}-compacted", f"{topic_name}-other"
    with run_broker(tmp_path / "data", config={"log.cleaner.backoff.ms": "100"}) as b:
        create_topic(b.bootstrap_servers, compacted, config=COMPACTED_CONFIG)
        create_topic(b.bootstrap_servers, other)
        held, release = threading.Event(), threading.Event()
        served_while_held: list[bool] = []

        def hold_first_swap(plog) -> None:
            """Runs in the cleaner's thread: the round has read and written its first cleaned
            segment and waits here until the clients below were answered."""
            if plog.dir.name == f"{compacted}-0" and not held.is_set():
                held.set()
                served_while_held.append(release.wait(WAIT_S))

        b.broker.logs.cleaner.before_swap = hold_first_swap
        producer = Producer({"bootstrap.servers": b.bootstrap_servers, "linger.ms": 20})
        newest = {}
        for r in range(ROUNDS):
            for k in range(KEYS):
                key, value = b"key-%03d" % k, b"r%d-" % r + bytes(1000)
                producer.produce(compacted, value, key)
                newest[key] = value
            producer.poll(0)
        assert producer.flush(WAIT_S) == 0
        plog = b.broker.logs.get(compacted, 0)
        b.call(plog.roll)  # everything becomes cleanable
        leo = plog.log_end_offset
        assert held.wait(WAIT_S), "the cleaner did not start"

        # the cleaner is mid-run (held in its thread): the loop still answers produce and fetch
        delivered = confluent_produce(
            b.bootstrap_servers, other, [{"key": b"k", "value": b"while cleaning"}]
        )
        assert [m.offset() for m in delivered] == [0]
        got = confluent_consume(b.bootstrap_servers, other, 1)
        assert [m.value() for m in got] == [b"while cleaning"]
        release.set()

        key = (compacted, 0)
        checkpoints = b.broker.logs.cleaner.checkpoints
        wait_until(lambda: checkpoints.get(key, 0) >= leo, "the cleaning to finish")
        assert served_while_held == [True]
        assert key not in b.broker.logs.cleaner.uncleanable
        # only the newest value of each key is left, so the first KEYS records are those
        records = confluent_consume(b.bootstrap_servers, compacted, KEYS)
        assert {m.key(): m.value() for m in records} == newest


def test_the_broker_s_retention_timer_deletes_old_segments(tmp_path, topic_name):
    """Retention decides on the request loop and unlinks in a worker thread: the segments go,
    their files too, and the remaining records stay readable."""
    config = {"log.retention.check.interval.ms": "100"}
    with run_broker(tmp_path / "data", config=config) as b:
        create_topic(b.bootstrap_servers, topic_name,
                     config={"segment.bytes": "1048576", "retention.bytes": "2097152"})
        producer = Producer({"bootstrap.servers": b.bootstrap_servers, "linger.ms": 0})
        for i in range(RETAINED_RECORDS):
            producer.produce(topic_name, b"%03d" % i + bytes(100_000))
            producer.flush(WAIT_S)  # one batch each: four 1 MiB segments
        plog = b.broker.logs.get(topic_name, 0)
        wait_until(lambda: plog.log_start_offset > 0, "retention to delete segments")

        def leftovers() -> list[str]:
            names = [p.name for p in plog.dir.iterdir()]
            live = {f"{s.base_offset:020d}" for s in b.call(lambda: plog.segments)}
            return [n for n in names if n[:20].isdigit() and n[:20] not in live]

        wait_until(lambda: not leftovers(), "the deleted segments' files to go")
        start = plog.log_start_offset
        got = confluent_consume(b.bootstrap_servers, topic_name, RETAINED_RECORDS - start)
        assert [m.value()[:3] for m in got] == [b"%03d" % i for i in range(start, RETAINED_RECORDS)]


def test_deleted_topics_directories_are_removed_in_the_background(tmp_path, topic_name):
    """DeleteTopics renames the partition directories aside and answers; a worker thread
    removes them soon after. A topic of the same name can be created meanwhile."""
    with run_broker(tmp_path / "data") as b:
        create_topic(b.bootstrap_servers, topic_name, partitions=3)
        confluent_produce(b.bootstrap_servers, topic_name, [{"value": b"old", "partition": 0}])
        admin = AdminClient({"bootstrap.servers": b.bootstrap_servers})
        admin.delete_topics([topic_name])[topic_name].result(WAIT_S)
        assert not (tmp_path / "data" / f"{topic_name}-0").exists()

        def doomed() -> list[str]:
            return [p.name for p in (tmp_path / "data").iterdir()
                    if p.name.startswith(topic_name) and p.name.endswith("-delete")]

        wait_until(lambda: not doomed(), "the deleted partitions' directories to go")
        wait_until(lambda: _recreated(b.bootstrap_servers, admin, topic_name), "the re-creation")
        delivered = confluent_produce(b.bootstrap_servers, topic_name,
                                      [{"value": b"new", "partition": 0}])
        assert [m.offset() for m in delivered] == [0]


def _recreated(bootstrap: str, admin: AdminClient, topic: str) -> bool:
    """Creates ``topic`` again; False while the broker still reports it being deleted."""
    try:
        admin.create_topics([NewTopic(topic, 3, 1)])[topic].result(WAIT_S)
    except KafkaException:
        return False
    return True
