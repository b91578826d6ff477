"""The produce-side record walk: it accepts every batch the encoder builds, reports what the
broker needs (timestamp range, keyless records, offset order), and refuses broken records the
way Kafka's two readers do (full read: lengths must match; skim: lengths ignored). Each test
runs with both walks, the C extension and the pure-Python one."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wire.errors import ErrorCode
from wire.records.batch import build_batch
from wire.records.errors import InvalidRecordError
from wire.records.header import HEADER_SIZE
from wire.records.record import encode_record
from wire.records.scan import record_summaries, scan_records

pytestmark = pytest.mark.usefixtures("record_walk")

#: null, short, and long enough for 2- and 3-byte length varints
_blob = st.one_of(st.none(), st.binary(max_size=70),
                  st.integers(60, 9000).map(lambda n: b"x" * n))
_record = st.tuples(
    _blob,
    _blob,
    st.lists(st.tuples(st.text(max_size=5), st.one_of(st.none(), st.binary(max_size=5))),
             max_size=3),
    st.integers(-(1 << 40), 1 << 40),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_record, min_size=1, max_size=80))
def test_scan_accepts_what_the_encoder_builds(records):
    batch = build_batch(records, base_timestamp=0)
    section = batch[HEADER_SIZE:]
    deltas = [ts for _, _, _, ts in records]
    keyless = [i for i, (k, _, _, _) in enumerate(records) if k is None]
    for full in (True, False):
        scan = scan_records(section, len(records), full=full)
        assert (scan.min_timestamp_delta, scan.max_timestamp_delta) == (min(deltas), max(deltas))
        assert scan.keyless == keyless
        assert scan.in_order
    summaries = record_summaries(section, len(records))
    assert [(od, ts) for od, ts, _, _ in summaries] == list(enumerate(deltas))
    assert [(k, v) for _, _, k, v in summaries] == [
        (-1 if k is None else len(k), -1 if v is None else len(v)) for k, v, _, _ in records]


def _record(offset_delta=0, key=b"k", value=b"v", headers=()):
    out = bytearray()
    encode_record(out, offset_delta, 0, key, value, headers)
    return bytes(out)


def _relength(record: bytes, delta: int) -> bytes:
    """The record with its (one-byte) length varint off by ``delta``."""
    length = len(record) - 1 + delta
    return bytes([((length << 1) ^ (length >> 31)) & 0xFF]) + record[1:]


def _verdict(section: bytes, count: int, full: bool) -> str:
    try:
        scan_records(section, count, full=full)
    except InvalidRecordError as e:
        assert e.code == ErrorCode.INVALID_RECORD and e.message is None
        return "invalid"
    return "ok"


@pytest.mark.parametrize("section, count, full_read, skim", [
    (_record(), 1, "ok", "ok"),
    (_relength(_record(), 1), 1, "invalid", "ok"),  # a skim ignores declared lengths ...
    (_relength(_record(), -1), 1, "invalid", "ok"),
    (_relength(_record(), -20), 1, "invalid", "invalid"),  # ... unless negative
    (_record() + _record(1), 1, "invalid", "invalid"),  # records after recordCount
    (_record(), 2, "invalid", "invalid"),  # fewer records than recordCount
    (_record() + b"\x00", 1, "invalid", "invalid"),
    (b"", 1, "invalid", "invalid"),
    (_record(key=b"x" * 100)[:-3], 1, "invalid", "invalid"),
    (_record(headers=[("h", None)]), 1, "ok", "ok"),
    (_record(headers=[("h", b"v")])[:-1], 1, "invalid", "invalid"),
    (b"\x10\x00" + b"\xff" * 10 + b"\x01", 1, "invalid", "invalid"),  # a varlong past 10 bytes
])
def test_full_read_and_skim_differ_as_kafkas_readers(section, count, full_read, skim):
    assert _verdict(section, count, True) == full_read
    assert _verdict(section, count, False) == skim


def test_skim_reports_offset_deltas_out_of_order():
    assert not scan_records(_record(0) + _record(2), 2, full=False).in_order
    assert not scan_records(_record(1), 1, full=False).in_order
    assert scan_records(b"".join(_record(i) for i in range(300)), 300, full=False).in_order
