"""Kafka's ClusterControlManager: broker registrations, built only by replaying
RegisterBrokerRecord / UnregisterBrokerRecord / Fence / Unfence / BrokerRegistrationChange.

``register_broker`` checks a BrokerRegistrationRequest as Kafka's controller does and returns
the RegisterBrokerRecord; the broker epoch is the offset the registration is written at.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from pykafkad.controller.heartbeat import BrokerHeartbeatManager
from pykafkad.controller.placement import UsableBroker
from pykafkad.controller.result import ApiError
from pykafkad.metadata import directory_id as directories
from wire.errors import ErrorCode
from wire.metadata import (
    BrokerRegistrationChangeRecord,
    FenceBrokerRecord,
    RegisterBrokerRecord,
    RegisterControllerRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
    UnregisterControllerRecord,
)
from wire.metadata.register_broker_record import BrokerEndpoint, BrokerFeature
from wire.metadata.register_controller_record import ControllerEndpoint, ControllerFeature

METADATA_VERSION = "metadata.version"
IBP_3_7_IV0 = 15   # the first metadata.version with controller registrations (KIP-919)
DEFAULT_SESSION_TIMEOUT_MS = 9000   # broker.session.timeout.ms

# BrokerRegistrationChangeRecord's fenced / inControlledShutdown values
FENCE, UNFENCE, NO_CHANGE = 1, -1, 0
IN_CONTROLLED_SHUTDOWN = 1


@dataclass(frozen=True)
class BrokerRegistration:
    id: int
    epoch: int
    incarnation_id: bytes
    listeners: tuple = ()
    features: dict = field(default_factory=dict)     # name -> (min, max)
    rack: str | None = None
    fenced: bool = True
    in_controlled_shutdown: bool = False
    directories: tuple[bytes, ...] = ()
    cordoned_dirs: tuple[bytes, ...] | None = None     # None until a heartbeat reports them

    @property
    def all_dirs_cordoned(self) -> bool:
        """KIP-1066: a broker whose every log dir is cordoned takes no new replicas."""
        return bool(self.directories) and set(self.directories) <= set(self.cordoned_dirs or ())

    def cordoned_dirs_changed(self, reported: list[bytes]) -> bool:
        """Kafka's cordonedDirChanged: never recorded yet counts as a change."""
        return self.cordoned_dirs is None or set(self.cordoned_dirs) != set(reported)

    def has_online_dir(self, directory: bytes) -> bool:
        return directories.is_online(directory, list(self.directories))


