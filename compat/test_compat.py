"""The compatibility suite as part of the test command: every scenario with every client
against a fresh pykafkad; no scenario may fail or be unsupported.

The matrix is always printed (also when the test passes), and the Markdown and HTML reports
are written to pytest's temporary directory; ``python -m compat`` writes the committed ones.
"""

from __future__ import annotations

import os

import pytest

from compat import report
from compat.runner import UNSUPPORTED, run_matrix
from pykafkad.testing import run_broker


@pytest.fixture(scope="module")
def matrix(tmp_path_factory):
    from compat.__main__ import TEST_BROKER_CONFIG
    from pykafkad import __version__

    data = tmp_path_factory.mktemp("compat") / "data"
    with run_broker(data, config=TEST_BROKER_CONFIG) as broker:
        # in CI every client must be there (scripts/test installs them)
        m = run_matrix(broker.bootstrap_servers, target=f"pykafkad {__version__}",
                       require_clients=bool(os.environ.get("CI")))
    md, page = report.write(m, tmp_path_factory.mktemp("compat-reports"), "latest")
    m.notes.append(f"reports: {md} {page}")
    return m


def test_compat_matrix(matrix, capsys):
    with capsys.disabled():
        print("\n" + report.text(matrix))
    failed = matrix.failures()
    unsupported = sorted({s for (s, _), r in matrix.results.items() if r.status == UNSUPPORTED})
    assert not unsupported, f"scenarios the broker cannot run: {unsupported}"
    assert not failed, "compat failures:\n" + "\n".join(
        f"  {s} / {c}: {r.reason}" for s, c, r in failed)
