"""Whether a KRaft node's storage was formatted, checked before it starts.

A stand-in the lead swaps for ``pykafkad.metadata.properties.check_formatted`` once the metadata
area lands: a node with ``process.roles`` set refuses an unformatted log dir, with the line
Kafka 4.4 exits with ("No readable meta.properties files found."), instead of inventing a
cluster id that its peers would not share.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

META_PROPERTIES = "meta.properties"
NOT_FORMATTED = "No readable meta.properties files found."


class NotFormattedError(RuntimeError):
    pass


def check_formatted(log_dirs: Iterable[str | Path]) -> None:
    """Raises NotFormattedError unless some log dir holds a readable meta.properties."""
    for d in log_dirs:
        try:
            (Path(d) / META_PROPERTIES).read_bytes()
            return
        except OSError:
            continue
    raise NotFormattedError(NOT_FORMATTED)
