"""``pykafkad cluster <command> NODE``: node faults on a running ``pykafkad cluster``."""

from __future__ import annotations

import argparse
import json
import sys

from pykafkad.faults.cluster_control import (
    COMMANDS,
    ClusterControlError,
    control_address,
    send,
)

#: what each command does, for --help (the launcher's help lists them too)
HELP = {
    "stop": "SIGTERM the node (a clean shutdown) and wait for it to exit",
    "kill": "SIGKILL the node (no clean shutdown)",
    "start": "start a stopped node again on its data dir and wait until it is ready",
    "pause": "SIGSTOP the node: it stops answering but keeps its sockets (a long GC pause)",
    "resume": "SIGCONT a paused node",
    "isolate": "cut the node off from the other nodes, both ways (clients still reach\n"
               "           it); --from-clients: cut the clients off (the nodes still talk)",
    "heal": "end a node's isolation (no node id: every node's)",
    "status": "each node's pid and state, as JSON",
}
COMMANDS_EPILOG = "node commands against a running cluster (pykafkad cluster COMMAND --help):\n" + \
    "\n".join(f"  {c:<8} {HELP[c]}" for c in COMMANDS) + \
    "\n  e.g. pykafkad cluster kill 2 --data-dir ./pykafkad-cluster\n" + \
    "per-request faults on one node: pykafkad faults --help"


def parse_args(argv: list[str]) -> argparse.Namespace:
    command = argv[0]
    p = argparse.ArgumentParser(prog=f"pykafkad cluster {command}", description=HELP[command])
    if command in ("heal",):
        p.add_argument("node_id", type=int, nargs="?", default=None, help="the node's id")
    elif command != "status":
        p.add_argument("node_id", type=int, help="the node's id (node.id, from 1)")
    if command == "isolate":
        p.add_argument("--from-clients", action="store_true",
                       help="cut the clients off instead of the other nodes")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--data-dir", default=None,
                       help="the running cluster's --data-dir (default ./pykafkad-cluster): "
                            "its cluster-control file names the control channel")
    where.add_argument("--control", metavar="HOST:PORT",
                       help="the control channel's address (printed in cluster-control)")
    return p.parse_args(argv[1:])


def main(argv: list[str], default_data_dir: str) -> int:
    args = parse_args(argv)
    command = {"op": argv[0], "node": getattr(args, "node_id", None)}
    if getattr(args, "from_clients", False):
        command["from_clients"] = True
    try:
        address = args.control or control_address(args.data_dir or default_data_dir)
        answer = send(address, command)
    except ClusterControlError as e:
        print(f"pykafkad cluster {argv[0]}: {e}", file=sys.stderr)
        return 1
    if argv[0] == "status":
        print(json.dumps(answer["nodes"], indent=2))
    return 0
