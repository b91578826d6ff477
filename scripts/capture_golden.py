"""Captures golden request/response bytes from the stock clients talking to a real pykafkad.

    .venv/bin/python scripts/capture_golden.py tests/wire/golden

An in-process broker (``pykafkad.testing.run_broker``) sits behind a small recording TCP proxy;
the broker advertises the proxy's address, so every connection a client opens after bootstrap
also goes through it. kafka-python, confluent-kafka and kcat are then driven through every API
the broker registers (``pykafkad.dispatch.load_handlers``): admin (topics, partitions, configs,
cluster, records), Produce in each compression codec, Fetch (sessionless, full and incremental
sessions), ListOffsets (earliest, latest, max timestamp, by timestamp), OffsetForLeaderEpoch,
and the group and transaction APIs when their handlers exist (a scenario that fails is logged
and the capture goes on).

For each exchange the proxy keeps the raw frames without their size prefix (header + body).
The first exchange per (client, API, version, variant) is kept; the variant separates cases the
codec tests need apart: the compression codec of produced batches (``-txn``: transactional),
sessionless/full/incremental fetches with or without records (``-txn``: aborted transactions or
control batches), which ListOffsets spec was asked, all/no/named topics for Metadata, group or
transaction coordinator. Output (about 100 kB):

    <out>/<client>/<ApiName>-v<version>[-<variant>]-{request,response}.bin
    <out>/index.json     api key/version, header versions, correlation id, file names

Clients are told apart by their ``client.id`` (set here). Records are few, small and have fixed
keys, values and (where the client allows) timestamps, so a re-run gives the same files except
for what the broker or the clients make up per run (topic ids, producer ids, session ids, times).
Files from an earlier run are replaced. tests/wire/test_golden.py reads the result.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from wire.framing import (  # noqa: E402
    read_request_header,
    read_response_header,
    response_header_version,
)
from wire.messages import API_KEYS  # noqa: E402
from wire.primitives import Reader  # noqa: E402
from wire.records.batch import iter_batch_headers  # noqa: E402

CLIENTS = ("kafka-python", "confluent-kafka", "kcat")
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
CODEC_NAMES = dict(enumerate(CODECS))
#: fixed record timestamps (2023-11-14T22:13:20Z) so produced batches repeat across runs
BASE_TS = 1_700_000_000_000
RECORDS_PER_BATCH = 3
WAIT_S = 30
KCAT = shutil.which("kcat") or shutil.which("kafkacat")


def log(msg: str) -> None:
    print(f"[capture] {msg}", file=sys.stderr, flush=True)


def codec_topic(codec: str) -> str:
    return f"golden-{codec}"


def admin_topic(client: str) -> str:
    return f"golden-admin-{client}"


def record_key(client: str, codec: str, i: int) -> bytes:
    """Keys name the producing client and codec, so the tests can check Fetch coverage."""
    return f"{client}/{codec}/{i}".encode()


# -- recording ---------------------------------------------------------------------------------


def _batches(record_sets) -> tuple[list[str], bool]:
    """(codecs, any transactional or control batch) of the whole batches in record sets."""
    codecs, txn = set(), False
    for records in record_sets:
        if records is None or len(records) == 0:
            continue
        for _pos, header in iter_batch_headers(records):
            codecs.add(CODEC_NAMES.get(header.compression, f"codec{header.compression}"))
            txn = txn or header.is_transactional or header.is_control
    return sorted(codecs), txn


def variant_of(api_key: int, version: int, request, response) -> str:
    """The part of a file name that keeps apart cases worth a golden file of their own."""
    if api_key == 0:  # Produce: the codec of the batches, transactional or not
        codecs, txn = _batches([p.records for t in request.topic_data for p in t.partition_data])
        return ("+".join(codecs) or "empty") + ("-txn" if txn else "")
    if api_key == 1:  # Fetch: session kind, whether records came back, transactions in them
        if version < 7 or request.session_epoch < 0:
            session = "sessionless"
        else:
            session = "full" if request.session_epoch == 0 else "incremental"
        parts = [p for t in response.responses for p in t.partitions] if response else []
        codecs, txn = _batches([p.records for p in parts])
        txn = txn or any(getattr(p, "aborted_transactions", None) for p in parts)
        return f"{session}-{'records' if codecs else 'empty'}{'-txn' if txn else ''}"
    if api_key == 2:  # ListOffsets: which spec
        names = {-1: "latest", -2: "earliest", -3: "maxtimestamp", -4: "earliestlocal",
                 -5: "latesttiered"}
        specs = {names.get(p.timestamp, "timestamp") for t in request.topics for p in t.partitions}
        return "+".join(sorted(specs))
    if api_key == 3:  # Metadata: all topics, none, or named ones
        if request.topics is None:
            return "all"
        return "topics" if request.topics else "none"
    if api_key == 10:  # FindCoordinator: group or transaction
        return {0: "group", 1: "transaction", 2: "share"}.get(request.key_type, "")
    return ""


def client_of(client_id: str | None) -> str | None:
    for name in CLIENTS:
        if client_id and client_id.startswith(name):
            return name
    return None


class Recorder:
    """Keeps the first exchange per (client, api key, version, variant)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.exchanges: dict[tuple[str, int, int, str], dict] = {}
        self.seen: Counter[tuple[str, str]] = Counter()

    def exchange(self, request: bytes, response: bytes | None) -> None:
        r = Reader(request)
        header = read_request_header(r)
        client = client_of(header.client_id)
        spec = API_KEYS.get(header.api_key)
        if client is None or spec is None:
            return
        hv = response_header_version(header.api_key, header.api_version)
        req_obj = resp_obj = None
        variant = ""
        try:
            req_obj = spec.request_type().decode(request[r.pos:], header.api_version)
            if response is not None:
                rr = Reader(response)
                read_response_header(rr, hv)
                resp_obj = spec.response_type().decode(response[rr.pos:], header.api_version)
            variant = variant_of(header.api_key, header.api_version, req_obj, resp_obj)
        except Exception as e:  # a codec bug: keep the bytes anyway, the tests will say why
            log(f"cannot decode {spec.name} v{header.api_version} from {client}: {e!r}")
        key = (client, header.api_key, header.api_version, variant)
        with self.lock:
            self.seen[client, spec.name] += 1
            if key in self.exchanges:
                return
            self.exchanges[key] = {
                "client": client,
                "api_key": header.api_key,
                "api_name": spec.name,
                "api_version": header.api_version,
                "variant": variant,
                "correlation_id": header.correlation_id,
                "request_header_version": header.version,
                "response_header_version": hv,
                "request_bytes": bytes(request),
                "response_bytes": None if response is None else bytes(response),
            }

    def write(self, out: Path) -> int:
        for client in CLIENTS:
            d = out / client
            if d.is_dir():
                for f in d.glob("*.bin"):
                    f.unlink()
        index = []
        total = 0
        for key in sorted(self.exchanges):
            e = dict(self.exchanges[key])
            stem = f"{e['api_name']}-v{e['api_version']}"
            if e["variant"]:
                stem += f"-{e['variant']}"
            (out / e["client"]).mkdir(parents=True, exist_ok=True)
            for kind in ("request", "response"):
                data = e.pop(f"{kind}_bytes")
                name = None
                if data is not None:
                    name = f"{e['client']}/{stem}-{kind}.bin"
                    (out / name).write_bytes(data)
                    total += len(data)
                e[kind] = name
            index.append(e)
        doc = {"generated_by": "scripts/capture_golden.py", "clients": client_versions(),
               "exchanges": index}
        (out / "index.json").write_text(json.dumps(doc, indent=1) + "\n")
        return total


