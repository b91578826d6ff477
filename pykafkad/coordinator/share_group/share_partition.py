"""One share partition (Kafka's SharePartition): the in-flight window of a share group on one
topic partition, between the share-partition start offset (SPSO) and end offset (SPEO).

Every offset in [SPSO, SPEO) has a state: AVAILABLE (to be delivered), ACQUIRED (by one member,
under an acquisition lock that expires), ACKNOWLEDGED or ARCHIVED (done).  SPSO moves past the
done offsets at its head.  A record is delivered at most ``delivery.count.limit`` times; a
release or lock expiry past that archives it.  Time is the broker clock (ms), so lock expiry is
tested by moving a fake clock.
"""

from __future__ import annotations

from dataclasses import dataclass

from wire.errors import ErrorCode, KafkaError

AVAILABLE, ACQUIRED, ACKNOWLEDGED, ARCHIVED = 0, 1, 2, 4
#: acknowledge types on the wire (ShareFetch/ShareAcknowledge AcknowledgeTypes)
GAP, ACCEPT, RELEASE, REJECT, RENEW = 0, 1, 2, 3, 4
#: ShareAcquireMode (v2): whole batches up to about max_records, or exactly max_records
BATCH_OPTIMIZED, RECORD_LIMIT = 0, 1

_CONTROL_FLAG = 0x20
_TRANSACTIONAL_FLAG = 0x10


class InFlight:
    __slots__ = ("state", "delivery_count", "member_id", "deadline")

    def __init__(self) -> None:
        self.state = AVAILABLE
        self.delivery_count = 0
        self.member_id: str | None = None
        self.deadline = 0


@dataclass(frozen=True)
class BatchBounds:
    """A stored batch's offsets and where it lies in the bytes read."""

    base_offset: int
    last_offset: int
    control: bool
    start: int
    end: int
    producer_id: int = -1
    transactional: bool = False


def batch_bounds(data: bytes) -> list[BatchBounds]:
    """Batch headers of a read (per batch, never per record)."""
    out = []
    pos = 0
    n = len(data)
    while pos + 27 <= n:
        base = int.from_bytes(data[pos:pos + 8], "big", signed=True)
        length = int.from_bytes(data[pos + 8:pos + 12], "big", signed=True)
        attributes = int.from_bytes(data[pos + 21:pos + 23], "big")
        delta = int.from_bytes(data[pos + 23:pos + 27], "big", signed=True)
        end = pos + 12 + length
        if end > n:
            break
        pid = int.from_bytes(data[pos + 43:pos + 51], "big", signed=True) if end >= pos + 51 else -1
        out.append(BatchBounds(base, base + delta, bool(attributes & _CONTROL_FLAG), pos, end,
                               pid, bool(attributes & _TRANSACTIONAL_FLAG)))
        pos = end
    return out


def aborted_batches(batches: list[BatchBounds], aborted) -> set[int]:
    """Base offsets of the data batches of aborted transactions (``aborted``: the log's
    AbortedTxn entries for the range read), found as a read_committed consumer finds them: a
    producer's transaction is open from its first offset to its next control batch."""
    pending = sorted(aborted, key=lambda t: t.first_offset)
    open_pids: set[int] = set()
    out: set[int] = set()
    i = 0
    for b in batches:
        while i < len(pending) and pending[i].first_offset <= b.last_offset:
            open_pids.add(pending[i].producer_id)
            i += 1
        if b.control:
            open_pids.discard(b.producer_id)
        elif b.transactional and b.producer_id in open_pids:
            out.add(b.base_offset)
    return out


