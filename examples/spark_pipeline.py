"""Page views per page and minute: a Structured Streaming job from Kafka to Kafka.

Events come in on one topic as JSON (``{"user": "u7", "page": "/cart", "ts": "2024-05-01T12:00:03Z"}``);
the job counts views and distinct users per page in one-minute event-time windows (late
events accepted for two minutes) and writes every updated count to a second topic, keyed by
page, as JSON.  It runs unchanged against pykafkad and Apache Kafka.

    python -m pykafkad --data-dir /tmp/pykafkad-data &            # a broker on localhost:9092
    python examples/spark_pipeline.py --generate 500              # some page views
    python examples/spark_pipeline.py --checkpoint /tmp/pageviews-cp --available-now
    kcat -b localhost:9092 -t page-view-counts -C -e -f '%k %s\\n'

Stopped and started again with the same checkpoint, the job goes on where it stopped.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

EVENTS_SCHEMA = "user STRING, page STRING, ts TIMESTAMP"
WINDOW = "1 minute"
LATENESS = "2 minutes"


def page_view_counts(events):
    """The aggregation, on a DataFrame of Kafka records (``value`` holds the JSON event)."""
    from pyspark.sql import functions as F

    parsed = events.select(F.from_json(F.col("value").cast("string"), EVENTS_SCHEMA).alias("e"))
    return (
        parsed.select("e.*")
        .where(F.col("page").isNotNull() & F.col("ts").isNotNull())
        .withWatermark("ts", LATENESS)
        .groupBy(F.window("ts", WINDOW).alias("w"), "page")
        .agg(F.count("*").alias("views"), F.size(F.collect_set("user")).alias("users"))
        .select(
            F.col("page").alias("key"),
            F.to_json(F.struct(
                F.date_format("w.start", "yyyy-MM-dd'T'HH:mm:ss'Z'").alias("window_start"),
                "page", "views", "users",
            )).alias("value"),
        )
    )


def start(spark, bootstrap: str, source: str, sink: str, checkpoint: str, *,
          available_now: bool = False, max_offsets_per_trigger: int | None = None):
    """Starts the streaming query and returns it."""
    reader = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
    )
    if max_offsets_per_trigger:
        reader = reader.option("maxOffsetsPerTrigger", str(max_offsets_per_trigger))
    writer = (
        page_view_counts(reader.load())
        .writeStream.format("kafka")
        .outputMode("update")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", sink)
        .option("checkpointLocation", checkpoint)
        .queryName("page-view-counts")
    )
    if available_now:
        writer = writer.trigger(availableNow=True)
    return writer.start()


def sample_events(n: int, *, seed: int = 7, start_at: datetime | None = None) -> list[dict]:
    """``n`` page views over a few minutes, slightly out of order, as a website sends them."""
    rng = random.Random(seed)
    t0 = start_at or datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    pages = ["/", "/search", "/product/42", "/cart", "/checkout"]
    out = []
    for i in range(n):
        ts = t0 + timedelta(seconds=i * 240 / max(n, 1) + rng.uniform(-5, 5))
        out.append({"user": f"u{rng.randrange(40)}", "page": rng.choice(pages),
                    "ts": ts.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"})
    return out


def produce_events(bootstrap: str, topic: str, events: list[dict]) -> None:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for e in events:
        p.produce(topic, json.dumps(e).encode(), key=e["user"].encode())
    if p.flush(30):
        raise RuntimeError("events were not all delivered")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bootstrap-server", default="localhost:9092")
    ap.add_argument("--source", default="page-views")
    ap.add_argument("--sink", default="page-view-counts")
    ap.add_argument("--checkpoint", default="/tmp/page-view-counts-checkpoint")
    ap.add_argument("--available-now", action="store_true",
                    help="process what is there now, then stop (default: run until Ctrl-C)")
    ap.add_argument("--generate", type=int, metavar="N",
                    help="only produce N sample page views to the source topic")
    args = ap.parse_args(argv)
    if args.generate:
        produce_events(args.bootstrap_server, args.source, sample_events(args.generate))
        print(f"produced {args.generate} page views to {args.source}")
        return 0
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from compat.spark import spark_session

    spark = spark_session("page-view-counts")
    query = start(spark, args.bootstrap_server, args.source, args.sink, args.checkpoint,
                  available_now=args.available_now)
    try:
        query.awaitTermination()
    except KeyboardInterrupt:
        query.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
