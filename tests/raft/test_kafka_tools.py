"""Kafka's own tools read the pykafkad quorum as they read Kafka's: ``kafka-metadata-quorum
--bootstrap-controller`` (DescribeCluster, then DescribeQuorum) and ``kafka-dump-log
--cluster-metadata-decoder`` (the metadata log's files)."""

from __future__ import annotations

import json
import re

import trio

from compat.kafka_tools import tool_command
from pykafkad.raft.node import noop_record
from tests.integration.clients import needs_java
from tests.raft.quorum import Quorum

pytestmark = needs_java


def parse_status(out: str) -> dict[str, str]:
    return dict(re.split(r":\s+", line, maxsplit=1) for line in out.splitlines()
                if re.match(r"^\w+:\s", line))


def parse_table(out: str) -> tuple[list[str], list[list[str]]]:
    rows = [[c.strip() for c in line.split("\t") if c.strip()] for line in out.splitlines()
            if line.strip()]
    return rows[0], rows[1:]


async def tool(*args: str) -> str:
    done = await trio.run_process(tool_command(args[0], args[1:]), capture_stdout=True,
                                  capture_stderr=True, check=False)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    return done.stdout.decode()


def kafka_controller(reference_kafka) -> str:
    props = (reference_kafka.data_dir / "server.properties").read_text()
    return re.search(r"controller\.quorum\.voters=1@(\S+)", props).group(1)


def test_metadata_quorum_tool_describes_the_quorum_as_kafkas(tmp_path, reference_kafka):
    results = {}

    async def main():
        async with trio.open_nursery() as nursery:
            q = Quorum(tmp_path, nursery)
            await q.start_all()
            leader = await q.wait_for_leader()
            observer = await q.start(9)
            last = leader.raft.schedule_append(leader.raft.leader_and_epoch.epoch,
                                               [noop_record()])
            state = leader.raft.machine.quorum.state

            def caught_up():
                reps = list(state.replicas.voters.values()) + list(state.replicas.observers.values())
                return len(reps) == 4 and all(r.end_offset == last + 1 for r in reps)

            await q.wait_for(caught_up, "every replica to fetch the last record")
            port = q.voters[next(i for i in q.voters if i != leader.node_id)][1]
            results["status"] = await tool("kafka-metadata-quorum", "--bootstrap-controller",
                                           f"127.0.0.1:{port}", "describe", "--status")
            results["replication"] = await tool(
                "kafka-metadata-quorum", "--bootstrap-controller", f"127.0.0.1:{port}",
                "describe", "--replication")
            results["leader"] = leader.raft.leader_and_epoch
            results["hw"] = leader.raft.high_watermark
            results["voters"] = q.voters
            results["observer"] = observer.node_id
            ref = kafka_controller(reference_kafka)
            results["ref_status"] = await tool("kafka-metadata-quorum", "--bootstrap-controller",
                                               ref, "describe", "--status")
            results["ref_replication"] = await tool(
                "kafka-metadata-quorum", "--bootstrap-controller", ref, "describe", "--replication")
            nursery.cancel_scope.cancel()

    trio.run(main)
    status = parse_status(results["status"])
    ref_status = parse_status(results["ref_status"])
    assert list(status) == list(ref_status)  # the same lines, in the same order
    leader_id, epoch = results["leader"]
    assert status["ClusterId"] == "I4ZmrWqfT2e-upky_4fdPA"
    assert status["LeaderId"] == str(leader_id)
    assert status["LeaderEpoch"] == str(epoch)
    assert status["HighWatermark"] == str(results["hw"])
    assert status["MaxFollowerLag"] == "0"
    assert json.loads(status["CurrentVoters"]) == [
        {"id": i, "endpoints": [f"CONTROLLER://{h}:{p}"]}
        for i, (h, p) in sorted(results["voters"].items())]
    assert json.loads(status["CurrentObservers"]) == [
        {"id": 9, "directoryId": "AAAAAAAAAAAAAAAAAAAACQ"}]
    # Kafka's single voter has no directory id either: static voters (kraft.version 0)
    assert "directoryId" not in status["CurrentVoters"]
    assert "directoryId" not in ref_status["CurrentVoters"]

    header, rows = parse_table(results["replication"])
    ref_header, ref_rows = parse_table(results["ref_replication"])
    assert header == ref_header
    assert ref_rows[0][-1] == "Leader" and ref_rows[0][1] == "AAAAAAAAAAAAAAAAAAAAAA"
    by_id = {int(r[0]): r for r in rows}
    assert sorted(by_id) == [1, 2, 3, 9]
    for i, r in by_id.items():
        want = "Leader" if i == leader_id else "Observer" if i == 9 else "Follower"
        assert r[header.index("Status")] == want
        assert r[header.index("LogEndOffset")] == str(results["hw"])
        assert r[header.index("Lag")] == "0"


def test_dump_log_decodes_the_metadata_log(tmp_path):
    out = {}

    async def main():
        async with trio.open_nursery() as nursery:
            q = Quorum(tmp_path, nursery)
            await q.start_all()
            leader = await q.wait_for_leader()
            last = leader.raft.schedule_append(leader.raft.leader_and_epoch.epoch,
                                               [noop_record(), noop_record()])
            await q.wait_for(lambda: all(n.raft.high_watermark == last + 1
                                         for n in q.nodes.values()), "the commit")
            out["leader"] = leader.node_id
            for i, n in q.nodes.items():
                segment = n.raft.log.dir / "00000000000000000000.log"
                out[i] = await tool("kafka-dump-log", "--cluster-metadata-decoder",
                                    "--files", str(segment))
            nursery.cancel_scope.cancel()

    trio.run(main)
    for i in (1, 2, 3):
        text = out[i]
        changes = [json.loads(m) for m in re.findall(r"LeaderChange: (\{.*\})", text)]
        assert changes and changes[-1]["leaderId"] == out["leader"]
        assert changes[-1]["voters"] == [{"voterId": 1}, {"voterId": 2}, {"voterId": 3}]
        assert len(changes[-1]["grantingVoters"]) >= 2
        assert "isvalid: true" in text and "isvalid: false" not in text
        assert "Error" not in text
        assert len(re.findall(r'"type":"NO_OP_RECORD"', text)) == 2, text
