"""One thin module per API family; importing this package registers every handler."""

from pykafkad.handlers import (  # noqa: F401
    admin_configs,
    admin_records,
    admin_topics,
    api_versions,
    cluster,
    fetch,
    list_offsets,
    metadata,
    produce,
    producer_ids,
)
