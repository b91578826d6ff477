"""Golden bytes from real clients drive both decode and encode.

tests/wire/golden/ holds frames (header + body, no size prefix) that kafka-python,
confluent-kafka and kcat sent to pykafkad and what pykafkad answered, recorded by
scripts/capture_golden.py (GOLDEN_DIR points these tests at another capture). Every request
must parse, decode at its version consuming every byte, and re-encode to the very bytes the
client sent; every response likewise round trips. The record sets inside (Produce requests,
Fetch responses) must read back batch by batch, CRC checked, in every codec.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from wire.framing import (
    RequestHeader,
    read_request_header,
    read_response_header,
    request_header_version,
    response_header_version,
    write_request_header,
)
from wire.messages import API_KEYS
from wire.primitives import Reader, Writer
from wire.records.batch import decode_records, iter_batch_headers

GOLDEN = Path(os.environ.get("GOLDEN_DIR", Path(__file__).parent / "golden"))
INDEX_PATH = GOLDEN / "index.json"
INDEX = json.loads(INDEX_PATH.read_text()) if INDEX_PATH.exists() else {"exchanges": []}
EXCHANGES = INDEX["exchanges"]
CODECS = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
PRODUCE, FETCH, METADATA = 0, 1, 3
LIBRDKAFKA_CLIENTS = {"confluent-kafka", "kcat"}

CASES = [
    pytest.param(e, kind, id=e[kind].removesuffix(".bin"))
    for e in EXCHANGES
    for kind in ("request", "response")
    if e.get(kind)
]


def load(entry: dict, kind: str) -> bytes:
    return (GOLDEN / entry[kind]).read_bytes()


def split(entry: dict, kind: str) -> tuple[bytes, bytes]:
    """(header bytes, body bytes) of a captured frame, after checking the header."""
    data = load(entry, kind)
    r = Reader(data)
    if kind == "request":
        header = read_request_header(r)
        assert (header.api_key, header.api_version) == (entry["api_key"], entry["api_version"])
        assert header.correlation_id == entry["correlation_id"]
        assert header.version == entry["request_header_version"]
        assert header.version == request_header_version(header.api_key, header.api_version)
    else:
        hv = entry["response_header_version"]
        assert hv == response_header_version(entry["api_key"], entry["api_version"])
        assert read_response_header(r, hv) == entry["correlation_id"]
    return data[: r.pos], data[r.pos :]


def trailing_bytes(entry: dict, kind: str) -> int:
    """Bytes a client sends after the body; the only known case is librdkafka's.

    librdkafka asks for all topics (Metadata v9+) leaving the topic array's 4-byte placeholder
    in place: varint 0 (null array: all topics), then three 0x00 that a broker reads as
    AllowAutoTopicCreation=false, IncludeTopicAuthorizedOperations=false and no tagged fields;
    the 3 bytes librdkafka meant for those fields follow the body. Kafka ignores bytes past the
    body, and so must pykafkad.
    """
    if (kind == "request" and entry["client"] in LIBRDKAFKA_CLIENTS
            and entry["api_key"] == METADATA and entry["api_version"] >= 9
            and entry["variant"] == "all"):
        return 3
    return 0


def decode_exactly(cls: type, body: bytes, version: int):
    r = Reader(body)
    obj = cls.read(r, version)
    assert r.remaining == 0, f"{r.remaining} bytes left after decoding {cls.__name__} v{version}"
    return obj


def message_class(entry: dict, kind: str) -> type:
    spec = API_KEYS[entry["api_key"]]
    return spec.request_type() if kind == "request" else spec.response_type()


def record_sets(entry: dict, kind: str, obj) -> list:
    if entry["api_key"] == PRODUCE and kind == "request":
        return [p.records for t in obj.topic_data for p in t.partition_data]
    if entry["api_key"] == FETCH and kind == "response":
        return [p.records for t in obj.responses for p in t.partitions]
    return []


def read_batches(records, *, strict: bool) -> list[tuple[str, bool, list]]:
    """(codec name, is a control batch, records) of each whole batch, its CRC checked."""
    out = []
    for pos, header in iter_batch_headers(records, strict=strict):
        recs = decode_records(records, pos, verify_crc=True)
        assert len(recs) == header.record_count
        assert [r.offset for r in recs] == list(
            range(header.base_offset, header.base_offset + header.record_count))
        out.append((CODECS[header.compression], header.is_control, recs))
    return out


def test_golden_files_present():
    assert EXCHANGES, "no golden files: run scripts/capture_golden.py tests/wire/golden"
    for e in EXCHANGES:
        assert (GOLDEN / e["request"]).exists()


@pytest.mark.parametrize("entry, kind", CASES)
def test_golden_round_trip(entry: dict, kind: str):
    head, body = split(entry, kind)
    version = entry["api_version"]
    if kind == "request":
        h = read_request_header(Reader(head))
        w = Writer()
        write_request_header(w, RequestHeader(h.api_key, h.api_version, h.correlation_id,
                                              h.client_id, h.version))
        assert w.getvalue() == head
    extra = trailing_bytes(entry, kind)
    body = body[: len(body) - extra]
    obj = decode_exactly(message_class(entry, kind), body, version)
    if extra:
        assert obj.topics is None  # all topics, as Kafka reads it
    assert obj.encode(version) == body
    # decoding what we encoded gives the same object again
    assert decode_exactly(message_class(entry, kind), obj.encode(version), version) == obj
    for records in record_sets(entry, kind, obj):
        if records is None or len(records) == 0:
            continue
        # a Fetch response may end in a partial batch; a produced record set never does
        batches = read_batches(records, strict=kind == "request")
        assert batches, "a non-empty record set without a whole batch"


def _batches_of(api_key: int, kind: str) -> list[tuple[dict, str, bool, list]]:
    out = []
    for e in EXCHANGES:
        if e["api_key"] != api_key or not e.get(kind):
            continue
        _head, body = split(e, kind)
        body = body[: len(body) - trailing_bytes(e, kind)]
        obj = decode_exactly(message_class(e, kind), body, e["api_version"])
        for records in record_sets(e, kind, obj):
            if records is not None and len(records):
                out.extend((e, *batch) for batch in read_batches(records, strict=False))
    return out


def test_every_client_produces_every_codec():
    clients = {e["client"] for e in EXCHANGES}
    produced = {(e["client"], codec) for e, codec, _c, _r in _batches_of(PRODUCE, "request")}
    assert produced == {(c, codec) for c in clients for codec in CODECS.values()}


def test_every_clients_batches_fetched_in_every_codec():
    """Fetch responses carry each client's batches in each codec, and the records read back."""
    clients = {e["client"] for e in EXCHANGES}
    fetched = set()
    for _e, codec, control, recs in _batches_of(FETCH, "response"):
        for rec in [] if control else recs:
            producer, key_codec, _i = rec.key.decode().split("/")
            assert key_codec == codec
            fetched.add((producer, codec))
    assert fetched >= {(c, codec) for c in clients for codec in CODECS.values()}
