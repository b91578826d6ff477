"""The control channel of a running ``pykafkad cluster``: node commands from another shell.

The launcher owns the node processes, so stop / kill / start / pause / resume / isolate / heal
go through it: it listens on a loopback port and writes that address to
``<data-dir>/cluster-control`` (removed when it exits).  One JSON line in, one JSON line out."""

from __future__ import annotations

import json
import socket
import socketserver
import threading
from pathlib import Path
from typing import Any

CONTROL_FILE = "cluster-control"
#: start waits for the node to be ready (the launcher's READY_TIMEOUT_S) before answering
CALL_TIMEOUT_S = 120
COMMANDS = ("stop", "kill", "start", "pause", "resume", "isolate", "heal", "status")


class ClusterControlError(RuntimeError):
    pass


def run_command(cluster, command: dict[str, Any], quiet: set[int]) -> dict[str, Any]:
    """Runs one command on ``cluster`` (a launcher.Cluster); ``quiet`` holds the nodes stopped
    on purpose (whose exit the launcher does not report)."""
    op, node_id = command.get("op"), command.get("node")
    if op not in COMMANDS:
        raise ClusterControlError(f"unknown command {op!r} (one of {', '.join(COMMANDS)})")
    if op == "status":
        return {"nodes": {str(n.node_id): {
            "pid": n.pid, "running": n.running, "paused": n.paused,
            "isolated": cluster.isolated.get(n.node_id), "port": n.port,
            "controller_port": n.controller_port} for n in cluster.nodes.values()}}
    if op == "heal":
        cluster.heal(node_id)
        return {}
    if not isinstance(node_id, int):
        raise ClusterControlError(f"{op} needs a node id")
    node = cluster.node(node_id)
    if op in ("stop", "kill"):
        quiet.add(node_id)
        if op == "stop":
            node.stop()
        else:
            node.kill()
    elif op == "start":
        cluster.start(node_id)
        quiet.discard(node_id)
    elif op == "pause":
        cluster.pause(node_id)
    elif op == "resume":
        cluster.resume(node_id)
    elif op == "isolate":
        cluster.isolate(node_id, bool(command.get("from_clients")))
    return {}


class ClusterControlServer:
    """Serves ``run_command`` on 127.0.0.1, one command at a time, from a daemon thread."""

    def __init__(self, cluster, data_dir: Path) -> None:
        self.cluster = cluster
        self.path = Path(data_dir) / CONTROL_FILE
        #: nodes stopped or killed by a command: their exit is no news
        self.quiet: set[int] = set()
        lock, quiet = threading.Lock(), self.quiet

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                try:
                    command = json.loads(self.rfile.readline())
                    with lock:
                        answer = run_command(cluster, command, quiet)
                except Exception as e:  # every failure goes back to the caller as text
                    answer = {"error": str(e) or type(e).__name__}
                self.wfile.write(json.dumps(answer).encode() + b"\n")

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True

    @property
    def address(self) -> str:
        host, port = self.server.server_address[:2]
        return f"{host}:{port}"

    def start(self) -> None:
        threading.Thread(target=self.server.serve_forever, name="cluster-control",
                         daemon=True).start()
        self.path.write_text(self.address + "\n")

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.path.unlink(missing_ok=True)


def control_address(data_dir: str | Path) -> str:
    path = Path(data_dir) / CONTROL_FILE
    try:
        return path.read_text().strip()
    except OSError:
        raise ClusterControlError(f"no running cluster found: {path} does not exist (start one "
                                  f"with pykafkad cluster --data-dir {data_dir})") from None


def send(address: str, command: dict[str, Any]) -> dict[str, Any]:
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=CALL_TIMEOUT_S) as sock:
            sock.sendall(json.dumps(command).encode() + b"\n")
            line = sock.makefile("rb").readline()
    except (OSError, ValueError) as e:
        raise ClusterControlError(f"cannot reach the cluster's control channel at "
                                  f"{address}: {e}") from e
    if not line:
        raise ClusterControlError(f"the control channel at {address} closed without answering")
    answer = json.loads(line)
    if "error" in answer:
        raise ClusterControlError(answer["error"])
    return answer
