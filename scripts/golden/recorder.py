"""Which exchanges become golden files, and how they are written.

The first exchange per (client, API, version, variant) is kept; the variant separates cases the
codec tests need apart (see ``variant_of``). Output::

    <out>/<client>/<ApiName>-v<version>[-<variant>]-{request,response}.bin
    <out>/index.json     api key/version, header versions, correlation id, file names
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from pathlib import Path

from wire.framing import read_request_header, read_response_header, response_header_version
from wire.messages import API_KEYS
from wire.primitives import Reader
from wire.records.batch import iter_batch_headers

from .common import CLIENTS, CODEC_NAMES, client_versions, log


def _batches(record_sets) -> tuple[list[str], bool]:
    """(codecs, any transactional or control batch) of the whole batches in record sets."""
    codecs, txn = set(), False
    for records in record_sets:
        if records is None or len(records) == 0:
            continue
        for _pos, header in iter_batch_headers(records):
            codecs.add(CODEC_NAMES.get(header.compression, f"codec{header.compression}"))
            txn = txn or header.is_transactional or header.is_control
    return sorted(codecs), txn


def variant_of(api_key: int, version: int, request, response) -> str:
    """The part of a file name that keeps apart cases worth a golden file of their own."""
    if api_key == 0:  # Produce: the codec of the batches, transactional or not
        codecs, txn = _batches([p.records for t in request.topic_data for p in t.partition_data])
        return ("+".join(codecs) or "empty") + ("-txn" if txn else "")
    if api_key == 1:  # Fetch: session kind, whether records came back, transactions in them
        if version < 7 or request.session_epoch < 0:
            session = "sessionless"
        else:
            session = "full" if request.session_epoch == 0 else "incremental"
        parts = [p for t in response.responses for p in t.partitions] if response else []
        codecs, txn = _batches([p.records for p in parts])
        txn = txn or any(getattr(p, "aborted_transactions", None) for p in parts)
        return f"{session}-{'records' if codecs else 'empty'}{'-txn' if txn else ''}"
    if api_key == 2:  # ListOffsets: which spec
        names = {-1: "latest", -2: "earliest", -3: "maxtimestamp", -4: "earliestlocal",
                 -5: "latesttiered"}
        specs = {names.get(p.timestamp, "timestamp") for t in request.topics for p in t.partitions}
        return "+".join(sorted(specs))
    if api_key == 3:  # Metadata: all topics, none, or named ones
        if request.topics is None:
            return "all"
        return "topics" if request.topics else "none"
    if api_key == 10:  # FindCoordinator: group or transaction
        return {0: "group", 1: "transaction", 2: "share"}.get(request.key_type, "")
    return ""


def client_of(client_id: str | None) -> str | None:
    for name in CLIENTS:
        if client_id and client_id.startswith(name):
            return name
    return None


class Recorder:
    """Keeps the first exchange per (client, api key, version, variant)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.exchanges: dict[tuple[str, int, int, str], dict] = {}
        self.seen: Counter[tuple[str, str]] = Counter()

    def exchange(self, request: bytes, response: bytes | None) -> None:
        r = Reader(request)
        header = read_request_header(r)
        client = client_of(header.client_id)
        spec = API_KEYS.get(header.api_key)
        if client is None or spec is None:
            return
        hv = response_header_version(header.api_key, header.api_version)
        req_obj = resp_obj = None
        variant = ""
        try:
            req_obj = spec.request_type().decode(request[r.pos:], header.api_version)
            if response is not None:
                rr = Reader(response)
                read_response_header(rr, hv)
                resp_obj = spec.response_type().decode(response[rr.pos:], header.api_version)
            variant = variant_of(header.api_key, header.api_version, req_obj, resp_obj)
        except Exception as e:  # a codec bug: keep the bytes anyway, the tests will say why
            log(f"cannot decode {spec.name} v{header.api_version} from {client}: {e!r}")
        key = (client, header.api_key, header.api_version, variant)
        with self.lock:
            self.seen[client, spec.name] += 1
            if key in self.exchanges:
                return
            self.exchanges[key] = {
                "client": client,
                "api_key": header.api_key,
                "api_name": spec.name,
                "api_version": header.api_version,
                "variant": variant,
                "correlation_id": header.correlation_id,
                "request_header_version": header.version,
                "response_header_version": hv,
                "request_bytes": bytes(request),
                "response_bytes": None if response is None else bytes(response),
            }

    def write(self, out: Path) -> int:
        for client in CLIENTS:
            d = out / client
            if d.is_dir():
                for f in d.glob("*.bin"):
                    f.unlink()
        index = []
        total = 0
        for key in sorted(self.exchanges):
            e = dict(self.exchanges[key])
            stem = f"{e['api_name']}-v{e['api_version']}"
            if e["variant"]:
                stem += f"-{e['variant']}"
            (out / e["client"]).mkdir(parents=True, exist_ok=True)
            for kind in ("request", "response"):
                data = e.pop(f"{kind}_bytes")
                name = None
                if data is not None:
                    name = f"{e['client']}/{stem}-{kind}.bin"
                    (out / name).write_bytes(data)
                    total += len(data)
                e[kind] = name
            index.append(e)
        doc = {"generated_by": "scripts/capture_golden.py", "clients": client_versions(),
               "exchanges": index}
        (out / "index.json").write_text(json.dumps(doc, indent=1) + "\n")
        return total
