"""Kafka's DynamicConfigPublisher: the broker's dynamic configs are what the metadata log says.

The controller keeps dynamic broker configs as ConfigRecords: the cluster-wide default (the
BROKER resource "") and each node's own (its id).  This publisher makes the broker's
BrokerConfig levels exactly those, on every image that changed them, so a change made through
any broker (AlterConfigs, IncrementalAlterConfigs) takes effect on every broker, and survives a
restart by being replayed.  Group configs (GROUP resources) are kept there too, as Kafka keeps
them, and this publisher hands them to the group coordinators.  Topic overrides are the
BrokerMetadataPublisher's.
"""

from __future__ import annotations

import logging
from typing import Any

from pykafkad.config import ConfigError

log = logging.getLogger("pykafkad.kraft.dynamic_config")

BROKER_RESOURCE, GROUP_RESOURCE = 4, 32


class DynamicConfigPublisher:
    def __init__(self, broker: Any):
        self.broker = broker

    def name(self) -> str:
        return "DynamicConfigPublisher"

    def on_metadata_update(self, delta: Any, image: Any, manifest: Any) -> None:
        if image.features.metadata_version is None:
            return  # not bootstrapped yet: the configs the log will hold are not known
        self._group_configs(image)
        config = self.broker.config
        for per_broker, resource in ((False, ""), (True, str(self.broker.node_id))):
            wanted = dict(image.configs.get((BROKER_RESOURCE, resource), {}))
            current = config.dynamic_broker_configs if per_broker else \
                config.dynamic_default_configs
            if wanted == current:
                continue
            try:
                config.alter_dynamic(wanted, per_broker=per_broker, replace=True)
            except ConfigError as e:  # the controller took it; this broker cannot apply it
                log.warning("Cannot apply the dynamic broker configs %s of resource %r: %s",
                            wanted, resource, e)

    def _group_configs(self, image: Any) -> None:
        store = getattr(self.broker, "group_configs", None)
        if store is None:
            return
        wanted = {name: dict(values) for (rtype, name), values in image.configs.items()
                  if rtype == GROUP_RESOURCE}
        if wanted != {name: store.get(name) for name in store.names()}:
            store.replace_all(wanted)
