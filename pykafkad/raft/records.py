"""The batches a KRaft leader writes: data batches of opaque values and control records.

Kafka's raft client builds a batch per append with null keys, the caller's serialized values,
CreateTime set to the append time and the leader's epoch as partitionLeaderEpoch; control records
(LeaderChange at the start of each epoch, the snapshot header and footer) carry the control bit,
the key ``version int16 = 0, type int16`` and the message serialized without a version prefix
(MessageUtil.toByteBuffer).
"""

from __future__ import annotations

from wire.messages.leader_change_message import LeaderChangeMessage, Voter
from wire.records.batch import build_batch
from wire.records.control import encode_control_key
from wire.records.record import Record

LEADER_CHANGE = 2
SNAPSHOT_HEADER = 3
SNAPSHOT_FOOTER = 4
KRAFT_VERSION = 5
KRAFT_VOTERS = 6
LEADER_CHANGE_VERSION = 0


def data_batch(values: list[bytes], epoch: int, timestamp: int) -> bytes:
    """One batch holding ``values`` (offsets are assigned by the log)."""
    return build_batch(
        [Record(None, v, None, timestamp) for v in values], partition_leader_epoch=epoch,
        base_timestamp=timestamp)


def leader_change_batch(
    leader_id: int, epoch: int, voters: list[int], granting: list[int], timestamp: int
) -> bytes:
    """The LeaderChange control batch a new leader writes as the first batch of its epoch."""
    msg = LeaderChangeMessage(
        version=LEADER_CHANGE_VERSION, leader_id=leader_id,
        voters=[Voter(voter_id=v) for v in voters],
        granting_voters=[Voter(voter_id=v) for v in granting])
    record = Record(encode_control_key(LEADER_CHANGE), msg.encode(LEADER_CHANGE_VERSION), None,
                    timestamp)
    return build_batch([record], partition_leader_epoch=epoch, is_control=True,
                       base_timestamp=timestamp)


def decode_leader_change(value: bytes) -> LeaderChangeMessage:
    return LeaderChangeMessage.decode(value, LEADER_CHANGE_VERSION)
