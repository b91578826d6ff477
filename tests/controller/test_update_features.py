"""UpdateFeatures on the QuorumController: Kafka 4.4's refusals (answers taken from a Kafka
4.4.0 broker with validate_only requests), the first failure in Java HashMap order, the
lossy-downgrade rule of metadata.version, v0's allow_downgrade, results per version, and the
ELR safety config records written before turning ELR on."""

from __future__ import annotations

import pytest

from pykafkad.controller.update_features import FAILED_PREFIX, java_hash_order
from tests.controller.support import MetadataLog
from wire.errors import ErrorCode
from wire.messages.update_features_request import FeatureUpdateKey, UpdateFeaturesRequest
from wire.metadata import ConfigRecord, FeatureLevelRecord

ELR = "eligible.leader.replicas.version"


def request(*updates, validate_only=False) -> UpdateFeaturesRequest:
    return UpdateFeaturesRequest(timeout_ms=60000, validate_only=validate_only, feature_updates=[
        FeatureUpdateKey(feature=f, max_version_level=level, allow_downgrade=t == 2,
                         upgrade_type=t) for f, level, t in updates])


def refusal(log: MetadataLog, *updates, version: int = 1) -> str | None:
    response, records = log.handle(request(*updates, validate_only=True), version=version)
    assert records == []
    if response.error_code == ErrorCode.NONE:
        return None
    assert response.error_code == ErrorCode.INVALID_UPDATE_VERSION and response.results == []
    assert response.error_message.startswith(FAILED_PREFIX)
    return response.error_message[len(FAILED_PREFIX):]


def test_java_hash_map_order():
    assert java_hash_order(["share.version", "streams.version", "group.version", "zz", "aa"]) \
        == ["group.version", "zz", "aa", "share.version", "streams.version"]


@pytest.mark.parametrize("updates, expected", [
    ([("foo.bar", 1, 1)], "Invalid update version 1 for feature foo.bar. Local controller 0 "
                          "does not support this feature."),
    ([("foo.bar", 0, 2)], "Invalid update version 0 for feature foo.bar. Feature foo.bar not found."),
    ([("group.version", 0, 2), ("transaction.version", -1, 2)],
     "Invalid update version -1 for feature transaction.version. A feature version cannot be "
     "less than 0."),
    ([("metadata.version", 1, 0)], "Invalid update version 1 for feature metadata.version. The "
                                   "controller does not support the given upgrade type."),
    ([("metadata.version", 99, 1)], "Invalid update version 99 for feature metadata.version. "
                                    "Local controller 0 only supports versions 7-33"),
    ([("metadata.version", 30, 1)],
     "Invalid update version 30 for feature metadata.version. Can't downgrade the version of "
     "this feature without setting the upgrade type to either safe or unsafe downgrade."),
    ([("metadata.version", 32, 2)], "Unsupported metadata.version downgrade from 33 to 32. "
     "Refusing to perform the requested downgrade because it might delete metadata information."),
    ([("metadata.version", 31, 3)], "Unsupported metadata.version downgrade from 33 to 31. "
                                    "Unsafe metadata downgrade is not supported in this version."),
    ([("share.version", 1, 2), ("streams.version", 5, 1), ("group.version", 7, 1), ("zz", 1, 1)],
     "Invalid update version 7 for feature group.version. Local controller 0 only supports "
     "versions 0-1"),
    ([(ELR, 0, 3)], None),
    ([("metadata.version", 33, 2)], None),
    ([("kraft.version", 1, 1)], None),
])
def test_refusals_are_kafkas(updates, expected):
    assert refusal(MetadataLog(), *updates) == expected


def test_lossless_metadata_version_downgrades():
    log = MetadataLog()
    log.apply_records([FeatureLevelRecord(name="metadata.version", feature_level=29)])
    assert refusal(log, ("metadata.version", 24, 2)) is None            # 25-29 changed nothing
    assert refusal(log, ("metadata.version", 22, 2)).startswith(
        "Unsupported metadata.version downgrade from 29 to 22.")         # 23 did


def test_results_per_version_and_v0_allow_downgrade():
    log = MetadataLog()
    response, _ = log.handle(request(("metadata.version", 33, 1), ("metadata.version", 33, 1),
                                     validate_only=True), version=1)
    assert [(r.feature, r.error_code, r.error_message) for r in response.results] == \
        [("metadata.version", 0, "NONE")] * 2
    response, _ = log.handle(request(("metadata.version", 33, 1), validate_only=True), version=2)
    assert response.results == []
    response, records = log.handle(request((ELR, 0, 2)), version=0)     # allow_downgrade
    assert response.error_code == ErrorCode.NONE
    assert records == [FeatureLevelRecord(name=ELR, feature_level=0)]


def test_turning_elr_on_writes_the_safety_configs_first():
    log = MetadataLog()
    log.handle(request((ELR, 0, 2)))
    log.apply_records([ConfigRecord(resource_type=4, resource_name="", name="min.insync.replicas",
                                    value=None),
                       ConfigRecord(resource_type=4, resource_name="2",
                                    name="min.insync.replicas", value="2")])
    response, records = log.handle(request((ELR, 1, 1)), version=2)
    assert response.error_code == ErrorCode.NONE
    assert records == [
        ConfigRecord(resource_type=4, resource_name="", name="min.insync.replicas", value="1"),
        ConfigRecord(resource_type=4, resource_name="2", name="min.insync.replicas", value=None),
        FeatureLevelRecord(name=ELR, feature_level=1)]


def test_every_voter_must_have_registered():
    log = MetadataLog(quorum_node_ids=[0, 1])
    assert refusal(log, (ELR, 0, 2)) == (
        "Invalid update version 0 for feature eligible.leader.replicas.version. controller 1 has "
        "not registered, and may not support this feature")
