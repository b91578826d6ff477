"""Protocol details clients rely on, checked at the byte level with a wire-based client."""

from __future__ import annotations

import struct
import threading

from compat.wire_client import WireClient
from pykafkad.fetch_sessions import FINAL_EPOCH
from tests.integration.clients import confluent_produce, create_topic, kafka_python_consume
from wire.errors import ErrorCode
from wire.messages.api_versions_request import ApiVersionsRequest
from wire.messages.fetch_request import FetchPartition, FetchRequest, FetchTopic, ForgottenTopic
from wire.messages.metadata_request import MetadataRequest, MetadataRequestTopic
from wire.primitives import Reader


def fetch(client, topic, partitions, *, session_id=0, epoch=0, offset=0, forgotten=(),
          max_wait_ms=0, min_bytes=0, version=12):
    req = FetchRequest(
        replica_id=-1, max_wait_ms=max_wait_ms, min_bytes=min_bytes, max_bytes=1 << 20,
        isolation_level=0, session_id=session_id, session_epoch=epoch,
        topics=[FetchTopic(topic=topic, partitions=[
            FetchPartition(partition=p, fetch_offset=offset, partition_max_bytes=1 << 20,
                           current_leader_epoch=-1) for p in partitions])] if partitions else [],
        forgotten_topics_data=[ForgottenTopic(topic=topic, partitions=list(forgotten))]
        if forgotten else [],
    )
    return client.send(req, version)


def partitions_in(resp):
    return sorted(p.partition_index for t in resp.responses for p in t.partitions)


def test_incremental_fetch_session(broker, topic_name):
    create_topic(broker.bootstrap_servers, topic_name, partitions=3)
    with WireClient(broker.bootstrap_servers) as c:
        full = fetch(c, topic_name, [0, 1, 2])
        assert full.error_code == 0 and full.session_id != 0
        assert partitions_in(full) == [0, 1, 2]
        assert all(p.records == b"" for t in full.responses for p in t.partitions)
        sid = full.session_id

        # nothing changed: an incremental fetch lists no partition
        inc = fetch(c, topic_name, [], session_id=sid, epoch=1)
        assert inc.error_code == 0 and inc.session_id == sid and partitions_in(inc) == []

        confluent_produce(broker.bootstrap_servers, topic_name,
                          [{"value": b"x", "partition": 1}])
        inc = fetch(c, topic_name, [], session_id=sid, epoch=2)
        assert partitions_in(inc) == [1]
        assert inc.responses[0].partitions[0].high_watermark == 1

        # forgetting partition 1 and moving on: it is no longer part of the session
        inc = fetch(c, topic_name, [], session_id=sid, epoch=3, forgotten=[1])
        assert partitions_in(inc) == []
        confluent_produce(broker.bootstrap_servers, topic_name, [{"value": b"y", "partition": 1}])
        assert partitions_in(fetch(c, topic_name, [], session_id=sid, epoch=4)) == []

        wrong = fetch(c, topic_name, [], session_id=sid, epoch=9)
        assert wrong.error_code == ErrorCode.INVALID_FETCH_SESSION_EPOCH
        unknown = fetch(c, topic_name, [], session_id=sid + 1, epoch=1)
        assert unknown.error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND

        # epoch -1 closes the session and answers a full, sessionless response
        closing = fetch(c, topic_name, [0], session_id=sid, epoch=FINAL_EPOCH)
        assert closing.session_id == 0 and partitions_in(closing) == [0]
        gone = fetch(c, topic_name, [], session_id=sid, epoch=5)
        assert gone.error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND


def test_stock_consumer_uses_a_fetch_session(broker, topic_name):
    create_topic(broker.bootstrap_servers, topic_name)
    confluent_produce(broker.bootstrap_servers, topic_name, [{"value": b"%d" % i} for i in range(10)])
    assert len(kafka_python_consume(broker.bootstrap_servers, topic_name, 10)) == 10
    assert broker.broker.fetch_sessions.sessions


def test_long_poll_answers_when_data_arrives(broker, topic_name):
    create_topic(broker.bootstrap_servers, topic_name)
    result = {}
    with WireClient(broker.bootstrap_servers) as c:
        def poll():
            result["resp"] = fetch(c, topic_name, [0], epoch=FINAL_EPOCH,
                                   max_wait_ms=20_000, min_bytes=1)

        t = threading.Thread(target=poll)
        t.start()
        confluent_produce(broker.bootstrap_servers, topic_name, [{"value": b"wake"}])
        t.join(30)
        assert not t.is_alive()
    part = result["resp"].responses[0].partitions[0]
    assert part.high_watermark == 1 and len(part.records) > 0


def test_fetch_by_unknown_topic_id(broker, topic_name):
    create_topic(broker.bootstrap_servers, topic_name)
    with WireClient(broker.bootstrap_servers) as c:
        req = FetchRequest(max_wait_ms=0, min_bytes=0, max_bytes=1 << 20, session_epoch=-1,
                           topics=[FetchTopic(topic_id=b"\x01" * 16, partitions=[
                               FetchPartition(partition=0, fetch_offset=0,
                                              partition_max_bytes=1024)])])
        resp = c.send(req, 13)
        assert resp.responses[0].topic_id == b"\x01" * 16
        assert resp.responses[0].partitions[0].error_code == ErrorCode.UNKNOWN_TOPIC_ID
        # the real id, as Metadata gives it, works
        md = c.send(MetadataRequest(topics=[MetadataRequestTopic(name=topic_name)]), 12)
        req.topics[0].topic_id = md.topics[0].topic_id
        assert md.topics[0].topic_id != bytes(16)
        resp = c.send(req, 13)
        assert resp.responses[0].partitions[0].error_code == 0


def test_api_versions_unsupported_version_falls_back_to_v0_body(broker):
    with WireClient(broker.bootstrap_servers) as c:
        # ApiVersions v99 with a v2 header: the answer is a v0 body with error 35
        body = struct.pack(">hhi", 18, 99, 42) + struct.pack(">h", 1) + b"x" + b"\x00"
        c.sock.sendall(struct.pack(">i", len(body)) + body)
        (size,) = struct.unpack(">i", c._recv_exact(4))
        r = Reader(c._recv_exact(size))
        assert r.int32() == 42
        from wire.messages.api_versions_response import ApiVersionsResponse

        resp = ApiVersionsResponse.read(r, 0)
        assert resp.error_code == ErrorCode.UNSUPPORTED_VERSION
        # as Kafka: only the ApiVersions range itself
        assert [(k.api_key, k.min_version, k.max_version) for k in resp.api_keys] == [(18, 0, 5)]
        # and the connection keeps working for a supported version
        ok = c.send(ApiVersionsRequest(client_software_name="t", client_software_version="1"), 3)
        assert ok.error_code == 0 and {k.api_key for k in ok.api_keys} >= {0, 1, 2, 3, 18}