class SharePartition:
    def __init__(self, group_id: str, topic_id: bytes, partition: int, start_offset: int):
        self.group_id = group_id
        self.topic_id = topic_id
        self.partition = partition
        #: SPSO: every offset below it is done
        self.start_offset = start_offset
        #: SPEO: the next offset never fetched
        self.end_offset = start_offset
        self.in_flight: dict[int, InFlight] = {}
        #: Kafka's state epoch: bumped when the state is reset (offsets altered)
        self.state_epoch = 0
        #: the acknowledged state changed since it was last persisted
        self.dirty = True
        #: offsets whose state changed since the last write (acknowledged, released,
        #: expired): what the next write carries, as Kafka's leader writes only the changed
        #: batches (an acquisition is never written)
        self.changed: set[int] = set()
        #: (start offset, delivery complete count) as last persisted: what Kafka describes
        self.persisted: tuple[int, int] | None = None

    @classmethod
    def from_state(cls, group_id: str, topic_id: bytes, partition: int, start_offset: int,
                   state_epoch: int, batches) -> SharePartition:
        """A share partition read back from __share_group_state: AVAILABLE runs keep their
        delivery counts (they are redelivered), done runs stay done."""
        sp = cls(group_id, topic_id, partition, start_offset)
        sp.state_epoch = state_epoch
        for first, last, state, count in batches:
            for offset in range(max(first, start_offset), last + 1):
                rec = sp.in_flight[offset] = InFlight()
                rec.state = state if state in (ACKNOWLEDGED, ARCHIVED) else AVAILABLE
                rec.delivery_count = count
            sp.end_offset = max(sp.end_offset, last + 1)
        for offset in range(start_offset, sp.end_offset):
            sp.in_flight.setdefault(offset, InFlight())
        sp.in_flight = dict(sorted(sp.in_flight.items()))
        sp._advance_start()
        sp.dirty = False
        return sp

    # -- lock expiry ---------------------------------------------------------------------------
    def expire_locks(self, now: int, delivery_limit: int) -> bool:
        """Acquisition locks past their deadline give their records back (or archive those at
        the delivery limit); True if any record became available."""
        freed = False
        for offset, rec in self.in_flight.items():
            if rec.state == ACQUIRED and rec.deadline <= now:
                self._release(rec, delivery_limit)
                self.changed.add(offset)
                freed = True
        if freed:
            self.dirty = True
        return freed

    def next_lock_deadline(self) -> int | None:
        deadlines = [r.deadline for r in self.in_flight.values() if r.state == ACQUIRED]
        return min(deadlines) if deadlines else None

    # -- acquisition ---------------------------------------------------------------------------
    def first_fetch_offset(self) -> int:
        """Where a fetch reads from: the first AVAILABLE in-flight record, else SPEO.  SPSO
        moves past the done records here, at the next fetch: as Kafka's persisted start
        offset, it stays where it was when the last acknowledgement was written."""
        self._advance_start()
        for offset, rec in self.in_flight.items():
            if rec.state == AVAILABLE:
                return offset
        return self.end_offset

    def acquire(self, member_id: str, batches: list[BatchBounds], max_records: int, mode: int,
                now: int, lock_ms: int, limit_offset: int, aborted: frozenset[int] = frozenset(),
                ) -> tuple[list[tuple[int, int, int]], int]:
        """Acquires records of the batches read for ``member_id``: AVAILABLE in-flight ones and
        new ones past SPEO (below ``limit_offset``, the HW or LSO).  Returns the acquired
        ranges (first, last, delivery count) and how many bytes of the read to send (whole
        batches up to the last one holding an acquired record).  Records of the batches in
        ``aborted`` (base offsets; read_committed) are archived, never handed out, as Kafka's
        filterAbortedTransactionalAcquiredRecords."""
        ranges: list[list[int]] = []
        count = 0
        send_end = 0
        deadline = now + lock_ms
        for b in batches:
            if count >= max_records:
                break
            if b.base_offset >= limit_offset:
                break
            took = False
            for offset in range(max(b.base_offset, self.start_offset),
                                min(b.last_offset, limit_offset - 1) + 1):
                if mode == RECORD_LIMIT and count >= max_records:
                    break
                rec = self.in_flight.get(offset)
                if rec is None:
                    if offset < self.end_offset:
                        continue
                    if offset > self.end_offset:  # a hole (compaction): nothing to deliver
                        for gap in range(self.end_offset, offset):
                            g = self.in_flight[gap] = InFlight()
                            g.state = ARCHIVED
                    rec = self.in_flight[offset] = InFlight()
                    self.end_offset = offset + 1
                    if b.control:  # markers are never delivered
                        rec.state = ARCHIVED
                        continue
                elif rec.state != AVAILABLE:
                    continue
                if b.base_offset in aborted:
                    rec.state = ARCHIVED
                    rec.member_id = None
                    self.changed.add(offset)
                    self.dirty = True
                    continue
                rec.state = ACQUIRED
                rec.delivery_count += 1
                rec.member_id = member_id
                rec.deadline = deadline
                count += 1
                took = True
                if ranges and ranges[-1][1] == offset - 1 and ranges[-1][2] == rec.delivery_count:
                    ranges[-1][1] = offset
                else:
                    ranges.append([offset, offset, rec.delivery_count])
            if b.control and b.last_offset >= self.end_offset and b.last_offset < limit_offset:
                for offset in range(self.end_offset, b.last_offset + 1):
                    self.in_flight.setdefault(offset, InFlight()).state = ARCHIVED
                self.end_offset = b.last_offset + 1
            if took:
                send_end = b.end
        self._advance_start()
        return [(a, z, d) for a, z, d in ranges], send_end

    # -- acknowledgement -----------------------------------------------------------------------
    def acknowledge(self, member_id: str, batches: list[tuple[int, int, list[int]]], now: int,
                    lock_ms: int, delivery_limit: int) -> None:
        """Applies one request's acknowledgement batches for this partition, all or nothing:
        INVALID_RECORD_STATE when an offset is not acquired by ``member_id``."""
        changes: list[tuple[InFlight, int]] = []
        for first, last, types in batches:
            if last < first or not types or (len(types) != 1 and len(types) != last - first + 1):
                raise KafkaError(ErrorCode.INVALID_REQUEST)
            for i, offset in enumerate(range(first, last + 1)):
                kind = types[0] if len(types) == 1 else types[i]
                if kind not in (GAP, ACCEPT, RELEASE, REJECT, RENEW):
                    raise KafkaError(ErrorCode.INVALID_REQUEST)
                rec = self.in_flight.get(offset)
                if rec is None or rec.state != ACQUIRED or rec.member_id != member_id:
                    raise KafkaError(ErrorCode.INVALID_RECORD_STATE)
                changes.append((rec, kind))
                if kind != RENEW:
                    self.changed.add(offset)
        for rec, kind in changes:
            if kind == ACCEPT:
                self._done(rec, ACKNOWLEDGED)
            elif kind in (GAP, REJECT):
                self._done(rec, ARCHIVED)
            elif kind == RELEASE:
                self._release(rec, delivery_limit)
            else:
                rec.deadline = now + lock_ms
        self.dirty = True

    def release_member(self, member_id: str, delivery_limit: int) -> bool:
        """The member's share session ended: its acquired records become available again."""
        freed = False
        for offset, rec in self.in_flight.items():
            if rec.state == ACQUIRED and rec.member_id == member_id:
                self._release(rec, delivery_limit)
                self.changed.add(offset)
                freed = True
        if freed:
            self.dirty = True
        return freed

    def delivery_complete_count(self) -> int:
        """Offsets at or past SPSO whose delivery is complete (KIP-1226's count)."""
        return sum(1 for r in self.in_flight.values() if r.state in (ACKNOWLEDGED, ARCHIVED))

    # -- helpers -------------------------------------------------------------------------------
    @staticmethod
    def _done(rec: InFlight, state: int) -> None:
        rec.state = state
        rec.member_id = None

    @staticmethod
    def _release(rec: InFlight, delivery_limit: int) -> None:
        rec.state = ARCHIVED if rec.delivery_count >= delivery_limit else AVAILABLE
        rec.member_id = None

    def _advance_start(self) -> None:
        while self.start_offset < self.end_offset:
            rec = self.in_flight.get(self.start_offset)
            if rec is not None and rec.state not in (ACKNOWLEDGED, ARCHIVED):
                break
            self.in_flight.pop(self.start_offset, None)
            self.start_offset += 1

    def reset(self, start_offset: int) -> None:
        """AlterShareGroupOffsets / a start below the log start: a fresh window."""
        self.in_flight.clear()
        self.changed.clear()
        self.start_offset = self.end_offset = start_offset
        self.state_epoch += 1
        self.dirty = True

    def state_batches(self, only_changed: bool = False) -> list[tuple[int, int, int, int]]:
        """(first, last, delivery state, delivery count) runs of the window (``only_changed``:
        of the offsets changed since the last write), as WriteShareGroupState carries them."""
        out: list[list[int]] = []
        items = self.in_flight.items() if not only_changed else (
            (o, self.in_flight[o]) for o in sorted(self.changed) if o in self.in_flight)
        for offset, rec in items:
            state = AVAILABLE if rec.state == ACQUIRED else rec.state
            if out and out[-1][1] == offset - 1 and out[-1][2] == state \
                    and out[-1][3] == rec.delivery_count:
                out[-1][1] = offset
            else:
                out.append([offset, offset, state, rec.delivery_count])
        return [tuple(r) for r in out]
