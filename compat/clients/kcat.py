"""kcat (librdkafka's command-line client, from Debian's packages) implementations.

kcat produces lines from stdin and consumes to JSON lines (``-J``).  What it cannot express
is n/a: it sets no producer timestamps, creates no topics, commits no explicit offsets and has
no transactional producer.  Offsets by time use its query mode (``-Q``); groups its balanced
consumer (``-G``), one member at a time.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess

from compat.clients import authorization as authz
from compat.clients.cluster import expect_spread, group_led_elsewhere
from compat.clients.cluster import not_enough_replicas as cluster_not_enough_replicas
from compat.clients.setup import (
    BASE_TS,
    CLIENT_MAX_REQUEST,
    LARGE_OK,
    LARGE_TOO_BIG,
    LARGE_TOPIC_CONFIG,
    expect,
    large_value,
)
from compat.runner import WAIT_S, Env, run_python_cells

NAME = "kcat"
KCAT = shutil.which("kcat") or shutil.which("kafkacat")
#: kcat -H cannot carry bytes that are not text: the headers scenario sends this subset
HEADERS = [("a", "1"), ("b", ""), ("a", "2"), ("n", None), ("utf8-\u00e9", "\u00e9")]


def version() -> str:
    out = subprocess.run([KCAT, "-V"], capture_output=True, text=True).stdout
    m = re.search(r"Version (\S+).*?(librdkafka \S+)", out)
    return f"kcat {m.group(1)} ({m.group(2)})" if m else "kcat"


def unavailable() -> str | None:
    return None if KCAT else "kcat is not installed (apt-get install kcat)"


def kcat(env: Env, *args: str, input: bytes | None = None, check: bool = True):
    security = env.security.kcat_args() if env.security else []
    proc = subprocess.run([KCAT, "-b", env.bootstrap, *security, *args], input=input,
                          capture_output=True, timeout=WAIT_S * 2)
    if check and proc.returncode != 0:
        raise AssertionError(f"kcat {' '.join(args[:6])} exited {proc.returncode}: "
                             f"{proc.stderr.decode(errors='replace')[-300:]}")
    return proc


def produce(env: Env, topic: str, lines: list[str], *args: str, check: bool = True):
    return kcat(env, "-t", topic, "-P", *args, input="".join(f"{v}\n" for v in lines).encode(),
                check=check)


def consume(env: Env, topic: str, count: int, *args: str) -> list[dict]:
    """Everything up to the end of every partition (``-e``), as kcat's JSON envelopes."""
    proc = kcat(env, "-t", topic, "-C", "-e", "-o", "beginning", "-J", *args)
    out = [json.loads(line) for line in proc.stdout.decode().splitlines() if line.strip()]
    out.sort(key=lambda m: (m["partition"], m["offset"]))
    if len(out) != count:
        raise AssertionError(f"consumed {len(out)} records, expected {count}")
    return out


def vals(n: int, prefix: str = "v") -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


def produce_consume(env: Env) -> None:
    topic = env.topic()
    produce(env, topic, vals(100))
    got = consume(env, topic, 100)
    expect([m["payload"] for m in got], vals(100), "values")
    expect([m["offset"] for m in got], list(range(100)), "offsets")


def codec(name: str):
    def run(env: Env) -> None:
        topic = env.topic()
        produce(env, topic, [f"k:{v}" for v in vals(200)], "-K:", "-X",
                f"compression.codec={name}", "-X", "linger.ms=50")
        expect([m["payload"] for m in consume(env, topic, 200)], vals(200), "values")
    return run


def keys_partitioning(env: Env) -> None:
    topic = env.topic(partitions=4)
    keys = [f"key{i % 10}" for i in range(40)]
    produce(env, topic, [f"{k}:x" for k in keys], "-K:")
    for p in range(4):
        produce(env, topic, [f"explicit:{i}" for i in range(8) if i % 4 == p], "-K:", "-p", str(p))
    where: dict[str, set] = {}
    for m in consume(env, topic, 48):
        if m["key"] == "explicit":
            expect(m["partition"], int(m["payload"]) % 4, "partition of an explicit record")
        else:
            where.setdefault(m["key"], set()).add(m["partition"])
    expect({k: len(v) for k, v in where.items()}, {k: 1 for k in set(keys)}, "partitions per key")


def headers(env: Env) -> None:
    topic = env.topic()
    args = []
    for k, v in HEADERS:
        args += ["-H", k if v is None else f"{k}={v}"]
    produce(env, topic, vals(10), *args)
    for m in consume(env, topic, 10):
        h = m["headers"]
        expect(list(zip(h[::2], h[1::2], strict=False)), HEADERS, "headers")


