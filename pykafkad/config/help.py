"""What ``pykafkad --help-config`` prints and the README lists: every broker and topic setting
pykafkad accepts, its default, and whether it is applied or accepted and ignored (and why).

Both are generated from the config tables (broker_defs.py), so they cannot drift from what the
broker does; tests/test_readme.py keeps the README's copy in sync.
"""

from __future__ import annotations

from pykafkad.config.broker_defs import (
    APPLIED_WITH_NOTE,
    BROKER_CONFIGS,
    IGNORED_BROKER_CONFIG_PREFIXES,
    IGNORED_BROKER_CONFIGS,
    NOT_APPLIED_BROKER_CONFIGS,
    SECURITY_BROKER_CONFIG_PREFIXES,
    SECURITY_BROKER_CONFIGS,
)
from pykafkad.config.topic_defs import NOT_APPLIED_TOPIC_CONFIGS, TOPIC_CONFIGS

APPLIED = "applied"
IGNORED = "ignored"


def broker_config_rows() -> list[tuple[str, str, str, str]]:
    """(name, default, "applied"/"ignored", note) for every broker config pykafkad defines."""
    rows = []
    for name, d in sorted(BROKER_CONFIGS.items()):
        default = _shown(d.default_string)
        if name in NOT_APPLIED_BROKER_CONFIGS:
            rows.append((name, default, IGNORED, NOT_APPLIED_BROKER_CONFIGS[name]))
        else:
            rows.append((name, default, APPLIED, APPLIED_WITH_NOTE.get(name, "")))
    return rows


def topic_config_rows() -> list[tuple[str, str, str, str]]:
    """The same for topic configs (CreateTopics / AlterConfigs), Kafka's internal ones left out."""
    rows = []
    for name, d in sorted(TOPIC_CONFIGS.items()):
        if d.internal:
            continue
        default = _shown(d.default_string)
        note = NOT_APPLIED_TOPIC_CONFIGS.get(name)
        rows.append((name, default, IGNORED, note) if note else (name, default, APPLIED, ""))
    return rows


def _shown(default: str | None) -> str:
    """A default as Kafka's docs show it: null, or "" for an empty string."""
    return "null" if default is None else default or '""'


def _lines(rows, width: int) -> list[str]:
    out = []
    for name, default, status, note in rows:
        line = f"{name:<{width}}  {status:<7}  default {default}"
        out.append(f"{line}  ({note})" if note else line)
    return out


def help_config_text() -> str:
    """The ``--help-config`` listing, one setting a line."""
    rows, topics = broker_config_rows(), topic_config_rows()
    width = max(len(name) for name, *_ in rows + topics)
    return "\n".join([
        "Broker settings (server.properties or --set KEY=VALUE), Kafka's names and defaults.",
        "'applied' settings act as in Kafka; 'ignored' ones are accepted so a stock",
        "server.properties loads, but change nothing (the reason follows).",
        "",
        *_lines(rows, width),
        "",
        "Also accepted and ignored (Kafka settings for what pykafkad does not have):",
        *_wrap(_ignored_names()),
        "and every setting starting with: " + ", ".join(_ignored_prefixes()),
        "",
        "Topic settings (CreateTopics, AlterConfigs; the broker's log.* settings are defaults):",
        "",
        *_lines(topics, width),
    ])


def _ignored_names() -> list[str]:
    return sorted(IGNORED_BROKER_CONFIGS - SECURITY_BROKER_CONFIGS)


def _ignored_prefixes() -> list[str]:
    return [p for p in IGNORED_BROKER_CONFIG_PREFIXES if p not in SECURITY_BROKER_CONFIG_PREFIXES]


def readme_ignored_markdown() -> str:
    """The README's list of accepted-and-ignored settings."""
    out = ["| setting | default | why it changes nothing |", "|---|---|---|"]
    for name, default, status, note in broker_config_rows():
        if status == IGNORED:
            out.append(f"| `{name}` | `{default}` | {note} |")
    out += [
        "",
        "Also accepted and ignored: "
        + ", ".join(f"`{n}`" for n in _ignored_names())
        + "; and every setting starting with "
        + ", ".join(f"`{p}`" for p in _ignored_prefixes())
        + ".",
        "",
        "| topic setting | default | why it changes nothing |",
        "|---|---|---|",
        *(f"| `{name}` | `{default}` | {note} |"
          for name, default, status, note in topic_config_rows() if status == IGNORED),
    ]
    return "\n".join(out)


def _wrap(names: list[str], width: int = 100) -> list[str]:
    lines, line = [], "  "
    for name in names:
        if len(line) + len(name) + 1 > width:
            lines.append(line.rstrip())
            line = "  "
        line += name + " "
    if line.strip():
        lines.append(line.rstrip())
    return lines
