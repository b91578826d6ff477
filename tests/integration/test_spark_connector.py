"""Spark's Kafka connector comes from Maven Central at pyspark's own version; a pyspark whose
connector is not served is named in one line (by compat.spark and by the compat suite's Spark
column), not with a Maven log or a Java trace."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from compat.clients import spark as spark_column
from compat.spark import TESTED_PYSPARK, ConnectorUnavailable, connector_jars
from tests.integration.clients import needs_java
from tests.integration.spark_support import needs_spark

#: no such Spark release, so Maven Central will never serve its connector
UNSERVED = "4.99.0"
ONE_LINE = (f"pyspark {UNSERVED} has no Kafka connector: Maven Central does not serve "
            f"org.apache.spark:spark-sql-kafka-0-10_2.13:jar:{UNSERVED}; "
            f"install pyspark=={TESTED_PYSPARK} (pykafkad's tested version)")


@needs_java
def test_a_pyspark_without_a_served_connector_is_refused_in_one_line():
    with pytest.raises(ConnectorUnavailable) as e:
        connector_jars(UNSERVED)
    assert str(e.value) == ONE_LINE
    assert e.value.__suppress_context__  # the Maven log stays out of the traceback


@needs_spark
def test_the_spark_column_says_why_it_cannot_run():
    assert spark_column.unavailable(UNSERVED) == ONE_LINE
    assert spark_column.unavailable() is None  # the installed, pinned pyspark


def test_the_pinned_pyspark_is_the_tested_one():
    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert f"pyspark=={TESTED_PYSPARK}" in pyproject["project"]["optional-dependencies"]["test"]
