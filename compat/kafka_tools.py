"""Apache Kafka's command-line tools (kafka-topics, kafka-configs ...) from Maven Central jars.

A Kafka download's ``bin/kafka-*.sh`` scripts only pick a Java main class and a classpath, so
the tools run here without a download: the classpath is ``org.apache.kafka:kafka-tools`` (the
newest version Maven Central serves) plus ``kafka_2.13`` at the same version for the tools that
still live in Kafka's core (kafka-configs), fetched once through compat/maven.py.  Tests and
scripts point them at any broker, pykafkad or Apache Kafka:

    proc = run_tool("kafka-configs", ["--bootstrap-server", addr, "--describe",
                                      "--entity-type", "topics", "--entity-name", "events"])
    print(proc.stdout)

or from a shell: ``python -m compat.kafka_tools kafka-topics --bootstrap-server HOST:PORT --list``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from compat import maven

#: kafka-tools 4.4.0 is not on Maven Central; 4.3.1 is the newest served (4.x tools talk to
#: any 4.x broker: they pick request versions from ApiVersions)
TOOLS_VERSION = "4.3.1"
SCALA = "2.13"

#: the main class each ``bin/<tool>.sh`` of Kafka 4.3 runs
MAIN_CLASSES = {
    "kafka-topics": "org.apache.kafka.tools.TopicCommand",
    "kafka-configs": "kafka.admin.ConfigCommand",
    "kafka-features": "org.apache.kafka.tools.FeatureCommand",
    "kafka-consumer-groups": "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
    "kafka-streams-groups": "org.apache.kafka.tools.streams.StreamsGroupCommand",
    "kafka-share-groups": "org.apache.kafka.tools.consumer.group.ShareGroupCommand",
    "kafka-get-offsets": "org.apache.kafka.tools.GetOffsetShell",
    "kafka-producer-perf-test": "org.apache.kafka.tools.ProducerPerformance",
    "kafka-consumer-perf-test": "org.apache.kafka.tools.ConsumerPerformance",
    "kafka-console-producer": "org.apache.kafka.tools.ConsoleProducer",
    "kafka-console-consumer": "org.apache.kafka.tools.consumer.ConsoleConsumer",
    "kafka-delete-records": "org.apache.kafka.tools.DeleteRecordsCommand",
    "kafka-transactions": "org.apache.kafka.tools.TransactionsCommand",
    "kafka-cluster": "org.apache.kafka.tools.ClusterTool",
    "kafka-dump-log": "org.apache.kafka.tools.DumpLogSegments",
    "kafka-log-dirs": "org.apache.kafka.tools.LogDirsCommand",
    "kafka-metadata-quorum": "org.apache.kafka.tools.MetadataQuorumCommand",
    "kafka-reassign-partitions": "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
    "kafka-leader-election": "org.apache.kafka.tools.LeaderElectionCommand",
    "kafka-acls": "org.apache.kafka.tools.AclCommand",
}
#: tools that reach into kafka-clients' internal classes (segment files), which change from
#: release to release: they run with the kafka-clients of their own version
OWN_CLIENTS_TOOLS = {"kafka-dump-log"}
#: kafka-run-class.sh's defaults for the tools (a 256 MB heap), plus a headless JVM
JAVA_OPTS = ["-Xmx256m", "-XX:+UseG1GC", "-Djava.awt.headless=true"]
#: the tools log through slf4j; Kafka's own launch binds it to log4j2 with tools-log4j2.yaml
#: (warnings, to stderr): slf4j-simple does the same without a configuration file
SLF4J_SIMPLE = "org.slf4j:slf4j-simple:1.7.36"
LOGGING_OPTS = ["-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-Dorg.slf4j.simpleLogger.logFile=System.err", "-Dlog4j2.level=WARN"]
TIMEOUT_S = 120


def tools_dir(version: str = TOOLS_VERSION) -> Path:
    """The jars of kafka-tools and kafka_2.13 (with their runtime dependencies) and an slf4j
    binding, fetched once."""
    return maven.fetch(f"kafka-tools-{version}", [
        f"org.apache.kafka:kafka-tools:{version}",
        f"org.apache.kafka:kafka_{SCALA}:{version}",
        SLF4J_SIMPLE,
    ])


def unavailable(version: str = TOOLS_VERSION) -> str | None:
    """Why the tools cannot run here, or None."""
    if shutil.which("java") is None:
        return "java is not installed (Kafka's tools need Java 17+)"
    stamp = maven.CACHE / f"kafka-tools-{version}" / maven.STAMP
    if shutil.which("mvn") is None and not stamp.exists():
        return "mvn is not installed and the kafka-tools jars are not cached"
    return None


def tool_command(tool: str, args: Sequence[str] = (), *, version: str = TOOLS_VERSION) -> list[str]:
    """The java command line ``bin/<tool>.sh args`` runs."""
    try:
        main_class = MAIN_CLASSES[tool.removesuffix(".sh")]
    except KeyError:
        raise ValueError(f"unknown Kafka tool {tool!r}; known: {', '.join(MAIN_CLASSES)}") from None
    java = shutil.which("java")
    if java is None:
        raise RuntimeError("java is not installed (Kafka's tools need Java 17+)")
    name = tool.removesuffix(".sh")
    cp = (maven.classpath(tools_dir(version)) if name in OWN_CLIENTS_TOOLS
          else classpath(version))
    return [java, *JAVA_OPTS, *LOGGING_OPTS, "-cp", cp, main_class, *args]


def classpath(version: str = TOOLS_VERSION) -> str:
    """The newest kafka-clients (compat.kafka_specs.SPECS_VERSION, the Java scenarios' set)
    first, so the tools speak the newest protocol versions; the tools' own, older clients after
    it only supply the classes the newer one dropped (kafka-clients 4.4 no longer ships
    org.apache.kafka.common.utils.Exit, which the 4.3 tools call to exit)."""
    from compat.clients import java
    from compat.kafka_specs import SPECS_VERSION

    clients = [j for j in maven.jars(java.jars_dir(SPECS_VERSION)) if "slf4j" not in j.name]
    return os.pathsep.join(str(j) for j in [*clients, *maven.jars(tools_dir(version))])


def run_tool(
    tool: str,
    args: Sequence[str] = (),
    *,
    input: str | None = None,
    timeout: float = TIMEOUT_S,
    check: bool = False,
    version: str = TOOLS_VERSION,
) -> subprocess.CompletedProcess[str]:
    """Runs a Kafka tool as its ``bin/<tool>.sh`` would and returns its exit status, stdout and
    stderr (text).  ``check=True`` raises CalledProcessError on a non-zero exit."""
    return subprocess.run(tool_command(tool, args, version=version), input=input,
                          capture_output=True, text=True, timeout=timeout, check=check)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(f"usage: python -m compat.kafka_tools TOOL [ARGS...]\n"
              f"Kafka {TOOLS_VERSION} tools: {', '.join(MAIN_CLASSES)}", file=sys.stderr)
        return 2
    return subprocess.run(tool_command(argv[0], argv[1:])).returncode


if __name__ == "__main__":
    sys.exit(main())
