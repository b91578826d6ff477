"""pykafkad.log.record_validation on arbitrary bytes: a Produce answer or a (possibly rewritten)
batch, never another exception (which would close the producer's connection)."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pykafkad.log.record_validation import RecordPolicy, validate_records
from tests.integration.malformed_batches import raw_batch
from wire.errors import KafkaError
from wire.records import codecs, scan
from wire.records.header import BatchHeader
from wire.records.record import encode_record


@st.composite
def _sections(draw):
    """Well-formed records (some out of order or with wild timestamps), perhaps with one byte
    changed, or plain garbage."""
    if draw(st.booleans()):
        return draw(st.binary(max_size=60))
    out = bytearray()
    for _ in range(draw(st.integers(1, 5))):
        encode_record(out, draw(st.integers(0, 6)), draw(st.integers(-(1 << 63), (1 << 63) - 1)),
                      draw(st.one_of(st.none(), st.binary(max_size=4))),
                      draw(st.one_of(st.none(), st.binary(max_size=4))),
                      draw(st.lists(st.tuples(st.just("h"), st.none()), max_size=2)))
    if out and draw(st.booleans()):
        out[draw(st.integers(0, len(out) - 1))] = draw(st.integers(0, 255))
    return bytes(out)

_policies = st.builds(
    RecordPolicy,
    log_append_time=st.booleans(),
    timestamp_before_max_ms=st.sampled_from([0, 1000, (1 << 63) - 1]),
    timestamp_after_max_ms=st.sampled_from([0, 3600000, (1 << 63) - 1]),
    compression=st.sampled_from([None, codecs.NONE, codecs.GZIP, codecs.ZSTD]),
    compacted=st.booleans(),
)


@settings(max_examples=500, deadline=None)
@given(_sections(), st.integers(1, 5), st.sampled_from([0, 1, 4]), _policies,
       st.integers(-(1 << 63), (1 << 63) - 1))
def test_any_records_section_gets_an_answer(section, count, codec, policy, base_ts):
    _answer(section, count, codec, policy, base_ts)


@pytest.mark.skipif(scan._accelerator is None and not os.environ.get("CI"),
                    reason="the C record walk is not built (python setup.py build_ext --inplace)")
@settings(max_examples=300, deadline=None)
@given(_sections(), st.integers(1, 5), st.sampled_from([0, 1, 4]), _policies,
       st.integers(-(1 << 63), (1 << 63) - 1))
def test_both_record_walks_give_the_same_answer(section, count, codec, policy, base_ts):
    """The C record walk and the pure-Python one: the same batch out, or the same error."""
    assert scan._accelerator is not None, "the C record walk was not built"
    with_c = _outcome(section, count, codec, policy, base_ts)
    saved, scan._accelerator = scan._accelerator, None
    try:
        assert _outcome(section, count, codec, policy, base_ts) == with_c
    finally:
        scan._accelerator = saved


def _outcome(section, count, codec, policy, base_ts):
    batch = raw_batch(section, count, codec=codec, base_ts=base_ts)
    try:
        out, _ = validate_records(batch, BatchHeader(batch), policy, 1_700_000_000_000, "t-0")
    except KafkaError as e:
        return type(e), e.code, e.message, getattr(e, "record_errors", None)
    return bytes(out)


def _answer(section, count, codec, policy, base_ts):
    batch = raw_batch(section, count, codec=codec, base_ts=base_ts)
    try:
        out, header = validate_records(batch, BatchHeader(batch), policy, 1_700_000_000_000,
                                       "t-0")
    except KafkaError:
        return
    assert header.size == len(out)
