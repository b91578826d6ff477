"""The C record walk (wire/records/_scan.c) answers exactly as the pure-Python one: the same
RecordScan for records it accepts, INVALID_RECORD for the same bytes, in both the full read and
the skim, on encoder-built sections, mutated ones and random bytes (which also fuzzes the C
walk's bounds checks: a read past the buffer would crash or answer differently)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.integration.malformed_batches import malformed_cases
from wire.records import codecs
from wire.records import scan as scan_module
from wire.records.batch import build_batch
from wire.records.errors import InvalidRecordError
from wire.records.header import HEADER_SIZE, BatchHeader

_c = scan_module._accelerator
needs_c = pytest.mark.skipif(
    _c is None and not os.environ.get("CI"),
    reason="the C record walk is not built (python setup.py build_ext --inplace)")
pytestmark = needs_c

_INT32 = st.integers(-(1 << 31), (1 << 31) - 1)


def _python(data, count: int, full: bool):
    try:
        return scan_module.scan_records_python(bytes(data), count, full=full)
    except InvalidRecordError as e:
        return ("invalid", e.code, e.message)


def _accelerated(data, count: int, full: bool):
    assert _c is not None, "the C record walk was not built"
    got = _c.scan(data, count, full)
    if got is None:
        return ("invalid", 87, None)
    return scan_module.RecordScan(*got)


def _same(data, count: int) -> None:
    for full in (True, False):
        expected = _python(data, count, full)
        assert _accelerated(data, count, full) == expected, (full, count, bytes(data).hex())
        # any bytes-like: the produce path hands the C walk a memoryview of the request
        assert _accelerated(memoryview(bytearray(data)), count, full) == expected


_blob = st.one_of(st.none(), st.binary(max_size=40),
                  st.integers(60, 9000).map(lambda n: b"x" * n))
_records = st.lists(st.tuples(
    _blob, _blob,
    st.lists(st.tuples(st.text(max_size=4), st.one_of(st.none(), st.binary(max_size=4))),
             max_size=3),
    st.integers(-(1 << 63) + (1 << 62), (1 << 62))), min_size=1, max_size=40)


@st.composite
def _mutated(draw):
    """An encoder-built section, then a few byte changes, insertions, deletions or a cut, and
    a record count that may be off."""
    section = bytearray(build_batch(draw(_records), base_timestamp=0)[HEADER_SIZE:])
    count = draw(st.integers(0, 45))
    for _ in range(draw(st.integers(0, 4))):
        if not section:
            break
        at = draw(st.integers(0, len(section) - 1))
        op = draw(st.sampled_from(["set", "insert", "delete", "cut"]))
        if op == "set":
            section[at] = draw(st.sampled_from([0, 1, 0x7F, 0x80, 0xFF, draw(st.integers(0, 255))]))
        elif op == "insert":
            section[at:at] = draw(st.binary(min_size=1, max_size=3))
        elif op == "delete":
            del section[at]
        else:
            del section[at:]
    return bytes(section), count


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_records, st.booleans())
def test_same_scan_of_encoder_built_sections(records, out_of_order):
    section = build_batch(records, base_timestamp=0)[HEADER_SIZE:]
    _same(section, len(records))
    if out_of_order and len(records) > 1:  # the skim's offset order: same verdict
        _same(build_batch(records[::-1], base_timestamp=0)[HEADER_SIZE:] + section,
              2 * len(records))


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_mutated())
def test_same_answer_for_mutated_sections(case):
    section, count = case
    _same(section, count)


@settings(max_examples=2000, deadline=None)
@given(st.binary(max_size=200), _INT32)
def test_same_answer_for_random_bytes(data, count):
    _same(data, count)


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from([b"\x00", b"\x01", b"\x02", b"\x7f", b"\x80", b"\xff",
                                 b"\xfe\xff\xff\xff\x0f", b"\x80\x80\x80\x80\x80"]),
                max_size=40).map(b"".join), st.integers(-2, 8))
def test_same_answer_for_varint_edge_bytes(data, count):
    """Bytes made of varint boundaries (continuation bits, 5- and 10-byte limits, sign bits)."""
    _same(data, count)


def _malformed_sections() -> dict[str, tuple[bytes, int]]:
    """The records sections (decompressed) of the comparison suite's malformed batches that
    have a v2 header and decompress."""
    out = {}
    for name, batch in malformed_cases().items():
        try:
            header = BatchHeader(batch)
            section = codecs.decompress(header.compression, batch[HEADER_SIZE:header.size])
        except Exception:
            continue
        out[name] = (section, header.record_count)
    return out


@pytest.mark.parametrize("case", sorted(_malformed_sections()))
def test_same_answer_for_the_malformed_batches(case):
    section, count = _malformed_sections()[case]
    _same(section, count)


@pytest.mark.parametrize("env, walk", [("1", "python"), ("0", "c"), ("", "c")])
def test_pykafkad_pure_python_forces_the_python_walk(env, walk):
    code = "from wire.records import scan; print(scan.implementation())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYKAFKAD_PURE_PYTHON": env})
    assert out.stdout.strip() == walk
