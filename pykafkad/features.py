"""The feature levels ApiVersions reports (KIP-584): what this broker supports and finalizes.

Kafka 4.4 finalizes metadata.version=33, group.version=1 (KIP-848 consumer groups),
streams.version=1, share.version=2, transaction.version=2 (KIP-890 part 2) and
eligible.leader.replicas.version=1.  Clients act on the finalized levels: a Java 4.x
transactional producer switches to transaction version 2 when it sees transaction.version>=2
(served: an epoch bump per transaction, partitions added by Produce v12+ and TxnOffsetCommit
v5+); streams groups are served (streams.version 1).  The group and share features are
supported and finalized only at level 0 until they are served (not listed as finalized, as Kafka
omits a level-0 feature); the others are reported as Kafka reports them.
"""

from __future__ import annotations

from typing import NamedTuple


class Feature(NamedTuple):
    name: str
    min_version: int
    max_version: int
    #: the finalized level; 0 is never listed among the finalized features
    finalized: int


#: in the order Kafka 4.4 lists its supported features
FEATURES: tuple[Feature, ...] = (
    Feature("group.version", 0, 1, 1),
    Feature("kraft.version", 0, 1, 0),
    Feature("metadata.version", 7, 33, 33),
    Feature("share.version", 0, 2, 2),
    Feature("streams.version", 0, 1, 1),
    Feature("transaction.version", 0, 2, 2),
    Feature("eligible.leader.replicas.version", 0, 1, 1),
)
#: the order of Kafka 4.4's finalized features
FINALIZED_ORDER = ("group.version", "streams.version", "transaction.version",
                   "eligible.leader.replicas.version", "share.version", "metadata.version")
#: finalized levels never change here, so their epoch never moves (Kafka's is the offset of
#: the last metadata record)
FINALIZED_FEATURES_EPOCH = 0


def finalized() -> list[Feature]:
    rank = {name: i for i, name in enumerate(FINALIZED_ORDER)}
    return sorted((f for f in FEATURES if f.finalized > 0), key=lambda f: rank.get(f.name, 99))


def finalized_levels(node) -> tuple[int, list[tuple[str, int]]]:
    """(epoch, [(name, level)]) ApiVersions reports: a KRaft node's come from its metadata
    image (UpdateFeatures changes them; the epoch is the image's offset, as Kafka's), a single
    node's are the fixed ones above."""
    shared = getattr(node, "shared_server", None)
    image = shared.loader.image if shared is not None else None
    if image is None or image.features.metadata_version is None:
        return FINALIZED_FEATURES_EPOCH, [(f.name, f.finalized) for f in finalized()]
    levels = {n: v for n, v in image.features.finalized_versions.items() if v > 0}
    levels["metadata.version"] = image.features.metadata_version
    rank = {name: i for i, name in enumerate(FINALIZED_ORDER)}
    return image.offset, sorted(levels.items(), key=lambda kv: rank.get(kv[0], 99))
