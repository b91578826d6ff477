"""What ``pykafkad --help-config`` prints and the README lists: every broker setting pykafkad
accepts, its default, and whether it is applied or accepted and ignored (and why).

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
)

APPLIED = "applied"
IGNORED = "ignored"


def broker_config_rows() -> list[tuple[str, str, str, str]]:
    """(name, default, "applied"/"ignored", note) for every broker config pykafkad defines."""
    rows = []
    for name, d in sorted(BROKER_CONFIGS.items()):
        default = d.default_string
        default = "null" if default is None else default
        if name in NOT_APPLIED_BROKER_CONFIGS:
            rows.append((name, default, IGNORED, NOT_APPLIED_BROKER_CONFIGS[name]))
        else:
            rows.append((name, default, APPLIED, APPLIED_WITH_NOTE.get(name, "")))
    return rows


def help_config_text() -> str:
    """The ``--help-config`` listing, one setting a line."""
    rows = broker_config_rows()
    width = max(len(name) for name, *_ in rows)
    lines = [
        "Broker settings (server.properties or --set KEY=VALUE), Kafka's names and defaults.",
        "'applied' settings act as in Kafka; 'ignored' ones are accepted so a stock",
        "server.properties loads, but change nothing (the reason follows).",
        "",
    ]
    for name, default, status, note in rows:
        line = f"{name:<{width}}  {status:<7}  default {default}"
        lines.append(f"{line}  ({note})" if note else line)
    lines += [
        "",
        "Also accepted and ignored (Kafka settings for what pykafkad does not have):",
        *_wrap(sorted(IGNORED_BROKER_CONFIGS)),
        "and every setting starting with: " + ", ".join(IGNORED_BROKER_CONFIG_PREFIXES),
    ]
    return "\n".join(lines)


def readme_ignored_markdown() -> str:
    """The README's list of accepted-and-ignored settings."""
    out = ["| setting | default | why it changes nothing |", "|---|---|---|"]
    for name, default, status, note in broker_config_rows():
        if status == IGNORED:
            out.append(f"| `{name}` | `{default}` | {note} |")
    out += [
        "",
        "Also accepted and ignored: "
        + ", ".join(f"`{n}`" for n in sorted(IGNORED_BROKER_CONFIGS))
        + "; and every setting starting with "
        + ", ".join(f"`{p}`" for p in IGNORED_BROKER_CONFIG_PREFIXES)
        + ".",
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
