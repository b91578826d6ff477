"""Stopping and starting one node of a cluster the harness started, for the scenarios that
need a broker down (``not-enough-replicas``).  Against a target given by address
(``--bootstrap-server``) there is no such control and those scenarios are n/a.

Both kinds of cluster get the same calls, by node id: ``stop_node`` (a clean stop, as
kafka-server-stop.sh does, so the controller takes the node out of every ISR at once),
``kill_node`` (SIGKILL, for the failover scenario) and
``start_node`` (the node back on its own ports and data, waited for until every node lists it
again).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from typing import Protocol


class NodeControl(Protocol):
    def stop_node(self, node_id: int) -> None: ...

    def kill_node(self, node_id: int) -> None: ...

    def start_node(self, node_id: int) -> None: ...


class KafkaNodes:
    """Over compat.kafka_broker.run_kafka_cluster's KafkaCluster (node ids 1..n)."""

    def __init__(self, cluster):
        self.cluster = cluster

    def _node(self, node_id: int):
        return self.cluster.nodes[node_id - 1]

    def stop_node(self, node_id: int) -> None:
        self._node(node_id).stop()

    def kill_node(self, node_id: int) -> None:
        """SIGKILL: no clean shutdown, the controller fences the node after its session."""
        proc = self._node(node_id).proc
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    def start_node(self, node_id: int) -> None:
        from compat.kafka_broker import (
            JAVA_OPTS,
            STARTUP_TIMEOUT_S,
            _cluster_ready,
            kafka_classpath,
        )

        node = self._node(node_id)
        if node.proc.poll() is None:
            return
        env = {**os.environ, "CLASSPATH": kafka_classpath(node.version)}
        with open(node.log_path, "ab") as log:
            node.proc = subprocess.Popen(
                [shutil.which("java") or "java", *JAVA_OPTS, "kafka.Kafka",
                 str(node.data_dir / "server.properties")],
                env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        # every running node lists every running one (with another node still down, as when
        # two of three come back one after the other, the whole cluster cannot)
        _cluster_ready(self.cluster, time.monotonic() + STARTUP_TIMEOUT_S,
                       [n for n in self.cluster.nodes if n.proc.poll() is None])


class PykafkadNodes:
    """Over pykafkad.testing.run_cluster's ClusterHandle."""

    def __init__(self, handle):
        self.handle = handle

    def stop_node(self, node_id: int) -> None:
        self.handle.stop(node_id)

    def kill_node(self, node_id: int) -> None:
        self.handle.kill(node_id)

    def start_node(self, node_id: int) -> None:
        self.handle.start(node_id)
