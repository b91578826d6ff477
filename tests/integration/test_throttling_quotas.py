"""The quotas that throttle by refusing rather than by slowing down, against Apache Kafka 4.4:
``controller_mutation_rate`` (KIP-599) on CreateTopics/CreatePartitions/DeleteTopics, and the
connection creation rates (KIP-612: an ip's ``connection_creation_rate``, the broker-wide
``max.connection.creation.rate``).

Each broker gets its quota through its own AlterClientQuotas (raw frames: no Python client has
a quota admin call) and is asked the same thing.  The quotas are chosen so that the outcome
does not hang on the clock: a mutation quota of 1/s starts with a bucket of 11 partitions
(1 x quota.window.num x 1 s), so a 50-partition topic empties it and whatever comes next within
39 s is refused; a connection rate of 1/s is measured over at least 10 s, so a burst of
connections gets exactly 10 through."""

from __future__ import annotations

import random
import socket
import time
import uuid

from confluent_kafka.admin import AdminClient, NewTopic
from kafka.admin import KafkaAdminClient, NewPartitions

from compat.kafka_tools import run_tool
from compat.wire_client import WireClient
from tests.integration.clients import WAIT_S, needs_java
from wire.framing import RequestHeader, encode_request, request_header_version
from wire.messages import API_KEYS
from wire.messages.alter_client_quotas_request import (
    AlterClientQuotasRequest,
    EntityData,
    EntryData,
    OpData,
)
from wire.messages.describe_client_quotas_request import ComponentData, DescribeClientQuotasRequest

MUTATIONS = "controller_mutation_rate"
CONNECTIONS = "connection_creation_rate"


def alter_quota(bootstrap: str, entity: list, key: str, value: float | None) -> None:
    """Sets (or with None removes) a quota and waits until the broker describes it so."""
    with WireClient(bootstrap) as c:
        r = c.request(49, 1, AlterClientQuotasRequest(entries=[EntryData(
            entity=[EntityData(t, n) for t, n in entity],
            ops=[OpData(key, 0.0 if value is None else float(value), value is None)])],
            validate_only=False))
        assert r.entries[0].error_code == 0, r.entries[0].error_message
        deadline = time.monotonic() + WAIT_S
        while True:
            d = c.request(48, 1, DescribeClientQuotasRequest(
                components=[ComponentData(t, 0, n) for t, n in entity], strict=True))
            values = {v.key: v.value for e in d.entries or [] for v in e.values}
            if values.get(key) == value:
                return
            assert time.monotonic() < deadline, f"{key} of {entity} not applied on {bootstrap}"
            time.sleep(0.02)


