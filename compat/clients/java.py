"""The official Java client: compat/java/CompatClient.java, one JVM for every scenario.

Java 11+ runs a single source file directly (``java -cp jars CompatClient.java``), so no build
tool is needed; the jars (org.apache.kafka:kafka-clients and its runtime dependencies, plus
slf4j-simple so that the client's warnings reach stderr) come from Maven Central once.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from compat import maven
from compat.runner import FAIL, NA, PASS, Result, run_python_cells

NAME = "java"
#: the newest kafka-clients (Spark's column runs the 3.9 line that Spark ships with)
CLIENTS_VERSION = os.environ.get("PYKAFKAD_JAVA_CLIENTS_VERSION", "4.4.0")
SLF4J = "org.slf4j:slf4j-simple:1.7.36"
SOURCE = Path(__file__).resolve().parent.parent / "java" / "CompatClient.java"
#: per scenario inside the JVM is 120 s; this bounds the whole JVM run
BASE_TIMEOUT_S = 120
PER_SCENARIO_S = 130


def jars_dir(version: str = CLIENTS_VERSION) -> Path:
    return maven.fetch(f"kafka-clients-{version}",
                       [f"org.apache.kafka:kafka-clients:{version}", SLF4J])


def version() -> str:
    import re

    out = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr
    m = re.search(r'version "([^"]+)"', out)
    return f"kafka-clients {CLIENTS_VERSION} (Java {m.group(1) if m else '?'})"


def unavailable() -> str | None:
    if shutil.which("java") is None:
        return "java is not installed"
    cache = maven.CACHE / f"kafka-clients-{CLIENTS_VERSION}" / maven.STAMP
    if shutil.which("mvn") is None and not cache.exists():
        return "mvn is not installed and the kafka-clients jars are not cached"
    return None


def run_java(bootstrap: str, scenarios: list[str], *, version: str | None = None,
             jvm_options: tuple[str, ...] = (),
             secured=None) -> tuple[dict[str, Result], str]:
    """Runs the scenarios in one JVM: ({scenario: result}, the JVM's stderr).  ``version``:
    the kafka-clients release (default CLIENTS_VERSION); ``jvm_options``: extra -D flags, such
    as a client logger's level; ``secured``: a compat.security.SecuredTarget, whose super
    user's settings every client of the run gets (and its unprivileged user's, the
    authorization scenario)."""
    cp = maven.classpath(jars_dir(version or CLIENTS_VERSION))
    with contextlib.ExitStack() as files:
        options = list(jvm_options)
        if secured is not None:
            user = {**secured.user.java, "compat.username": secured.user.username}
            options += [f"-Dcompat.client.config={_properties(files, secured.admin.java)}",
                        f"-Dcompat.user.config={_properties(files, user)}",
                        f"-Dcompat.harness={secured.harness}"]
        cmd = ["java", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
               "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", *options,
               "-Dorg.slf4j.simpleLogger.logFile=System.err",
               "-cp", cp, str(SOURCE), bootstrap, *scenarios]
        return _run_jvm(cmd, scenarios)


def _properties(files: contextlib.ExitStack, props: dict) -> str:
    """A temporary properties file (removed with ``files``) as java.util.Properties reads it
    (backslashes are escapes there)."""
    f = files.enter_context(
        tempfile.NamedTemporaryFile("w", suffix=".properties", prefix="compat-client-"))
    f.write("".join(f"{k}={str(v).replace(chr(92), chr(92) * 2)}\n" for k, v in props.items()))
    f.flush()
    return f.name


def _run_jvm(cmd: list[str], scenarios: list[str]) -> tuple[dict[str, Result], str]:
    timeout = BASE_TIMEOUT_S + PER_SCENARIO_S * len(scenarios)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        stdout, stderr, rc = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as e:
        stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        stderr = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        rc = f"timeout after {timeout}s"
    out: dict[str, Result] = {}
    for line in stdout.splitlines():
        if line.startswith("##RESULT "):
            r = json.loads(line[len("##RESULT "):])
            out[r["scenario"]] = Result(r["status"], r["seconds"], r["reason"])
    for s in scenarios:
        if s not in out:
            tail = " ".join(stderr.strip().splitlines()[-3:])[-400:]
            out[s] = Result(FAIL, 0.0, f"the Java run ended ({rc}) before this scenario: {tail}")
    return out, stderr


def _not_enough_replicas(env) -> None:
    """The Java client sends the record refused while a follower is down (one more JVM, which
    gets the topic as -Dcompat.topic); the harness stops the node and sends the others."""
    from compat.clients.cluster import harness_produce, not_enough_replicas

    def produce(topic: str, value: str) -> str | None:
        results, stderr = run_java(env.bootstrap, ["not-enough-replicas"],
                                   jvm_options=(f"-Dcompat.topic={topic}",
                                                f"-Dcompat.value={value}"),
                                   secured=env.secured)
        r = results["not-enough-replicas"]
        return None if r.status == PASS else r.reason

    not_enough_replicas(env, produce, "NotEnoughReplicasException",
                        produce_ok=lambda topic, value: harness_produce(env, topic, value))


def _streams_group(env) -> None:
    """A Kafka Streams application (compat/streams_app.py: two JVMs of kafka-streams) rather
    than the client itself, so it is this column's."""
    from compat import streams_app
    from compat.clients.setup import expect
    from compat.runner import NotApplicable

    if env.secured is not None:
        raise NotApplicable("the Kafka Streams application connects over PLAINTEXT only")
    missing = streams_app.unavailable()
    if missing:
        raise NotApplicable(missing)
    seen = streams_app.word_count_scenario(env.bootstrap, env.name())
    batch_1, batch_2 = streams_app.BATCH_1, streams_app.BATCH_2
    expect(seen["counts_1"], streams_app.expected_counts(batch_1), "counts of the first lines")
    expect([len(tasks) for tasks in seen["two_members"]["active_tasks"]], [2, 2],
           "active tasks of the two instances")
    expect(seen["counts_2"], streams_app.expected_counts(batch_1 + batch_2),
           "counts after more lines, with one instance left")
    expect(seen["one_member"]["members"], 1, "members after one instance stopped")


#: scenarios whose Java part runs in a JVM of its own, inside a Python-side scenario
PYTHON_DRIVEN = {"not-enough-replicas": _not_enough_replicas, "streams-group": _streams_group}


def run(bootstrap: str, scenarios: list[str], nodes=None, secured=None) -> dict[str, Result]:
    java_side = [s for s in scenarios if not s.startswith("spark-") and s not in PYTHON_DRIVEN]
    results, _ = run_java(bootstrap, java_side, secured=secured) if java_side else ({}, "")
    driven = [s for s in scenarios if s in PYTHON_DRIVEN]
    if driven:
        results.update(run_python_cells(NAME, PYTHON_DRIVEN, bootstrap, driven, nodes, secured))
    for s in scenarios:
        results.setdefault(s, Result(NA))
    return results
