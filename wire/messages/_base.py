"""Behaviour shared by every generated message and struct class (hand-written, not generated)."""

from __future__ import annotations

from typing import Any

from wire.primitives import Reader, Writer


class Struct:
    """Base of generated classes: equality, repr and plain-dict views from ``__slots__``.

    ``_FIELDS`` (set by the generator) lists every field as
    ``(attr, type, versions, nullable_versions, tagged_versions, tag, flexible_override)``
    with version ranges as ``(lowest, highest)`` tuples; tests build Hypothesis strategies from it.
    """

    __slots__ = ("_unknown_tags",)
    _FIELDS: tuple = ()

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, f[0]) == getattr(other, f[0]) for f in self._FIELDS)

    def __repr__(self) -> str:
        body = ", ".join(f"{f[0]}={getattr(self, f[0])!r}" for f in self._FIELDS)
        return f"{type(self).__name__}({body})"

    def to_dict(self) -> dict[str, Any]:
        def conv(v: Any) -> Any:
            if isinstance(v, Struct):
                return v.to_dict()
            if isinstance(v, list):
                return [conv(x) for x in v]
            return v

        return {f[0]: conv(getattr(self, f[0])) for f in self._FIELDS}


class Message(Struct):
    """A top-level message: knows its API key and the versions Kafka defines for it."""

    __slots__ = ()
    API_KEY: int = -1
    LOWEST_VERSION: int = 0
    HIGHEST_VERSION: int = 0
    #: first flexible version, or None when the message has none
    FLEXIBLE_VERSION: int | None = None

    @classmethod
    def read(cls, r: Reader, version: int) -> Message:  # pragma: no cover - generated
        raise NotImplementedError

    def write(self, w: Writer, version: int) -> None:  # pragma: no cover - generated
        raise NotImplementedError

    @classmethod
    def decode(cls, data: bytes | memoryview, version: int) -> Message:
        r = Reader(data)
        msg = cls.read(r, version)
        return msg

    def encode(self, version: int) -> bytes:
        w = Writer()
        self.write(w, version)
        return w.getvalue()
