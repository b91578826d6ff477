"""Runs scenarios x clients against one broker and collects the matrix."""

from __future__ import annotations

import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from compat import features
from compat.scenarios import BY_NAME, CLIENTS, SCENARIOS
from compat.wire_client import advertised_apis, cluster_brokers

PASS, FAIL, NA, UNSUPPORTED = "pass", "fail", "n/a", "unsupported"
#: bound on any single wait inside a scenario; a working broker answers far sooner
WAIT_S = 30
SECURED_ONLY = "needs a secured target (python -m compat --secured)"


class NotApplicable(Exception):
    """The client cannot express this scenario (or this part of it)."""


@dataclass
class Result:
    status: str
    seconds: float = 0.0
    reason: str = ""


@dataclass
class Matrix:
    target: str
    bootstrap: str
    scenarios: list[str]
    clients: list[str]
    results: dict[tuple[str, str], Result] = field(default_factory=dict)
    started: float = field(default_factory=time.time)
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    versions: dict[str, str] = field(default_factory=dict)

    def failures(self, scenarios: set[str] | None = None) -> list[tuple[str, str, Result]]:
        return [
            (s, c, r) for (s, c), r in self.results.items()
            if r.status == FAIL and (scenarios is None or s in scenarios)
        ]

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.results.values():
            out[r.status] = out.get(r.status, 0) + 1
        return out


class Env:
    """What a Python-side scenario implementation gets: the broker, how to connect to it, and
    fresh topic names."""

    def __init__(self, bootstrap: str, client: str, scenario: str, nodes=None, secured=None):
        self.bootstrap = bootstrap
        self.client = client
        self.scenario = scenario
        self.run_id = uuid.uuid4().hex[:8]
        #: compat.node_control.NodeControl of a cluster the harness started, else None
        self.nodes = nodes
        #: compat.security.SecuredTarget when the clients connect over SASL_SSL, else None
        self.secured = secured

    @property
    def security(self):
        """The scenario's user's connection settings (compat.security.ClientSecurity: a super
        user), or None on a PLAINTEXT target."""
        return self.secured.admin if self.secured else None

    @property
    def harness(self) -> str:
        """Where the harness itself connects (PLAINTEXT): the secured target's second
        listener, else the bootstrap."""
        return self.secured.harness if self.secured else self.bootstrap

    def kafka_python(self, **conf) -> dict:
        """kafka-python's settings for this target: bootstrap, security, then ``conf``."""
        return {"bootstrap_servers": self.bootstrap,
                **(self.security.kafka_python if self.security else {}), **conf}

    def librdkafka(self, conf: dict | None = None) -> dict:
        """librdkafka's properties for this target: bootstrap, security, then ``conf``."""
        return {"bootstrap.servers": self.bootstrap,
                **(self.security.librdkafka if self.security else {}), **(conf or {})}

    @property
    def first_broker(self) -> str:
        """The first bootstrap address alone: cluster scenarios bootstrap from one broker, so
        that reaching the others proves the client followed Metadata."""
        return self.bootstrap.split(",")[0].strip()

    def name(self, suffix: str = "") -> str:
        short = self.client.split("-")[0]
        return f"compat-{self.scenario}-{short}-{self.run_id}{'-' + suffix if suffix else ''}"

    def topic(self, suffix: str = "", partitions: int = 1, config: dict | None = None,
              replication_factor: int = 1) -> str:
        """Creates a topic with the harness's admin client (librdkafka) and waits until the
        broker's metadata shows it (with a replication factor above 1: until every partition
        has a leader and a full ISR)."""
        from compat.clients.setup import create_topic

        name = self.name(suffix)
        create_topic(self.harness, name, partitions, config or {}, replication_factor)
        return name


def run_python_cells(
    client: str,
    impls: dict[str, Callable[[Env], None]],
    bootstrap: str,
    scenarios: list[str],
    nodes=None,
    secured=None,
) -> dict[str, Result]:
    out = {}
    for name in scenarios:
        fn = impls.get(name)
        if fn is None:
            out[name] = Result(NA)
            continue
        t0 = time.monotonic()
        try:
            fn(Env(bootstrap, client, name, nodes, secured))
            out[name] = Result(PASS, time.monotonic() - t0)
        except NotApplicable as e:
            out[name] = Result(NA, time.monotonic() - t0, str(e))
        except Exception as e:  # any failure of the scenario is a cell result
            out[name] = Result(FAIL, time.monotonic() - t0, describe_error(e))
    return out


