"""``pykafkad faults``: add, list and clear a running node's fault rules from the shell."""

from __future__ import annotations

import argparse
import json
import sys

from pykafkad.faults.client import FaultControl
from pykafkad.faults.control import FaultControlError


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="pykafkad faults",
        description="Per-request fault rules on a running pykafkad node (started with "
                    "pykafkad.faults.enable=true, as pykafkad cluster's nodes and "
                    "pykafkad.testing's brokers are); loopback only.",
        epilog="example: pykafkad faults add --bootstrap-server 127.0.0.1:9092 --api Produce "
               "--error NOT_LEADER_OR_FOLLOWER --count 3")
    sub = p.add_subparsers(dest="command", required=True)
    add = sub.add_parser("add", help="arm a rule; prints its id")
    sub_list = sub.add_parser("list", help="the rules, one JSON object a line")
    clear = sub.add_parser("clear", help="remove one rule (--rule-id) or all")
    for s in (add, sub_list, clear):
        s.add_argument("--bootstrap-server", required=True, metavar="HOST:PORT",
                       help="the node's listener (any of its listeners)")
    add.add_argument("--api", required=True,
                     help="Kafka's API name (Produce) or key (0); '*': every API (delay or "
                          "close only)")
    add.add_argument("--error", help="answer this error: Kafka's name or code")
    add.add_argument("--delay-ms", type=int, default=0, help="wait this long first")
    add.add_argument("--close", action="store_true", help="close the connection, no answer")
    add.add_argument("--count", type=int, default=1,
                     help="how many requests it fires on (default 1; 0: until cleared)")
    add.add_argument("--topic", help="only requests naming this topic")
    add.add_argument("--partition", type=int, help="only requests naming this partition")
    add.add_argument("--group", help="only requests naming this group")
    add.add_argument("--transactional-id", help="only requests naming this transactional id")
    clear.add_argument("--rule-id", type=int, help="the rule to remove (default: all)")
    return p.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    host, _, port = args.bootstrap_server.rpartition(":")
    if not host or not port.isdigit():
        print(f"pykafkad faults: --bootstrap-server expects HOST:PORT, got "
              f"{args.bootstrap_server!r}", file=sys.stderr)
        return 2
    faults = FaultControl(host.strip("[]"), int(port))
    try:
        if args.command == "add":
            rule_id = faults.add(args.api, error=args.error, delay_ms=args.delay_ms,
                                 close=args.close, count=args.count or None, topic=args.topic,
                                 partition=args.partition, group=args.group,
                                 transactional_id=args.transactional_id)
            print(rule_id)
        elif args.command == "list":
            for rule in faults.list():
                print(json.dumps(rule))
        else:
            print(f"removed {faults.clear(args.rule_id)}")
    except FaultControlError as e:
        print(f"pykafkad faults: {e}", file=sys.stderr)
        return 1
    return 0
