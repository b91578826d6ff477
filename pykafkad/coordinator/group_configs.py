"""Per-group config overrides (IncrementalAlterConfigs / AlterConfigs on resource type 32),
kept as the topic configs are: one JSON file in the data dir, rewritten atomically on every
change, so what a client was told succeeded survives a restart."""

from __future__ import annotations

from pathlib import Path

from pykafkad.config.override_store import ConfigOverrideStore

GROUP_CONFIGS_FILE = "pykafkad-group-configs.json"


class GroupConfigStore(ConfigOverrideStore):
    """``{group id: {config: value}}``; ``names()`` are the groups that have overrides."""

    def __init__(self, data_dir: Path):
        super().__init__(data_dir, GROUP_CONFIGS_FILE, "groups")
