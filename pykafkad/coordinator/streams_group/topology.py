"""A streams group's topology checked against the cluster's topics (Kafka's
InternalTopicManager.configureTopics): how many tasks each subtopology has, which internal
topics are missing (the broker creates them) and the statuses a heartbeat reports until the
topology is ready."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

# StreamsGroupHeartbeatResponse.Status codes (KIP-1071)
STALE_TOPOLOGY = 0
MISSING_SOURCE_TOPICS = 1
INCORRECTLY_PARTITIONED_TOPICS = 2
MISSING_INTERNAL_TOPICS = 3
SHUTDOWN_APPLICATION = 4
ASSIGNMENT_DELAYED = 5


@dataclass
class InternalTopic:
    name: str
    partitions: int = 0
    replication_factor: int = 0
    configs: dict[str, str] = field(default_factory=dict)


@dataclass
class Subtopology:
    subtopology_id: str
    source_topics: list[str]
    repartition_sink_topics: list[str]
    changelog_topics: list[InternalTopic]
    repartition_source_topics: list[InternalTopic]
    #: each group lists the indexes of source topics / repartition source topics
    copartition_groups: list[tuple[list[int], list[int]]] = field(default_factory=list)


@dataclass
class Topology:
    epoch: int
    subtopologies: list[Subtopology]

    @classmethod
    def from_request(cls, t) -> Topology:
        def internal(infos):
            return [InternalTopic(i.name, i.partitions, i.replication_factor,
                                  {c.key: c.value for c in i.topic_configs}) for i in infos]
        return cls(t.epoch, [Subtopology(
            s.subtopology_id, list(s.source_topics), list(s.repartition_sink_topics),
            internal(s.state_changelog_topics), internal(s.repartition_source_topics),
            [(list(c.source_topics), list(c.repartition_source_topics))
             for c in s.copartition_groups])
            for s in t.subtopologies])


@dataclass
class ConfiguredTopology:
    #: subtopology id -> number of tasks; empty while the topology is not ready
    task_counts: dict[str, int]
    statuses: list[tuple[int, str]]
    #: internal topics to create, with their resolved partition counts
    missing_internal_topics: list[InternalTopic]
    #: for the IQ endpoint answer: subtopology id -> its source and repartition source topics
    source_topics: dict[str, list[str]] = field(default_factory=dict)

    @property
    def ready(self) -> bool:
        return not self.statuses


def configure(topology: Topology, partitions_of: Callable[[str], int | None]) -> ConfiguredTopology:
    """Resolves partition counts: a repartition topic without a fixed count takes the largest
    count among the source topics of the subtopologies writing to it; a changelog topic
    takes its subtopology's task count."""
    missing_sources = sorted({t for s in topology.subtopologies for t in s.source_topics
                              if partitions_of(t) is None})
    sources = {s.subtopology_id: s.source_topics + [r.name for r in s.repartition_source_topics]
               for s in topology.subtopologies}
    if missing_sources:
        return ConfiguredTopology({}, [(MISSING_SOURCE_TOPICS, "Source topics "
                                        + ", ".join(missing_sources) + " are missing.")], [],
                                  sources)
    repartition: dict[str, int] = {}
    for s in topology.subtopologies:
        for r in s.repartition_source_topics:
            if r.partitions > 0:
                repartition[r.name] = r.partitions
    changed = True
    while changed:
        changed = False
        for s in topology.subtopologies:
            counts = [partitions_of(t) or 0 for t in s.source_topics]
            counts += [repartition.get(r.name, 0) for r in s.repartition_source_topics]
            n = max(counts, default=0)
            if n <= 0:
                continue
            for sink in s.repartition_sink_topics:
                if repartition.get(sink, 0) < n and not _fixed(topology, sink):
                    repartition[sink] = n
                    changed = True
    task_counts: dict[str, int] = {}
    missing: list[InternalTopic] = []
    wrong: list[str] = []
    for s in topology.subtopologies:
        counts = [partitions_of(t) or 0 for t in s.source_topics]
        counts += [repartition.get(r.name, 0) for r in s.repartition_source_topics]
        n = max(counts, default=0)
        task_counts[s.subtopology_id] = n
        for topic, want in ([(r, repartition.get(r.name, 0)) for r in s.repartition_source_topics]
                            + [(c, n) for c in s.changelog_topics]):
            have = partitions_of(topic.name)
            if have is None:
                missing.append(InternalTopic(topic.name, want, topic.replication_factor,
                                             topic.configs))
            elif want and have != want:
                wrong.append(topic.name)
        for source_idx, repart_idx in s.copartition_groups:
            names = [s.source_topics[i] for i in source_idx]
            names += [s.repartition_source_topics[i].name for i in repart_idx]
            sizes = {partitions_of(t) or repartition.get(t, 0) for t in names}
            if len(sizes) > 1:
                wrong.extend(names)
    statuses = []
    if wrong:
        statuses.append((INCORRECTLY_PARTITIONED_TOPICS,
                         "Following topics are not copartitioned or have the wrong number of "
                         "partitions: " + ", ".join(sorted(set(wrong)))))
    uniq = {t.name: t for t in missing}
    if uniq:
        statuses.append((MISSING_INTERNAL_TOPICS,
                         "Internal topics are missing: " + ", ".join(sorted(uniq))))
    if statuses:
        return ConfiguredTopology({}, statuses, list(uniq.values()), sources)
    return ConfiguredTopology(task_counts, [], [], sources)


def _fixed(topology: Topology, name: str) -> bool:
    return any(r.name == name and r.partitions > 0
               for s in topology.subtopologies for r in s.repartition_source_topics)
