from __future__ import annotations

import pytest

from pykafkad.log.config import LogConfig
from pykafkad.log.partition import PartitionLog
from tests.log.batches import FakeClock


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def open_log(tmp_path, clock):
    """``open_log(**config_overrides)`` -> PartitionLog in tmp_path/topic-0 (closed at teardown)."""
    opened: list[PartitionLog] = []

    def _open(*, dir=None, recover=False, recovery_point=0, log_start_offset=0, **overrides):
        config = LogConfig(**overrides)
        log = PartitionLog.open(
            dir or tmp_path / "topic-0",
            config,
            clock,
            recover=recover,
            recovery_point=recovery_point,
            log_start_offset=log_start_offset,
        )
        opened.append(log)
        return log

    yield _open
    for log in opened:
        log.close()
