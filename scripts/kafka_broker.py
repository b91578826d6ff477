#!/usr/bin/env python3
"""Runs the official Apache Kafka broker (KRaft, one node) from Maven Central jars.

    scripts/kafka_broker.py                   # free port, prints the bootstrap address
    scripts/kafka_broker.py --port 9092 --version 4.4.0 --set num.partitions=3

It runs until Ctrl-C, with a fresh data dir unless --data-dir is given.  The compatibility
suite starts it by itself with ``python -m compat --kafka``.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compat.kafka_broker import DEFAULT_VERSION, run_kafka  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--version", default=DEFAULT_VERSION)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--data-dir", type=Path)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a server.properties setting (repeatable)")
    args = ap.parse_args()
    config = dict(s.split("=", 1) for s in args.set)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with run_kafka(args.version, port=args.port, config=config, data_dir=args.data_dir) as kafka:
        print(f"Apache Kafka {args.version} listening on {kafka.bootstrap_servers} "
              f"(log: {kafka.log_path})", flush=True)
        try:
            while not stop.wait(3600):
                pass
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