# -- the proxy ---------------------------------------------------------------------------------


def _recv_exact(sock: socket.socket, n: int) -> bytes | None:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def _frames(sock: socket.socket):
    while True:
        prefix = _recv_exact(sock, 4)
        if prefix is None:
            return
        body = _recv_exact(sock, int.from_bytes(prefix, "big", signed=True))
        if body is None:
            return
        yield prefix, body


class Proxy:
    """Forwards frames both ways unchanged; pairs each response with its request."""

    def __init__(self, upstream: tuple[str, int], recorder: Recorder) -> None:
        self.upstream = upstream
        self.recorder = recorder
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.closing = False

    def start(self) -> None:
        threading.Thread(target=self._accept, name="golden-proxy", daemon=True).start()

    def close(self) -> None:
        self.closing = True
        with contextlib.suppress(OSError):
            self.listener.close()

    def _accept(self) -> None:
        while not self.closing:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            server = socket.create_connection(self.upstream)
        except OSError:
            client.close()
            return
        pending: dict[int, bytes] = {}
        lock = threading.Lock()

        def requests() -> None:
            try:
                for prefix, body in _frames(client):
                    corr = int.from_bytes(body[4:8], "big", signed=True)
                    with lock:
                        pending[corr] = body
                    server.sendall(prefix + body)
            except OSError:
                pass
            finally:
                with contextlib.suppress(OSError):
                    server.shutdown(socket.SHUT_WR)

        def responses() -> None:
            try:
                for prefix, body in _frames(server):
                    corr = int.from_bytes(body[:4], "big", signed=True)
                    with lock:
                        request = pending.pop(corr, None)
                    client.sendall(prefix + body)
                    if request is not None:
                        try:
                            self.recorder.exchange(request, body)
                        except Exception as e:
                            log(f"unparseable exchange: {e!r}")
            except OSError:
                pass
            finally:
                with contextlib.suppress(OSError):
                    client.shutdown(socket.SHUT_WR)

        t = threading.Thread(target=requests, daemon=True)
        t.start()
        responses()
        t.join(5)
        client.close()
        server.close()


