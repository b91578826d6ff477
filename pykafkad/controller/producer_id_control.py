"""Kafka's ProducerIdControlManager: hands out producer ids in blocks of 1000.

The next free id lives only in the replayed ProducerIdsRecord; a block is granted to a broker
whose registration epoch matches.
"""

from __future__ import annotations

from dataclasses import dataclass

from pykafkad.controller.cluster_control import ClusterControlManager
from pykafkad.controller.result import ApiError
from wire.errors import ErrorCode
from wire.metadata import ProducerIdsRecord

PRODUCER_ID_BLOCK_SIZE = 1000
_MAX_LONG = 2**63 - 1


@dataclass(frozen=True)
class ProducerIdsBlock:
    assigned_broker_id: int
    first_producer_id: int
    size: int

    @property
    def next_block_first_id(self) -> int:
        return self.first_producer_id + self.size


class ProducerIdControlManager:
    def __init__(self, cluster: ClusterControlManager) -> None:
        self.cluster = cluster
        self.next_block = ProducerIdsBlock(-1, 0, 0)
        self.broker_epoch = 0

    def generate_next_producer_id(self, broker_id: int, broker_epoch: int,
                                  ) -> tuple[list, ProducerIdsBlock]:
        self.cluster.check_broker_epoch(broker_id, broker_epoch)
        first = self.next_block.first_producer_id
        if first > _MAX_LONG - PRODUCER_ID_BLOCK_SIZE:
            raise ApiError(ErrorCode.UNKNOWN_SERVER_ERROR,
                           "Exhausted all producerIds as the next block's end producerId has "
                           "exceeded the int64 type limit")
        block = ProducerIdsBlock(broker_id, first, PRODUCER_ID_BLOCK_SIZE)
        record = ProducerIdsRecord(broker_id=broker_id, broker_epoch=broker_epoch,
                                   next_producer_id=block.next_block_first_id)
        return [record], block

    def replay(self, record: ProducerIdsRecord) -> None:
        if self.next_block.size and record.next_producer_id <= self.next_block.first_producer_id:
            raise RuntimeError(f"Next Producer ID from replayed record ({record.next_producer_id})"
                               f" is not greater than current next Producer ID in block "
                               f"({self.next_block})")
        self.next_block = ProducerIdsBlock(record.broker_id, record.next_producer_id,
                                           PRODUCER_ID_BLOCK_SIZE)
        self.broker_epoch = record.broker_epoch
