"""The README's supported-API table is exactly what the broker advertises."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_api_table_matches_the_registry() -> None:
    spec = importlib.util.spec_from_file_location("api_table", ROOT / "scripts" / "api_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    readme = (ROOT / "README.md").read_text()
    assert module.render(readme) == readme, "README is stale: run scripts/api_table.py --write"


def test_ignored_settings_list_matches_the_config_tables() -> None:
    spec = importlib.util.spec_from_file_location(
        "config_table", ROOT / "scripts" / "config_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    readme = (ROOT / "README.md").read_text()
    assert module.START in readme
    assert module.render(readme) == readme, "README is stale: run scripts/config_table.py --write"
