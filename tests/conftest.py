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
