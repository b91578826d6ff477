"""One thin module per API family; importing this package registers every handler."""

from pykafkad.handlers import (  # noqa: F401
    admin_configs,
    admin_records,
    admin_topics,
    api_versions,
    cluster,
    config_resources,
    controller_apis,
    describe_topic_partitions,
    fetch,
    forwarded,
    groups,
    list_offsets,
    log_dirs,
    metadata,
    offsets_commit,
    produce,
    producer_ids,
    quorum,
    txn,
    write_txn_markers,
)
