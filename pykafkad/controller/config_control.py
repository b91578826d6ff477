"""Kafka's ConfigurationControlManager: dynamic config overrides, as ConfigRecords.

Overrides are replayed from ConfigRecords only. Alterations (incremental and legacy) compute
the records, run the validator over the resulting configs and the existence check, and keep
the records only when both pass. BROKER resources always get a record, even when the value is
unchanged, so that brokers reload (KAFKA-14136).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pykafkad.config.broker_defs import BROKER_CONFIGS
from pykafkad.config.broker_unused import UNUSED_LIST_CONFIGS
from pykafkad.config.incremental import apply_operations
from pykafkad.config.topic import validate_topic_configs
from pykafkad.config.topic_defs import TOPIC_CONFIGS
from pykafkad.config.types import ConfigError
from pykafkad.controller.result import NONE, ApiError
from pykafkad.controller.topic_names import validate_topic_name
from wire.errors import ErrorCode, KafkaError
from wire.metadata import ClearElrRecord, ConfigRecord

TOPIC, BROKER, GROUP = 2, 4, 32   # ConfigResource.Type ids
Resource = tuple[int, str]    # (resource type, resource name)

# validator(resource, new configs, old configs): raises ApiError / ConfigError / KafkaError
Validator = Callable[[Resource, Mapping[str, str | None], Mapping[str, str]], None]
# existence(resource): raises ApiError when the resource is not there
ExistenceChecker = Callable[[Resource], None]


def default_validator(resource: Resource, new: Mapping[str, str | None],
                      old: Mapping[str, str]) -> None:
    """Kafka's ControllerConfigurationValidator: names, then topic config values."""
    rtype, name = resource
    if rtype == TOPIC:
        if not name:
            raise ApiError(ErrorCode.INVALID_REQUEST, "Default topic resources are not allowed.")
        validate_topic_name(name)
        validate_topic_configs(new)
    elif rtype == GROUP:
        # the values are checked by group_validator, which needs the node's group bounds
        if not name:
            raise ApiError(ErrorCode.INVALID_REQUEST, "Default group resources are not allowed.")
    elif rtype == BROKER:
        if name:
            try:
                broker_id = int(name, 10)
            except ValueError:
                raise ApiError(ErrorCode.INVALID_REQUEST,
                               "Unable to parse broker name as a base 10 number.") from None
            if broker_id < 0:
                raise ApiError(ErrorCode.INVALID_REQUEST, "Invalid negative broker ID.")
    else:
        raise ApiError(ErrorCode.INVALID_REQUEST, f"Unknown resource type {rtype}")


def group_validator(broker_config, base: Validator = default_validator) -> Validator:
    """``base``, and for a group the values as Kafka's GroupConfig.validate checks them against
    this node's group coordinator bounds."""
    from pykafkad.config.group import validate_group_configs

    def validate(resource: Resource, new: Mapping[str, str | None],
                 old: Mapping[str, str]) -> None:
        base(resource, new, old)
        if resource[0] == GROUP:
            validate_group_configs(new, broker_config)

    return validate


def clear_elr_records(records: list, elr_enabled: bool) -> list:
    """KIP-966: changing min.insync.replicas invalidates ELRs, so each such ConfigRecord is
    followed by a ClearElrRecord (for its topic, or for all topics for a broker-level one)."""
    if not elr_enabled:
        return []
    return [ClearElrRecord(topic_name=r.resource_name if r.resource_type == TOPIC else "")
            for r in records
            if isinstance(r, ConfigRecord) and r.name == "min.insync.replicas"]


class ConfigurationControlManager:
    def __init__(self, *, validator: Validator = default_validator,
                 existence: ExistenceChecker | None = None) -> None:
        self.configs: dict[Resource, dict[str, str]] = {}
        self.validator = validator
        self.existence = existence

    def get(self, resource: Resource) -> dict[str, str]:
        return dict(self.configs.get(resource, {}))

    def topic_config(self, topic: str, name: str) -> str | None:
        return self.configs.get((TOPIC, topic), {}).get(name)

    def replay(self, record: ConfigRecord) -> None:
        resource = (record.resource_type, record.resource_name)
        configs = self.configs.setdefault(resource, {})
        if record.value is None:
            configs.pop(record.name, None)
        else:
            configs[record.name] = record.value
        if not configs:
            del self.configs[resource]

    def delete_topic_configs(self, topic: str) -> None:
        """Kafka drops a deleted topic's overrides when it replays RemoveTopicRecord."""
        self.configs.pop((TOPIC, topic), None)

    # --- IncrementalAlterConfigs -----------------------------------------------------------
    def incremental_alter(self, resource: Resource,
                          ops: list[tuple[str, int, str | None]],
                          newly_created: bool = False) -> tuple[list, ApiError]:
        """Records and outcome for ``(name, op, value)`` operations on one resource."""
        current = self.configs.get(resource, {})
        # Kafka's controller knows no group config's type: APPEND/SUBTRACT on one fail
        defs = (TOPIC_CONFIGS if resource[0] == TOPIC else {} if resource[0] == GROUP
                else {**UNUSED_LIST_CONFIGS, **BROKER_CONFIGS})
        try:
            new = apply_operations(current, ops, defs)
        except ConfigError as e:
            return [], ApiError(ErrorCode.INVALID_CONFIG, str(e))
        records = []
        for key in dict.fromkeys(name for name, _, _ in ops):
            value = new.get(key)
            if value != current.get(key) or resource[0] == BROKER:
                records.append(ConfigRecord(resource_type=resource[0],
                                            resource_name=resource[1], name=key, value=value))
        error = self._validate(resource, records, [], newly_created)
        return (records, NONE) if not error.is_failure else ([], error)

    # --- AlterConfigs (legacy: the request's set replaces every override) -------------------
    def legacy_alter(self, resource: Resource, new_configs: Mapping[str, str | None],
                     newly_created: bool = False) -> tuple[list, ApiError]:
        current = self.configs.get(resource, {})
        altered = [ConfigRecord(resource_type=resource[0], resource_name=resource[1],
                                name=k, value=v)
                   for k, v in new_configs.items()
                   if v != current.get(k) or resource[0] == BROKER]
        deleted = [ConfigRecord(resource_type=resource[0], resource_name=resource[1],
                                name=k, value=None)
                   for k in current if k not in new_configs]
        error = self._validate(resource, altered, deleted, newly_created)
        return (altered + deleted, NONE) if not error.is_failure else ([], error)

    def _validate(self, resource: Resource, altered: list, deleted: list,
                  newly_created: bool) -> ApiError:
        old = dict(self.configs.get(resource, {}))
        combined: dict[str, str | None] = dict(old)
        for r in altered:
            if r.value is None:
                combined.pop(r.name, None)
            else:
                combined[r.name] = r.value
        for r in deleted:
            combined.pop(r.name, None)
        try:
            self.validator(resource, combined, old)
            if not newly_created and self.existence is not None:
                self.existence(resource)
        except ApiError as e:
            return e
        except ConfigError as e:
            return ApiError(ErrorCode.INVALID_CONFIG, str(e))
        except KafkaError as e:
            return ApiError(e.code, e.message)
        return NONE
