"""Kafka's RPCProducerIdManager: a KRaft broker's producer ids come in blocks the active
controller allocates (AllocateProducerIds, recorded in the metadata log as ProducerIdsRecord,
so no id repeats across brokers or restarts).

``next_id()`` is synchronous, as InitProducerId needs it: it hands out the current block and,
once 90% of it is used, asks for the next one in the background (Kafka's prefetch); with no
block at hand it raises COORDINATOR_LOAD_IN_PROGRESS (retriable: clients retry) and asks.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import trio

from wire.errors import ErrorCode, KafkaError
from wire.messages.allocate_producer_ids_request import AllocateProducerIdsRequest

log = logging.getLogger("pykafkad.kraft.producer_ids")

#: Kafka's ProducerIdManager.PID_BLOCK_PREFETCH_THRESHOLD (prefetch at 90% of a block)
PREFETCH_THRESHOLD = 0.90
RETRY_BACKOFF_S = 0.05


class RPCProducerIdManager:
    def __init__(self, channel: Any, broker_id: int, broker_epoch: Callable[[], int]):
        self.channel = channel
        self.broker_id = broker_id
        self.broker_epoch = broker_epoch
        #: [next, end) of the block in use, and the prefetched one
        self._next = 0
        self._end = 0
        self._prefetch_at = 0
        self._pending: tuple[int, int] | None = None
        self._requesting = False
        self._wake = trio.Event()

    def next_id(self) -> int:
        if self._next >= self._end and self._pending is not None:
            self._install(*self._pending)
            self._pending = None
        if self._next >= self._end:
            self._ask()
            raise KafkaError(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
                             "Producer ID block is not available yet")
        pid = self._next
        self._next += 1
        if self._next >= self._prefetch_at and self._pending is None:
            self._ask()
        return pid

    def _install(self, start: int, length: int) -> None:
        self._next, self._end = start, start + length
        self._prefetch_at = start + int(length * PREFETCH_THRESHOLD)

    def _ask(self) -> None:
        if not self._requesting:
            self._requesting = True
            self._wake.set()

    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        while True:
            if not self._requesting:
                await self._wake.wait()
                self._wake = trio.Event()
                continue
            block = await self._allocate()
            if block is None:
                await trio.sleep(RETRY_BACKOFF_S)
                continue
            if self._next >= self._end:
                self._install(*block)
            else:
                self._pending = block
            self._requesting = False

    async def _allocate(self) -> tuple[int, int] | None:
        try:
            response = await self.channel.send(AllocateProducerIdsRequest(
                broker_id=self.broker_id, broker_epoch=self.broker_epoch()))
        except (trio.TooSlowError, OSError) as e:
            log.info("AllocateProducerIds failed: %r", e)
            return None
        if response.error_code:
            log.info("AllocateProducerIds: %s", ErrorCode(response.error_code).name)
            return None
        return response.producer_id_start, response.producer_id_len
