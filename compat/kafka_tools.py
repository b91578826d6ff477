"""Apache Kafka's command-line tools (org.apache.kafka.tools: GetOffsetShell, FeatureCommand
...) from the newest kafka-tools jar on Maven Central, run with the newest kafka-clients.

kafka-tools is published up to TOOLS_VERSION.  The kafka-clients jars of
compat.kafka_specs.SPECS_VERSION (the Java scenarios' cache set) come first on the class path,
so the tools speak the newest client's protocol versions; the tools' own, older kafka-clients
comes after them and only supplies the classes the newer one dropped (kafka-clients 4.4 no
longer ships org.apache.kafka.common.utils.Exit, which the 4.3 tools call to exit).
"""

from __future__ import annotations

import os
import subprocess

from compat import maven

#: the newest org.apache.kafka:kafka-tools on Maven Central
TOOLS_VERSION = "4.3.1"
SLF4J = "org.slf4j:slf4j-simple:1.7.36"
TIMEOUT_S = 120


def classpath() -> str:
    from compat.clients import java
    from compat.kafka_specs import SPECS_VERSION

    tools = maven.fetch(f"kafka-tools-{TOOLS_VERSION}-with-clients",
                        [f"org.apache.kafka:kafka-tools:{TOOLS_VERSION}", SLF4J])
    clients = java.jars_dir(SPECS_VERSION)
    # one slf4j binding: the tools set brings its own
    jars = [j for j in maven.jars(clients) if "slf4j" not in j.name] + maven.jars(tools)
    return os.pathsep.join(str(j) for j in jars)


def run_tool(main_class: str, *args: str) -> subprocess.CompletedProcess:
    """Runs ``org.apache.kafka.tools.<main_class> args...``; stdout and stderr as text."""
    cmd = ["java", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
           "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", classpath(),
           f"org.apache.kafka.tools.{main_class}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
