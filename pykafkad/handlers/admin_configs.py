"""DescribeConfigs, AlterConfigs and IncrementalAlterConfigs for topics and the broker."""

from __future__ import annotations

from pykafkad.config import (
    ConfigError,
    describe_broker_configs,
    describe_topic_configs,
    validate_topic_configs,
)
from pykafkad.dispatch import RequestContext, handles
from wire.errors import ErrorCode, KafkaError
from wire.messages.alter_configs_response import (
    AlterConfigsResourceResponse,
    AlterConfigsResponse,
)
from wire.messages.describe_configs_response import (
    DescribeConfigsResourceResult,
    DescribeConfigsResponse,
    DescribeConfigsResult,
    DescribeConfigsSynonym,
)
from wire.messages.incremental_alter_configs_response import (
    AlterConfigsResourceResponse as IncrementalResourceResponse,
)
from wire.messages.incremental_alter_configs_response import (
    IncrementalAlterConfigsResponse,
)

TOPIC = 2
BROKER = 4
BROKER_LOGGER = 8

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


def _broker_resource(broker, name: str) -> None:
    """Kafka accepts this node's id, or "" for the cluster-wide default."""
    if name not in ("", str(broker.node_id)):
        raise KafkaError(
            ErrorCode.INVALID_REQUEST,
            f"Unexpected broker id, expected {broker.node_id} or empty string, but received {name}",
        )


def _topic(broker, name: str):
    topic = broker.topics.get(name)
    if topic is None:
        raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                         f"The topic '{name}' does not exist.")
    return topic


@handles(32, 1, 4)
async def handle_describe_configs(ctx: RequestContext, req) -> DescribeConfigsResponse:
    """Versions 1-4 (Kafka 4 closes the connection on v0; sources and synonyms; v3+: types
    and documentation)."""
    broker = ctx.broker
    v = ctx.version
    synonyms = req.include_synonyms
    docs = v >= 3 and req.include_documentation
    results = []
    for res in req.resources:
        out = DescribeConfigsResult(error_code=0, resource_type=res.resource_type,
                                    resource_name=res.resource_name, configs=[])
        results.append(out)
        try:
            if res.resource_type == TOPIC:
                topic = _topic(broker, res.resource_name)
                entries = describe_topic_configs(
                    broker.config, topic.configs, res.configuration_keys, synonyms, docs)
            elif res.resource_type == BROKER:
                _broker_resource(broker, res.resource_name)
                entries = describe_broker_configs(
                    broker.config, res.configuration_keys, synonyms, docs,
                    per_broker=res.resource_name != "")
            elif res.resource_type == BROKER_LOGGER:
                _broker_resource(broker, res.resource_name)
                entries = []
            else:
                raise KafkaError(ErrorCode.INVALID_REQUEST,
                                 f"Unsupported resource type {res.resource_type}")
        except KafkaError as e:
            out.error_code, out.error_message = e.code, e.message
            continue
        out.configs = [
            DescribeConfigsResourceResult(
                name=e.name, value=e.value, read_only=e.read_only,
                config_source=e.source, is_sensitive=e.is_sensitive,
                synonyms=[DescribeConfigsSynonym(n, val, src) for n, val, src in e.synonyms]
                if synonyms else [],
                config_type=e.config_type, documentation=e.documentation if docs else None)
            for e in entries
        ]
    return DescribeConfigsResponse(throttle_time_ms=0, results=results)


def _apply_topic(broker, name: str, new: dict[str, str], validate_only: bool) -> None:
    topic = _topic(broker, name)
    try:
        validate_topic_configs(new, broker=broker.config)
    except ConfigError as e:
        raise KafkaError(ErrorCode.INVALID_CONFIG, str(e)) from None
    if not validate_only:
        broker.set_topic_configs(topic, new)


