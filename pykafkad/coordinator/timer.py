"""Keyed timers on an injected clock, run synchronously by whoever owns the coordinator.

Kafka's coordinators schedule operations by key ("heartbeat-<group>-<member>", "join-<group>"),
and scheduling a key again replaces its earlier deadline.  Nothing here sleeps: the async
layer asks for ``next_deadline()`` and calls ``run_due()`` when it passes, and tests drive it
with a fake clock.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable


class Timer:
    def __init__(self, clock: Callable[[], int]):
        self.clock = clock
        self._heap: list[tuple[int, int, str]] = []
        self._tasks: dict[str, tuple[int, int, Callable[[], None]]] = {}
        self._seq = itertools.count()
        #: called with the new deadline whenever a task is scheduled (wakes the async runner)
        self.on_schedule: Callable[[int], None] | None = None

    def schedule(self, key: str, delay_ms: int, fn: Callable[[], None]) -> None:
        deadline = self.clock() + max(0, delay_ms)
        seq = next(self._seq)
        self._tasks[key] = (deadline, seq, fn)
        heapq.heappush(self._heap, (deadline, seq, key))
        if self.on_schedule is not None:
            self.on_schedule(deadline)

    def cancel(self, key: str) -> None:
        self._tasks.pop(key, None)

    def is_scheduled(self, key: str) -> bool:
        return key in self._tasks

    def deadline(self, key: str) -> int | None:
        task = self._tasks.get(key)
        return None if task is None else task[0]

    def cancel_all(self) -> None:
        self._tasks.clear()
        self._heap.clear()

    def __len__(self) -> int:
        return len(self._tasks)

    def _prune(self) -> None:
        heap = self._heap
        while heap:
            deadline, seq, key = heap[0]
            task = self._tasks.get(key)
            if task is not None and task[1] == seq:
                return
            heapq.heappop(heap)

    def next_deadline(self) -> int | None:
        self._prune()
        return self._heap[0][0] if self._heap else None

    def run_due(self, now: int | None = None) -> int:
        """Runs every task whose deadline is at or before ``now``, earliest first (tasks they
        schedule run too when already due).  Returns how many ran."""
        if now is None:
            now = self.clock()
        ran = 0
        while True:
            self._prune()
            if not self._heap or self._heap[0][0] > now:
                return ran
            _, _, key = heapq.heappop(self._heap)
            _, _, fn = self._tasks.pop(key)
            ran += 1
            fn()
