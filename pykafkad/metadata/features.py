"""Kafka 4.4.0's release versions (metadata.version levels) and the feature levels a cluster is
formatted with at each (MetadataVersion and Feature.defaultLevel, read from Kafka 4.4.0)."""

from __future__ import annotations

METADATA_VERSION = "metadata.version"
KRAFT_VERSION = "kraft.version"

#: (release version, metadata.version level), oldest first; the production ones
RELEASES: tuple[tuple[str, int], ...] = (
    ("3.3-IV3", 7), ("3.4-IV0", 8), ("3.5-IV0", 9), ("3.5-IV1", 10), ("3.5-IV2", 11),
    ("3.6-IV0", 12), ("3.6-IV1", 13), ("3.6-IV2", 14), ("3.7-IV0", 15), ("3.7-IV1", 16),
    ("3.7-IV2", 17), ("3.7-IV3", 18), ("3.7-IV4", 19), ("3.8-IV0", 20), ("3.9-IV0", 21),
    ("4.0-IV0", 22), ("4.0-IV1", 23), ("4.0-IV2", 24), ("4.0-IV3", 25), ("4.1-IV0", 26),
    ("4.1-IV1", 27), ("4.2-IV0", 28), ("4.2-IV1", 29), ("4.3-IV0", 30), ("4.4-IV0", 31),
    ("4.4-IV1", 32), ("4.4-IV2", 33),
)
#: releases Kafka 4.4.0 knows but formats only with unstable feature versions enabled
UNSTABLE_RELEASES: tuple[tuple[str, int], ...] = (("4.5-IV0", 34),)
LATEST_PRODUCTION_LEVEL = 33
#: the oldest release that can start a KRaft cluster (3.3-IV3)
MINIMUM_LEVEL = 7
#: IBP_3_5_IV2: the first release with SCRAM credentials in the metadata log
SCRAM_MINIMUM_LEVEL = 11

#: per production feature (other than metadata.version): the default level a cluster is
#: formatted with from a given metadata.version level on, as ``((from level, default), ...)``
_DEFAULTS: dict[str, tuple[tuple[int, int], ...]] = {
    KRAFT_VERSION: ((7, 0), (21, 1)),
    "transaction.version": ((7, 0), (24, 2)),
    "group.version": ((7, 0), (22, 1)),
    "eligible.leader.replicas.version": ((7, 0), (26, 1)),
    "share.version": ((7, 0), (28, 1), (31, 2)),
    "streams.version": ((7, 0), (29, 1)),
}
#: per production feature: its highest production level
LATEST_PRODUCTION: dict[str, int] = {
    KRAFT_VERSION: 1, "transaction.version": 2, "group.version": 1,
    "eligible.leader.replicas.version": 1, "share.version": 2, "streams.version": 1,
}
PRODUCTION_FEATURES = tuple(sorted(_DEFAULTS))
#: the production features in Kafka's Feature enum order (version-mapping prints them so)
FEATURE_ORDER = (KRAFT_VERSION, "transaction.version", "group.version",
                 "eligible.leader.replicas.version", "share.version", "streams.version")


def release_name(level: int) -> str:
    for name, lvl in RELEASES + UNSTABLE_RELEASES:
        if lvl == level:
            return name
    raise ValueError(f"No MetadataVersion with feature level {level}. Valid feature levels are "
                     f"from {MINIMUM_LEVEL} to {UNSTABLE_RELEASES[-1][1]}.")


def parse_release_version(text: str, *, unstable: bool = False) -> int:
    """The metadata.version level of ``--release-version`` (``4.0`` means its newest, 4.0-IV3);
    ``unstable``: releases not yet production ready are known too."""
    known = RELEASES + UNSTABLE_RELEASES if unstable else RELEASES
    for name, level in known:
        if text == name:
            return level
    matches = [level for name, level in known if name.split("-")[0] == text]
    if matches:
        return max(matches)
    raise ValueError(f"Unknown metadata.version '{text}'. Supported metadata.version are: "
                     + ", ".join(name for name, _ in known))


def default_level(feature: str, metadata_version: int) -> int:
    level = 0
    for since, value in _DEFAULTS[feature]:
        if metadata_version >= since:
            level = value
    return level