class ClusterControlManager:
    def __init__(self, cluster_id: str, *,
                 session_timeout_ms: int = DEFAULT_SESSION_TIMEOUT_MS) -> None:
        self.cluster_id = cluster_id
        self.registrations: dict[int, BrokerRegistration] = {}
        self.register_offsets: dict[int, int] = {}
        self.heartbeats = BrokerHeartbeatManager(session_timeout_ms)
        self.now_ms = 0    # the time of the last handled operation, for replayed sessions
        #: KIP-919: controller id -> its RegisterControllerRecord (endpoints, features)
        self.controllers: dict[int, RegisterControllerRecord] = {}
        #: a combined node: (its node id, the incarnation of the broker in this very process)
        self.local_broker: tuple[int, bytes] | None = None

    def activate(self, now_ms: int) -> None:
        self.now_ms = now_ms
        self.heartbeats = BrokerHeartbeatManager(self.heartbeats.session_timeout_ms)
        for reg in self.registrations.values():
            self.heartbeats.register(reg.id, reg.fenced, now_ms)

    # --- queries ---------------------------------------------------------------------------
    def registration(self, broker_id: int) -> BrokerRegistration | None:
        return self.registrations.get(broker_id)

    def is_unfenced(self, broker_id: int) -> bool:
        r = self.registrations.get(broker_id)
        return r is not None and not r.fenced

    def in_controlled_shutdown(self, broker_id: int) -> bool:
        r = self.registrations.get(broker_id)
        return r is not None and r.in_controlled_shutdown

    def is_active(self, broker_id: int) -> bool:
        """Unfenced and not shutting down: may lead and be in a new ISR."""
        r = self.registrations.get(broker_id)
        return r is not None and not r.fenced and not r.in_controlled_shutdown

    def has_online_dir(self, broker_id: int, directory: bytes) -> bool:
        r = self.registrations.get(broker_id)
        return r is not None and r.has_online_dir(directory)

    def default_dir(self, broker_id: int) -> bytes:
        r = self.registrations.get(broker_id)
        if r is None:
            return directories.UNASSIGNED
        if not r.directories:
            return directories.MIGRATING
        if len(r.directories) == 1:
            return r.directories[0]
        return directories.UNASSIGNED

    def usable_brokers(self) -> list[UsableBroker]:
        """Brokers the placer may use: every session not in controlled shutdown, except
        brokers with all their log dirs cordoned."""
        out = []
        for broker_id in sorted(self.heartbeats.brokers):
            hb = self.heartbeats.brokers[broker_id]
            reg = self.registrations.get(broker_id)
            if hb.shutting_down or reg is None or reg.all_dirs_cordoned:
                continue
            out.append(UsableBroker(broker_id, reg.rack, hb.fenced))   # the session's view
        return out

    def check_broker_epoch(self, broker_id: int, broker_epoch: int) -> None:
        r = self.registrations.get(broker_id)
        if r is None:
            raise ApiError(ErrorCode.STALE_BROKER_EPOCH,
                           f"No broker registration found for broker id {broker_id}")
        if r.epoch != broker_epoch:
            raise ApiError(ErrorCode.STALE_BROKER_EPOCH,
                           f"Expected broker epoch {r.epoch}, but got broker epoch {broker_epoch}")

    # --- operations ------------------------------------------------------------------------
    def register_broker(self, request, new_broker_epoch: int, finalized: dict[str, int],
                        now_ms: int, *, version: int = 4, directory_assignment: bool = True,
                        shutdown_handler: Callable[[int, bool, list], None] | None = None,
                        ) -> tuple[list, int]:
        """(records, broker epoch) for a BrokerRegistrationRequest; raises ApiError.

        A new incarnation first gets the records that take the previous one out of ISRs
        (``shutdown_handler(broker_id, clean, records)``); from v3 on, a broker whose
        previous_broker_epoch is its registered epoch had shut down cleanly.
        """
        self.now_ms = now_ms
        if request.cluster_id != self.cluster_id:
            raise ApiError(ErrorCode.INCONSISTENT_CLUSTER_ID,
                           f"Expected cluster ID {self.cluster_id}, but got cluster ID "
                           f"{request.cluster_id}")
        broker_id = request.broker_id
        existing = self.registrations.get(broker_id)
        prev_incarnation = existing.incarnation_id if existing is not None else None
        if existing is not None and self.heartbeats.has_valid_session(broker_id, now_ms) \
                and request.incarnation_id != prev_incarnation \
                and self.local_broker != (broker_id, request.incarnation_id):
            # (the broker living in this controller's own process replaces an incarnation that
            # died with the process before it, e.g. a one-node cluster after kill -9: it can
            # only be dead, so its session is not waited out)
            raise ApiError(ErrorCode.DUPLICATE_BROKER_REGISTRATION,
                           "Another broker is registered with that broker id. If the broker "
                           "was recently restarted this should self-resolve once the heartbeat "
                           "manager expires the broker's session.")
        if request.is_migrating_zk_broker:
            raise ApiError(ErrorCode.BROKER_ID_NOT_REGISTERED,
                           "Controller does not support registering ZK brokers.")
        log_dirs = list(request.log_dirs or [])
        if directory_assignment:
            if not log_dirs:
                raise ApiError(ErrorCode.INVALID_REGISTRATION, "No directories specified in request")
            if any(directories.reserved(d) for d in log_dirs):
                raise ApiError(ErrorCode.INVALID_REGISTRATION, "Reserved directory ID in request")
            if len(set(log_dirs)) != len(log_dirs):
                raise ApiError(ErrorCode.INVALID_REGISTRATION, "Duplicate directory ID in request")
            for d in log_dirs:
                for other in self.registrations.values():
                    if other.id != broker_id and d in other.directories:
                        raise ApiError(ErrorCode.INVALID_REGISTRATION,
                                       f"Broker {other.id} is already registered with "
                                       f"directory {_uuid_str(d)}")
        record = RegisterBrokerRecord(
            broker_id=broker_id, is_migrating_zk_broker=request.is_migrating_zk_broker,
            incarnation_id=request.incarnation_id, rack=request.rack,
            end_points=[BrokerEndpoint(name=lst.name, host=lst.host, port=lst.port,
                                       security_protocol=lst.security_protocol)
                        for lst in request.listeners],
            features=[],
        )
        unverified = dict(finalized)
        for feature in request.features:
            record.features.append(_check_feature(finalized, feature.name,
                                                  feature.min_supported_version,
                                                  feature.max_supported_version))
            unverified.pop(feature.name, None)
        if not any(f.name == METADATA_VERSION for f in request.features):
            raise ApiError(ErrorCode.INVALID_REGISTRATION,
                           "Request features do not contain 'metadata.version'")
        for name, level in unverified.items():
            if level != 0:
                _check_feature(finalized, name, 0, 0)
        record.log_dirs = log_dirs if directory_assignment else []
        records: list = []
        if request.incarnation_id != prev_incarnation:
            clean = version >= 3 and existing is not None \
                and existing.epoch == request.previous_broker_epoch
            if shutdown_handler is not None:
                shutdown_handler(broker_id, clean, records)
            record.broker_epoch = new_broker_epoch
        else:
            record.fenced = existing.fenced
            record.in_controlled_shutdown = existing.in_controlled_shutdown
            record.broker_epoch = existing.epoch
        records.append(record)
        if request.incarnation_id != prev_incarnation:
            self.heartbeats.remove(broker_id)
        self.heartbeats.register(broker_id, record.fenced, now_ms)
        return records, record.broker_epoch

    # --- replay ----------------------------------------------------------------------------
    def replay_register(self, record: RegisterBrokerRecord, offset: int) -> None:
        self.register_offsets[record.broker_id] = offset
        prev = self.registrations.get(record.broker_id)
        self.registrations[record.broker_id] = BrokerRegistration(
            id=record.broker_id, epoch=record.broker_epoch,
            incarnation_id=record.incarnation_id,
            listeners=tuple((e.name, e.host, e.port, e.security_protocol)
                            for e in record.end_points),
            features={f.name: (f.min_supported_version, f.max_supported_version)
                      for f in record.features},
            rack=record.rack, fenced=record.fenced,
            in_controlled_shutdown=record.in_controlled_shutdown,
            directories=tuple(record.log_dirs or ()),
            cordoned_dirs=None if record.cordoned_log_dirs is None
            else tuple(record.cordoned_log_dirs),
        )
        if prev is not None:
            self.heartbeats.remove(record.broker_id)
        self.heartbeats.register(record.broker_id, record.fenced, self.now_ms)

    def replay_unregister(self, record: UnregisterBrokerRecord) -> None:
        reg = self._registration_for(record, record.broker_id, record.broker_epoch)
        self.register_offsets.pop(reg.id, None)
        self.heartbeats.remove(reg.id)
        del self.registrations[reg.id]

    def register_controller(self, request, metadata_version: int) -> list:
        """ControllerRegistration (KIP-919): one RegisterControllerRecord with the endpoints
        and supported features the controller sent."""
        if metadata_version < IBP_3_7_IV0:
            raise ApiError(ErrorCode.UNSUPPORTED_VERSION, "The current MetadataVersion is too "
                           "old to support controller registrations.")
        return [RegisterControllerRecord(
            controller_id=request.controller_id, incarnation_id=request.incarnation_id,
            zk_migration_ready=False,
            end_points=[ControllerEndpoint(name=ep.name, host=ep.host, port=ep.port,
                                           security_protocol=ep.security_protocol)
                        for ep in request.listeners],
            features=[ControllerFeature(name=f.name, min_supported_version=f.min_supported_version,
                                        max_supported_version=f.max_supported_version)
                      for f in request.features])]

    def replay_register_controller(self, record: RegisterControllerRecord) -> None:
        self.controllers[record.controller_id] = record

    def replay_unregister_controller(self, record: UnregisterControllerRecord) -> None:
        self.controllers.pop(record.controller_id, None)

    def replay_fence(self, record: FenceBrokerRecord) -> None:
        self._change(record, record.id, record.epoch, fenced=True)

    def replay_unfence(self, record: UnfenceBrokerRecord) -> None:
        self._change(record, record.id, record.epoch, fenced=False)

    def replay_change(self, record: BrokerRegistrationChangeRecord) -> None:
        fenced = {FENCE: True, UNFENCE: False, NO_CHANGE: None}[record.fenced]
        shutdown = {IN_CONTROLLED_SHUTDOWN: True, NO_CHANGE: None}[record.in_controlled_shutdown]
        dirs = tuple(record.log_dirs) if record.log_dirs else None
        cordoned = None if record.cordoned_log_dirs is None else tuple(record.cordoned_log_dirs)
        self._change(record, record.broker_id, record.broker_epoch, fenced=fenced,
                     in_controlled_shutdown=shutdown, directories=dirs, cordoned=cordoned)

    def _registration_for(self, record, broker_id: int, epoch: int) -> BrokerRegistration:
        reg = self.registrations.get(broker_id)
        if reg is None:
            raise RuntimeError(f"Unable to replay {record!r}: no broker registration found "
                               "for that id")
        if reg.epoch != epoch:
            raise RuntimeError(f"Unable to replay {record!r}: no broker registration with "
                               "that epoch found")
        return reg

    def _change(self, record, broker_id: int, epoch: int, *, fenced: bool | None,
                in_controlled_shutdown: bool | None = None,
                directories: tuple | None = None, cordoned: tuple | None = None) -> None:
        reg = self._registration_for(record, broker_id, epoch)
        changes: dict = {}
        if fenced is not None:
            changes["fenced"] = fenced
        if in_controlled_shutdown is not None:
            changes["in_controlled_shutdown"] = in_controlled_shutdown
        if directories is not None:
            changes["directories"] = directories
        if cordoned is not None:
            changes["cordoned_dirs"] = cordoned
        new = replace(reg, **changes)
        self.registrations[broker_id] = new
        if broker_id in self.heartbeats.brokers:
            self.heartbeats.register(broker_id, new.fenced, self.now_ms)


def _check_feature(finalized: dict[str, int], name: str, lo: int, hi: int) -> BrokerFeature:
    level = finalized.get(name, 0)
    if not lo <= level <= hi:
        raise ApiError(ErrorCode.UNSUPPORTED_VERSION,
                       f"Unable to register because the broker does not support finalized "
                       f"version {level} of {name}. The broker wants a version between {lo} "
                       f"and {hi}, inclusive.")
    return BrokerFeature(name=name, min_supported_version=lo, max_supported_version=hi)


def _uuid_str(u: bytes) -> str:
    return base64.urlsafe_b64encode(u).decode().rstrip("=")