# -- driving the clients -----------------------------------------------------------------------


def client_versions() -> dict[str, str]:
    import confluent_kafka
    import kafka

    ck = confluent_kafka.version()
    out = {
        "kafka-python": kafka.__version__,
        "confluent-kafka": f"{ck[0] if isinstance(ck, tuple) else ck} "
        f"(librdkafka {confluent_kafka.libversion()[0]})",
    }
    if KCAT:
        v = subprocess.run([KCAT, "-V"], capture_output=True, text=True).stdout
        m = re.search(r"Version (\S+) .*?librdkafka (\S+)", v)
        out["kcat"] = f"{m.group(1)} (librdkafka {m.group(2)})" if m else "unknown"
    return out


def step(name: str, fn: Callable[[], object]) -> None:
    """Runs one scenario; a failure is logged and the capture goes on with the next."""
    t0 = time.monotonic()
    try:
        fn()
        log(f"{name}: ok ({time.monotonic() - t0:.1f}s)")
    except Exception as e:
        log(f"{name}: FAILED {type(e).__name__}: {e}")


def records_for(client: str, codec: str) -> list[tuple[bytes, bytes, list, int]]:
    """A few small records, compressible enough that librdkafka keeps the compressed batch
    (it sends a batch uncompressed when compression does not make it smaller)."""
    return [
        (record_key(client, codec, i), f"value-{i}-{'abc' * 16}".encode(),
         [("h", str(i).encode())] if i else [], BASE_TS + i)
        for i in range(RECORDS_PER_BATCH)
    ]


def expected_records() -> int:
    return len(CLIENTS if KCAT else CLIENTS[:2]) * len(CODECS) * RECORDS_PER_BATCH


def find_coordinator(admin) -> None:
    """DescribeGroups starts with FindCoordinator; the former may not be served yet."""
    from kafka.errors import IncompatibleBrokerVersion

    with contextlib.suppress(IncompatibleBrokerVersion):
        admin.describe_groups(["golden-kafka-python"])


class KafkaPython:
    name = "kafka-python"

    def __init__(self, bootstrap: str, node_id: int, handlers: set[int]) -> None:
        self.bootstrap = bootstrap
        self.node_id = node_id
        self.handlers = handlers
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
                got = 0
                deadline = time.monotonic() + WAIT_S
                while got < n and time.monotonic() < deadline:
                    got += sum(len(v) for v in c.poll(timeout_ms=500).values())
                if got < n:
                    raise RuntimeError(f"consumed {got} of {n} records")

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
            deadline = time.monotonic() + WAIT_S
            while not c.assignment() and time.monotonic() < deadline:
                c.poll(timeout_ms=500)
            end = time.monotonic() + 1  # a few heartbeats
            while time.monotonic() < end:
                c.poll(timeout_ms=200)
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
            deadline = time.monotonic() + WAIT_S
            while c.position(tp) < end and time.monotonic() < deadline:
                c.poll(timeout_ms=500)
        finally:
            c.close()


class Confluent:
    name = "confluent-kafka"

    def __init__(self, bootstrap: str, node_id: int, handlers: set[int]) -> None:
        self.bootstrap = bootstrap
        self.node_id = node_id
        self.handlers = handlers
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

            def poll(n: int) -> None:
                got = 0
                deadline = time.monotonic() + WAIT_S
                while got < n and time.monotonic() < deadline:
                    m = c.poll(0.5)
                    if m is not None and m.error() is None:
                        got += 1
                if got < n:
                    raise RuntimeError(f"consumed {got} of {n} records")

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
            deadline = time.monotonic() + WAIT_S
            while not c.assignment() and time.monotonic() < deadline:
                c.poll(0.5)
            end = time.monotonic() + 1  # a few heartbeats
            while time.monotonic() < end:
                c.poll(0.2)
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