def _apply_broker(
    broker, name: str, changes: dict[str, str | None], validate_only: bool, replace: bool
) -> None:
    """Applies a whole request or nothing; Kafka answers broker errors INVALID_REQUEST."""
    _broker_resource(broker, name)
    try:
        broker.config.alter_dynamic(
            {k: v for k, v in changes.items() if v is not None},
            [k for k, v in changes.items() if v is None],
            per_broker=name != "",
            replace=replace,
            validate_only=validate_only,
        )
    except ConfigError as e:
        raise KafkaError(ErrorCode.INVALID_REQUEST, str(e)) from None


@handles(33, 0, 2)
async def handle_alter_configs(ctx: RequestContext, req) -> AlterConfigsResponse:
    """Versions 0-2: replaces the resource's whole set of overrides."""
    broker = ctx.broker
    out = []
    for res in req.resources:
        r = AlterConfigsResourceResponse(error_code=0, resource_type=res.resource_type,
                                         resource_name=res.resource_name)
        out.append(r)
        try:
            if res.resource_type == TOPIC:
                new = {}
                for c in res.configs:
                    if c.value is None:
                        raise KafkaError(ErrorCode.INVALID_REQUEST,
                                         f"Null value not supported for : {c.name}")
                    new[c.name] = c.value
                _apply_topic(broker, res.resource_name, new, req.validate_only)
            elif res.resource_type == BROKER:
                _apply_broker(broker, res.resource_name,
                              {c.name: c.value for c in res.configs}, req.validate_only, True)
            else:
                raise KafkaError(ErrorCode.INVALID_REQUEST,
                                 f"Unsupported resource type {res.resource_type}")
        except KafkaError as e:
            r.error_code, r.error_message = e.code, e.message
    return AlterConfigsResponse(throttle_time_ms=0, responses=out)


def _list_value(current: str | None) -> list[str]:
    return [x for x in (current or "").split(",") if x]


@handles(44, 0, 1)
async def handle_incremental_alter_configs(ctx: RequestContext, req) -> IncrementalAlterConfigsResponse:
    """Versions 0-1: SET, DELETE, APPEND and SUBTRACT (the last two on list configs)."""
    broker = ctx.broker
    out = []
    for res in req.resources:
        r = IncrementalResourceResponse(error_code=0, resource_type=res.resource_type,
                                        resource_name=res.resource_name)
        out.append(r)
        try:
            if res.resource_type == TOPIC:
                topic = _topic(broker, res.resource_name)
                new = dict(topic.configs)
                resolved = broker.topic_config(topic)
                for c in res.configs:
                    op = c.config_operation
                    if op == SET:
                        new[c.name] = c.value
                    elif op == DELETE:
                        new.pop(c.name, None)
                    elif op in (APPEND, SUBTRACT):
                        cur = resolved[c.name] if c.name not in new else new[c.name]
                        items = cur if isinstance(cur, list) else _list_value(cur)
                        values = _list_value(c.value)
                        if op == APPEND:
                            items = items + [x for x in values if x not in items]
                        else:
                            items = [x for x in items if x not in values]
                        new[c.name] = ",".join(items)
                    else:
                        raise KafkaError(ErrorCode.INVALID_REQUEST,
                                         f"Unknown config operation {op}")
                _apply_topic(broker, res.resource_name, new, req.validate_only)
            elif res.resource_type == BROKER:
                changes: dict[str, str | None] = {}
                for c in res.configs:
                    if c.config_operation == SET:
                        changes[c.name] = c.value
                    elif c.config_operation == DELETE:
                        changes[c.name] = None
                    else:
                        raise KafkaError(ErrorCode.INVALID_REQUEST,
                                         "APPEND and SUBTRACT are not supported on broker configs here")
                _apply_broker(broker, res.resource_name, changes, req.validate_only, False)
            elif res.resource_type == BROKER_LOGGER:
                _broker_resource(broker, res.resource_name)
            else:
                raise KafkaError(ErrorCode.INVALID_REQUEST,
                                 f"Unsupported resource type {res.resource_type}")
        except KafkaError as e:
            r.error_code, r.error_message = e.code, e.message
    return IncrementalAlterConfigsResponse(throttle_time_ms=0, responses=out)
