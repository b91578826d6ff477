"""Shared fixtures: a real in-process broker per test, and helpers for the stock clients."""

from __future__ import annotations

import uuid

import pytest

from pykafkad.testing import run_broker


@pytest.fixture
def broker(tmp_path):
    with run_broker(tmp_path / "data") as b:
        yield b


@pytest.fixture
def topic_name() -> str:
    return f"t-{uuid.uuid4().hex[:10]}"


#: the reference broker's version: the newest Apache Kafka served (the compat suite's default)
REFERENCE_KAFKA_VERSION = "4.4.0"


@pytest.fixture(scope="session")
def reference_kafka():
    """One Apache Kafka broker for the whole session: the oracle that comparison tests ask
    the same question as pykafkad.  Tests that use it carry ``needs_java`` (they skip only
    outside CI when java/mvn are missing)."""
    from compat.kafka_broker import run_kafka

    with run_kafka(REFERENCE_KAFKA_VERSION) as kafka:
        yield kafka


@pytest.fixture(params=["c", "python"])
def record_walk(request, monkeypatch) -> str:
    """Runs a test once with each record walk of wire.records.scan: the C extension and the
    pure-Python fallback. The C one skips only outside CI when it was not built (in CI the
    install builds it, so a missing one fails)."""
    import os

    from wire.records import scan

    if request.param == "python":
        monkeypatch.setattr(scan, "_accelerator", None)
    elif scan._accelerator is None:
        if os.environ.get("CI"):
            pytest.fail("the C record walk (wire/records/_scan.c) was not built")
        pytest.skip("the C record walk is not built (python setup.py build_ext --inplace)")
    return request.param
