"""The metadata a new cluster starts from (Kafka's BootstrapMetadata) and where format puts it.

Kafka 4.4's ``kafka-storage format`` writes the bootstrap records into the controller's metadata
log directory as the snapshot ``__cluster_metadata-0/00000000000000000000-0000000000.checkpoint``
(Snapshots.BOOTSTRAP_SNAPSHOT_ID), with the KRaftVersionRecord (and, for --standalone or
--initial-controllers, the VotersRecord) of a dynamic quorum in its header batch. Older releases
wrote ``bootstrap.checkpoint`` (plain record batches) in the metadata log dir; Kafka 4.4 still
reads that file when present, and so does ``read_bootstrap``. A broker-only node gets neither.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from pykafkad.metadata import features
from pykafkad.metadata.scram import java_string as scram_java_string
from pykafkad.metadata.serde import decode_record
from pykafkad.metadata.snapshot import (
    BOOTSTRAP_SNAPSHOT_ID,
    read_snapshot,
    snapshot_file_name,
    write_snapshot,
)
from wire.messages.voters_record import VotersRecord
from wire.metadata.feature_level_record import FeatureLevelRecord
from wire.metadata.user_scram_credential_record import UserScramCredentialRecord
from wire.records.batch import decode_records, iter_batch_headers

CLUSTER_METADATA_DIR = "__cluster_metadata-0"
LEGACY_BOOTSTRAP_FILE = "bootstrap.checkpoint"


class BootstrapError(ValueError):
    """Bootstrap records that cannot start a cluster."""


@dataclass(frozen=True)
class BootstrapMetadata:
    """The records a cluster is formatted with: a FeatureLevelRecord for metadata.version, then
    one for every other feature above level 0 (by name), then any SCRAM credentials."""

    records: tuple[object, ...]
    metadata_version_level: int
    source: str

    @classmethod
    def from_versions(cls, metadata_version: int, levels: dict[str, int],
                      source: str) -> BootstrapMetadata:
        records = [FeatureLevelRecord(features.METADATA_VERSION, metadata_version)]
        for name in sorted(levels):
            if name in (features.METADATA_VERSION, features.KRAFT_VERSION) or levels[name] <= 0:
                continue
            records.append(FeatureLevelRecord(name, levels[name]))
        return cls(tuple(records), metadata_version, source)

    @classmethod
    def from_records(cls, records, source: str) -> BootstrapMetadata:
        level = None
        for r in records:
            if isinstance(r, FeatureLevelRecord) and r.name == features.METADATA_VERSION:
                level = r.feature_level
        if level is None:
            raise BootstrapError(f"No FeatureLevelRecord for {features.METADATA_VERSION} was "
                                 f"found in the bootstrap metadata from {source}")
        return cls(tuple(records), level, source)

    def feature_levels(self) -> dict[str, int]:
        return {r.name: r.feature_level for r in self.records
                if isinstance(r, FeatureLevelRecord)}

    def __str__(self) -> str:
        """As Kafka prints it (format prints this line)."""
        parts = ", ".join(f"ApiMessageAndVersion({_java_record(r)} at version 0)"
                          for r in self.records)
        return (f"BootstrapMetadata(records=[{parts}], "
                f"metadataVersionLevel={self.metadata_version_level}, source={self.source})")


def _java_record(r: object) -> str:
    if isinstance(r, FeatureLevelRecord):
        return f"FeatureLevelRecord(name='{r.name}', featureLevel={r.feature_level})"
    if isinstance(r, UserScramCredentialRecord):
        return scram_java_string(r)
    return repr(r)


def bootstrap_snapshot_path(metadata_log_dir: str | Path) -> Path:
    return Path(metadata_log_dir) / CLUSTER_METADATA_DIR / snapshot_file_name(
        *BOOTSTRAP_SNAPSHOT_ID)


def write_bootstrap_snapshot(
    metadata_log_dir: str | Path,
    bootstrap: BootstrapMetadata,
    *,
    kraft_version: int = 0,
    voters: VotersRecord | None = None,
) -> Path:
    """Writes the bootstrap snapshot (0-0) as Kafka 4.4's format does."""
    now = int(time.time() * 1000)
    return write_snapshot(
        Path(metadata_log_dir) / CLUSTER_METADATA_DIR, *BOOTSTRAP_SNAPSHOT_ID,
        [(r, 0) for r in bootstrap.records], last_contained_log_timestamp=now,
        kraft_version=kraft_version, voters=voters, now_ms=now)


def read_legacy_bootstrap_file(path: Path) -> list[object]:
    """The records of a pre-4.x ``bootstrap.checkpoint`` (batches of framed records)."""
    data = path.read_bytes()
    out = []
    for pos, header in iter_batch_headers(data, strict=True):
        if header.is_control:
            continue
        out += [decode_record(rec.value)[0] for rec in decode_records(data, pos, verify_crc=True)]
    return out


def read_bootstrap(metadata_log_dir: str | Path) -> BootstrapMetadata | None:
    """The bootstrap metadata format left in ``metadata_log_dir``: the legacy file if present
    (Kafka 4.4 reads it first), else the 0-0 snapshot; None when there is neither."""
    legacy = Path(metadata_log_dir) / LEGACY_BOOTSTRAP_FILE
    if legacy.exists():
        return BootstrapMetadata.from_records(read_legacy_bootstrap_file(legacy),
                                              f"the binary bootstrap metadata file: {legacy}")
    path = bootstrap_snapshot_path(metadata_log_dir)
    if not path.exists():
        return None
    snapshot = read_snapshot(path)
    return BootstrapMetadata.from_records(list(snapshot.records()), f"the snapshot {path}")
