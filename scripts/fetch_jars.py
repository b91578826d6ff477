#!/usr/bin/env python3
"""Fetches the jars the tests need from Maven Central, once, into .cache/jars/ (git-ignored).

    scripts/fetch_jars.py            # Spark's kafka connector for the installed pyspark,
                                     # kafka-clients for compat/java/CompatClient.java and
                                     # Kafka's command-line tools (compat/kafka_tools.py)
    scripts/fetch_jars.py --kafka    # also the official Apache Kafka broker (python -m compat --kafka)

Sets already in the cache are not fetched again; Maven keeps its own downloads in ~/.m2.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compat import maven  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kafka", action="store_true", help="also the Apache Kafka broker")
    ap.add_argument("--kafka-version", help="Apache Kafka version (default: compat's)")
    args = ap.parse_args()
    from compat.clients.java import jars_dir
    from compat.kafka_tools import TOOLS_VERSION, tools_dir
    from compat.spark import connector_jars

    steps = [("Spark kafka connector", lambda: connector_jars()),
             ("kafka-clients for the Java scenarios", lambda: maven.jars(jars_dir())),
             (f"Kafka's command-line tools {TOOLS_VERSION}", lambda: maven.jars(tools_dir()))]
    if args.kafka:
        from compat.kafka_broker import DEFAULT_VERSION, kafka_classpath

        version = args.kafka_version or DEFAULT_VERSION
        steps.append((f"Apache Kafka {version}", lambda: kafka_classpath(version).split(":")))
    for what, fetch in steps:
        t0 = time.monotonic()
        jars = fetch()
        print(f"{what}: {len(jars)} jars ({time.monotonic() - t0:.1f}s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
