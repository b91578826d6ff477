"""Shared pieces of the Spark tests: availability, the one SparkSession, small data helpers.

Spark's ``kafka`` format runs unchanged against pykafkad; every test shares one SparkSession
(a JVM start costs seconds) and a module's broker, each test on its own topics.
"""

from __future__ import annotations

import os
import shutil
import uuid

import pytest

#: bound on any one Spark query in these tests; they finish in seconds on a working broker
QUERY_TIMEOUT_S = 180


def _spark_missing() -> str | None:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "pyspark is not installed (pip install -e .[test])"
    if shutil.which("java") is None:
        return "java is not installed"
    if shutil.which("mvn") is None and not any(
        (p / ".complete").exists() for p in _jar_dirs()
    ):
        return "mvn is not installed and the Spark connector jars are not cached"
    return None


def _jar_dirs():
    from compat.maven import CACHE

    return list(CACHE.glob("spark-kafka-*")) if CACHE.exists() else []


_MISSING = _spark_missing()
#: in CI (scripts/test installs everything) a missing piece is a failure, never a skip
needs_spark = pytest.mark.skipif(
    _MISSING is not None and not os.environ.get("CI"), reason=_MISSING or "")


@pytest.fixture(scope="session")
def spark():
    """The one SparkSession of the test run (compat's Spark column reuses it too)."""
    from compat.spark import spark_session

    return spark_session("pykafkad-tests")


def new_topic(prefix: str = "spark") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def reader(spark, bootstrap: str, **options):
    r = spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap)
    for k, v in options.items():
        r = r.option(k, v)
    return r


def stream_reader(spark, bootstrap: str, **options):
    r = spark.readStream.format("kafka").option("kafka.bootstrap.servers", bootstrap)
    for k, v in options.items():
        r = r.option(k, v)
    return r


def run_available_now(df, checkpoint: str, **sink_options):
    """Runs a streaming query to a Kafka sink over everything available now, then returns the
    stopped query (its recentProgress tells the micro-batches)."""
    w = df.writeStream.format("kafka").option("checkpointLocation", checkpoint)
    for k, v in sink_options.items():
        w = w.option(k, v)
    query = w.trigger(availableNow=True).start()
    finished = query.awaitTermination(QUERY_TIMEOUT_S)
    if not finished:
        query.stop()
        raise AssertionError(f"query did not finish in {QUERY_TIMEOUT_S}s")
    return query


def values(rows) -> list[str]:
    return [bytes(r.value).decode() for r in rows]
