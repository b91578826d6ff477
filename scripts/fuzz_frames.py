"""Fuzz pykafkad with malformed request frames; the broker must survive every one of them.

Frames start as valid requests of every API key and version the broker advertises, built with
the project's own codec (``wire``) from randomly filled message objects, plus a few realistic
ones (a real record batch in a Produce, a Fetch and Metadata of a real topic).  Most are then
mutated: flipped bytes, truncations, size prefixes that lie, a valid header over random bytes,
pure random bytes, huge or negative sizes, spliced chunks.  Each connection carries a few
frames, then half-closes and reads whatever the broker answers.

After every batch a fresh connection must still get ApiVersions and Metadata answered.  At the
end the broker process must be alive, its log must hold no traceback (one-line "closing
connection ... protocol error" messages are expected and counted), and confluent-kafka must
still produce and consume.  Everything is seeded; the seed is printed.  Exit status 1 on a
crash, a failed health check, a traceback or a failed client round trip.

    python scripts/fuzz_frames.py --frames 20000 --seed 7
"""

from __future__ import annotations

import argparse
import json
import random
import socket
import struct
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from compat.wire_client import WireClient  # noqa: E402
from scripts.soak_broker import SoakBroker, log_problems  # noqa: E402
from wire.framing import RequestHeader, encode_request, request_header_version  # noqa: E402
from wire.messages import API_KEYS  # noqa: E402
from wire.records.batch import build_batch  # noqa: E402

TOPIC = "fuzz"
GROUP = "fuzz-group"
NAMES = [TOPIC, GROUP, "", "fuzz-other", "__consumer_offsets", "x" * 300, "\u00e9\u00e8", "a.b_c-d"]
INT_BOUNDS = {
    "int8": (-(2**7), 2**7 - 1), "int16": (-(2**15), 2**15 - 1), "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1), "uint32": (0, 2**32 - 1), "int64": (-(2**63), 2**63 - 1),
}
#: fields whose big values make the broker wait or allocate for long (a long-poll Fetch, a
#: topic with a million partitions): kept small so one run stays bounded in time and disk
SMALL_FIELDS = ("timeout", "wait", "partitions", "replication", "count", "session", "rebalance")


def _in(rng: tuple[int, int], v: int) -> bool:
    return rng[0] <= v <= rng[1]


