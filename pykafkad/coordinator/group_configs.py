"""Per-group config overrides (IncrementalAlterConfigs / AlterConfigs on resource type 32),
kept as the topic configs are: one JSON file in the data dir, rewritten atomically on every
change, so what a client was told succeeded survives a restart."""

from __future__ import annotations

import json
import os
from pathlib import Path

GROUP_CONFIGS_FILE = "pykafkad-group-configs.json"


class GroupConfigStore:
    def __init__(self, data_dir: Path):
        self.path = data_dir / GROUP_CONFIGS_FILE
        self._groups: dict[str, dict[str, str]] = {}
        if self.path.exists():
            raw = json.loads(self.path.read_text())
            self._groups = {g: dict(c) for g, c in raw.get("groups", {}).items()}

    def group_ids(self) -> list[str]:
        """The groups that have overrides (what ListConfigResources lists for groups)."""
        return sorted(self._groups)

    def get(self, group_id: str) -> dict[str, str]:
        return dict(self._groups.get(group_id, {}))

    def set(self, group_id: str, configs: dict[str, str]) -> None:
        """Replaces the group's overrides (none left: the group is forgotten)."""
        if configs:
            self._groups[group_id] = dict(configs)
        else:
            self._groups.pop(group_id, None)
        self._save()

    def _save(self) -> None:
        data = {"version": 1, "groups": dict(sorted(self._groups.items()))}
        tmp = self.path.with_suffix(".tmp")
        with open(tmp, "w") as f:
            json.dump(data, f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
