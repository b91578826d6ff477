"""Settings that pykafkad accepts are applied, as Kafka applies them: connections.max.idle.ms,
socket.listen.backlog.size, socket.send/receive.buffer.bytes,
max.incremental.fetch.session.cache.slots, broker.rack, advertised.listeners and
transaction.remove.expired.transaction.cleanup.interval.ms."""

from __future__ import annotations

import os
import re
import shutil
import socket
import struct
import subprocess
import time

import pytest
from confluent_kafka import Producer
from kafka import KafkaAdminClient, KafkaConsumer
from kafka import TopicPartition as KafkaTopicPartition

from pykafkad.testing import run_broker
from tests.integration.broker_process import BrokerProcess
from tests.integration.clients import WAIT_S, confluent_produce, create_topic


def wait_for(condition, what: str, timeout: float = WAIT_S):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def api_versions_request(correlation_id: int) -> bytes:
    """ApiVersions v0 (key 18): the one request any broker answers first."""
    body = struct.pack(">hhih", 18, 0, correlation_id, -1)
    return struct.pack(">i", len(body)) + body


def read_response(sock: socket.socket) -> bytes:
    size = struct.unpack(">i", sock.recv(4, socket.MSG_WAITALL))[0]
    return sock.recv(size, socket.MSG_WAITALL)


def test_idle_connections_are_closed(tmp_path, topic_name):
    with run_broker(tmp_path / "data", config={"connections.max.idle.ms": "300"}) as kafka:
        create_topic(kafka.bootstrap_servers, topic_name)
        with socket.create_connection(("127.0.0.1", kafka.port), timeout=WAIT_S) as idle:
            idle.sendall(api_versions_request(7))  # served, then silent
            assert read_response(idle)[:4] == struct.pack(">i", 7)
            assert idle.recv(1) == b""  # closed by the broker (recv would time out otherwise)
        with socket.create_connection(("127.0.0.1", kafka.port), timeout=WAIT_S) as half:
            half.sendall(api_versions_request(8)[:6])  # half a request, then silence
            assert half.recv(1) == b""
        # a client whose connections were closed while idle reconnects and carries on
        confluent_produce(kafka.bootstrap_servers, topic_name, [{"value": b"1", "partition": 0}])
        wait_for(lambda: kafka.call(lambda: not kafka.server.connections), "idle connections closed")
        confluent_produce(kafka.bootstrap_servers, topic_name, [{"value": b"2", "partition": 0}])


def _listen_backlog(port: int) -> int:
    """The backlog of the socket listening on ``port`` (ss shows it as Send-Q)."""
    out = subprocess.run(["ss", "-ltnH", f"sport = :{port}"], capture_output=True, text=True,
                         check=True).stdout
    return int(re.split(r"\s+", out.strip().splitlines()[0])[2])


@pytest.mark.skipif(shutil.which("ss") is None and not os.environ.get("CI"),
                    reason="ss (iproute2) is needed to read a backlog (scripts/test installs it)")
def test_listen_backlog_size(tmp_path):
    with run_broker(tmp_path / "data") as kafka:
        assert _listen_backlog(kafka.port) == 50  # Kafka's default
    with run_broker(tmp_path / "data", config={"socket.listen.backlog.size": "7"}) as kafka:
        assert _listen_backlog(kafka.port) == 7


def test_socket_buffer_sizes(tmp_path):
    config = {"socket.send.buffer.bytes": "65536", "socket.receive.buffer.bytes": "32768"}
    with run_broker(tmp_path / "data", config=config) as kafka:
        with socket.create_connection(("127.0.0.1", kafka.port), timeout=WAIT_S) as client:
            client.sendall(api_versions_request(1))
            read_response(client)

            def buffers():
                conn = next(iter(kafka.server.connections))
                sock = conn.stream.socket
                return (sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF),
                        sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF))

            # Linux reports twice what was set (the kernel's bookkeeping share)
            assert kafka.call(buffers) == (2 * 65536, 2 * 32768)


def _consume(bootstrap: str, topic: str) -> KafkaConsumer:
    """kafka-python opens incremental fetch sessions (librdkafka never does)."""
    c = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, fetch_max_wait_ms=50)
    c.assign([KafkaTopicPartition(topic, 0)])
    c.seek_to_beginning()
    return c


def _read(consumer: KafkaConsumer, count: int) -> list[bytes]:
    got: list[bytes] = []
    deadline = time.monotonic() + WAIT_S
    while len(got) < count and time.monotonic() < deadline:
        for records in consumer.poll(200).values():
            got.extend(r.value for r in records)
    return got


