"""Spark's ``kafka`` data source for the installed pyspark: its jars, and a SparkSession using them.

    from compat.spark import spark_session
    spark = spark_session()
    df = spark.read.format("kafka").option("kafka.bootstrap.servers", addr) ...

The connector (org.apache.spark:spark-sql-kafka-0-10_2.13 at pyspark's own version) is fetched
from Maven Central once, with its runtime dependencies, into ``.cache/jars/`` (see
compat/maven.py).  Only the jars pyspark does not ship already go on the classpath:
the connector, spark-token-provider-kafka, kafka-clients and commons-pool2.  A pyspark
whose connector Maven Central does not serve (pyspark 4.3.0's, at the time of writing) is
refused in one line (ConnectorUnavailable) before any JVM starts.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from compat import maven

SCALA = "2.13"
CONNECTOR = "org.apache.spark:spark-sql-kafka-0-10_{scala}:{version}"
#: the pyspark the project pins (pyproject.toml): the newest whose connector is served
TESTED_PYSPARK = "4.2.0"


class ConnectorUnavailable(RuntimeError):
    """Maven Central serves no Kafka connector for this pyspark version."""
_JAR_NAME = re.compile(r"^(?P<artifact>.+?)-(?P<version>\d[^-]*(?:-[A-Za-z0-9.]+)?)\.jar$")


def pyspark_version() -> str:
    import pyspark

    return pyspark.__version__


def _artifact(jar_name: str) -> str:
    m = _JAR_NAME.match(jar_name)
    return m.group("artifact") if m else jar_name


def connector_jars(version: str | None = None) -> list[Path]:
    """The jars to add to pyspark for the kafka format, fetched on first use."""
    import pyspark

    version = version or pyspark_version()
    coord = CONNECTOR.format(scala=SCALA, version=version)
    try:
        directory = maven.fetch(f"spark-kafka-{version}", [coord])
    except maven.ArtifactNotFound as e:
        raise ConnectorUnavailable(
            f"pyspark {version} has no Kafka connector: Maven Central does not serve "
            f"{e.coordinates}; install pyspark=={TESTED_PYSPARK} (pykafkad's tested version)"
        ) from None
    shipped = {
        _artifact(name)
        for name in os.listdir(Path(pyspark.__file__).parent / "jars")
        if name.endswith(".jar")
    }
    return [j for j in maven.jars(directory) if _artifact(j.name) not in shipped]


def spark_session(app_name: str = "pykafkad", *, conf: dict[str, str] | None = None):
    """A local SparkSession (2 cores, small shuffles, no UI) that can read and write Kafka.

    Spark keeps one session per process: a second call returns the running one."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = (
        SparkSession.builder.master("local[2]")
        .appName(app_name)
        .config("spark.jars", ",".join(str(j) for j in connector_jars()))
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.streaming.forceDeleteTempCheckpointLocation", "true")
        .config("spark.sql.session.timeZone", "UTC")
    )
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(os.environ.get("PYKAFKAD_SPARK_LOG_LEVEL", "ERROR"))
    return spark
