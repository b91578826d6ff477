"""Config overrides of named resources that have no other state (group configs, client-metrics
subscriptions), kept as topic configs are: one JSON file in the data dir, rewritten atomically
on every change, so what a client was told succeeded survives a restart."""

from __future__ import annotations

import json
from pathlib import Path

from pykafkad.log.checkpoint import atomic_write


class ConfigOverrideStore:
    """``{resource name: {config: value}}`` saved under ``section`` of ``data_dir/filename``."""

    def __init__(self, data_dir: Path, filename: str, section: str):
        self.path = data_dir / filename
        self.section = section
        self._resources: dict[str, dict[str, str]] = {}
        if self.path.exists():
            raw = json.loads(self.path.read_text())
            self._resources = {n: dict(c) for n, c in raw.get(section, {}).items()}

    def names(self) -> list[str]:
        """The resources that have overrides (what ListConfigResources lists)."""
        return sorted(self._resources)

    def get(self, name: str) -> dict[str, str]:
        return dict(self._resources.get(name, {}))

    def set(self, name: str, configs: dict[str, str]) -> None:
        """Replaces the resource's overrides (none left: the resource is forgotten)."""
        if configs:
            self._resources[name] = dict(configs)
        else:
            self._resources.pop(name, None)
        self._save()

    def _save(self) -> None:
        data = {"version": 1, self.section: dict(sorted(self._resources.items()))}
        atomic_write(self.path, json.dumps(data, indent=1).encode())

    def replace_all(self, resources: dict[str, dict[str, str]]) -> None:
        """Every resource's overrides at once, as a KRaft node's metadata log holds them (the
        log is their record there: nothing is saved)."""
        self._resources = {n: dict(c) for n, c in resources.items() if c}
