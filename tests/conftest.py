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