class Kcat:
    name = "kcat"

    def __init__(self, bootstrap: str, node_id: int, handlers: set[int]) -> None:
        self.bootstrap = bootstrap
        self.node_id = node_id
        self.handlers = handlers

    def run(self, *args: str, stdin: bytes | None = None) -> str:
        cmd = [KCAT, "-b", self.bootstrap, "-X", f"client.id={self.name}", *args]
        out = subprocess.run(cmd, input=stdin, capture_output=True, timeout=WAIT_S, check=True)
        return out.stdout.decode()

    def admin(self) -> None:
        step("kcat Metadata", lambda: self.run("-L"))
        step("kcat ListOffsets timestamp",
             lambda: self.run("-Q", "-t", f"{codec_topic('none')}:0:{BASE_TS + 1}"))

    def produce(self) -> None:
        for codec in CODECS:
            lines = b"".join(
                key + b":" + value + b"\n" for key, value, _h, _ts in records_for(self.name, codec))
            z = [] if codec == "none" else ["-z", codec]
            step(f"kcat Produce {codec}", lambda codec=codec, z=z, lines=lines: self.run(
                "-P", "-t", codec_topic(codec), "-K:", "-H", "h=1", *z, stdin=lines))

    def consume(self) -> None:
        for codec in CODECS:
            step(f"kcat Fetch {codec}", lambda codec=codec: self.run(
                "-C", "-t", codec_topic(codec), "-o", "beginning", "-e", "-f", "%k %o\n"))
        step("kcat ListOffsets latest", lambda: self.run(
            "-C", "-t", codec_topic("none"), "-o", "-1", "-e"))

    def groups(self) -> None:
        self.run("-G", "golden-kcat", codec_topic("none"), "-e",
                 "-X", "auto.offset.reset=earliest", "-X", "enable.auto.commit=true")

    def read_committed(self) -> None:
        self.run("-C", "-t", codec_topic("none"), "-o", "beginning", "-e",
                 "-X", "isolation.level=read_committed")

    def transactions(self) -> None:
        self.run("-P", "-t", codec_topic("none"), "-K:", "-X", "transactional.id=golden-kcat-txn",
                 stdin=record_key(self.name, "none", 100) + b":t\n")


GROUP_APIS = {8, 9, 10, 11, 12, 13, 14}  # OffsetCommit/Fetch, FindCoordinator, Join..Sync
TXN_APIS = {10, 22, 24, 26}  # FindCoordinator, InitProducerId, AddPartitionsToTxn, EndTxn
TXN_OFFSET_APIS = {25, 28}  # AddOffsetsToTxn, TxnOffsetCommit


def drive(bootstrap: str, node_id: int, handlers: set[int]) -> None:
    clients = [KafkaPython(bootstrap, node_id, handlers), Confluent(bootstrap, node_id, handlers)]
    if KCAT:
        clients.append(Kcat(bootstrap, node_id, handlers))
    else:
        log("kcat not found: no kcat captures")
    for phase in ("admin", "produce", "consume"):
        for c in clients:
            getattr(c, phase)()
    if GROUP_APIS <= handlers:
        for c in clients:
            step(f"{c.name} groups", c.groups)
    else:
        log(f"group APIs not all served (missing {sorted(GROUP_APIS - handlers)}): skipped")
    if TXN_APIS <= handlers:
        for c in clients:
            step(f"{c.name} transactions", c.transactions)
        for c in clients:  # committed, aborted and control batches, read committed
            step(f"{c.name} read committed", c.read_committed)
    else:
        log(f"transaction APIs not all served (missing {sorted(TXN_APIS - handlers)}): skipped")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="output directory, e.g. tests/wire/golden")
    args = parser.parse_args(argv)

    import logging

    logging.basicConfig(level=logging.CRITICAL)
    from pykafkad.dispatch import load_handlers
    from pykafkad.testing import run_broker

    handlers = set(load_handlers())
    log(f"broker serves api keys {sorted(handlers)}")
    recorder = Recorder()
    with run_broker() as b:
        proxy = Proxy((b.host, b.port), recorder)
        proxy.start()
        b.broker.set_endpoint("127.0.0.1", proxy.port)
        try:
            drive(f"127.0.0.1:{proxy.port}", b.broker.node_id, handlers)
            time.sleep(0.5)  # let the last responses of closing clients arrive
        finally:
            proxy.close()
    args.out.mkdir(parents=True, exist_ok=True)
    with recorder.lock:
        total = recorder.write(args.out)
    busiest = ", ".join(f"{c} {a} x{n}" for (c, a), n in recorder.seen.most_common(5))
    log(f"{recorder.seen.total()} exchanges seen (most: {busiest}), "
        f"{len(recorder.exchanges)} kept, {total} bytes")
    for client in CLIENTS:
        kept = sorted(
            f"{k[1]}:{API_KEYS[k[1]].name}-v{k[2]}{'-' + k[3] if k[3] else ''}"
            for k in recorder.exchanges if k[0] == client
        )
        log(f"{client}: {', '.join(kept)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