@pytest.mark.parametrize("slots", [0, 1])
def test_fetch_session_cache_slots(tmp_path, topic_name, slots):
    """Consumers beyond the cache's slots are served sessionless (Kafka's answer when the cache
    is full of recently used sessions): they read everything all the same."""
    config = {"max.incremental.fetch.session.cache.slots": str(slots)}
    with run_broker(tmp_path / "data", config=config) as kafka:
        create_topic(kafka.bootstrap_servers, topic_name)
        values = [b"%d" % i for i in range(5)]
        confluent_produce(kafka.bootstrap_servers, topic_name,
                          [{"value": v, "partition": 0} for v in values])
        consumers = [_consume(kafka.bootstrap_servers, topic_name) for _ in range(3)]
        try:
            for c in consumers:
                assert _read(c, len(values)) == values
            assert kafka.call(lambda: len(kafka.broker.fetch_sessions.sessions)) == slots
        finally:
            for c in consumers:
                c.close()


def test_broker_rack_and_advertised_listeners(tmp_path):
    """broker.rack is in Metadata/DescribeCluster; advertised.listeners names the host clients
    are sent to (port 0 there: the bound port)."""
    kafka = BrokerProcess(tmp_path / "data", "--set", "broker.rack=rack-a", "--set",
                          "advertised.listeners=PLAINTEXT://localhost:0").start()
    try:
        admin = KafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers)
        brokers = admin.describe_cluster()["brokers"]
        admin.close()
        assert [(b["host"], b["port"], b["rack"]) for b in brokers] == [
            ("localhost", kafka.port, "rack-a")]
    finally:
        assert kafka.terminate() == 0


def test_transactional_id_expiry_runs_on_its_own_interval(tmp_path):
    now = [1_000_000]
    config = {"transactional.id.expiration.ms": "1000",
              "transaction.remove.expired.transaction.cleanup.interval.ms": "5000",
              "producer.id.expiration.check.interval.ms": "3600000"}
    with run_broker(tmp_path / "data", config=config, clock=lambda: now[0]) as kafka:
        producer = Producer({"bootstrap.servers": kafka.bootstrap_servers,
                             "transactional.id": "idle-txn"})
        producer.init_transactions(WAIT_S)
        known = lambda: "idle-txn" in kafka.broker.txn_coordinator.txns  # noqa: E731
        kafka.call(kafka.broker.run_transaction_timers)  # the cycle starts now
        now[0] += 2000  # expired, but the cleanup interval has not passed
        kafka.call(kafka.broker.run_transaction_timers)
        assert kafka.call(known)
        now[0] += 3000
        kafka.call(kafka.broker.run_transaction_timers)
        assert not kafka.call(known)


def _served(sock: socket.socket, correlation_id: int) -> bool:
    sock.sendall(api_versions_request(correlation_id))
    try:
        return read_response(sock)[:4] == struct.pack(">i", correlation_id)
    except (struct.error, OSError):
        return False


def test_max_connections_per_ip(tmp_path):
    with run_broker(tmp_path / "data", config={"max.connections.per.ip": "2"}) as kafka:
        first, second = (socket.create_connection(("127.0.0.1", kafka.port), timeout=WAIT_S)
                         for _ in range(2))
        assert _served(first, 1) and _served(second, 2)
        with socket.create_connection(("127.0.0.1", kafka.port), timeout=WAIT_S) as third:
            assert third.recv(1) == b""  # accepted and closed at once
        first.close()
        wait_for(lambda: kafka.call(lambda: kafka.server.quotas.total) == 1, "a freed slot")
        with socket.create_connection(("127.0.0.1", kafka.port), timeout=WAIT_S) as again:
            assert _served(again, 3)
        second.close()


def test_max_connections_waits_for_a_free_slot(tmp_path):
    with run_broker(tmp_path / "data", config={"max.connections": "2"}) as kafka:
        first, second = (socket.create_connection(("127.0.0.1", kafka.port), timeout=WAIT_S)
                         for _ in range(2))
        assert _served(first, 1) and _served(second, 2)
        with socket.create_connection(("127.0.0.1", kafka.port), timeout=WAIT_S) as third:
            third.sendall(api_versions_request(3))  # waits in the listen backlog
            assert kafka.call(lambda: kafka.server.quotas.total) == 2
            first.close()  # a slot frees: the waiting connection is accepted and answered
            assert read_response(third)[:4] == struct.pack(">i", 3)
        second.close()


def test_internal_segment_bytes_sets_the_segment_size(tmp_path, topic_name):
    """Kafka's test-only topic config (no 1 MiB minimum) rolls segments as LogConfig.segmentSize."""
    with run_broker(tmp_path / "data") as kafka:
        create_topic(kafka.bootstrap_servers, topic_name, config={"internal.segment.bytes": "2000"})
        confluent_produce(kafka.bootstrap_servers, topic_name,
                          [{"value": b"x" * 1500, "partition": 0} for _ in range(4)],
                          **{"linger.ms": 0, "batch.num.messages": 1})
        assert len(list((kafka.data_dir / f"{topic_name}-0").glob("*.log"))) == 4