def _kafka_python(bootstrap: str, client_id: str, call):
    """One admin client a request: a refused request is throttled for ~40 s, and the broker
    reads nothing more from that connection meanwhile."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id=client_id)
    try:
        return call(admin)
    finally:
        admin.close()


def _strict_answers(bootstrap: str, prefix: str) -> list:
    client = f"{prefix}strict"
    alter_quota(bootstrap, [("client-id", client)], MUTATIONS, 1)
    out = []
    # one request: the first topic takes the full bucket (11) into debt (-39), the rest are
    # refused; the topics are looked at in the request's order
    created = _kafka_python(bootstrap, client, lambda a: a.create_topics(
        {f"{prefix}a": {"num_partitions": 50, "replication_factor": 1},
         f"{prefix}b": {"num_partitions": 1, "replication_factor": 1},
         f"{prefix}c": {"num_partitions": 1, "replication_factor": 1}}, raise_errors=False))
    out.append([(t["name"][len(prefix):], t["error_code"], t["error_message"],
                 t["num_partitions"]) for t in created["topics"]])
    grown = _kafka_python(bootstrap, client, lambda a: a.create_partitions(
        {f"{prefix}a": NewPartitions(60)}, raise_errors=False))
    out.append([(r.name[len(prefix):], r.error_code, r.error_message) for r in grown.results])
    deleted = _kafka_python(bootstrap, client, lambda a: a.delete_topics(
        [f"{prefix}a"], raise_errors=False))
    out.append([(r["name"][len(prefix):], r["error_code"], r.get("error_message"))
                for r in deleted["topics"]])
    # the other client ids are not limited
    other = _kafka_python(bootstrap, f"{prefix}free", lambda a: a.create_topics(
        {f"{prefix}d": {"num_partitions": 20, "replication_factor": 1}}, raise_errors=False))
    out.append([(t["name"][len(prefix):], t["error_code"]) for t in other["topics"]])
    # validate_only takes from the bucket too (Kafka's controller applies the quota before it
    # looks at validate_only)
    checker = f"{prefix}checker"
    alter_quota(bootstrap, [("client-id", checker)], MUTATIONS, 1)
    for name, partitions, validate_only in (("e", 50, True), ("f", 1, False)):
        checked = _kafka_python(bootstrap, checker, lambda a, name=name, partitions=partitions,
                                validate_only=validate_only: a.create_topics(
            {f"{prefix}{name}": {"num_partitions": partitions, "replication_factor": 1}},
            validate_only=validate_only, raise_errors=False))
        out.append([(t["name"][len(prefix):], t["error_code"]) for t in checked["topics"]])
    _kafka_python(bootstrap, f"{prefix}free", lambda a: a.delete_topics(
        [f"{prefix}a", f"{prefix}d"], raise_errors=False))
    alter_quota(bootstrap, [("client-id", client)], MUTATIONS, None)
    alter_quota(bootstrap, [("client-id", checker)], MUTATIONS, None)
    return out


@needs_java
def test_strict_mutation_quota_refuses_what_is_past_the_bucket_as_kafka(broker,
                                                                         reference_kafka):
    prefix = f"mut-{uuid.uuid4().hex[:6]}-"
    theirs = _strict_answers(reference_kafka.bootstrap_servers, prefix)
    ours = _strict_answers(broker.bootstrap_servers, prefix)
    assert ours == theirs
    assert ours[0] == [("a", 0, None, 50), ("b", 89, None, -1), ("c", 89, None, -1)]
    assert ours[1] == [("a", 89, None)] and ours[2] == [("a", 89, None)]
    assert ours[3] == [("d", 0)]
    assert ours[4:] == [[("e", 0)], [("f", 89)]]


def _permissive_answer(bootstrap: str, prefix: str) -> tuple:
    """librdkafka's CreateTopics (v4) predates the error: the topic is created and only the
    throttle time (throttle_cb) says the quota was exceeded."""
    client = f"{prefix}permissive"
    alter_quota(bootstrap, [("client-id", client)], MUTATIONS, 1)
    throttles: list[float] = []
    admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": client,
                         "throttle_cb": lambda e: throttles.append(e.throttle_time)})
    name = f"{prefix}p"
    error = admin.create_topics([NewTopic(name, 50, 1)])[name].exception(WAIT_S)
    deadline = time.monotonic() + WAIT_S
    while not throttles and time.monotonic() < deadline:
        admin.poll(0.05)
    cleanup = AdminClient({"bootstrap.servers": bootstrap})
    cleanup.delete_topics([name])[name].result(WAIT_S)
    alter_quota(bootstrap, [("client-id", client)], MUTATIONS, None)
    return error, throttles


@needs_java
def test_permissive_mutation_quota_creates_and_throttles_as_kafka(broker, reference_kafka):
    prefix = f"mut-{uuid.uuid4().hex[:6]}-"
    for bootstrap in (reference_kafka.bootstrap_servers, broker.bootstrap_servers):
        error, throttles = _permissive_answer(bootstrap, prefix)
        assert error is None
        # 50 partitions from a bucket of 11 leave 39 to pay back at 1/s
        assert throttles and 30 < throttles[0] <= 39, (bootstrap, throttles)


def _burst(bootstrap: str, count: int, source: str) -> list[str]:
    """Opens ``count`` connections from ``source`` at once, sends ApiVersions on each and
    tells which were answered and which the broker closed unanswered."""
    host, _, port = bootstrap.split(",")[0].rpartition(":")
    header = RequestHeader(18, 0, 1, "burst", request_header_version(18, 0))
    frame = bytes(encode_request(header, API_KEYS[18].request_type()()))
    socks = []
    try:
        for _ in range(count):
            s = socket.socket()
            socks.append(s)
            s.settimeout(WAIT_S)
            s.bind((source, 0))
            s.connect((host.strip("[]"), int(port)))
        for s in socks:
            s.sendall(frame)
        out = []
        for s in socks:
            try:
                out.append("answered" if len(s.recv(4)) == 4 else "closed")
            except ConnectionResetError:
                out.append("closed")
        return out
    finally:
        for s in socks:
            s.close()


def _ip_answers(bootstrap: str) -> list[str]:
    # a loopback address of its own, so no other connection counts against its quota
    source = f"127.{random.randint(1, 254)}.{random.randint(1, 254)}.{random.randint(2, 254)}"
    alter_quota(bootstrap, [("ip", source)], CONNECTIONS, 1)
    try:
        return _burst(bootstrap, 14, source)
    finally:
        alter_quota(bootstrap, [("ip", source)], CONNECTIONS, None)


@needs_java
def test_connections_over_the_ip_rate_are_closed_unanswered_as_kafka(broker, reference_kafka):
    theirs = _ip_answers(reference_kafka.bootstrap_servers)
    ours = _ip_answers(broker.bootstrap_servers)
    assert ours == theirs == ["answered"] * 10 + ["closed"] * 4


def _broker_rate_answers(bootstrap: str, key: str) -> list[str]:
    def configs(*args: str) -> None:
        p = run_tool("kafka-configs", ["--bootstrap-server", bootstrap, "--alter",
                                       "--entity-type", "brokers", "--entity-default", *args])
        assert p.returncode == 0, p.stderr

    configs("--add-config", f"{key}=2")
    try:
        return _burst(bootstrap, 25, "127.0.0.1")
    finally:
        configs("--delete-config", key)


@needs_java
def test_connections_over_the_broker_rate_wait_and_are_served_as_kafka(broker, reference_kafka):
    """Over ``max.connection.creation.rate`` (or the listener's own) the acceptor waits
    before serving the next connection: every connection is answered, none is refused."""
    for key in ("max.connection.creation.rate",
                "listener.name.plaintext.max.connection.creation.rate"):
        theirs = _broker_rate_answers(reference_kafka.bootstrap_servers, key)
        ours = _broker_rate_answers(broker.bootstrap_servers, key)
        assert ours == theirs == ["answered"] * 25


@needs_java
def test_the_mutation_quota_follows_the_sasl_principal_through_the_envelope(tmp_path):
    """A ``users`` quota: the controller sees the client's principal in the Envelope the
    broker forwards, so alice's second topic is refused and bob's is not."""
    from pykafkad.security.testkit import client_settings
    from pykafkad.testing import run_secured_broker

    users = {"alice": "alice-pw", "bob": "bob-pw"}
    with run_secured_broker(users) as kafka:
        props = tmp_path / "admin.properties"
        props.write_text("".join(f"{k}={v}\n" for k, v in kafka.clients["java"].items()))
        p = run_tool("kafka-configs", ["--bootstrap-server", kafka.bootstrap_servers,
                                       "--command-config", str(props), "--alter",
                                       "--entity-type", "users", "--entity-name", "alice",
                                       "--add-config", f"{MUTATIONS}=1"])
        assert p.returncode == 0, p.stderr

        def create(user: str, name: str, partitions: int):
            settings = client_settings("SASL_SSL", kafka.ca, mechanism="SCRAM-SHA-512",
                                       username=user, password=users[user])["kafka-python"]
            admin = KafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers,
                                     client_id=f"{user}-{name}", **settings)
            try:
                r = admin.create_topics({name: {"num_partitions": partitions,
                                                "replication_factor": 1}}, raise_errors=False)
            finally:
                admin.close()
            return [(t["name"], t["error_code"]) for t in r["topics"]]

        assert create("alice", "alice-1", 50) == [("alice-1", 0)]
        assert create("alice", "alice-2", 1) == [("alice-2", 89)]  # another client id: same user
        assert create("bob", "bob-1", 50) == [("bob-1", 0)]


def _delete_order(bootstrap: str, prefix: str) -> tuple:
    """Three 6-partition topics deleted in one request against a bucket of 11: the first two
    take it to -1, the third is refused.  Which one is third is the order Kafka's controller
    iterates its HashMap of topic ids in (pykafkad follows it, from the ids alone)."""
    from pykafkad.controller.quorum_controller import _resolution_order
    from pykafkad.metadata.java_properties import java_hash_order, java_uuid_hash

    client = f"{prefix}deleter"
    names = [f"{prefix}{x}" for x in "xyz"]
    created = _kafka_python(bootstrap, f"{prefix}free", lambda a: a.create_topics(
        {n: {"num_partitions": 6, "replication_factor": 1} for n in names}))
    ids = {t["name"]: uuid.UUID(str(t["topic_id"])).bytes for t in created["topics"]}
    alter_quota(bootstrap, [("client-id", client)], MUTATIONS, 1)
    deleted = _kafka_python(bootstrap, client, lambda a: a.delete_topics(
        names, raise_errors=False))
    alter_quota(bootstrap, [("client-id", client)], MUTATIONS, None)
    refused = sorted(r["name"] for r in deleted["topics"] if r["error_code"] == 89)
    by_id = {i: n for n, i in ids.items()}
    order = java_hash_order([ids[n] for n in _resolution_order(names)], hash_of=java_uuid_hash)
    _kafka_python(bootstrap, f"{prefix}free", lambda a: a.delete_topics(refused))
    return sorted(r["error_code"] for r in deleted["topics"]), refused, [by_id[order[-1]]]


@needs_java
def test_which_topics_a_deletion_past_the_quota_refuses_is_kafkas(broker, reference_kafka):
    for bootstrap in (reference_kafka.bootstrap_servers, broker.bootstrap_servers):
        codes, refused, predicted = _delete_order(bootstrap, f"del-{uuid.uuid4().hex[:6]}-")
        assert codes == [0, 0, 89]
        assert refused == predicted, bootstrap
