"""A metadata log for driving the controller as the node will: every record an operation
returns is encoded, appended at the next offset, decoded back and replayed."""

from __future__ import annotations

import random
import uuid

from pykafkad.controller import QuorumController
from wire.messages.broker_heartbeat_request import BrokerHeartbeatRequest
from wire.messages.broker_registration_request import (
    BrokerRegistrationRequest,
    Feature,
    Listener,
)
from wire.primitives import Reader, Writer

CLUSTER_ID = "MkU3OEVBNTcwNTJENDM2Qg"


class MetadataLog:
    def __init__(self, controller: QuorumController | None = None, *, seed: int = 7,
                 cluster_id: str = CLUSTER_ID, **kwargs) -> None:
        self.cluster_id = cluster_id
        self.controller = controller or QuorumController(cluster_id, rnd=random.Random(seed),
                                                         **kwargs)
        self.records: list = []
        self.now_ms = 1_000
        self.incarnations: dict[int, bytes] = {}
        self.epochs: dict[int, int] = {}
        self.apply_records(self.controller.bootstrap_records())

    @property
    def end_offset(self) -> int:
        return len(self.records)

    def apply_records(self, records: list) -> None:
        for record in records:
            w = Writer()
            record.write(w, record.HIGHEST_VERSION)
            decoded = type(record).read(Reader(w.getvalue()), record.HIGHEST_VERSION)
            offset = len(self.records)
            self.records.append(decoded)
            self.controller.replay(decoded, offset)

    def handle(self, request, *, version: int | None = None):
        """Handle a request, append and replay its records; returns (response, records)."""
        result = self.controller.handle(request, self.now_ms, version=version)
        self.apply_records(result.records)
        return result.response, result.records

    def tick(self, ms: int):
        """Advance the clock and fence whatever broker sessions expired."""
        self.now_ms += ms
        fenced = []
        while True:
            result = self.controller.fence_stale_brokers(self.now_ms)
            if not result.records:
                return fenced
            fenced.append(result.records)
            self.apply_records(result.records)

    # --- brokers ---------------------------------------------------------------------------
    def register(self, broker_id: int, *, rack: str | None = None, incarnation: bytes | None = None,
                 cluster_id: str | None = None, mv_range=(7, 33), previous_epoch: int = -1,
                 version: int | None = None):
        incarnation = incarnation or self.incarnations.get(broker_id) or uuid.uuid4().bytes
        request = BrokerRegistrationRequest(
            broker_id=broker_id, cluster_id=cluster_id or self.cluster_id,
            incarnation_id=incarnation,
            listeners=[Listener(name="PLAINTEXT", host="localhost", port=9092 + broker_id,
                                security_protocol=0)],
            features=[Feature(name="metadata.version", min_supported_version=mv_range[0],
                              max_supported_version=mv_range[1]),
                      Feature(name="kraft.version", min_supported_version=0,
                              max_supported_version=1),
                      Feature(name="group.version", min_supported_version=0,
                              max_supported_version=1),
                      Feature(name="transaction.version", min_supported_version=0,
                              max_supported_version=2),
                      Feature(name="eligible.leader.replicas.version", min_supported_version=0,
                              max_supported_version=1),
                      Feature(name="share.version", min_supported_version=0,
                              max_supported_version=2),
                      Feature(name="streams.version", min_supported_version=0,
                              max_supported_version=1)],
            rack=rack, log_dirs=[uuid.UUID(int=(broker_id + 1) << 64 | 7).bytes],
            previous_broker_epoch=previous_epoch)
        response, records = self.handle(request, version=version)
        if response.error_code == 0:
            self.incarnations[broker_id] = incarnation
            self.epochs[broker_id] = response.broker_epoch
        return response, records

    def heartbeat(self, broker_id: int, *, caught_up: bool = True, want_fence: bool = False,
                  want_shut_down: bool = False, epoch: int | None = None):
        request = BrokerHeartbeatRequest(
            broker_id=broker_id, broker_epoch=self.epochs[broker_id] if epoch is None else epoch,
            current_metadata_offset=self.end_offset - 1 if caught_up else 0,
            want_fence=want_fence, want_shut_down=want_shut_down, offline_log_dirs=[])
        return self.handle(request)

    def start_brokers(self, *ids: int, racks: dict[int, str] | None = None) -> None:
        """Register and unfence brokers, as a starting cluster does."""
        for b in ids:
            response, _ = self.register(b, rack=(racks or {}).get(b))
            assert response.error_code == 0, response
        for b in ids:
            response, _ = self.heartbeat(b)
            assert response.is_fenced is False, response

    # --- views -----------------------------------------------------------------------------
    def partition(self, topic: str, pid: int):
        rc = self.controller.replication
        return rc.topics[rc.topics_by_name[topic]].parts[pid]

    def topic_id(self, topic: str) -> bytes:
        return self.controller.replication.topics_by_name[topic]
