"""Server-side assignors (``group.consumer.assignors``): ``uniform`` and ``range``.

An assignor maps the group's subscriptions onto a target assignment; it never looks at who
owns what right now (reconciliation does that).  ``uniform`` is sticky: a member keeps the
partitions of its previous target up to its fair share, and the rest go to the members with
the fewest, so a joining member moves as few partitions as possible.
"""

from __future__ import annotations

from collections.abc import Mapping

#: (topic_id, partition)
TopicPartition = tuple[bytes, int]
#: member id -> {topic_id: set of partitions}
Assignment = dict[str, dict[bytes, set[int]]]


def _flatten(a: Mapping[bytes, set[int]]) -> list[TopicPartition]:
    return sorted((t, p) for t, ps in a.items() for p in ps)


def _group(pairs) -> dict[bytes, set[int]]:
    out: dict[bytes, set[int]] = {}
    for t, p in pairs:
        out.setdefault(t, set()).add(p)
    return out


def uniform(subscriptions: Mapping[str, set[bytes]], partitions: Mapping[bytes, int],
            previous: Assignment) -> Assignment:
    """Balanced and sticky; members with different subscriptions only get topics they
    subscribe to."""
    members = sorted(subscriptions)
    if not members:
        return {}
    result: dict[str, list[TopicPartition]] = {m: [] for m in members}
    taken: set[TopicPartition] = set()
    all_tps = sorted((t, p) for t in set().union(*subscriptions.values()) if t in partitions
                     for p in range(partitions[t]))
    eligible = {tp: [m for m in members if tp[0] in subscriptions[m]] for tp in all_tps}
    total = len(all_tps)
    quota = total // len(members)
    extra = total % len(members)
    # keep previous partitions up to the fair share (+1 for as many members as the remainder)
    for m in members:
        keep = [tp for tp in _flatten(previous.get(m, {}))
                if tp in eligible and m in eligible[tp] and tp not in taken]
        limit = quota + (1 if extra > 0 and len(keep) > quota else 0)
        if limit > quota:
            extra -= 1
        for tp in keep[:limit]:
            result[m].append(tp)
            taken.add(tp)
    for tp in all_tps:
        if tp in taken:
            continue
        candidates = eligible[tp]
        if not candidates:
            continue
        m = min(candidates, key=lambda c: (len(result[c]), members.index(c)))
        result[m].append(tp)
        taken.add(tp)
    return {m: _group(tps) for m, tps in result.items()}


def range_(subscriptions: Mapping[str, set[bytes]], partitions: Mapping[bytes, int],
           previous: Assignment) -> Assignment:
    """Per topic, its subscribers (by member id) get contiguous ranges of partitions."""
    result: Assignment = {m: {} for m in subscriptions}
    for topic in sorted(set().union(*subscriptions.values()) if subscriptions else ()):
        if topic not in partitions:
            continue
        subs = sorted(m for m, s in subscriptions.items() if topic in s)
        n = partitions[topic]
        per, extra = divmod(n, len(subs))
        start = 0
        for i, m in enumerate(subs):
            count = per + (1 if i < extra else 0)
            if count:
                result[m][topic] = set(range(start, start + count))
            start += count
    return result


ASSIGNORS = {"uniform": uniform, "range": range_}
