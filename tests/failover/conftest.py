"""The two kinds of three-node cluster the outage tests run on: one of each per module (the
tests kill nodes, so modules do not share them), and ``target``, each test once per kind."""

from __future__ import annotations

import pytest

from compat.failover import CLUSTER_CONFIG, KafkaTarget, PykafkadTarget
from pykafkad.testing import run_cluster
from tests.integration.clients import needs_java


@pytest.fixture(scope="module")
def pykafkad_cluster(tmp_path_factory):
    with run_cluster(3, config=CLUSTER_CONFIG,
                     data_dir=tmp_path_factory.mktemp("failover")) as cluster:
        yield PykafkadTarget(cluster)


@pytest.fixture(scope="module")
def kafka_cluster(tmp_path_factory):
    from compat.kafka_broker import run_kafka_cluster

    with run_kafka_cluster(3, config=CLUSTER_CONFIG,
                           data_dir=tmp_path_factory.mktemp("kafka-failover")) as cluster:
        yield KafkaTarget(cluster)


@pytest.fixture(params=["pykafkad", pytest.param("kafka", marks=needs_java)])
def target(request):
    return request.getfixturevalue(f"{request.param}_cluster")
