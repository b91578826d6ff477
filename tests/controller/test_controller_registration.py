"""ControllerRegistration on the QuorumController (Kafka's ClusterControlManager
.registerController): refused before metadata.version 3.7-IV0, else one RegisterControllerRecord
that replays into the controller registrations; a newer incarnation replaces the old one."""

from __future__ import annotations

import uuid

from tests.controller.support import MetadataLog
from wire.errors import ErrorCode
from wire.messages.controller_registration_request import (
    ControllerRegistrationRequest,
    Feature,
    Listener,
)
from wire.metadata import FeatureLevelRecord, RegisterControllerRecord


def request(controller_id: int, incarnation: bytes) -> ControllerRegistrationRequest:
    return ControllerRegistrationRequest(
        controller_id=controller_id, incarnation_id=incarnation, zk_migration_ready=False,
        listeners=[Listener(name="CONTROLLER", host="localhost", port=9093, security_protocol=0)],
        features=[Feature(name="metadata.version", min_supported_version=7,
                          max_supported_version=33)])


def test_registration_writes_a_register_controller_record():
    log = MetadataLog()
    first, second = uuid.uuid4().bytes, uuid.uuid4().bytes
    response, records = log.handle(request(2, first))
    assert response.error_code == ErrorCode.NONE
    assert [type(r) for r in records] == [RegisterControllerRecord]
    assert records[0].end_points[0].port == 9093 and records[0].zk_migration_ready is False
    assert log.controller.cluster.controllers[2].incarnation_id == first
    log.handle(request(2, second))
    assert log.controller.cluster.controllers[2].incarnation_id == second


def test_registration_needs_metadata_version_3_7_iv0():
    log = MetadataLog()
    log.apply_records([FeatureLevelRecord(name="metadata.version", feature_level=14)])
    response, records = log.handle(request(2, uuid.uuid4().bytes))
    assert (response.error_code, response.error_message, records) == (
        ErrorCode.UNSUPPORTED_VERSION,
        "The current MetadataVersion is too old to support controller registrations.", [])