def describe_error(e: BaseException) -> str:
    tb = traceback.extract_tb(e.__traceback__)
    where = ""
    for frame in reversed(tb):
        if "/compat/" in frame.filename:
            where = f" (at {frame.filename.rsplit('/compat/', 1)[1]}:{frame.lineno})"
            break
    text = str(e).strip() or type(e).__name__
    if isinstance(e, AssertionError) and not str(e).strip():
        text = "assertion failed"
    elif not text.startswith(type(e).__name__) and not isinstance(e, AssertionError):
        text = f"{type(e).__name__}: {text}"
    return " ".join(text.split())[:600] + where


def client_module(name: str):
    from compat.clients import confluent, java, kafka_python, kcat, spark

    return {
        "kafka-python": kafka_python, "confluent-kafka": confluent, "java": java,
        "kcat": kcat, "spark": spark,
    }[name]


def run_matrix(
    bootstrap: str,
    *,
    target: str,
    scenarios: list[str] | None = None,
    clients: list[str] | None = None,
    log: Callable[[str], None] = print,
    require_clients: bool = True,
    nodes=None,
    secured=None,
) -> Matrix:
    """``require_clients=False`` reports a client that is not installed as n/a instead of
    failing its cells (for developer machines without Java or kcat).  ``nodes``: a
    compat.node_control.NodeControl when the harness started the cluster (scenarios that stop
    a node are n/a without it).  ``secured``: a compat.security.SecuredTarget whose
    ``bootstrap`` is ``bootstrap``: every client connects over SASL_SSL as its super user, and
    the scenarios that need a secured target run."""
    scenarios = scenarios or [s.name for s in SCENARIOS]
    clients = clients or list(CLIENTS)
    for s in scenarios:
        if s not in BY_NAME:
            raise ValueError(f"unknown scenario {s!r}")
    matrix = Matrix(target, bootstrap, scenarios, clients)
    t0 = time.monotonic()
    harness = secured.harness if secured else bootstrap
    apis = advertised_apis(harness)
    brokers = len(cluster_brokers(harness))
    runnable = []
    too_few = [s for s in scenarios if BY_NAME[s].brokers > brokers]
    if too_few:
        matrix.notes.append(f"not applicable with {brokers} broker(s) (cluster scenarios): "
                            + ", ".join(too_few))
    for s in scenarios:
        gaps = [g for f in BY_NAME[s].needs for g in features.missing(apis, f)]
        if BY_NAME[s].brokers > brokers:
            for c in clients:
                matrix.results[(s, c)] = Result(
                    NA, 0.0, f"needs {BY_NAME[s].brokers} brokers; the target has {brokers}")
        elif BY_NAME[s].secured and secured is None:
            for c in clients:
                matrix.results[(s, c)] = Result(NA, 0.0, SECURED_ONLY)
        elif gaps:
            for c in clients:
                matrix.results[(s, c)] = Result(
                    UNSUPPORTED, 0.0, "the broker does not advertise " + ", ".join(gaps))
        else:
            runnable.append(s)
    for c in clients:
        module = client_module(c)
        missing = module.unavailable()
        if missing:
            matrix.notes.append(f"{c}: not run ({missing})")
            for s in runnable:
                matrix.results[(s, c)] = Result(FAIL if require_clients else NA, 0.0,
                                                f"client unavailable: {missing}")
            continue
        try:
            matrix.versions[c] = module.version()
        except Exception as e:  # a version string is informative only
            matrix.versions[c] = f"{c} (version unknown: {e})"
        log(f"[compat] {c}: {len(runnable)} scenarios against {target} ({bootstrap}) ...")
        c0 = time.monotonic()
        for s, res in module.run(bootstrap, runnable, nodes, secured).items():
            matrix.results[(s, c)] = res
        log(f"[compat] {c}: done in {time.monotonic() - c0:.1f}s")
    matrix.seconds = time.monotonic() - t0
    return matrix
