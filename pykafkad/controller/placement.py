"""Kafka's StripedReplicaPlacer: rack-aware striping of replicas over the usable brokers.

Each partition's first replica (its leader) walks round-robin over unfenced brokers, rack by
rack; the followers continue the stripe on the following racks. After every unfenced broker
has led once the racks and brokers are reshuffled. Given the same seeded ``random.Random``
the placement is the same every time.
"""

from __future__ import annotations

import random as _random
from dataclasses import dataclass

from pykafkad.controller.result import ApiError
from wire.errors import ErrorCode


@dataclass(frozen=True)
class UsableBroker:
    id: int
    rack: str | None
    fenced: bool


class InvalidReplicationFactor(ApiError):
    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.INVALID_REPLICATION_FACTOR, message)


class _BrokerList:
    def __init__(self) -> None:
        self.brokers: list[int] = []
        self.index = 0
        self.offset = 0
        self.epoch = 0

    def initialize(self, rnd: _random.Random) -> None:
        if self.brokers:
            self.brokers.sort()
            self.offset = rnd.randrange(len(self.brokers))

    def shuffle(self, rnd: _random.Random) -> None:
        rnd.shuffle(self.brokers)

    def next(self, epoch: int) -> int:
        if not self.brokers:
            return -1
        if self.epoch != epoch:
            self.epoch = epoch
            self.index = 0
            self.offset = (self.offset + 1) % len(self.brokers)
        if self.index >= len(self.brokers):
            return -1
        broker = self.brokers[(self.index + self.offset) % len(self.brokers)]
        self.index += 1
        return broker


class _Rack:
    def __init__(self) -> None:
        self.fenced = _BrokerList()
        self.unfenced = _BrokerList()

    def next(self, epoch: int) -> int:
        result = self.unfenced.next(epoch)
        return result if result >= 0 else self.fenced.next(epoch)


class _RackList:
    def __init__(self, rnd: _random.Random, brokers: list[UsableBroker]) -> None:
        self.random = rnd
        self.racks: dict[str | None, _Rack] = {}
        self.rack_names: list[str | None] = []
        self.num_total = len(brokers)
        self.num_unfenced = sum(1 for b in brokers if not b.fenced)
        for b in brokers:
            rack = self.racks.get(b.rack)
            if rack is None:
                rack = self.racks[b.rack] = _Rack()
                self.rack_names.append(b.rack)
            (rack.fenced if b.fenced else rack.unfenced).brokers.append(b.id)
        for rack in self._hash_order():
            rack.fenced.initialize(rnd)
            rack.unfenced.initialize(rnd)
        # Kafka sorts the "no rack" entry first, then rack names.
        self.rack_names.sort(key=lambda n: (n is not None, n or ""))
        self.epoch = 0
        self.offset = rnd.randrange(len(self.rack_names)) if self.rack_names else 0

    def _hash_order(self) -> list[_Rack]:
        """The racks in the order Kafka's HashMap of racks yields them: each rack draws from
        the shared random in that order, so the same seed places as Kafka does."""
        capacity = 16
        while len(self.racks) > capacity * 3 // 4:
            capacity *= 2

        def bucket(name: str | None) -> int:
            h = _java_string_hash(name) if name is not None else 0
            return (h ^ (h >> 16)) & (capacity - 1)

        names = list(self.racks)
        return [self.racks[n] for n in sorted(names, key=lambda n: (bucket(n), names.index(n)))]

    def place(self, replication_factor: int) -> list[int]:
        check_placement(replication_factor, self.num_total, self.num_unfenced)
        if self.epoch == self.num_unfenced and self.num_unfenced > 1:
            self.random.shuffle(self.rack_names)
            for rack in self._hash_order():
                rack.fenced.shuffle(self.random)
                rack.unfenced.shuffle(self.random)
            self.epoch = 0
        if self.offset == len(self.rack_names):
            self.offset = 0
        brokers: list[int] = []
        first_rack = self.offset
        while True:
            result = self.racks[self.rack_names[first_rack]].unfenced.next(self.epoch)
            if result >= 0:
                brokers.append(result)
                break
            first_rack = (first_rack + 1) % len(self.rack_names)
        rack_index = self.offset
        for _ in range(1, replication_factor):
            result = -1
            while result < 0:
                if rack_index == first_rack:
                    first_rack = -1
                else:
                    result = self.racks[self.rack_names[rack_index]].next(self.epoch)
                rack_index = (rack_index + 1) % len(self.rack_names)
            brokers.append(result)
        self.epoch += 1
        self.offset += 1
        return brokers


def _java_string_hash(s: str) -> int:
    """String.hashCode as an unsigned 32-bit value."""
    data = s.encode("utf-16-be")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + int.from_bytes(data[i:i + 2], "big")) & 0xFFFFFFFF
    return h


def check_placement(replication_factor: int, num_total: int, num_unfenced: int) -> None:
    """The three checks of Kafka's placer, in its order, with its messages."""
    if replication_factor <= 0:
        raise InvalidReplicationFactor(
            f"Invalid replication factor {replication_factor}: the replication factor must "
            "be positive.")
    if num_unfenced == 0:
        raise InvalidReplicationFactor(
            "All brokers are currently fenced, or have all their log directories cordoned.")
    if replication_factor > num_total:
        raise InvalidReplicationFactor(
            f"The target replication factor of {replication_factor} cannot be reached "
            f"because only {num_total} broker(s) are registered or some brokers have all their "
            "log directories cordoned.")


class StripedReplicaPlacer:
    def __init__(self, rnd: _random.Random) -> None:
        self.random = rnd

    def place(self, num_partitions: int, replication_factor: int,
              brokers: list[UsableBroker]) -> list[list[int]]:
        """Replica lists (leader first) for ``num_partitions`` new partitions."""
        rack_list = _RackList(self.random, brokers)
        check_placement(replication_factor, rack_list.num_total, rack_list.num_unfenced)
        return [rack_list.place(replication_factor) for _ in range(num_partitions)]
