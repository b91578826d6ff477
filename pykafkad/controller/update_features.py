"""UpdateFeatures on the controller (Kafka's QuorumController.updateFeatures and
FeatureControlManager.updateFeature): every update is checked against this controller's,
every registered broker's and every registered controller's supported range, the upgrade
type, metadata.version's lossy-downgrade rule and the features' dependencies; the first
failure (in Java HashMap order, as Kafka walks its map) refuses the whole request. A dry run
(validate_only) writes nothing; otherwise the FeatureLevelRecords go in one atomic batch,
after the config records that make turning ELR on safe.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pykafkad.controller.result import ControllerResult
from pykafkad.metadata import features as versions
from wire.errors import ErrorCode
from wire.messages.update_features_response import UpdatableFeatureResult, UpdateFeaturesResponse
from wire.metadata import ConfigRecord, FeatureLevelRecord

METADATA_VERSION = versions.METADATA_VERSION
KRAFT_VERSION = versions.KRAFT_VERSION
ELR_VERSION = "eligible.leader.replicas.version"
UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3
FAILED_PREFIX = "The update failed for all features since the following feature had an error: "
BROKER_RESOURCE = 4

#: MetadataVersion.didMetadataChange of Kafka 4.4.0, per level (read from its jar)
METADATA_CHANGED = frozenset({7, 8, 11, 13, 14, 15, 17, 23, 30, 32, 33})
#: Feature dependencies of Kafka 4.4.0: (feature, level) -> {feature: minimum level}
DEPENDENCIES: dict[tuple[str, int], dict[str, int]] = {
    (ELR_VERSION, 1): {METADATA_VERSION: 23},
}
#: metadata.version 4 (3.3-IV0), which every feature level above 0 needs
IBP_3_3_IV0 = 4


class UpdateRefused(Exception):
    pass


def java_hash_order(keys: Iterable[str]) -> list[str]:
    """The iteration order of a java.util.HashMap filled with ``keys`` (String.hashCode,
    HashMap.hash's spread, power-of-two tables doubling past a 0.75 load)."""
    unique = list(dict.fromkeys(keys))
    capacity = 16
    while len(unique) > capacity * 3 // 4:
        capacity *= 2

    def bucket(key: str) -> int:
        h = 0
        units = key.encode("utf-16-be")
        for i in range(0, len(units), 2):  # Java hashes UTF-16 code units
            h = (31 * h + int.from_bytes(units[i:i + 2], "big")) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(unique, key=bucket)  # stable: insertion order within a bucket


def _range_reason(level: int, what: str, supported: tuple[int, int] | None) -> str | None:
    lo, hi = supported if supported is not None else (0, 0)
    if lo <= level <= hi:
        return None
    if hi == 0:
        return f"{what} does not support this feature."
    return f"{what} only supports versions {lo}-{hi}"


def _metadata_changed(high: int, low: int) -> bool:
    return any(v in METADATA_CHANGED for v in range(low + 1, high + 1))


class FeatureUpdater:
    """One UpdateFeatures request against the controller's replayed state."""

    def __init__(self, *, node_id: int, finalized: Mapping[str, int], kraft_version: int,
                 local: Mapping[str, tuple[int, int]],
                 brokers: Mapping[int, Mapping[str, tuple[int, int]]],
                 controllers: Mapping[int, Mapping[str, tuple[int, int]]],
                 quorum_node_ids: Iterable[int]):
        self.node_id = node_id
        self.finalized = finalized
        self.kraft_version = kraft_version
        self.local = local
        self.brokers = brokers
        self.controllers = controllers
        self.quorum_node_ids = sorted(quorum_node_ids)

    def current(self, name: str) -> int:
        if name == KRAFT_VERSION:
            return self.kraft_version
        return self.finalized.get(name, 0)

    def reason_not_supported(self, name: str, level: int) -> str | None:
        reason = _range_reason(level, f"Local controller {self.node_id}", self.local.get(name))
        if reason:
            return reason
        for broker_id, supported in self.brokers.items():
            reason = _range_reason(level, f"Broker {broker_id}", supported.get(name))
            if reason:
                return reason
        if self.finalized.get(METADATA_VERSION, 0) >= 15:  # controller registrations exist
            for cid, supported in self.controllers.items():
                if cid == self.node_id:
                    continue
                reason = _range_reason(level, f"Controller {cid}", supported.get(name))
                if reason:
                    return reason
            for cid in self.quorum_node_ids:
                if cid != self.node_id and cid not in self.controllers:
                    return f"controller {cid} has not registered, and may not support this feature"
        return None

    def check(self, name: str, level: int, upgrade_type: int, proposed: Mapping[str, int],
              validate_only: bool, records: list) -> None:
        def invalid(message: str) -> UpdateRefused:
            return UpdateRefused(f"Invalid update version {level} for feature {name}. {message}")

        if upgrade_type not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
            raise invalid("The controller does not support the given upgrade type.")
        current = self.current(name)
        if level < 0:
            raise invalid("A feature version cannot be less than 0.")
        reason = self.reason_not_supported(name, level)
        if reason:
            raise invalid(reason)
        if level < current and upgrade_type == UPGRADE:
            raise invalid("Can't downgrade the version of this feature without setting the "
                          "upgrade type to either safe or unsafe downgrade.")
        if level > current and upgrade_type != UPGRADE:
            raise invalid("Can't downgrade to a newer version.")
        if name == METADATA_VERSION:
            if level < current and _metadata_changed(current, level):
                why = ("Unsafe metadata downgrade is not supported in this version."
                       if upgrade_type == UNSAFE_DOWNGRADE else
                       "Refusing to perform the requested downgrade because it might delete "
                       "metadata information.")
                raise UpdateRefused(f"Unsupported metadata.version downgrade from {current} to "
                                    f"{level}. {why}")
            records.append(FeatureLevelRecord(name=name, feature_level=level))
            return
        if name == KRAFT_VERSION:
            if upgrade_type != UPGRADE and level != current:
                raise invalid("Can't downgrade the version of this feature.")
            if level != current and not validate_only:
                # the quorum is static (controller.quorum.voters): pykafkad's raft layer does
                # not move to kraft.version 1, so it refuses instead of recording a level it
                # would not honour
                raise invalid("pykafkad's static quorum cannot change its kraft.version.")
            return
        if name not in versions.LATEST_PRODUCTION:
            raise invalid(f"Feature {name} not found.")
        if level >= 1 and proposed.get(METADATA_VERSION, 0) < IBP_3_3_IV0:
            raise invalid(f"{name} could not be set to {level} because it depends on "
                          "metadata.version=4 (3.3-IV0)")
        for dep, minimum in DEPENDENCIES.get((name, level), {}).items():
            if proposed.get(dep, 0) < minimum:
                raise invalid(f"{name} could not be set to {level} because it depends on {dep} "
                              f"level {minimum}")
        records.append(FeatureLevelRecord(name=name, feature_level=level))


def update_features(updater: FeatureUpdater, request, version: int,
                    elr_safety_records) -> ControllerResult:
    """The ControllerResult of one UpdateFeatures request (``elr_safety_records()``: the
    config records that must precede turning ELR on)."""
    levels: dict[str, int] = {}
    types: dict[str, int] = {}
    for u in request.feature_updates:
        levels[u.feature] = u.max_version_level
        if version == 0:
            types[u.feature] = SAFE_DOWNGRADE if u.allow_downgrade else UPGRADE
        else:
            types[u.feature] = u.upgrade_type
    proposed = {**updater.finalized, **levels}
    validate_only = version >= 1 and request.validate_only
    records: list = []
    try:
        for name in java_hash_order(levels):
            updater.check(name, levels[name], types[name], proposed, validate_only, records)
    except UpdateRefused as e:
        return ControllerResult([], UpdateFeaturesResponse(
            error_code=ErrorCode.INVALID_UPDATE_VERSION, error_message=FAILED_PREFIX + str(e),
            results=[]))
    results = [] if version >= 2 else [
        UpdatableFeatureResult(feature=u.feature, error_code=ErrorCode.NONE, error_message="NONE")
        for u in request.feature_updates]
    response = UpdateFeaturesResponse(error_code=ErrorCode.NONE, error_message=None,
                                      results=results)
    if validate_only:
        return ControllerResult([], response)
    if levels.get(ELR_VERSION, 0) >= 1:
        records = elr_safety_records() + records
    return ControllerResult(records, response, atomic=True)


def elr_safety_records(configs: Mapping[tuple[int, str], Mapping[str, str]],
                       static_min_isr: str) -> list:
    """Kafka's maybeGenerateElrSafetyRecords: a cluster-level min.insync.replicas (the static
    value) when there is none, and no broker-level one left."""
    records: list = []
    if "min.insync.replicas" not in configs.get((BROKER_RESOURCE, ""), {}):
        records.append(ConfigRecord(resource_type=BROKER_RESOURCE, resource_name="",
                                    name="min.insync.replicas", value=static_min_isr))
    for (rtype, rname), values in sorted(configs.items()):
        if rtype == BROKER_RESOURCE and rname and "min.insync.replicas" in values:
            records.append(ConfigRecord(resource_type=BROKER_RESOURCE, resource_name=rname,
                                        name="min.insync.replicas", value=None))
    return records
