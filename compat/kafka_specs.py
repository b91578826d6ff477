"""Kafka's JSON message specs, read from the kafka-clients jar they ship in.

The codec in wire/messages/ is generated from the specs of one Kafka release, SPECS_VERSION.
The jar comes from Maven Central through the same cache set the Java client scenarios use
(``kafka-clients-<version>``), so one download serves both.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

#: the Kafka release whose message specs wire/messages/ is generated from
SPECS_VERSION = "4.4.0"
#: where the message specs live inside the kafka-clients jar
JAR_PREFIX = "common/message/"
#: where the KRaft metadata record specs live inside the kafka-metadata jar
METADATA_PREFIX = "common/metadata/"


def specs_jar(version: str = SPECS_VERSION) -> Path:
    """The kafka-clients jar of ``version``, fetched with Maven when not cached."""
    from compat.clients import java

    directory = java.jars_dir(version)
    jar = directory / f"kafka-clients-{version}.jar"
    if not jar.exists():
        raise FileNotFoundError(f"no kafka-clients-{version}.jar in {directory}")
    return jar


def metadata_specs_jar(version: str = SPECS_VERSION) -> Path:
    """The kafka-metadata jar of ``version`` (among the reference broker's jars, fetched with
    Maven when not cached): it holds the KRaft metadata record specs."""
    from compat.kafka_broker import kafka_classpath

    for entry in kafka_classpath(version).split(":"):
        if Path(entry).name == f"kafka-metadata-{version}.jar":
            return Path(entry)
    raise FileNotFoundError(f"no kafka-metadata-{version}.jar among Kafka {version}'s jars")


def read_specs(source: Path, prefix: str = JAR_PREFIX) -> dict[str, str]:
    """{spec file name: JSON text} from a directory of specs or a jar (specs under ``prefix``)."""
    if source.is_dir():
        return {p.name: p.read_text() for p in sorted(source.glob("*.json"))}
    with zipfile.ZipFile(source) as jar:
        return {
            name[len(prefix):]: jar.read(name).decode()
            for name in sorted(jar.namelist())
            if name.startswith(prefix) and name.endswith(".json") and "/" not in name[len(prefix):]
        }
