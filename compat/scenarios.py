"""The compatibility scenarios: what each one checks, whatever client runs it.

Every client that can express a scenario implements it with its own API, end to end (it
creates or is given its topics, produces, consumes, and checks what came back); a client
that cannot express it is "n/a" in the matrix.  The checks are the same for every client and
hold on Apache Kafka: a scenario that fails there is a broken scenario.
"""

from __future__ import annotations

from dataclasses import dataclass

CLIENTS = ("kafka-python", "confluent-kafka", "java", "kcat", "spark")

#: records' timestamps in the scenarios that set them (2023-11-14T22:13:20Z)
BASE_TS = 1_700_000_000_000
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")


@dataclass(frozen=True)
class Scenario:
    name: str
    summary: str
    #: broker features (compat/features.py) without which the scenario cannot run
    needs: tuple[str, ...] = ()
    #: the least number of brokers the target must have (a cluster scenario: n/a below it)
    brokers: int = 1
    #: runs only on a secured target (compat/security.py), where clients log in as users
    secured: bool = False


SCENARIOS: list[Scenario] = [
    Scenario("produce-consume",
             "100 records to one partition, read back from the beginning: same values, "
             "in order, offsets 0-99"),
    *(Scenario(f"codec-{c}", f"200 records compressed with {c} (batched), read back intact")
      for c in CODECS),
    Scenario("keys-partitioning",
             "keyed records over 4 partitions: each key stays in one partition; records with "
             "an explicit partition land there"),
    Scenario("headers",
             "record headers, repeated keys, empty and null values, read back in order"),
    Scenario("timestamps-create-time",
             "explicit CreateTime timestamps are kept and reported as CreateTime"),
    Scenario("timestamps-log-append-time",
             "a topic with message.timestamp.type=LogAppendTime: the broker's time replaces the "
             "producer's and is reported as LogAppendTime"),
    Scenario("large-records",
             "a 2.5 MB record on a topic allowing 3 MB, read back with default fetch sizes; a "
             "3.5 MB record is refused with MESSAGE_TOO_LARGE"),
    Scenario("offsets-by-time",
             "offsets for timestamps (between, exact, after the last record), beginning and "
             "end offsets"),
    Scenario("admin-topics",
             "create (partitions, configs), duplicate create refused, describe, list, add "
             "partitions, delete, delete of a missing topic refused"),
    Scenario("admin-configs",
             "describe topic configs (defaults and overrides), incremental set and delete, an "
             "unknown config name refused"),
    Scenario("admin-describe-paging",
             "describe topics whose partitions span several DescribeTopicPartitions pages "
             "(cursor paging)"),
    Scenario("consumer-group",
             "two members of a group on 4 partitions: a rebalance splits them; committed "
             "offsets survive the group; a new member resumes after them", ("groups",)),
    Scenario("offset-commit",
             "commit an offset with metadata; read it back by the consumer and a new member",
             ("groups",)),
    Scenario("idempotent-producer",
             "1000 records with enable.idempotence=true: no duplicates, order kept per partition"),
    Scenario("transactions",
             "committed, aborted and committed transactions: read_committed sees only the "
             "committed records, read_uncommitted all of them", ("transactions",)),
    Scenario("transactions-offsets",
             "consume-transform-produce: output records and the group's input offsets commit "
             "atomically", ("transactions", "groups")),
    Scenario("consumer-group-protocol",
             "KIP-848 (group.protocol=consumer): two members on 4 partitions get 2 each from "
             "the broker's assignor; committed offsets survive the group; a new member resumes "
             "after them", ("consumer-groups",)),
    Scenario("transactions-v2",
             "consume-transform-produce over 3 partitions with the client's newest transaction "
             "protocol (transaction version 2 where the broker finalizes it): commit, abort, "
             "commit, abort; read_committed sees the committed records, the group the last "
             "committed offset", ("transactions", "groups")),
    Scenario("share-group",
             "KIP-932 share group (share.auto.offset.reset=earliest): two share consumers on "
             "one partition read 20 records between them, each once; a RELEASEd record comes "
             "back with delivery counts 1, 2, 3, a REJECTed one never", ("share-groups",)),
    Scenario("streams-group",
             "KIP-1071 (group.protocol=streams): a Kafka Streams word count (a repartition "
             "topic, a state store) in two instances, which split its 4 tasks 2 and 2; one "
             "stops, the other takes its tasks over; the counts are right before and after",
             ("streams-groups",)),
    Scenario("authorization",
             "a user with no ACL is refused: producing gets TOPIC_AUTHORIZATION_FAILED, "
             "consuming in a group GROUP_AUTHORIZATION_FAILED; after CreateAcls (WRITE on the "
             "topic, then READ on the topic and the group) it produces and consumes",
             secured=True),
    Scenario("spark-batch",
             "Spark batch write (keys, headers, partitions), batch read with JSON offset "
             "ranges, subscribePattern and assign"),
    Scenario("spark-streaming",
             "Structured Streaming topic to topic with a checkpoint and maxOffsetsPerTrigger, "
             "stopped and restarted: nothing lost, nothing twice"),
    Scenario("spark-fail-on-data-loss",
             "records deleted under a stopped query: failOnDataLoss=true fails as on Kafka, "
             "false goes on; added partitions are no data loss", ("delete-records",)),
    Scenario("spark-deprecated-offset-fetching",
             "spark.sql.streaming.kafka.useDeprecatedOffsetFetching=true: the driver reads "
             "offsets through a consumer group", ("groups",)),
]

#: the cluster scenarios: they need several brokers (n/a against a single node)
CLUSTER_SIZE = 3
CLUSTER_SCENARIOS: list[Scenario] = [
    Scenario("replicated-acks-all",
             "a topic with replication.factor=3 and min.insync.replicas=2: idempotent acks=all "
             "records read back intact; described with 3 replicas and an ISR of 3 per partition, "
             "leaders on all 3 brokers", brokers=CLUSTER_SIZE),
    Scenario("leaders-on-several-brokers",
             "6-partition topics (rf=1 and rf=3) led by every broker, the client bootstrapped "
             "from one broker: it produces to and reads from every partition, following "
             "Metadata to each leader", brokers=CLUSTER_SIZE),
    Scenario("group-coordinator-elsewhere",
             "a group whose coordinator (its __consumer_offsets partition's leader) is not the "
             "bootstrap broker: the client finds it, commits, and a new member resumes from the "
             "committed offset", ("groups",), brokers=CLUSTER_SIZE),
    Scenario("transaction-across-brokers",
             "a transactional producer writing to partitions led by different brokers: commit, "
             "abort, commit; read_committed sees exactly the committed records",
             ("transactions",), brokers=CLUSTER_SIZE),
    Scenario("not-enough-replicas",
             "min.insync.replicas=3 on a 3-replica topic with a follower stopped: an acks=all "
             "record gets NOT_ENOUGH_REPLICAS and is not written; with the node back, acks=all "
             "works again (needs a cluster the harness started)", brokers=CLUSTER_SIZE),
    Scenario("spark-replicated",
             "Spark writes (acks=all) to and reads from a replicated 3-partition topic led by "
             "every broker", brokers=CLUSTER_SIZE),
]
SCENARIOS += CLUSTER_SCENARIOS

BY_NAME = {s.name: s for s in SCENARIOS}
