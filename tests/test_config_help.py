"""``pykafkad --help-config`` lists every accepted setting, and "applied" means the broker's code
reads it: a setting nothing reads must be in NOT_APPLIED_BROKER_CONFIGS."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

from pykafkad.config import BROKER_CONFIGS, TOPIC_BROKER_SYNONYMS
from pykafkad.config.broker_defs import APPLIED_WITH_NOTE, NOT_APPLIED_BROKER_CONFIGS
from pykafkad.config.help import APPLIED, IGNORED, broker_config_rows, topic_config_rows
from pykafkad.config.topic_defs import NOT_APPLIED_TOPIC_CONFIGS, TOPIC_CONFIGS
from pykafkad.log.config import LogConfig

ROOT = Path(__file__).resolve().parent.parent
#: files that only name settings (the tables themselves), never apply them
_TABLES = {"broker_defs.py", "help.py", "topic_defs.py", "describe.py"}


def test_tables_name_only_defined_settings():
    assert set(NOT_APPLIED_TOPIC_CONFIGS) <= set(TOPIC_CONFIGS)
    assert set(NOT_APPLIED_BROKER_CONFIGS) <= set(BROKER_CONFIGS)
    assert set(APPLIED_WITH_NOTE) <= set(BROKER_CONFIGS)
    assert not set(APPLIED_WITH_NOTE) & set(NOT_APPLIED_BROKER_CONFIGS)


def test_help_config_lists_every_setting_with_its_status():
    out = subprocess.run([sys.executable, "-m", "pykafkad", "--help-config"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    listed = {line.split()[0]: line.split()[1] for line in out.splitlines()
              if line and line.split()[0] in BROKER_CONFIGS}
    assert set(listed) == set(BROKER_CONFIGS)
    for name, status in listed.items():
        assert status == (IGNORED if name in NOT_APPLIED_BROKER_CONFIGS else APPLIED), name
    assert "socket.listen.backlog.size" in out and "process.roles" in out


def _applied_topic_configs() -> set[str]:
    """Topic configs the log acts on (its LogConfig fields), minus the ones it only accepts."""
    fields = {f.name.replace("_", ".") for f in dataclasses.fields(LogConfig)}
    return fields - set(NOT_APPLIED_TOPIC_CONFIGS)


def test_every_applied_setting_is_read_by_the_broker():
    sources = "\n".join(
        p.read_text() for p in (ROOT / "pykafkad").rglob("*.py") if p.name not in _TABLES)
    topic_applied = _applied_topic_configs()
    for name, _, status, _ in broker_config_rows():
        if status != APPLIED:
            continue
        synonym_of = [t for t, names in TOPIC_BROKER_SYNONYMS.items()
                      if name in (n for n, _ in names)]
        if synonym_of:
            assert synonym_of[0] in topic_applied or f'"{synonym_of[0]}"' in sources, name
        else:
            assert f'"{name}"' in sources, f"{name} is marked applied but nothing reads it"


def test_every_applied_topic_setting_is_read_by_the_broker():
    sources = "\n".join(
        p.read_text() for p in (ROOT / "pykafkad").rglob("*.py") if p.name not in _TABLES)
    applied = _applied_topic_configs()
    for name, _, status, _ in topic_config_rows():
        if status == APPLIED:
            assert name in applied or f'"{name}"' in sources, f"{name} is marked applied"
