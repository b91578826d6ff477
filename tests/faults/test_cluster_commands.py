"""``pykafkad cluster <command> NODE`` against a running ``pykafkad cluster``: the launcher's
control channel stops, kills, starts, pauses, resumes, isolates and heals its nodes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pykafkad.faults.client import FaultControl
from tests.integration.clients import WAIT_S

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pykafkad", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def process_state(pid: int) -> str:
    """The kernel's state letter for ``pid`` (T: stopped by a signal)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


@pytest.fixture
def running_cluster(tmp_path):
    data_dir = tmp_path / "c"
    proc = subprocess.Popen(
        [sys.executable, "-m", "pykafkad", "cluster", "--nodes", "3", "--port", "0",
         "--data-dir", str(data_dir)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().startswith("pykafkad cluster ready: 3 nodes")
        yield data_dir
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(WAIT_S * 2) == 0
        assert not (data_dir / "cluster-control").exists()
    finally:
        proc.kill()
        proc.wait()


def status(data_dir: Path) -> dict:
    out = cli("cluster", "status", "--data-dir", str(data_dir))
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_node_commands_on_a_running_cluster(running_cluster):
    where = ["--data-dir", str(running_cluster)]
    nodes = status(running_cluster)
    assert sorted(nodes) == ["1", "2", "3"] and all(n["running"] for n in nodes.values())

    assert cli("cluster", "kill", "2", *where).returncode == 0
    assert status(running_cluster)["2"]["running"] is False
    assert cli("cluster", "start", "2", *where).returncode == 0
    restarted = status(running_cluster)["2"]
    assert restarted["running"] and restarted["pid"] != nodes["2"]["pid"]

    pid3 = nodes["3"]["pid"]
    assert cli("cluster", "pause", "3", *where).returncode == 0
    assert process_state(pid3) == "T" and status(running_cluster)["3"]["paused"]
    assert cli("cluster", "resume", "3", *where).returncode == 0
    assert process_state(pid3) != "T"

    assert cli("cluster", "isolate", "1", *where).returncode == 0
    node1 = FaultControl("127.0.0.1", nodes["1"]["port"])
    node2 = FaultControl("127.0.0.1", nodes["2"]["port"])
    assert node1.partition()["all_nodes"] and node2.partition()["blocked_nodes"] == [1]
    assert status(running_cluster)["1"]["isolated"] == "nodes"
    assert cli("cluster", "heal", *where).returncode == 0
    assert not node1.partition()["all_nodes"] and node2.partition()["blocked_nodes"] == []

    assert cli("cluster", "stop", "3", *where).returncode == 0
    assert status(running_cluster)["3"]["running"] is False
    bad = cli("cluster", "pause", "7", *where)
    assert (bad.returncode, bad.stderr.strip()) == (
        1, "pykafkad cluster pause: no node 7 (nodes: 1, 2, 3)")


def test_a_command_without_a_running_cluster_says_so(tmp_path):
    out = cli("cluster", "kill", "1", "--data-dir", str(tmp_path))
    assert out.returncode == 1
    assert out.stderr.strip() == (
        f"pykafkad cluster kill: no running cluster found: {tmp_path}/cluster-control does not "
        f"exist (start one with pykafkad cluster --data-dir {tmp_path})")
