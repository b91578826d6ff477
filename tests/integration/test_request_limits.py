"""Admin requests too large for one controller operation are refused whole, as Kafka does.

Kafka's controller writes at most 10,000 metadata records per admin request
(QuorumController.MAX_RECORDS_PER_USER_OP): a CreateTopics asking for more partitions in all,
or whose valid topics need more records (one per topic, partition and config), and a
CreatePartitions adding more, answer POLICY_VIOLATION for every topic and change nothing.
Each scenario runs against pykafkad and against Apache Kafka, which must answer the same.
"""

from __future__ import annotations

import uuid

from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

from tests.integration.clients import WAIT_S, needs_java


def _outcome(futures) -> dict[str, tuple[str, str] | str]:
    out = {}
    for name, f in futures.items():
        try:
            f.result(WAIT_S)
            out[name] = "OK"
        except Exception as e:
            err = e.args[0]
            out[name] = (err.name(), err.str())
    return out


def _scenarios(bootstrap: str) -> dict[str, dict]:
    """Every scenario validate_only (so a real broker creates nothing big), by label."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    p = f"resources-{uuid.uuid4().hex[:8]}"

    def create(*topics: NewTopic) -> dict:
        return _outcome(admin.create_topics(list(topics), validate_only=True))

    cfg = {"retention.ms": "1000", "segment.bytes": "10000000"}
    seen = {
        "30000": create(NewTopic(f"{p}-a", 30000, 1)),
        "10001": create(NewTopic(f"{p}-a", 10001, 1)),
        "10000 (10001 records)": create(NewTopic(f"{p}-a", 10000, 1)),
        "9999": create(NewTopic(f"{p}-a", 9999, 1)),
        "9998 + 2 configs": create(NewTopic(f"{p}-a", 9998, 1, config=cfg)),
        "9997 + 2 configs": create(NewTopic(f"{p}-a", 9997, 1, config=cfg)),
        "5000 + 4999": create(NewTopic(f"{p}-a", 5000, 1), NewTopic(f"{p}-b", 4999, 1)),
        "4999 + 4999": create(NewTopic(f"{p}-a", 4999, 1), NewTopic(f"{p}-b", 4999, 1)),
        "10000 + invalid name": create(NewTopic(f"{p}-a", 10000, 1), NewTopic("bad name!", 1, 1)),
        "5000 + 4999 + invalid name": create(
            NewTopic(f"{p}-a", 5000, 1), NewTopic(f"{p}-b", 4999, 1), NewTopic("bad name!", 1, 1)),
    }
    grown = [f"{p}-g1", f"{p}-g2"]
    made = _outcome(admin.create_topics([NewTopic(t, 1, 1) for t in grown]))
    assert made == {t: "OK" for t in grown}

    def grow(*parts: NewPartitions) -> dict:
        return _outcome(admin.create_partitions(list(parts), validate_only=True))

    seen["grow 6000 + 6000"] = grow(NewPartitions(grown[0], 6000), NewPartitions(grown[1], 6000))
    seen["grow 6000 + unknown 6000"] = grow(
        NewPartitions(grown[0], 6000), NewPartitions(f"{p}-none", 6000))
    seen["grow by 10001"] = grow(NewPartitions(grown[0], 10002))
    seen["grow by 10000"] = grow(NewPartitions(grown[0], 10001))
    _outcome(admin.delete_topics(grown))
    # names differ per run: compare by position
    return {label: sorted(v.values(), key=str) for label, v in seen.items()}


TOO_MANY = ("POLICY_VIOLATION", "Excessively large number of partitions per request.")
BATCH = ("POLICY_VIOLATION", "Unable to perform excessively large batch operation.")
TOO_MANY_MORE = ("POLICY_VIOLATION", "Excessively large number of additional partitions per request.")


def test_partitions_per_request_limit(broker):
    seen = _scenarios(broker.bootstrap_servers)
    assert seen["30000"] == [TOO_MANY]
    assert seen["10000 (10001 records)"] == [BATCH]
    assert seen["9999"] == ["OK"]
    assert seen["9998 + 2 configs"] == [BATCH]
    assert seen["9997 + 2 configs"] == ["OK"]
    assert seen["10000 + invalid name"] == [TOO_MANY, TOO_MANY]
    assert seen["5000 + 4999 + invalid name"] == [BATCH] * 3
    assert seen["grow 6000 + 6000"] == [TOO_MANY_MORE] * 2
    assert seen["grow by 10000"] == ["OK"]


def test_thirty_thousand_partitions_refused_at_once_and_nothing_created(broker, topic_name):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    got = _outcome(admin.create_topics([NewTopic(topic_name, 30000, 1)]))
    assert got == {topic_name: TOO_MANY}
    assert topic_name not in admin.list_topics(timeout=WAIT_S).topics
    assert not list(broker.data_dir.glob(f"{topic_name}-*"))
    # the broker still serves: a normal topic is created on the same connection
    assert _outcome(admin.create_topics([NewTopic(topic_name, 2, 1)])) == {topic_name: "OK"}


@needs_java
def test_partitions_per_request_limit_matches_kafka(broker, reference_kafka):
    assert _scenarios(broker.bootstrap_servers) == _scenarios(reference_kafka.bootstrap_servers)
