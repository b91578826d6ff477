"""The compatibility suite as part of the test command: every scenario with every client
against a fresh pykafkad; no scenario may fail or be unsupported.

The matrix (the ``matrix`` fixture, compat/conftest.py) is printed at the end of the session,
also when the test passes.
"""

from __future__ import annotations

from compat.runner import UNSUPPORTED


def test_compat_matrix(matrix):
    failed = matrix.failures()
    unsupported = sorted({s for (s, _), r in matrix.results.items() if r.status == UNSUPPORTED})
    assert not unsupported, f"scenarios the broker cannot run: {unsupported}"
    assert not failed, "compat failures:\n" + "\n".join(
        f"  {s} / {c}: {r.reason}" for s, c, r in failed)