class RequestFiller:
    """Random, codec-valid request objects from the generated classes' ``_FIELDS``."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def integer(self, typ: str, name: str) -> int:
        lo, hi = INT_BOUNDS[typ]
        r = self.rng.random()
        if any(s in name for s in SMALL_FIELDS):
            return self.rng.randint(max(lo, -2), min(hi, 8))
        if r < 0.7:
            return self.rng.randint(max(lo, -2), min(hi, 10))
        if r < 0.9:
            return self.rng.randint(max(lo, -1000), min(hi, 100_000))
        return self.rng.choice([lo, hi, max(lo, -1), 0])  # no -1 for an unsigned type

    def scalar(self, typ: str, name: str, nullable: bool):
        rng = self.rng
        if nullable and rng.random() < 0.1:
            return None
        if typ in INT_BOUNDS:
            return self.integer(typ, name)
        if typ == "bool":
            return rng.random() < 0.5
        if typ == "float64":
            return rng.choice([0.0, 1.5, -1.0, 1e300])
        if typ == "uuid":
            return bytes(16) if rng.random() < 0.5 else rng.randbytes(16)
        if typ == "string":
            return rng.choice(NAMES) if rng.random() < 0.8 else rng.randbytes(6).hex()
        if typ in ("bytes", "records"):
            return rng.randbytes(rng.randint(0, 40))
        raise AssertionError(typ)

    def fill(self, cls: type, version: int, depth: int = 0):
        kwargs = {}
        for attr, typ, versions, nullable, tagged, _tag, _fo, struct_cls in cls._FIELDS:
            if not (_in(versions, version) or _in(tagged, version)):
                continue
            nul = _in(nullable, version)
            if typ.startswith("[]"):
                if nul and self.rng.random() < 0.1:
                    kwargs[attr] = None
                    continue
                n = self.rng.randint(0, 2 if depth < 2 else 1)
                kwargs[attr] = [self.fill(struct_cls, version, depth + 1) if struct_cls
                                else self.scalar(typ[2:], attr, False) for _ in range(n)]
            elif struct_cls is not None:
                kwargs[attr] = (None if nul and self.rng.random() < 0.1
                                else self.fill(struct_cls, version, depth + 1))
            else:
                kwargs[attr] = self.scalar(typ, attr, nul)
        return cls(**kwargs)


def frame(api_key: int, version: int, body, correlation_id: int) -> bytes:
    header = RequestHeader(api_key, version, correlation_id, "fuzz",
                           request_header_version(api_key, version))
    return encode_request(header, body)


def realistic_frames(rng: random.Random, versions: dict[int, tuple[int, int]]) -> list[bytes]:
    """Requests a real client sends: a Produce with a real batch, a Fetch, a Metadata."""
    out = []
    batch = build_batch([(b"k%d" % i, rng.randbytes(20)) for i in range(3)],
                        base_timestamp=int(time.time() * 1000))
    specs = {0: lambda t: t(acks=-1, timeout_ms=1000, topic_data=[
                 t.TopicProduceData(name=TOPIC, partition_data=[
                     t.PartitionProduceData(index=0, records=batch)])]),
             1: lambda t: t(max_wait_ms=10, min_bytes=1, max_bytes=1 << 20, topics=[
                 t.FetchTopic(topic=TOPIC, partitions=[t.FetchPartition(
                     partition=0, fetch_offset=0, partition_max_bytes=1 << 20)])]),
             3: lambda t: t(topics=[t.MetadataRequestTopic(name=TOPIC)])}
    for key, make in specs.items():
        if key not in versions:
            continue
        lo, hi = versions[key]
        v = rng.randint(lo, hi)
        try:
            body = make(API_KEYS[key].request_type())
            out.append(frame(key, v, body, rng.randint(0, 2**31 - 1)))
        except (AttributeError, TypeError, ValueError, struct.error):
            continue  # a field this version lacks: the random filler covers it
    return out


def mutate(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    """One mutation of a whole frame (size prefix included)."""
    body = bytearray(data[4:])
    kind = rng.choice(["flip", "flip", "truncate", "lie_longer", "lie_shorter", "random_body",
                       "random", "huge", "negative", "splice", "valid", "valid", "valid"])
    if kind == "flip" and body:
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(body))
            body[i] ^= rng.randint(1, 255)
        return kind, struct.pack(">i", len(body)) + bytes(body)
    if kind == "truncate" and body:
        cut = rng.randrange(len(body))
        return kind, struct.pack(">i", cut) + bytes(body[:cut])
    if kind == "lie_longer":
        return kind, struct.pack(">i", len(body) + rng.randint(1, 1000)) + bytes(body)
    if kind == "lie_shorter" and body:
        return kind, struct.pack(">i", rng.randrange(len(body))) + bytes(body)
    if kind == "random_body":
        keep = bytes(body[:8])  # api key, version, correlation id
        tail = rng.randbytes(rng.randint(0, 200))
        return kind, struct.pack(">i", len(keep) + len(tail)) + keep + tail
    if kind == "random":
        blob = rng.randbytes(rng.randint(0, 300))
        return kind, struct.pack(">i", len(blob)) + blob
    if kind == "huge":
        return kind, struct.pack(">i", rng.choice([2**31 - 1, 104857601, 1 << 30])) + bytes(body)
    if kind == "negative":
        return kind, struct.pack(">i", rng.randint(-(2**31), -1)) + bytes(body)
    if kind == "splice" and len(body) > 2:
        i, j = sorted(rng.sample(range(len(body)), 2))
        spliced = body[:j] + body[i:j] * rng.randint(1, 4) + body[j:]
        return kind, struct.pack(">i", len(spliced)) + bytes(spliced)
    return "valid", bytes(data)


def exchange(port: int, payload: bytes, read_timeout: float) -> tuple[int, bool]:
    """Sends ``payload``, half-closes, reads until EOF: (responses, broker closed first)."""
    got = bytearray()
    closed = True
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        try:
            s.sendall(payload)
            s.shutdown(socket.SHUT_WR)
            s.settimeout(read_timeout)
            while chunk := s.recv(65536):
                got += chunk
        except TimeoutError:
            closed = False
        except OSError:  # reset by the broker: it closed on bytes it refused
            pass
    responses, pos = 0, 0
    while pos + 4 <= len(got):
        (size,) = struct.unpack_from(">i", got, pos)
        if pos + 4 + size > len(got):
            break
        responses += 1
        pos += 4 + size
    return responses, closed


def healthy(bootstrap: str) -> str | None:
    """None when a fresh connection gets ApiVersions and Metadata answered, else the reason."""
    try:
        with WireClient(bootstrap, timeout=15) as c:
            c.api_versions()
            md = API_KEYS[3].request_type()
            resp = c.request(3, 12, md(topics=None))
            if not resp.brokers:
                return "Metadata without brokers"
    except Exception as e:  # noqa: BLE001 - any failure is the finding
        return f"{type(e).__name__}: {e}"
    return None


def client_round_trip(bootstrap: str, topic: str) -> str | None:
    """confluent-kafka creates a topic, produces 100 records and consumes them back."""
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    try:
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
        p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True})
        for i in range(100):
            p.produce(topic, b"after-fuzz-%d" % i)
        if p.flush(30):
            return "produce not delivered"
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": "fuzz-check",
                      "enable.auto.commit": False})
        c.assign([TopicPartition(topic, 0, -2)])
        got = []
        deadline = time.monotonic() + 30
        while len(got) < 100 and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is not None and not m.error():
                got.append(m.value())
        c.close()
        if got != [b"after-fuzz-%d" % i for i in range(100)]:
            return f"consumed {len(got)} of 100 records"
    except Exception as e:  # noqa: BLE001
        return f"{type(e).__name__}: {e}"
    return None


def run(frames: int, seed: int, batch: int, data_dir: Path, log_path: Path,
        read_timeout: float = 2.0, verbose: bool = True) -> dict:
    rng = random.Random(seed)
    broker = SoakBroker(data_dir, log_path)
    broker.start()
    filler = RequestFiller(rng)
    result = {"seed": seed, "frames": 0, "connections": 0, "closed_by_broker": 0,
              "responses": 0, "mutations": {}, "health_failures": [], "crashed": False}
    try:
        client_round_trip(broker.bootstrap_servers, TOPIC)  # the topic the realistic frames use
        with WireClient(broker.bootstrap_servers) as c:
            versions = c.api_versions()
        keys = sorted(versions)
        t0 = time.monotonic()
        while result["frames"] < frames:
            for _ in range(batch):
                if result["frames"] >= frames:
                    break
                n = min(rng.randint(1, 4), frames - result["frames"])
                payload = b""
                for _ in range(n):
                    if rng.random() < 0.1:
                        pool = realistic_frames(rng, versions)
                        valid = rng.choice(pool) if pool else b""
                    else:
                        key = rng.choice(keys)
                        lo, hi = versions[key]
                        v = rng.randint(lo, hi)
                        body = filler.fill(API_KEYS[key].request_type(), v)
                        valid = frame(key, v, body, rng.randint(0, 2**31 - 1))
                    kind, data = mutate(rng, valid)
                    result["mutations"][kind] = result["mutations"].get(kind, 0) + 1
                    payload += data
                result["frames"] += n
                result["connections"] += 1
                answered, closed = exchange(broker.port, payload, read_timeout)
                result["responses"] += answered
                result["closed_by_broker"] += closed
                if not broker.alive():
                    result["crashed"] = True
                    break
            if result["crashed"]:
                break
            problem = healthy(broker.bootstrap_servers)
            if problem:
                result["health_failures"].append({"after_frames": result["frames"],
                                                  "problem": problem})
            if verbose:
                print(f"  {result['frames']} frames, {result['connections']} connections, "
                      f"{time.monotonic() - t0:.0f} s, healthy={problem is None}", flush=True)
        result["seconds"] = round(time.monotonic() - t0, 1)
        result["alive_at_end"] = broker.alive()
        result["client_round_trip"] = (client_round_trip(broker.bootstrap_servers, "fuzz-after")
                                       if broker.alive() else "broker gone") or "ok"
    finally:
        if broker.alive():
            broker.stop()
    closing, tracebacks = log_problems(log_path.read_text(errors="replace"))
    result["protocol_error_closes"] = closing
    result["tracebacks"] = len(tracebacks)
    result["traceback_samples"] = tracebacks[:5]
    result["ok"] = (not result["crashed"] and result["alive_at_end"] and not tracebacks
                    and not result["health_failures"] and result["client_round_trip"] == "ok")
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=None, help="default: random (printed)")
    ap.add_argument("--batch", type=int, default=250, help="connections between health checks")
    ap.add_argument("--data-dir", type=Path, default=None, help="default: a temporary directory")
    ap.add_argument("--json", type=Path, default=None, help="also write the result here")
    args = ap.parse_args(argv)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    print(f"fuzz_frames: seed {seed}, {args.frames} frames", flush=True)
    with tempfile.TemporaryDirectory(prefix="pykafkad-fuzz-") as tmp:
        data_dir = args.data_dir or Path(tmp) / "data"
        log_path = Path(tmp) / "broker.log"
        result = run(args.frames, seed, args.batch, data_dir, log_path)
        if result["tracebacks"]:
            kept = Path(tempfile.gettempdir()) / f"pykafkad-fuzz-{seed}.log"
            kept.write_text(log_path.read_text(errors="replace"))
            result["broker_log"] = str(kept)
    samples = result.pop("traceback_samples")
    print(json.dumps(result, indent=2))
    for s in samples:
        print("---- traceback ----\n" + s)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    print("fuzz_frames: " + ("OK" if result["ok"] else "FAILED"))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
