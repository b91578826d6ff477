"""The iteration and tie-breaking orders of the Java collections Kafka's streams assignor uses.

Kafka's sticky task assignor breaks ties between equally loaded processes and members by the
order of a ``java.util.HashMap`` (keyed by process or member id) and of a
``java.util.PriorityQueue`` (a binary heap that is not stable).  Giving the same members the
same tasks as Kafka therefore needs those orders, reproduced here."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

T = TypeVar("T")

_LOAD_FACTOR = 0.75
_DEFAULT_CAPACITY = 16


def string_hash(s: str) -> int:
    """``String.hashCode()``: over UTF-16 code units, as a signed 32-bit int."""
    data = s.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def _spread(h: int) -> int:
    """``HashMap.hash``: the high half folded into the low half."""
    h &= 0xFFFFFFFF
    return h ^ (h >> 16)


def _table_size_for(c: int) -> int:
    n = 1
    while n < c:
        n <<= 1
    return n


def hash_map_order(keys: Iterable[str], initial_capacity: int | None = None,
                   compute_if_absent: bool = False) -> list[str]:
    """The order a ``HashMap<String, ?>`` iterates ``keys`` added in this order (a key already
    there keeps its place), made with ``new HashMap<>()`` or ``new HashMap<>(initial_capacity)``.

    Buckets are visited by index.  ``put`` appends to a bucket and grows the table after an
    insert passes the threshold; ``computeIfAbsent`` puts the new key at the head of its bucket
    and grows the table before an insert once the size is past it.  A resize splits each bucket
    without reordering it."""
    capacity = 0
    threshold = _table_size_for(initial_capacity) if initial_capacity is not None else 0
    table: list[list[tuple[int, str]]] = []
    seen: set[str] = set()

    def resize() -> None:
        nonlocal capacity, threshold, table
        if capacity == 0:
            capacity = threshold if threshold > 0 else _DEFAULT_CAPACITY
        else:
            capacity <<= 1
        threshold = int(capacity * _LOAD_FACTOR)
        old, table = table, [[] for _ in range(capacity)]
        for bucket in old:
            for h, k in bucket:
                table[h & (capacity - 1)].append((h, k))

    size = 0
    for key in keys:
        if key in seen:
            continue
        seen.add(key)
        h = _spread(string_hash(key))
        if compute_if_absent:
            if capacity == 0 or size > threshold:
                resize()
            table[h & (capacity - 1)].insert(0, (h, key))
            size += 1
        else:
            if capacity == 0:
                resize()
            table[h & (capacity - 1)].append((h, key))
            size += 1
            if size > threshold:
                resize()
    return [k for bucket in table for _, k in bucket]


class JavaPriorityQueue(Generic[T]):
    """``java.util.PriorityQueue`` with a comparator: the same sift steps, so equal elements
    come out in the same order as in Java."""

    def __init__(self, compare: Callable[[T, T], int]):
        self._cmp = compare
        self._heap: list[T] = []

    def __len__(self) -> int:
        return len(self._heap)

    def add(self, x: T) -> None:
        heap = self._heap
        k = len(heap)
        heap.append(x)
        while k > 0:
            parent = (k - 1) >> 1
            e = heap[parent]
            if self._cmp(x, e) >= 0:
                break
            heap[k] = e
            k = parent
        heap[k] = x

    def add_all(self, xs: Iterable[T]) -> None:
        for x in xs:
            self.add(x)

    def poll(self) -> T | None:
        heap = self._heap
        if not heap:
            return None
        result = heap[0]
        x = heap.pop()
        n = len(heap)
        if n:
            k, half = 0, n >> 1
            while k < half:
                child = 2 * k + 1
                c = heap[child]
                right = child + 1
                if right < n and self._cmp(c, heap[right]) > 0:
                    child = right
                    c = heap[child]
                if self._cmp(x, c) <= 0:
                    break
                heap[k] = c
                k = child
            heap[k] = x
        return result


def compare(a, b) -> int:
    return (a > b) - (a < b)
