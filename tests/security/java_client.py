"""Runs compat/java/SecureClient.java (the official Java client) against a secured listener."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2] / "compat" / "java" / "SecureClient.java"
#: kafka-clients' OAUTHBEARER login and validation need Jackson and jose4j (optional
#: dependencies of the jar; Apache Kafka 4.4's broker ships these versions)
OAUTH_EXTRAS = ["com.fasterxml.jackson.core:jackson-databind:2.21.7", "org.bitbucket.b_c:jose4j:0.9.6"]


def jars(version: str):
    from compat import maven
    from compat.clients.java import SLF4J

    return maven.fetch(f"kafka-clients-{version}-oauth",
                       [f"org.apache.kafka:kafka-clients:{version}", SLF4J, *OAUTH_EXTRAS])


def java_round_trip(bootstrap: str, settings: dict, workdir: Path) -> str:
    """``ok over-java`` after a produce and consume, or ``error <class>: <message>``."""
    from compat import maven
    from compat.clients.java import CLIENTS_VERSION

    props = workdir / f"client-{uuid.uuid4().hex[:6]}.properties"
    props.write_text("".join(f"{k}={_escape(v)}\n" for k, v in settings.items()))
    cp = maven.classpath(jars(CLIENTS_VERSION))
    out = subprocess.run(
        ["java", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
         "-Dorg.slf4j.simpleLogger.defaultLogLevel=error", "-cp", cp, str(SOURCE), bootstrap,
         str(props), f"sec-{uuid.uuid4().hex[:8]}"],
        capture_output=True, text=True, timeout=150)
    for line in out.stdout.splitlines():
        if line.startswith("##SECURE "):
            return line[len("##SECURE "):]
    raise AssertionError(f"the Java client printed no result:\n{out.stdout}\n{out.stderr[-2000:]}")


def _escape(value) -> str:
    return str(value).replace("\\", "\\\\")
