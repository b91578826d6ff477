"""The quorum's APIs on the wire: advertised and answered as Kafka's controller listener does,
compared request for request with the reference Apache Kafka (harmless requests only: they
change no state there)."""

from __future__ import annotations

import re

import trio

from pykafkad.network.client import NodeClient
from tests.integration.clients import needs_java
from tests.kraft.released_broker import run_released
from tests.raft.quorum import Quorum
from wire.messages import describe_quorum_request as dq
from wire.messages import fetch_request as fr
from wire.messages import update_raft_voter_request as uv
from wire.messages import vote_request as vr
from wire.messages.api_versions_request import ApiVersionsRequest

QUORUM_APIS = {1, 18, 52, 53, 54, 55, 59, 60, 82}


def vote(cluster_id, epoch=1, voter_id=1):
    return vr.VoteRequest(cluster_id=cluster_id, voter_id=voter_id, topics=[vr.TopicData(
        topic_name="__cluster_metadata", partitions=[vr.PartitionData(
            partition_index=0, replica_epoch=epoch, replica_id=42, last_offset_epoch=0,
            last_offset=0)])])


def fetch_other_topic():
    return fr.FetchRequest(replica_state=fr.ReplicaState(replica_id=42), max_wait_ms=0,
                           topics=[fr.FetchTopic(topic_id=b"\x07" * 16, partitions=[
                               fr.FetchPartition(partition=0)])])


def describe_other_topic():
    return dq.DescribeQuorumRequest(topics=[dq.TopicData(
        topic_name="other", partitions=[dq.PartitionData(partition_index=0)])])


def update_voter(cluster_id, epoch):
    """A voter's UpdateRaftVoter (sent by every Kafka 4.x voter that follows a leader)."""
    return uv.UpdateRaftVoterRequest(
        cluster_id=cluster_id, current_leader_epoch=epoch, voter_id=1,
        voter_directory_id=b"\x05" * 16,
        listeners=[uv.Listener(name="CONTROLLER", host="127.0.0.1", port=1)],
        k_raft_version_feature=uv.KRaftVersionFeature(0, 1))


async def answers(host: str, port: int) -> dict:
    c = NodeClient(host, port, client_id="raft-test")
    try:
        api = await c.request(ApiVersionsRequest(client_software_name="t",
                                                 client_software_version="1"), version=3)
        out = {"apis": {k.api_key: (k.min_version, k.max_version) for k in api.api_keys}}
        out["bad_cluster"] = (await c.request(vote("not-the-cluster"), version=2)).error_code
        r = await c.request(fetch_other_topic(), version=17)
        out["other_topic_fetch"] = r.error_code
        r = await c.request(describe_other_topic(), version=2)
        p = r.topics[0].partitions[0]
        out["other_topic_describe"] = (r.error_code, r.topics[0].topic_name, p.error_code)
        # refusals only: nothing changes on the reference broker
        for name, cluster, epoch in (("update_bad_cluster", "not-the-cluster", 1),
                                     ("update_future_epoch", None, 1 << 30),
                                     ("update_fenced_epoch", None, 0)):
            r = await c.request(update_voter(cluster, epoch), version=0)
            lead = r.current_leader
            out[name] = (r.error_code, lead.leader_id >= 0, (lead.host, lead.port) == (host, port))
        return out
    finally:
        await c.aclose()


@needs_java
def test_quorum_apis_answer_as_kafkas_controller(tmp_path, reference_kafka):
    props = (reference_kafka.data_dir / "server.properties").read_text()
    host, port = re.search(r"controller\.quorum\.voters=1@(\S+):(\d+)", props).groups()
    results = {}

    async def main():
        async with trio.open_nursery() as nursery:
            q = Quorum(tmp_path, nursery, voters=(1,))
            await q.start_all()
            await q.wait_for_leader()
            results["ours"] = await answers(*q.voters[1])
            results["kafka"] = await answers(host, int(port))
            nursery.cancel_scope.cancel()

    trio.run(main)
    ours, kafka = results["ours"], results["kafka"]
    assert QUORUM_APIS <= set(ours["apis"])  # a controller listener serves ControllerApis
    assert {k: ours["apis"][k] for k in QUORUM_APIS} == {k: kafka["apis"][k] for k in QUORUM_APIS}
    for key in ("bad_cluster", "other_topic_fetch", "other_topic_describe",
                "update_bad_cluster", "update_future_epoch", "update_fenced_epoch"):
        assert ours[key] == kafka[key], key
    assert ours["bad_cluster"] == 104  # INCONSISTENT_CLUSTER_ID


def test_a_broker_without_a_raft_client_neither_advertises_nor_answers_them(tmp_path):
    with run_released(tmp_path / "data") as broker:
        async def main():
            c = NodeClient(broker.host, broker.port, client_id="raft-test")
            try:
                versions = await c.api_versions()
                assert not {52, 53, 54, 59} & set(versions)
                assert 55 not in versions
            finally:
                await c.aclose()
        trio.run(main)
        # a Vote on a listener that does not serve it closes the connection, as in Kafka
        from compat.wire_client import WireClient

        with WireClient(f"{broker.host}:{broker.port}") as w:
            try:
                w.request(52, 2, vote("x"))
            except (ConnectionError, OSError):
                pass
            else:
                raise AssertionError("the broker answered a Vote")
