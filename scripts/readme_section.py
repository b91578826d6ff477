"""A generated section of README.md: the text between a start and an end marker, which a
script prints or rewrites (``--write``) and tests/test_readme.py keeps in sync."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def replace_section(readme: str, start: str, end: str, body: str) -> str:
    head, _, rest = readme.partition(start)
    _, _, tail = rest.partition(end)
    return f"{head}{start}\n{body}\n{end}{tail}"


def main(render: Callable[[str], str], body: Callable[[], str]) -> int:
    """``--write`` rewrites README.md's section with ``render``; otherwise prints ``body()``."""
    if "--write" in sys.argv:
        README.write_text(render(README.read_text()))
    else:
        print(body())
    return 0
