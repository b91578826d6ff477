"""pytest fixtures registered through the ``pytest11`` entry point when pykafkad is installed."""

from __future__ import annotations

import pytest

from pykafkad.testing import ClusterHandle, RunningBroker, run_broker, run_cluster


@pytest.fixture
def pykafkad_broker(tmp_path) -> RunningBroker:
    """A fresh broker on a free port with its data in the test's tmp_path."""
    with run_broker(tmp_path / "pykafkad-data") as broker:
        yield broker


@pytest.fixture
def pykafkad_cluster(tmp_path) -> ClusterHandle:
    """Three combined broker+controller node processes on free ports, data in tmp_path."""
    with run_cluster(3, data_dir=tmp_path / "pykafkad-cluster") as cluster:
        yield cluster