def timestamps_log_append_time(env: Env) -> None:
    import time

    topic = env.topic(config={"message.timestamp.type": "LogAppendTime"})
    before = int(time.time() * 1000)
    produce(env, topic, vals(5))
    after = int(time.time() * 1000)
    for m in consume(env, topic, 5):
        expect(m["tstype"], "logappend", "timestamp type")
        if not before - 1000 <= m["ts"] <= after + 1000:
            raise AssertionError(f"LogAppendTime {m['ts']} not in [{before}, {after}]")


def large_records(env: Env) -> None:
    topic = env.topic(config=LARGE_TOPIC_CONFIG)
    big = large_value(LARGE_OK // 2).hex()  # a text line of LARGE_OK bytes
    limit = ["-X", f"message.max.bytes={CLIENT_MAX_REQUEST}"]
    produce(env, topic, [big], *limit)
    refused = produce(env, topic, [large_value(LARGE_TOO_BIG // 2).hex()], *limit, check=False)
    err = refused.stderr.decode(errors="replace")
    if refused.returncode == 0 or "too large" not in err.lower():
        raise AssertionError(f"a record above max.message.bytes was not refused: {err[-300:]!r}")
    got = consume(env, topic, 1)
    expect(len(got[0]["payload"]), LARGE_OK, "size")
    expect(got[0]["payload"] == big, True, "content intact")


def offsets_by_time(env: Env) -> None:
    from confluent_kafka import Producer

    topic = env.topic()
    # kcat cannot set timestamps: the records come from the harness (librdkafka too)
    p = Producer({"bootstrap.servers": env.harness})
    for i in range(20):
        p.produce(topic, f"v{i}".encode(), timestamp=BASE_TS + 1000 * i)
    if p.flush(WAIT_S):
        raise AssertionError("setup records not delivered")

    def query(ts: int) -> int:
        out = kcat(env, "-Q", "-t", f"{topic}:0:{ts}").stdout.decode()
        m = re.search(r"offset (-?\d+)", out)
        if not m:
            raise AssertionError(f"unexpected kcat -Q output {out!r}")
        return int(m.group(1))

    expect(query(BASE_TS + 5500), 6, "between records")
    expect(query(BASE_TS + 10_000), 10, "exact timestamp")
    expect(query(BASE_TS + 10_000_000), -1, "after the last (end)")
    got = [m["offset"] for m in consume(env, topic, 20)]
    expect((got[0], got[-1]), (0, 19), "first and last offsets")


def consumer_group(env: Env) -> None:
    topic = env.topic(partitions=4)
    group = env.name("group")
    for p in range(4):
        produce(env, topic, [f"v{i}" for i in range(40) if i % 4 == p], "-p", str(p))
    args = ["-G", group, "-e", "-J", "-X", "auto.offset.reset=earliest", topic]
    first = [json.loads(x) for x in kcat(env, *args).stdout.decode().splitlines() if x.strip()]
    expect(len(first), 40, "records read by the group")
    for p in range(4):
        produce(env, topic, ["late"], "-p", str(p))
    second = [json.loads(x) for x in kcat(env, *args).stdout.decode().splitlines() if x.strip()]
    expect(sorted((m["partition"], m["payload"]) for m in second),
           [(p, "late") for p in range(4)], "the next member resumes after the committed offsets")


def idempotent_producer(env: Env) -> None:
    topic = env.topic(partitions=2)
    for p in range(2):
        produce(env, topic, [f"v{i}" for i in range(1000) if i % 2 == p], "-p", str(p),
                "-X", "enable.idempotence=true")
    got = consume(env, topic, 1000)
    for p in range(2):
        expect([m["payload"] for m in got if m["partition"] == p],
               [f"v{i}" for i in range(1000) if i % 2 == p], f"partition {p}")


# ------------------------------------------------------------------ cluster scenarios
def _one(env: Env, *args: str, input: bytes | None = None):
    """kcat bootstrapped from the first broker only (-b once more: the last one wins)."""
    return kcat(env, "-b", env.first_broker, *args, input=input)


def _metadata(env: Env, topic: str) -> tuple[dict[int, dict], set[int]]:
    """kcat -L: ({partition: its JSON entry}, broker ids), from the first broker."""
    md = json.loads(_one(env, "-L", "-J", "-t", topic).stdout)
    parts = {p["partition"]: p for p in md["topics"][0]["partitions"]}
    return parts, {b["id"] for b in md["brokers"]}


def replicated_acks_all(env: Env) -> None:
    topic = env.topic(partitions=3, replication_factor=3, config={"min.insync.replicas": "2"})
    for p in range(3):
        _one(env, "-t", topic, "-P", "-p", str(p), "-X", "acks=all", "-X", "enable.idempotence=true",
             input="".join(f"v{i}\n" for i in range(300) if i % 3 == p).encode())
    got = consume(env, topic, 300)
    for p in range(3):
        expect([m["payload"] for m in got if m["partition"] == p],
               [f"v{i}" for i in range(300) if i % 3 == p], f"partition {p}")
    parts, brokers = _metadata(env, topic)
    expect([len(parts[p]["replicas"]) for p in range(3)], [3, 3, 3], "replicas per partition")
    expect([sorted(r["id"] for r in parts[p]["isrs"]) for p in range(3)],
           [sorted(r["id"] for r in parts[p]["replicas"]) for p in range(3)], "ISR = replicas")
    expect_spread({p: parts[p]["leader"] for p in range(3)}, brokers, "leaders")


def leaders_on_several_brokers(env: Env) -> None:
    for rf in (1, 3):
        topic = env.topic(f"rf{rf}", partitions=6, replication_factor=rf)
        for p in range(6):
            _one(env, "-t", topic, "-P", "-p", str(p),
                 input="".join(f"p{p}-{j}\n" for j in range(10)).encode())
        proc = _one(env, "-t", topic, "-C", "-e", "-o", "beginning", "-J")
        got = [json.loads(x) for x in proc.stdout.decode().splitlines() if x.strip()]
        got.sort(key=lambda m: (m["partition"], m["offset"]))
        for p in range(6):
            expect([m["payload"] for m in got if m["partition"] == p],
                   [f"p{p}-{j}" for j in range(10)], f"rf={rf} partition {p}")
        parts, brokers = _metadata(env, topic)
        expect_spread({p: e["leader"] for p, e in parts.items()}, brokers, f"rf={rf} leaders")


def group_coordinator_elsewhere(env: Env) -> None:
    """kcat commits what its balanced consumer (-G) read when it exits: a second run of the
    group resumes after it.  It cannot show its coordinator; the group id is chosen so that
    the coordinator is another broker than the one it bootstraps from."""
    group, _, _ = group_led_elsewhere(env)
    topic = env.topic(replication_factor=3)
    produce(env, topic, [f"v{i}" for i in range(10)])
    args = ["-b", env.first_broker, "-G", group, "-e", "-J", "-X", "auto.offset.reset=earliest",
            topic]
    first = [json.loads(x) for x in kcat(env, *args).stdout.decode().splitlines() if x.strip()]
    expect([m["payload"] for m in first], [f"v{i}" for i in range(10)], "records read by the group")
    produce(env, topic, ["late"])
    second = [json.loads(x) for x in kcat(env, *args).stdout.decode().splitlines() if x.strip()]
    expect([(m["offset"], m["payload"]) for m in second], [(10, "late")],
           "the next member resumes after the committed offset")


def not_enough_replicas(env: Env) -> None:
    def produce_one(topic: str, value: str) -> str | None:
        proc = produce(env, topic, [value], "-X", "acks=all", "-X", "enable.idempotence=false",
                       "-X", "message.send.max.retries=0", check=False)
        err = proc.stderr.decode(errors="replace")
        return None if proc.returncode == 0 and "ERROR" not in err else err

    cluster_not_enough_replicas(env, produce_one, "Not enough in-sync replicas")


def authorization(env: Env) -> None:
    me = authz.user(env).kcat_args()  # after the super user's settings: they win
    topic, group = env.topic(), env.name("g")
    refused = produce(env, topic, ["refused"], *me, check=False)
    expect(refused.returncode != 0, True, "kcat's exit status after a refused produce")
    authz.expect_refused(refused.stderr.decode(errors="replace"), "TOPIC_AUTHORIZATION_FAILED",
                         "produce without an ACL")
    authz.grant(env, topic, group, authz.PRODUCE_ACLS)
    produce(env, topic, vals(3), *me)
    args = [*me, "-G", group, "-e", "-J", "-X", "auto.offset.reset=earliest", topic]
    refused = kcat(env, *args, check=False)
    authz.expect_refused(refused.stderr.decode(errors="replace"), "GROUP_AUTHORIZATION_FAILED",
                         "consume without an ACL")
    authz.grant(env, topic, group, authz.CONSUME_ACLS)
    got = [json.loads(x) for x in kcat(env, *args).stdout.decode().splitlines() if x.strip()]
    expect([m["payload"] for m in got], vals(3), "records read once allowed")


IMPLEMENTATIONS = {
    "authorization": authorization,
    "produce-consume": produce_consume,
    **{f"codec-{c}": codec(c) for c in ("none", "gzip", "snappy", "lz4", "zstd")},
    "keys-partitioning": keys_partitioning,
    "headers": headers,
    "timestamps-log-append-time": timestamps_log_append_time,
    "large-records": large_records,
    "offsets-by-time": offsets_by_time,
    "consumer-group": consumer_group,
    "idempotent-producer": idempotent_producer,
    "replicated-acks-all": replicated_acks_all,
    "leaders-on-several-brokers": leaders_on_several_brokers,
    "group-coordinator-elsewhere": group_coordinator_elsewhere,
    "not-enough-replicas": not_enough_replicas,
}


def run(bootstrap: str, scenarios: list[str], nodes=None, secured=None) -> dict:
    return run_python_cells(NAME, IMPLEMENTATIONS, bootstrap, scenarios, nodes, secured)
