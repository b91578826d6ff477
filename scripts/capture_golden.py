"""Captures golden request/response bytes from the stock clients talking to a real pykafkad.

    .venv/bin/python scripts/capture_golden.py tests/wire/golden

An in-process broker (``pykafkad.testing.run_broker``) sits behind a small recording TCP proxy;
the broker advertises the proxy's address, so every connection a client opens after bootstrap
also goes through it. kafka-python, confluent-kafka and kcat are then driven through every API
the broker registers (``pykafkad.dispatch.load_handlers``): admin (topics, partitions, configs,
cluster, records), Produce in each compression codec, Fetch (sessionless, full and incremental
sessions), ListOffsets (earliest, latest, max timestamp, by timestamp), OffsetForLeaderEpoch,
and the group and transaction APIs when their handlers exist (a scenario that fails is logged
and the capture goes on).

For each exchange the proxy keeps the raw frames without their size prefix (header + body).
The first exchange per (client, API, version, variant) is kept; the variant separates cases the
codec tests need apart: the compression codec of produced batches (``-txn``: transactional),
sessionless/full/incremental fetches with or without records (``-txn``: aborted transactions or
control batches), which ListOffsets spec was asked, all/no/named topics for Metadata, group or
transaction coordinator. Output (about 100 kB):

    <out>/<client>/<ApiName>-v<version>[-<variant>]-{request,response}.bin
    <out>/index.json     api key/version, header versions, correlation id, file names

Clients are told apart by their ``client.id`` (set here). Records are few, small and have fixed
keys, values and (where the client allows) timestamps, so a re-run gives the same files except
for what the broker or the clients make up per run (topic ids, producer ids, session ids, times).
Files from an earlier run are replaced. tests/wire/test_golden.py reads the result.

The recording proxy, the recorder and one driver per client live in scripts/golden/; this
script starts the broker, runs the drivers phase by phase and writes what was recorded.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

# golden/ (next to this script) puts the repository root on sys.path, for wire and pykafkad
from golden.clients_confluent import Confluent
from golden.clients_kafka_python import KafkaPython
from golden.clients_kcat import Kcat
from golden.common import CLIENTS, GROUP_APIS, KCAT, TXN_APIS, ClientDriver, log, step
from golden.proxy import Proxy
from golden.recorder import Recorder

from wire.messages import API_KEYS


def drive(bootstrap: str, node_id: int, handlers: set[int]) -> None:
    clients: list[ClientDriver] = [
        KafkaPython(bootstrap, node_id, handlers), Confluent(bootstrap, node_id, handlers)
    ]
    if KCAT:
        clients.append(Kcat(bootstrap, node_id, handlers))
    else:
        log("kcat not found: no kcat captures")
    for phase in ("admin", "produce", "consume"):
        for c in clients:
            getattr(c, phase)()
    if GROUP_APIS <= handlers:
        for c in clients:
            step(f"{c.name} groups", c.groups)
    else:
        log(f"group APIs not all served (missing {sorted(GROUP_APIS - handlers)}): skipped")
    if TXN_APIS <= handlers:
        for c in clients:
            step(f"{c.name} transactions", c.transactions)
        for c in clients:  # committed, aborted and control batches, read committed
            step(f"{c.name} read committed", c.read_committed)
    else:
        log(f"transaction APIs not all served (missing {sorted(TXN_APIS - handlers)}): skipped")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="output directory, e.g. tests/wire/golden")
    args = parser.parse_args(argv)

    import logging

    logging.basicConfig(level=logging.CRITICAL)
    from pykafkad.dispatch import load_handlers
    from pykafkad.testing import run_broker

    handlers = set(load_handlers())
    log(f"broker serves api keys {sorted(handlers)}")
    recorder = Recorder()
    with run_broker() as b:
        proxy = Proxy((b.host, b.port), recorder)
        proxy.start()
        b.broker.set_endpoint("127.0.0.1", proxy.port)
        try:
            drive(f"127.0.0.1:{proxy.port}", b.broker.node_id, handlers)
            time.sleep(0.5)  # let the last responses of closing clients arrive
        finally:
            proxy.close()
    args.out.mkdir(parents=True, exist_ok=True)
    with recorder.lock:
        total = recorder.write(args.out)
    busiest = ", ".join(f"{c} {a} x{n}" for (c, a), n in recorder.seen.most_common(5))
    log(f"{recorder.seen.total()} exchanges seen (most: {busiest}), "
        f"{len(recorder.exchanges)} kept, {total} bytes")
    for client in CLIENTS:
        kept = sorted(
            f"{k[1]}:{API_KEYS[k[1]].name}-v{k[2]}{'-' + k[3] if k[3] else ''}"
            for k in recorder.exchanges if k[0] == client
        )
        log(f"{client}: {', '.join(kept)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
