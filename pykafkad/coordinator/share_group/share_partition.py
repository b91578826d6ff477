"""One share partition (Kafka's SharePartition): the in-flight window of a share group on one
topic partition, between the share-partition start offset (SPSO) and end offset (SPEO).

Every offset in [SPSO, SPEO) has a state: AVAILABLE (to be delivered), ACQUIRED (by one member,
under an acquisition lock that expires), ACKNOWLEDGED or ARCHIVED (done).  SPSO moves past the
done offsets at its head.  A record is delivered at most ``delivery.count.limit`` times; a
release or lock expiry past that archives it.  Time is the broker clock (ms), so lock expiry is
tested by moving a fake clock.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from itertools import groupby

from wire.errors import ErrorCode, KafkaError

AVAILABLE, ACQUIRED, ACKNOWLEDGED, ARCHIVED = 0, 1, 2, 4
#: acknowledge types on the wire (ShareFetch/ShareAcknowledge AcknowledgeTypes)
GAP, ACCEPT, RELEASE, REJECT, RENEW = 0, 1, 2, 3, 4
#: ShareAcquireMode (v2): whole batches up to about max_records, or exactly max_records
BATCH_OPTIMIZED, RECORD_LIMIT = 0, 1

_CONTROL_FLAG = 0x20
_TRANSACTIONAL_FLAG = 0x10


class Run:
    """Consecutive offsets in one state (Kafka's in-flight batch): every operation works on
    runs, splitting one only where it covers part of it, so the cost follows the batches and
    acknowledgement ranges of a request, not its records."""

    __slots__ = ("first", "last", "state", "delivery_count", "member_id", "deadline")

    def __init__(self, first: int, last: int, state: int = AVAILABLE, delivery_count: int = 0,
                 member_id: str | None = None, deadline: int = 0) -> None:
        self.first = first
        self.last = last
        self.state = state
        self.delivery_count = delivery_count
        self.member_id = member_id
        self.deadline = deadline

    def __len__(self) -> int:
        return self.last - self.first + 1

    def same_state(self, other: Run) -> bool:
        return (self.state, self.delivery_count, self.member_id, self.deadline) == \
            (other.state, other.delivery_count, other.member_id, other.deadline)


_DONE = (ACKNOWLEDGED, ARCHIVED)


def _first(run: Run) -> int:
    return run.first


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
        #: runs covering [SPSO, SPEO) back to back, in offset order
        self.runs: list[Run] = []
        #: Kafka's state epoch: bumped when the state is reset (offsets altered)
        self.state_epoch = 0
        #: the acknowledged state changed since it was last persisted
        self.dirty = True
        #: (first, last) ranges whose state changed since the last write (acknowledged,
        #: released, expired), appended to: what the next write carries, as Kafka's leader
        #: writes only the changed batches (an acquisition is never written)
        self.changed: list[tuple[int, int]] = []
        #: (start offset, delivery complete count) as last persisted: what Kafka describes
        self.persisted: tuple[int, int] | None = None

    @classmethod
    def from_state(cls, group_id: str, topic_id: bytes, partition: int, start_offset: int,
                   state_epoch: int, batches) -> SharePartition:
        """A share partition read back from __share_group_state: AVAILABLE runs keep their
        delivery counts (they are redelivered), done runs stay done."""
        sp = cls(group_id, topic_id, partition, start_offset)
        sp.state_epoch = state_epoch
        for first, last, state, count in sorted(batches):
            first = max(first, sp.end_offset)
            if first > last:
                continue
            if first > sp.end_offset:
                sp.runs.append(Run(sp.end_offset, first - 1))
            sp.runs.append(Run(first, last, state if state in _DONE else AVAILABLE, count))
            sp.end_offset = last + 1
        sp._coalesce()
        sp._advance_start()
        sp.dirty = False
        return sp

    def record(self, offset: int) -> Run | None:
        """The run holding ``offset`` (None outside [SPSO, SPEO))."""
        if not self.start_offset <= offset < self.end_offset:
            return None
        return self.runs[bisect_right(self.runs, offset, key=_first) - 1]

    # -- lock expiry ---------------------------------------------------------------------------
    def expire_locks(self, now: int, delivery_limit: int) -> bool:
        """Acquisition locks past their deadline give their records back (or archive those at
        the delivery limit); True if any record became available."""
        expired = [r for r in self.runs if r.state == ACQUIRED and r.deadline <= now]
        for run in expired:
            self._release(run, delivery_limit)
        return self._changed_runs(expired)

    def next_lock_deadline(self) -> int | None:
        deadlines = [r.deadline for r in self.runs if r.state == ACQUIRED]
        return min(deadlines) if deadlines else None

    # -- acquisition ---------------------------------------------------------------------------
    def first_fetch_offset(self) -> int:
        """Where a fetch reads from: the first AVAILABLE in-flight record, else SPEO.  SPSO
        moves past the done records here, at the next fetch: as Kafka's persisted start
        offset, it stays where it was when the last acknowledgement was written."""
        self._advance_start()
        for run in self.runs:
            if run.state == AVAILABLE:
                return run.first
        return self.end_offset

    def acquire(self, member_id: str, batches: list[BatchBounds], max_records: int, mode: int,
                now: int, lock_ms: int, limit_offset: int, aborted: frozenset[int] = frozenset(),
                max_in_flight: int | None = None) -> tuple[list[tuple[int, int, int]], int]:
        """Acquires records of the batches read for ``member_id``: AVAILABLE in-flight ones and
        new ones past SPEO (below ``limit_offset``, the HW or LSO).  Returns the acquired
        ranges (first, last, delivery count) and how many bytes of the read to send (whole
        batches up to the last one holding an acquired record).  Records of the batches in
        ``aborted`` (base offsets; read_committed) are archived, never handed out, as Kafka's
        filterAbortedTransactionalAcquiredRecords.  ``max_in_flight``
        (share.partition.max.record.locks) caps the window as Kafka's
        lastOffsetAndMaxRecordsToAcquire does."""
        if max_in_flight is not None:
            max_records, limit_offset = self.capped(max_records, limit_offset, max_in_flight)
            if max_records <= 0:
                return [], 0
        ranges: list[list[int]] = []
        count = 0
        send_end = 0
        deadline = now + lock_ms
        for b in batches:
            if count >= max_records or b.base_offset >= limit_offset:
                break
            lo = max(b.base_offset, self.start_offset)
            hi = min(b.last_offset, limit_offset - 1)
            is_aborted = b.base_offset in aborted
            before = count
            if lo <= min(hi, self.end_offset - 1):  # records already in flight
                i, j = self._slice(lo, min(hi, self.end_offset - 1))
                k = i
                while k < j:
                    run = self.runs[k]
                    k += 1
                    if run.state != AVAILABLE:
                        continue
                    if is_aborted:
                        self._settle(run, ARCHIVED)
                        self._mark_changed(run.first, run.last)
                        continue
                    room = max_records - count
                    if mode == RECORD_LIMIT and room <= 0:
                        break
                    if mode == RECORD_LIMIT and len(run) > room:
                        self._split(run.first + room)
                        j += 1
                    count += self._take(run, member_id, deadline, ranges)
            new_lo = max(lo, self.end_offset)
            if new_lo <= hi and not (mode == RECORD_LIMIT and count >= max_records):
                if new_lo > self.end_offset:  # a hole (compaction): nothing to deliver
                    self.runs.append(Run(self.end_offset, new_lo - 1, ARCHIVED))
                if b.control or is_aborted:  # markers and aborted records are never delivered
                    self.runs.append(Run(new_lo, hi, ARCHIVED))
                    if is_aborted and not b.control:
                        self._mark_changed(new_lo, hi)
                    self.end_offset = hi + 1
                else:
                    last = hi if mode != RECORD_LIMIT else min(hi, new_lo + max_records - count - 1)
                    run = Run(new_lo, last)
                    self.runs.append(run)
                    self.end_offset = last + 1
                    count += self._take(run, member_id, deadline, ranges)
            if b.control and self.end_offset <= b.last_offset < limit_offset:
                self.runs.append(Run(self.end_offset, b.last_offset, ARCHIVED))
                self.end_offset = b.last_offset + 1
            if count > before:
                send_end = b.end
        self._coalesce()
        self._advance_start()
        return [(a, z, d) for a, z, d in ranges], send_end

    @staticmethod
    def _take(run: Run, member_id: str, deadline: int, ranges: list[list[int]]) -> int:
        run.state = ACQUIRED
        run.delivery_count += 1
        run.member_id = member_id
        run.deadline = deadline
        if ranges and ranges[-1][1] == run.first - 1 and ranges[-1][2] == run.delivery_count:
            ranges[-1][1] = run.last
        else:
            ranges.append([run.first, run.last, run.delivery_count])
        return len(run)

    def window_size(self) -> int:
        """Kafka's numInFlightRecords: the whole window [SPSO, SPEO), done records included
        (those at its head leave it as SPSO moves)."""
        return self.end_offset - self.start_offset if self.runs else 0

    def capped(self, max_records: int, limit_offset: int, max_in_flight: int) -> tuple[int, int]:
        """(records, end offset) a fetch may acquire under the in-flight cap: what is left of
        the cap (a batch-optimized fetch still takes the whole batch holding the last one);
        at the cap, only records released inside the window, never new ones past SPEO."""
        room = max_in_flight - self.window_size()
        if room > 0:
            return min(max_records, room), limit_offset
        fetch_offset = self.first_fetch_offset()
        if fetch_offset >= self.end_offset:
            return 0, limit_offset
        return (min(max_records, self.end_offset - fetch_offset),
                min(limit_offset, self.end_offset))

    # -- acknowledgement -----------------------------------------------------------------------
    def acknowledge(self, member_id: str, batches: list[tuple[int, int, list[int]]], now: int,
                    lock_ms: int, delivery_limit: int) -> None:
        """Applies one request's acknowledgement batches for this partition, all or nothing:
        INVALID_RECORD_STATE when an offset is not acquired by ``member_id``."""
        plan: list[tuple[int, int, int]] = []
        for first, last, types in batches:
            if last < first or not types or (len(types) != 1 and len(types) != last - first + 1):
                raise KafkaError(ErrorCode.INVALID_REQUEST)
            if not set(types) <= {GAP, ACCEPT, RELEASE, REJECT, RENEW}:
                raise KafkaError(ErrorCode.INVALID_REQUEST)
            if not self._held(first, last, member_id):
                raise KafkaError(ErrorCode.INVALID_RECORD_STATE)
            if len(types) == 1:
                plan.append((first, last, types[0]))
                continue
            offset = first
            for kind, same in groupby(types):
                n = sum(1 for _ in same)
                plan.append((offset, offset + n - 1, kind))
                offset += n
        for first, last, kind in plan:
            i, j = self._slice(first, last)
            for run in self.runs[i:j]:
                if kind == ACCEPT:
                    self._settle(run, ACKNOWLEDGED)
                elif kind in (GAP, REJECT):
                    self._settle(run, ARCHIVED)
                elif kind == RELEASE:
                    self._release(run, delivery_limit)
                else:
                    run.deadline = now + lock_ms
            if kind != RENEW:
                self._mark_changed(first, last)
        self._coalesce()
        self.dirty = True

    def _held(self, first: int, last: int, member_id: str) -> bool:
        """Every offset of [first, last] is ACQUIRED by ``member_id``."""
        if first < self.start_offset or last >= self.end_offset:
            return False
        i = bisect_right(self.runs, first, key=_first) - 1
        while i < len(self.runs) and self.runs[i].first <= last:
            run = self.runs[i]
            if run.state != ACQUIRED or run.member_id != member_id:
                return False
            i += 1
        return True

    def release_member(self, member_id: str, delivery_limit: int) -> bool:
        """The member's share session ended: its acquired records become available again."""
        held = [r for r in self.runs if r.state == ACQUIRED and r.member_id == member_id]
        for run in held:
            self._release(run, delivery_limit)
        return self._changed_runs(held)

    def delivery_complete_count(self) -> int:
        """Offsets at or past SPSO whose delivery is complete (KIP-1226's count)."""
        return sum(len(r) for r in self.runs if r.state in _DONE)

    def in_flight_count(self) -> int:
        """Records acquired and not yet acknowledged."""
        return sum(len(r) for r in self.runs if r.state == ACQUIRED)

    # -- helpers -------------------------------------------------------------------------------
    @staticmethod
    def _settle(run: Run, state: int) -> None:
        run.state = state
        run.member_id = None
        run.deadline = 0

    @classmethod
    def _release(cls, run: Run, delivery_limit: int) -> None:
        cls._settle(run, ARCHIVED if run.delivery_count >= delivery_limit else AVAILABLE)

    def _mark_changed(self, first: int, last: int) -> None:
        self.changed.append((first, last))
        self.dirty = True

    def _changed_runs(self, runs: list[Run]) -> bool:
        for run in runs:
            self._mark_changed(run.first, run.last)
        if runs:
            self._coalesce()
        return bool(runs)

    def _split(self, offset: int) -> int:
        """Makes ``offset`` the first of a run; the index of that run (len(runs) at SPEO)."""
        if offset >= self.end_offset:
            return len(self.runs)
        i = bisect_right(self.runs, offset, key=_first) - 1
        run = self.runs[i]
        if run.first == offset:
            return i
        self.runs.insert(i + 1, Run(offset, run.last, run.state, run.delivery_count,
                                    run.member_id, run.deadline))
        run.last = offset - 1
        return i + 1

    def _slice(self, first: int, last: int) -> tuple[int, int]:
        """runs[i:j] cover exactly [first, last] (inside the window)."""
        i = self._split(first)
        return i, self._split(last + 1)

    def _coalesce(self) -> None:
        """Joins neighbouring runs in the same state, keeping the list as short as the
        window's distinct states."""
        out: list[Run] = []
        for run in self.runs:
            if out and out[-1].same_state(run):
                out[-1].last = run.last
            else:
                out.append(run)
        self.runs = out

    def _advance_start(self) -> None:
        done = 0
        while done < len(self.runs) and self.runs[done].state in _DONE:
            done += 1
        if done:
            del self.runs[:done]
        self.start_offset = self.runs[0].first if self.runs else self.end_offset

    def reset(self, start_offset: int) -> None:
        """AlterShareGroupOffsets / a start below the log start: a fresh window."""
        self.runs = []
        self.changed = []
        self.start_offset = self.end_offset = start_offset
        self.state_epoch += 1
        self.dirty = True

    def state_batches(self, only_changed: bool = False) -> list[tuple[int, int, int, int]]:
        """(first, last, delivery state, delivery count) runs of the window (``only_changed``:
        of the ranges changed since the last write), as WriteShareGroupState carries them;
        an acquired record is written as AVAILABLE."""
        spans = [(self.start_offset, self.end_offset - 1)]
        if only_changed:
            spans = []
            for first, last in sorted(self.changed):
                first, last = max(first, self.start_offset), min(last, self.end_offset - 1)
                if first > last:
                    continue
                if spans and first <= spans[-1][1] + 1:
                    spans[-1] = (spans[-1][0], max(spans[-1][1], last))
                else:
                    spans.append((first, last))
        out: list[list[int]] = []
        for first, last in spans:
            if first > last:
                continue
            i = bisect_right(self.runs, first, key=_first) - 1
            while i < len(self.runs) and self.runs[i].first <= last:
                run = self.runs[i]
                a, z = max(run.first, first), min(run.last, last)
                state = AVAILABLE if run.state == ACQUIRED else run.state
                if out and out[-1][1] == a - 1 and out[-1][2] == state \
                        and out[-1][3] == run.delivery_count:
                    out[-1][1] = z
                else:
                    out.append([a, z, state, run.delivery_count])
                i += 1
        return [tuple(r) for r in out]
