"""VotersRecord control batches in ``__cluster_metadata`` (KIP-853): the batch a leader appends
when AddRaftVoter / RemoveRaftVoter changes the voter set, finding them in fetched or stored
batches (a replica takes a voter set as soon as it is in its log, committed or not, as Kafka's
KRaftControlRecordStateMachine), and Kafka's text for replica keys in error messages.
"""

from __future__ import annotations

from collections.abc import Iterator

from pykafkad.raft.quorum_state import uuid_to_str
from pykafkad.raft.records import KRAFT_VOTERS
from wire.messages.voters_record import VotersRecord
from wire.records.batch import build_batch, decode_records, iter_batch_headers
from wire.records.control import decode_control_key, encode_control_key
from wire.records.record import Record

VOTERS_RECORD_VERSION = 0
ZERO_UUID = bytes(16)


def voters_batch(record: VotersRecord, epoch: int, timestamp: int) -> bytes:
    """One control batch holding ``record`` (offsets are assigned by the log)."""
    value = record.encode(VOTERS_RECORD_VERSION)
    return build_batch([Record(encode_control_key(KRAFT_VOTERS), value, None, timestamp)],
                       partition_leader_epoch=epoch, is_control=True, base_timestamp=timestamp)


def find_voters_records(data: bytes) -> Iterator[tuple[int, VotersRecord]]:
    """(offset, VotersRecord) of each VotersRecord in the whole batches of ``data``; only
    control batches are decoded."""
    for pos, header in iter_batch_headers(data):
        if not header.is_control or pos + header.size > len(data):
            continue
        for rec in decode_records(data, pos):
            if decode_control_key(rec.key) == KRAFT_VOTERS:
                yield rec.offset, VotersRecord.decode(rec.value, VOTERS_RECORD_VERSION)


def replica_key(voter_id: int, directory_id: bytes) -> str:
    """Kafka 4.4's ReplicaKey.toString."""
    d = "<undefined>" if directory_id == ZERO_UUID else uuid_to_str(directory_id)
    return f"ReplicaKey(id={voter_id}, directoryId={d})"


def voter_keys(record: VotersRecord) -> str:
    """A voter set's keys as Kafka prints its Set<ReplicaKey> (a HashSet there: its order
    is the hash's, here the record's)."""
    return "[" + ", ".join(replica_key(v.voter_id, v.voter_directory_id)
                           for v in record.voters) + "]"
