"""pytest fixtures registered through the ``pytest11`` entry point when pykafkad is installed."""

from __future__ import annotations

import pytest

from pykafkad.testing import RunningBroker, run_broker


@pytest.fixture
def pykafkad_broker(tmp_path) -> RunningBroker:
    """A fresh broker on a free port with its data in the test's tmp_path."""
    with run_broker(tmp_path / "pykafkad-data") as broker:
        yield broker
