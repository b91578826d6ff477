"""server.properties files, read the way java.util.Properties.load reads them.

Kafka loads the file through an InputStream, so it is decoded as ISO-8859-1 (use ``\\uXXXX``
for other characters, as with Kafka). Rules kept: ``#``/``!`` comment lines, ``key=value``,
``key: value`` or ``key value``, whitespace around the separator, a trailing odd backslash joins
the next line (its leading whitespace dropped), escapes ``\\t \\n \\r \\f \\uXXXX`` and
``\\x`` -> ``x``, and the last of repeated keys wins.
"""

from __future__ import annotations

import re
from pathlib import Path

from pykafkad.config.types import ConfigError

_WHITESPACE = " \t\f"
_NATURAL_LINES = re.compile(r"\r\n|\r|\n")
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def read_properties(path: Path) -> dict[str, str]:
    try:
        text = Path(path).read_bytes().decode("iso-8859-1")
    except OSError as e:
        raise ConfigError(f"Cannot read properties file {path}: {e.strerror or e}") from e
    try:
        return parse_properties(text)
    except ConfigError as e:
        raise ConfigError(f"{path}: {e}") from e


def parse_properties(text: str) -> dict[str, str]:
    result: dict[str, str] = {}
    lines = _NATURAL_LINES.split(text)
    i = 0
    while i < len(lines):
        line = lines[i].lstrip(_WHITESPACE)
        i += 1
        if not line or line[0] in "#!":
            continue
        while _continues(line):
            line = line[:-1]
            if i >= len(lines):
                break
            line += lines[i].lstrip(_WHITESPACE)
            i += 1
        key, value = _split(line)
        result[key] = value
    return result


def _continues(line: str) -> bool:
    """An odd number of trailing backslashes escapes the line terminator."""
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1


def _split(line: str) -> tuple[str, str]:
    key_end = len(line)
    value_start = len(line)
    has_separator = False
    backslash = False
    for pos, c in enumerate(line):
        if c in "=:" and not backslash:
            key_end, value_start, has_separator = pos, pos + 1, True
            break
        if c in _WHITESPACE and not backslash:
            key_end, value_start = pos, pos + 1
            break
        backslash = (not backslash) if c == "\\" else False
    while value_start < len(line):
        c = line[value_start]
        if c not in _WHITESPACE:
            if has_separator or c not in "=:":
                break
            has_separator = True
        value_start += 1
    return _unescape(line[:key_end]), _unescape(line[value_start:])


def _unescape(s: str) -> str:
    if "\\" not in s:
        return s
    out: list[str] = []
    i = 0
    while i < len(s):
        c = s[i]
        i += 1
        if c != "\\" or i >= len(s):
            out.append(c)
            continue
        c = s[i]
        i += 1
        if c == "u":
            digits = s[i : i + 4]
            if len(digits) < 4 or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise ConfigError("Malformed \\uxxxx encoding.")
            out.append(chr(int(digits, 16)))
            i += 4
        else:
            out.append(_ESCAPES.get(c, c))
    return "".join(out)
