"""java.util.Random's nextInt(bound) and Collections.shuffle over Kafka's test MockRandom
generator, with the two methods the placer calls (randrange, shuffle), so the placer can be
run on the same random stream as Kafka's StripedReplicaPlacerTest."""

from __future__ import annotations

_MASK64 = (1 << 64) - 1


def _int32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x & 0x80000000 else x


class KafkaMockRandom:
    """org.apache.kafka.server.util.MockRandom: a fixed 64-bit LCG behind java.util.Random."""

    def __init__(self, state: int = 17) -> None:
        self.state = state

    def next(self, bits: int) -> int:
        self.state = (self.state * 2862933555777941757 + 3037000493) & _MASK64
        return _int32(self.state >> (64 - bits))

    def next_int(self, bound: int) -> int:
        """java.util.Random.nextInt(int bound)."""
        r = self.next(31)
        m = bound - 1
        if bound & m == 0:
            return _int32((bound * r) >> 31)
        u = r
        while True:
            r = u % bound
            if _int32(u - r + m) >= 0:
                return r
            u = self.next(31)

    def randrange(self, n: int) -> int:
        return self.next_int(n)

    def shuffle(self, items: list) -> None:
        """Collections.shuffle(list, rnd) for a random-access list."""
        for i in range(len(items), 1, -1):
            j = self.next_int(i)
            items[i - 1], items[j] = items[j], items[i - 1]
