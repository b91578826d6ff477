"""NodeClient against a real pykafkad broker and the reference Apache Kafka."""

from __future__ import annotations

import socket

import pytest
import trio

from pykafkad.network.client import NodeClient, NodeUnavailableError
from pykafkad.testing import run_broker
from tests.integration.clients import needs_java
from wire.messages.api_versions_request import ApiVersionsRequest
from wire.messages.fetch_request import FetchPartition, FetchRequest, FetchTopic
from wire.messages.metadata_request import MetadataRequest, MetadataRequestTopic


def metadata_request(*topics: str) -> MetadataRequest:
    return MetadataRequest(topics=[MetadataRequestTopic(name=t) for t in topics],
                           allow_auto_topic_creation=True)


def test_requests_are_pipelined_and_answered_in_order() -> None:
    with run_broker() as broker:
        async def main() -> list:
            client = NodeClient(broker.host, broker.port, client_id="node-test")
            results: dict[int, object] = {}

            async def one(i: int) -> None:
                results[i] = await client.request(metadata_request(f"t{i}"))

            async with trio.open_nursery() as nursery:
                for i in range(20):
                    nursery.start_soon(one, i)
            await client.aclose()
            return [results[i] for i in range(20)]

        responses = trio.run(main)
    for i, resp in enumerate(responses):
        assert [t.name for t in resp.topics] == [f"t{i}"]
        assert resp.brokers[0].port == broker.port


def test_version_is_the_highest_both_sides_serve() -> None:
    with run_broker() as broker:
        async def main():
            client = NodeClient(broker.host, broker.port)
            served = await client.api_versions()
            resp = await client.request(ApiVersionsRequest(client_software_name="x",
                                                           client_software_version="1"))
            await client.aclose()
            return served, resp

        served, resp = trio.run(main)
    assert resp.error_code == 0
    assert {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys} == served


def test_unreachable_node_and_reconnect_after_restart(tmp_path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead_port = s.getsockname()[1]

    async def unreachable() -> None:
        client = NodeClient("127.0.0.1", dead_port, connect_timeout_s=5)
        with pytest.raises(NodeUnavailableError):
            await client.request(metadata_request())

    trio.run(unreachable)

    with run_broker(tmp_path) as broker:
        port = broker.port
    client = NodeClient("127.0.0.1", port)

    async def after_stop() -> None:
        with pytest.raises(NodeUnavailableError):
            await client.request(metadata_request())

    trio.run(after_stop)
    with run_broker(tmp_path, port=port):
        async def reconnects():
            resp = await client.request(metadata_request("again"))
            await client.aclose()
            return resp

        assert [t.name for t in trio.run(reconnects).topics] == ["again"]


def test_timeout_drops_the_connection_and_the_next_request_works() -> None:
    with run_broker() as broker:
        async def main():
            client = NodeClient(broker.host, broker.port)
            meta = await client.request(metadata_request("slow"))
            with trio.fail_after(30):  # auto-created by the controller: led a moment later
                while meta.topics[0].error_code or not meta.topics[0].partitions \
                        or meta.topics[0].partitions[0].leader_id < 0:
                    await trio.sleep(0.01)
                    meta = await client.request(metadata_request("slow"))
            topic_id = meta.topics[0].topic_id
            long_poll = FetchRequest(
                replica_id=-1, max_wait_ms=5000, min_bytes=1, max_bytes=1024,
                topics=[FetchTopic(topic="slow", topic_id=topic_id, partitions=[
                    FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=1024,
                                   current_leader_epoch=-1, log_start_offset=-1)])])
            with pytest.raises(trio.TooSlowError):  # the long poll outlives its caller's deadline
                await client.request(long_poll, timeout_s=0.2)
            resp = await client.request(metadata_request("slow"))
            await client.aclose()
            return resp

        assert [t.name for t in trio.run(main).topics] == ["slow"]


@needs_java
def test_talks_to_apache_kafka(reference_kafka) -> None:
    host, _, port = reference_kafka.bootstrap_servers.partition(":")

    async def main():
        client = NodeClient(host, int(port))
        served = await client.api_versions()
        resp = await client.request(metadata_request())
        await client.aclose()
        return served, resp

    served, resp = trio.run(main)
    assert served[3][1] >= 12  # Metadata
    assert resp.cluster_id and resp.brokers
