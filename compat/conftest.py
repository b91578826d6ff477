"""The compatibility suite inside pytest: one matrix per session, printed after the tests (in
pytest's terminal summary, not between the progress dots) and written to pytest's temporary
directory; ``python -m compat`` writes the committed reports."""

from __future__ import annotations

import os

import pytest

from compat import report
from compat.runner import Matrix, run_matrix

MATRIX = pytest.StashKey[Matrix]()


@pytest.fixture(scope="module")
def matrix(request, tmp_path_factory) -> Matrix:
    from compat.__main__ import TEST_BROKER_CONFIG
    from pykafkad import __version__
    from pykafkad.testing import run_broker

    data = tmp_path_factory.mktemp("compat") / "data"
    with run_broker(data, config=TEST_BROKER_CONFIG) as broker:
        # in CI every client must be there (scripts/test installs them)
        m = run_matrix(broker.bootstrap_servers, target=f"pykafkad {__version__}",
                       require_clients=bool(os.environ.get("CI")))
    md, page = report.write(m, tmp_path_factory.mktemp("compat-reports"), "latest")
    m.notes.append(f"reports: {md} {page}")
    request.config.stash[MATRIX] = m
    return m


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    m = config.stash.get(MATRIX, None)
    if m is not None:
        terminalreporter.section("compatibility matrix")
        terminalreporter.write_line(report.text(m))
