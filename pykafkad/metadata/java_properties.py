"""Java's ``.properties`` format as ``java.util.Properties`` reads and stores it, and the order
a java.util.HashMap iterates keys in: Kafka's files (server.properties, meta.properties) and
the order of its printed lines follow both."""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

# -- Java's Properties format --------------------------------------------------------------------
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescape(text: str) -> str:
    out = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            n = text[i + 1]
            if n == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[i + 2:i + 6]):
                out.append(chr(int(text[i + 2:i + 6], 16)))
                i += 6
                continue
            out.append(_ESCAPES.get(n, n))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _logical_lines(text: str) -> Iterable[str]:
    pending = ""
    for raw in text.splitlines():
        line = raw.lstrip(" \t\f")
        if not pending and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:  # an odd number of backslashes: the line continues
            pending += line[:-1]
            continue
        yield pending + line
        pending = ""
    if pending:
        yield pending


def parse_properties(text: str) -> dict[str, str]:
    """A properties file's keys and values, read as Java's ``Properties.load`` reads them."""
    props: dict[str, str] = {}
    for line in _logical_lines(text):
        i = 0
        while i < len(line):
            c = line[i]
            if c == "\\":
                i += 2
                continue
            if c in "=: \t\f":
                break
            i += 1
        key = line[:i]
        rest = line[i:].lstrip(" \t\f")
        if rest[:1] in ("=", ":"):
            rest = rest[1:].lstrip(" \t\f")
        props[_unescape(key)] = _unescape(rest)
    return props


def load_properties(path: str | Path) -> dict[str, str]:
    return parse_properties(Path(path).read_text(encoding="latin-1"))


def _java_hash(s: str) -> int:
    h = 0
    units = s.encode("utf-16-be")
    for i in range(0, len(units), 2):  # Java hashes UTF-16 code units
        h = (31 * h + int.from_bytes(units[i:i + 2], "big")) & 0xFFFFFFFF
    return h


def java_uuid_hash(uuid: bytes) -> int:
    """org.apache.kafka.common.Uuid.hashCode of a 16-byte topic id."""
    h = int.from_bytes(uuid[:8], "big") ^ int.from_bytes(uuid[8:], "big")
    return (h >> 32) ^ (h & 0xFFFFFFFF)


def java_hash_order(keys: Iterable, capacity: int = 16, hash_of=None) -> list:
    """``keys`` in the order a java.util.HashMap (or Properties) iterates them: by hash bucket,
    then insertion order. Kafka's files and messages come out in this order. ``capacity`` is
    the table size the map starts with (16 for ``new HashMap<>()``); ``hash_of``: the keys'
    Java hashCode (String's by default)."""
    keys = list(keys)
    hash_of = hash_of or _java_hash
    while len(keys) > capacity * 3 // 4:
        capacity *= 2

    def bucket(item: tuple) -> tuple[int, int]:
        h = hash_of(item[1])
        return ((h ^ (h >> 16)) & (capacity - 1), item[0])

    return [k for _, k in sorted(enumerate(keys), key=bucket)]


def java_hash_copy_order(keys: Iterable[str]) -> list[str]:
    """The order of ``new HashMap<>(map)`` over ``keys`` (in ``map``'s order): Java 17 sizes
    the copy's table for the map's size alone, so two entries share a table of 4, not 16."""
    keys = list(keys)
    wanted = int(len(keys) / 0.75 + 1.0)
    capacity = 1
    while capacity < wanted:
        capacity *= 2
    return java_hash_order(keys, capacity)


def _escape(text: str, is_key: bool) -> str:
    out = []
    for i, c in enumerate(text):
        if c == " " and (i == 0 or is_key):
            out.append("\\ ")
        elif c in "\\":
            out.append("\\\\")
        elif c in "\t\n\r\f":
            out.append("\\" + {"\t": "t", "\n": "n", "\r": "r", "\f": "f"}[c])
        elif c in "=:#!":
            out.append("\\" + c)
        elif ord(c) < 0x20 or ord(c) > 0x7E:
            out.append(f"\\u{ord(c):04X}")
        else:
            out.append(c)
    return "".join(out)


def format_properties(props: Mapping[str, str], now: float | None = None) -> str:
    """The text Java's ``Properties.store(out, "")`` writes: an empty comment, the date, then
    the entries in hash order."""
    stamp = time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(now))
    lines = ["#", "#" + stamp]
    lines += [f"{_escape(k, True)}={_escape(props[k], False)}" for k in java_hash_order(props)]
    return "\n".join(lines) + "\n"
