"""``bench.py --workloads cluster_start``: how long a 3-node cluster takes to start and how much
memory its processes hold once started, pykafkad's launcher against three Apache Kafka 4.4.0
KRaft JVMs from the reference jars, in the same run.

pykafkad: from planning the cluster (server.properties and meta.properties written) until
every node printed its ready line and every broker listener answers ApiVersions.  (Until the
nodes form a quorum that is all "ready" means; the lead's readiness becomes "every broker
registered and unfenced".)  Kafka: from the parallel ``kafka-storage format`` runs until every
node's Metadata lists all three brokers and a controller; its format time is reported too.
Memory is the sum of the nodes' resident set sizes right after start.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from measure_startup import first_answer


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def pykafkad_cluster_start(nodes: int = 3) -> dict[str, float]:
    from pykafkad.launcher import Cluster, plan_cluster
    from pykafkad.testing import _free_ports

    with tempfile.TemporaryDirectory() as d:
        ports = _free_ports(2 * nodes)
        t0 = time.monotonic()
        cluster = Cluster(plan_cluster(nodes, 0, 0, Path(d), ports=ports))
        try:
            cluster.start_all()
            for spec in cluster.specs:
                first_answer(spec.port, t0 + 60)
            elapsed = time.monotonic() - t0
            rss = sum(_rss_mib(n.pid) for n in cluster.nodes.values())
        finally:
            cluster.stop_all()
    return {f"{nodes}-node cluster start s": elapsed, f"{nodes}-node cluster RSS MiB": rss}


def kafka_cluster_start(nodes: int = 3) -> dict[str, float]:
    from compat.kafka_broker import kafka_classpath, run_kafka_cluster

    kafka_classpath()  # the jars are fetched outside the timing
    t0 = time.monotonic()
    with run_kafka_cluster(nodes) as cluster:
        elapsed = time.monotonic() - t0
        rss = sum(_rss_mib(n.proc.pid) for n in cluster.nodes)
        format_s = cluster.format_s
    return {f"{nodes}-node cluster start s": elapsed, f"{nodes}-node cluster RSS MiB": rss,
            "  of which kafka-storage format s": format_s}
