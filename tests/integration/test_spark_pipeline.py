"""The example Structured Streaming job (examples/spark_pipeline.py) end to end on pykafkad:
events in, per-minute page-view counts out, stopped and restarted on its checkpoint."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from datetime import UTC, datetime

from examples.spark_pipeline import produce_events, sample_events, start
from pykafkad.testing import run_broker
from tests.integration.clients import create_topic
from tests.integration.spark_support import (
    QUERY_TIMEOUT_S,
    needs_spark,
    new_topic,
    reader,
    spark,  # noqa: F401  (fixture)
)

pytestmark = needs_spark


def expected_counts(events):
    views, users = Counter(), defaultdict(set)
    for e in events:
        key = (e["ts"][:16] + ":00Z", e["page"])  # the minute the event falls in
        views[key] += 1
        users[key].add(e["user"])
    return {k: (views[k], len(users[k])) for k in views}


def latest_counts(spark, bootstrap, topic):  # noqa: F811
    """The last update the job wrote for each (window, page)."""
    rows = reader(spark, bootstrap, subscribe=topic).load().orderBy("partition", "offset").collect()
    out = {}
    for r in rows:
        v = json.loads(bytes(r.value))
        assert bytes(r.key).decode() == v["page"]
        out[(v["window_start"], v["page"])] = (v["views"], v["users"])
    return out


def run_once(spark, bs, source, sink, checkpoint):  # noqa: F811
    query = start(spark, bs, source, sink, checkpoint, available_now=True,
                  max_offsets_per_trigger=150)
    assert query.awaitTermination(QUERY_TIMEOUT_S), "the pipeline did not finish"
    assert query.exception() is None


def test_page_view_pipeline_end_to_end_with_restart(spark, tmp_path):  # noqa: F811
    with run_broker(tmp_path / "data") as kafka:
        bs = kafka.bootstrap_servers
        source, sink = new_topic("page-views"), new_topic("page-view-counts")
        create_topic(bs, source, partitions=3)
        create_topic(bs, sink, partitions=2)
        checkpoint = str(tmp_path / "checkpoint")

        first = sample_events(300, seed=1)
        produce_events(bs, source, first)
        run_once(spark, bs, source, sink, checkpoint)
        assert latest_counts(spark, bs, sink) == expected_counts(first)

        # more views from minute 3 on, after the watermark (latest event time - 2 minutes):
        # the counts of minutes 3 and 4 are updated, later minutes are new
        more = sample_events(200, seed=2, start_at=datetime(2024, 5, 1, 12, 3, tzinfo=UTC))
        produce_events(bs, source, more)
        run_once(spark, bs, source, sink, checkpoint)
        assert latest_counts(spark, bs, sink) == expected_counts(first + more)
