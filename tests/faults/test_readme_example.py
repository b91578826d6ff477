"""The README's fault-injection example, run as it is written there, so that it stays true."""

from __future__ import annotations

from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
START, END = "<!-- fault-example start -->\n```python\n", "```\n<!-- fault-example end -->"


def readme_example() -> str:
    text = README.read_text()
    return text[text.index(START) + len(START):text.index(END)]


def test_readme_fault_example_kills_the_leader_and_loses_nothing_acknowledged():
    namespace: dict = {}
    exec(compile(readme_example(), str(README), "exec"), namespace)
    tests = [fn for name, fn in namespace.items() if name.startswith("test_")]
    assert len(tests) == 1
    tests[0]()
