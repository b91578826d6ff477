"""Version ranges as written in Kafka's message specs ("0+", "3-7", "5", "none")."""

from __future__ import annotations

from dataclasses import dataclass

#: Upper bound used for open ranges ("3+"); versions are int16 on the wire.
MAX_VERSION = 0x7FFF


@dataclass(frozen=True, slots=True)
class VersionRange:
    lowest: int
    highest: int

    @classmethod
    def parse(cls, text: str) -> VersionRange:
        text = text.strip()
        if text == "none":
            return NONE
        if text.endswith("+"):
            return cls(int(text[:-1]), MAX_VERSION)
        if "-" in text:
            lo, hi = text.split("-", 1)
            return cls(int(lo), int(hi))
        v = int(text)
        return cls(v, v)

    @property
    def empty(self) -> bool:
        return self.lowest > self.highest

    def __contains__(self, version: int) -> bool:
        return self.lowest <= version <= self.highest

    def intersect(self, other: VersionRange) -> VersionRange:
        return VersionRange(max(self.lowest, other.lowest), min(self.highest, other.highest))

    def __str__(self) -> str:
        if self.empty:
            return "none"
        if self.highest == MAX_VERSION:
            return f"{self.lowest}+"
        if self.lowest == self.highest:
            return str(self.lowest)
        return f"{self.lowest}-{self.highest}"


NONE = VersionRange(1, 0)
