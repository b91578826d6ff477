"""The cluster launcher: node processes started, stopped, killed and restarted on their own
data dirs; ``pykafkad cluster`` prints one ready line, stops every node on Ctrl-C / SIGTERM
and reports a node that dies at start with its last lines."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from confluent_kafka import Producer

from compat.wire_client import WireClient
from pykafkad.config import read_properties
from tests.integration.clients import WAIT_S
from wire.messages.api_versions_request import ApiVersionsRequest

ROOT = Path(__file__).resolve().parents[2]


def answers(host: str, port: int) -> bool:
    try:
        with WireClient(f"{host}:{port}", timeout=5) as c:
            return c.request(18, 3, ApiVersionsRequest(client_software_name="t",
                                                       client_software_version="1")
                             ).error_code == 0
    except OSError:
        return False


def wait_until(condition, timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # a zombie of ours is gone too (it is reaped by its parent)
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except OSError:
        return True


def test_three_nodes_kill_one_and_restart_it(pykafkad_cluster):
    cluster = pykafkad_cluster
    assert sorted(cluster.nodes) == [1, 2, 3]
    for n in cluster.nodes.values():
        assert n.running and answers(n.host, n.port) and answers(n.host, n.controller_port)
        props = read_properties(n.spec.properties_path)
        assert props["process.roles"] == "broker,controller"
        assert props["node.id"] == str(n.node_id)
        assert props["controller.quorum.voters"] == ",".join(
            f"{m.node_id}@{m.host}:{m.controller_port}" for m in cluster.nodes.values())
    assert cluster.bootstrap_servers == ",".join(
        f"127.0.0.1:{n.port}" for n in cluster.nodes.values())
    p = Producer({"bootstrap.servers": f"127.0.0.1:{cluster.nodes[2].port}"})
    p.produce("h-node-launch", b"kept")
    assert p.flush(WAIT_S) == 0

    node = cluster.nodes[2]
    old_pid = node.pid
    cluster.kill(2)
    assert not node.running and not answers(node.host, node.port)
    assert all(cluster.nodes[i].running for i in (1, 3))
    cluster.start(2)
    assert node.running and node.pid != old_pid and answers(node.host, node.port)
    meta = node.spec.data_dir / "data" / "meta.properties"
    assert read_properties(meta)["cluster.id"] == cluster.cluster_id  # same dir, same cluster
    cluster.stop(3)
    assert not cluster.nodes[3].running and cluster.nodes[3].proc.returncode == 0


def test_dedicated_controllers_have_no_broker_listener(tmp_path):
    from pykafkad.testing import run_cluster

    with run_cluster(2, controllers=1, data_dir=tmp_path) as cluster:
        controller = cluster.nodes[3]
        assert controller.port is None and answers(controller.host, controller.controller_port)
        props = read_properties(controller.spec.properties_path)
        assert props["process.roles"] == "controller"
        assert props["listeners"] == f"CONTROLLER://127.0.0.1:{controller.controller_port}"
        for i in (1, 2):
            broker = read_properties(cluster.nodes[i].spec.properties_path)
            assert broker["process.roles"] == "broker"
            assert broker["controller.quorum.voters"] == (
                f"3@127.0.0.1:{controller.controller_port}")
        assert cluster.bootstrap_servers.count(",") == 1


def free_base_port(count: int) -> int:
    """A port with ``count`` free ports from it (the launcher numbers consecutively)."""
    import socket

    for base in range(20000 + os.getpid() % 20000, 60000, 97):
        socks = []
        try:
            for p in range(base, base + count):
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", p))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError("no free port range")


def node_pids(data_dir: Path) -> list[int]:
    """The node processes of a cluster in ``data_dir``: their stdout is a node's log there."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stdout = os.readlink(proc / "fd" / "1")
        except OSError:
            continue
        if stdout.startswith(f"{data_dir}/node-") and not gone(int(proc.name)):
            pids.append(int(proc.name))
    return pids


def launch(tmp_path: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "pykafkad", "cluster", "--data-dir", str(tmp_path / "c"), *args],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_the_command_prints_one_ready_line_and_a_signal_stops_every_node(tmp_path, sig):
    base = free_base_port(6)
    proc = launch(tmp_path, "--nodes", "3", "--port", str(base))
    try:
        line = proc.stdout.readline()
        assert line == (f"pykafkad cluster ready: 3 nodes, bootstrap servers 127.0.0.1:{base},"
                        f"127.0.0.1:{base + 1},127.0.0.1:{base + 2}\n")
        for port in range(base, base + 6):  # brokers first, then the controller listeners
            assert answers("127.0.0.1", port)
        pids = node_pids(tmp_path / "c")
        assert len(pids) == 3
        proc.send_signal(sig)
        assert proc.wait(WAIT_S) == 0
        assert all(gone(pid) for pid in pids)
        assert proc.stdout.read() == ""  # one line only
    finally:
        proc.kill()
        proc.wait()


def test_a_node_that_dies_at_start_is_reported_and_the_others_stopped(tmp_path):
    import socket

    base = free_base_port(6)
    with socket.socket() as taken:  # node 2's PLAINTEXT port is in use
        taken.bind(("127.0.0.1", base + 1))
        taken.listen()
        proc = launch(tmp_path, "--nodes", "3", "--port", str(base))
        out, err = proc.communicate(timeout=WAIT_S * 2)
    assert proc.returncode == 1 and out == ""
    assert err.startswith("pykafkad cluster: node 2 exited with status 2 at start;")
    assert f"pykafkad: cannot listen on 127.0.0.1:{base + 1}" in err  # its last lines
    wait_until(lambda: not node_pids(tmp_path / "c"))


def test_a_bad_setting_is_reported_from_the_node(tmp_path):
    proc = launch(tmp_path, "--nodes", "1", "--port", str(free_base_port(2)),
                  "--set", "controller.quorum.election.timeout.ms=abc")
    out, err = proc.communicate(timeout=WAIT_S * 2)
    assert proc.returncode == 1 and out == ""
    assert ("pykafkad: Invalid value abc for configuration controller.quorum.election.timeout.ms: "
            "Not a number of type INT") in err


def test_nodes_stop_when_the_launcher_is_killed_and_a_dead_node_is_reported(tmp_path):
    base = free_base_port(4)
    proc = launch(tmp_path, "--nodes", "2", "--port", str(base))
    try:
        assert proc.stdout.readline().startswith("pykafkad cluster ready: 2 nodes")
        pids = node_pids(tmp_path / "c")
        assert len(pids) == 2
        os.kill(pids[0], signal.SIGKILL)
        line = proc.stderr.readline()
        assert line.startswith("pykafkad cluster: node ") and "exited with status -9" in line
        proc.kill()  # the launcher goes without stopping anyone: the kernel tells the node
        proc.wait()
        wait_until(lambda: gone(pids[1]))
    finally:
        proc.kill()
        proc.wait()
        for pid in node_pids(tmp_path / "c"):
            os.kill(pid, signal.SIGKILL)


def test_port_zero_takes_free_ports_and_a_bad_port_is_refused(tmp_path):
    proc = launch(tmp_path, "--nodes", "1", "--port", "0")
    try:
        line = proc.stdout.readline()
        assert line.startswith("pykafkad cluster ready: 1 nodes, bootstrap servers 127.0.0.1:")
        port = int(line.rsplit(":", 1)[1])
        assert port != 0 and answers("127.0.0.1", port)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(WAIT_S) == 0
    finally:
        proc.kill()
        proc.wait()
    bad = launch(tmp_path, "--nodes", "3", "--port", "65532")
    out, err = bad.communicate(timeout=WAIT_S)
    assert (bad.returncode, err) == (
        2, "pykafkad cluster: --port must be between 0 and 65530 for 6 ports, got 65532\n")
