"""DescribeConfigs, AlterConfigs and IncrementalAlterConfigs for topics, the broker, its
loggers, client-metrics subscriptions and groups."""

from __future__ import annotations

import re
from collections.abc import Iterable

from pykafkad.config import (
    BROKER_CONFIGS,
    TOPIC_CONFIGS,
    ConfigError,
    describe_broker_configs,
    describe_topic_configs,
    is_ignored_broker_config,
    validate_topic_configs,
)
from pykafkad.config.broker import ClusterConfigError
from pykafkad.config.broker_dynamic import UNUSED_DYNAMIC_CONFIGS
from pykafkad.config.broker_logger import (
    LoggerRequestError,
    alter_broker_loggers,
    describe_broker_loggers,
    validate_logger_operations,
)
from pykafkad.config.broker_unused import UNUSED_LIST_CONFIGS
from pykafkad.config.client_metrics import (
    ClientMetricsRequestError,
    describe_client_metrics,
    validate_client_metrics,
)
from pykafkad.config.group import describe_group_configs, validate_group_configs
from pykafkad.config.incremental import DELETE, OP_NAMES, SET, apply_operations
from pykafkad.controller.result import DEFAULT_MESSAGES
from pykafkad.dispatch import RequestContext, handles
from pykafkad.handlers.cluster import INVALID_REQUEST_MESSAGE
from pykafkad.handlers.log_dirs import served_log_dir_names
from pykafkad.log.log_dirs import log_dirs_of
from pykafkad.security.api_acls import authorized
from pykafkad.security.authorizer import CLUSTER as ACL_CLUSTER
from pykafkad.security.authorizer import DESCRIBE_CONFIGS
from pykafkad.security.authorizer import GROUP as ACL_GROUP
from pykafkad.security.authorizer import TOPIC as ACL_TOPIC
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
CLIENT_METRICS = 16
GROUP = 32
#: ConfigResource.Type ids Kafka knows; any other id fails the whole request
RESOURCE_TYPES = (TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP)
_JAVA_INT = re.compile(r"[+-]?[0-9]+")
OPERATIONS = frozenset(OP_NAMES)


def _invalid(message: str) -> KafkaError:
    return KafkaError(ErrorCode.INVALID_REQUEST, message)


def _node_id(name: str, what: str) -> int:
    """Integer.parseInt, with the message of the Kafka code path that parses it."""
    if not _JAVA_INT.fullmatch(name):
        raise _invalid(f"{what} id must be an integer, but it is: {name}")
    return int(name)


def _broker_resource(broker, name: str, *, alter: bool = False) -> None:
    """This node's id, or "" for the cluster-wide default; Kafka's describe and alter paths
    word the refusal differently."""
    if name == "":
        return
    node = broker.node_id
    if _node_id(name, "Node" if alter else "Broker") != node:
        raise _invalid(f"Unexpected broker id, expected {node}, but received {name}" if alter
                       else f"Unexpected broker id, expected {node} or empty string, "
                            f"but received {name}")


def _broker_logger_resource(broker, name: str, *, alter: bool = False) -> None:
    """Only this node's id: loggers have no cluster-wide default."""
    node = broker.node_id
    if alter:
        if _node_id(name, "Node") != node:
            raise _invalid(f"Unexpected node id. Expected {node}, but received {name}")
        return
    if name == "":
        raise _invalid("Broker id must not be empty")
    if _node_id(name, "Broker") != node:
        raise _invalid(f"Unexpected broker id, expected {node} but received {name}")


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
    if any(res.resource_type not in RESOURCE_TYPES for res in req.resources):
        return DescribeConfigsResponse(throttle_time_ms=0, results=[
            DescribeConfigsResult(
                error_code=ErrorCode.INVALID_REQUEST, error_message=INVALID_REQUEST_MESSAGE,
                resource_type=res.resource_type, resource_name=res.resource_name, configs=[])
            for res in req.resources])
    results = []
    denied = []
    for res in req.resources:
        refusal = _describe_denied(ctx, res)
        if refusal is not None:
            denied.append(refusal)
            continue
        # Kafka leaves the message at its default, "", on success and for an unknown topic
        out = DescribeConfigsResult(error_code=0, error_message="",
                                    resource_type=res.resource_type,
                                    resource_name=res.resource_name, configs=[])
        results.append(out)
        try:
            if res.resource_type == TOPIC:
                if res.resource_name not in broker.topics.topics:
                    raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "")
                topic = _topic(broker, res.resource_name)
                entries = describe_topic_configs(
                    broker.config, topic.configs, res.configuration_keys, synonyms, docs)
            elif res.resource_type == BROKER:
                _broker_resource(broker, res.resource_name)
                entries = describe_broker_configs(
                    broker.config, res.configuration_keys, synonyms, docs,
                    per_broker=res.resource_name != "")
            elif res.resource_type == BROKER_LOGGER:
                _broker_logger_resource(broker, res.resource_name)
                entries = describe_broker_loggers(res.configuration_keys)
            elif res.resource_type == CLIENT_METRICS:
                if not res.resource_name:
                    raise _invalid("Client metrics subscription name must not be empty")
                entries = describe_client_metrics(
                    broker.client_metrics.get(res.resource_name), res.configuration_keys,
                    synonyms, docs)
            elif res.resource_type == GROUP:
                if not res.resource_name:
                    raise KafkaError(ErrorCode.INVALID_REQUEST, "Group name must not be empty")
                entries = describe_group_configs(
                    broker.config, broker.group_configs.get(res.resource_name),
                    res.configuration_keys, synonyms, docs)
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
                config_type=e.config_type, documentation=e.documentation)
            for e in entries
        ]
    # KafkaApis answers the authorized resources, then the others
    return DescribeConfigsResponse(throttle_time_ms=0, results=results + denied)


def _describe_denied(ctx: RequestContext, res) -> DescribeConfigsResult | None:
    """The refusal of a resource the principal may not DESCRIBE_CONFIGS (the cluster's for
    brokers, loggers and client metrics; the topic's; the group's), or None."""
    if res.resource_type == TOPIC:
        ok = authorized(ctx, ACL_TOPIC, DESCRIBE_CONFIGS, res.resource_name)
        code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
    elif res.resource_type == GROUP:
        ok = authorized(ctx, ACL_GROUP, DESCRIBE_CONFIGS, res.resource_name)
        code = ErrorCode.GROUP_AUTHORIZATION_FAILED
    else:
        ok = authorized(ctx, ACL_CLUSTER, DESCRIBE_CONFIGS)
        code = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    if ok:
        return None
    return DescribeConfigsResult(error_code=code, error_message=DEFAULT_MESSAGES[code],
                                 resource_type=res.resource_type,
                                 resource_name=res.resource_name, configs=[])


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
    _broker_resource(broker, name, alter=True)
    try:
        broker.config.alter_dynamic(
            {k: v for k, v in changes.items() if v is not None},
            [k for k, v in changes.items() if v is None],
            per_broker=name != "",
            replace=replace,
            validate_only=validate_only,
            served_log_dirs=set().union(
                *(served_log_dir_names(d.path) for d in log_dirs_of(broker))),
        )
    except ClusterConfigError as e:
        raise KafkaError(ErrorCode.INVALID_CONFIG, str(e)) from None
    except ConfigError as e:
        raise KafkaError(ErrorCode.INVALID_REQUEST, str(e)) from None


@handles(33, 0, 2)
async def handle_alter_configs(ctx: RequestContext, req) -> AlterConfigsResponse:
    """Versions 0-2: replaces the resource's whole set of overrides."""
    broker = ctx.broker
    out = []
    for res in req.resources:
        r = AlterConfigsResourceResponse(error_code=0, error_message=None,
                                         resource_type=res.resource_type,
                                         resource_name=res.resource_name)
        out.append(r)
        try:
            _refuse_nulls((c.name, c.value) for c in res.configs)
            new = {c.name: c.value for c in res.configs}
            if res.resource_type == TOPIC:
                _apply_topic(broker, res.resource_name, new, req.validate_only)
            elif res.resource_type == BROKER:
                _apply_broker(broker, res.resource_name, new, req.validate_only, True)
            elif res.resource_type == GROUP:
                _apply_group(broker, res.resource_name, new, req.validate_only)
            elif res.resource_type == CLIENT_METRICS:
                _apply_client_metrics(broker, res.resource_name, new, req.validate_only)
            else:  # BROKER_LOGGER too: only IncrementalAlterConfigs changes loggers
                raise _invalid(f"Unknown resource type {res.resource_type}")
        except KafkaError as e:
            r.error_code, r.error_message = e.code, e.message
    return AlterConfigsResponse(throttle_time_ms=0, responses=out)


def _refuse_nulls(values: Iterable[tuple[str, str | None]]) -> None:
    """Kafka checks this first, for every resource type (before even a topic's existence)."""
    for name, value in values:
        if value is None:
            raise _invalid(f"Null value not supported for : {name}")


def _operations(res) -> list[tuple[str, int, str | None]]:
    ops = [(c.name, c.config_operation, c.value) for c in res.configs]
    if len({name for name, _, _ in ops}) != len(ops):
        raise _invalid("Error due to duplicate config keys")
    _refuse_nulls((name, value) for name, op, value in ops if op != DELETE)
    if res.resource_type == BROKER_LOGGER:
        return ops  # the logger checks word an unknown operation themselves
    if any(op not in OPERATIONS for _, op, _ in ops):
        # Kafka fails on an unknown operation id without a message
        raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, None)
    return ops


def _incremental_topic(broker, name: str, ops, validate_only: bool) -> None:
    topic = _topic(broker, name)
    try:
        new = apply_operations(topic.configs, ops, TOPIC_CONFIGS)
    except ConfigError as e:
        raise KafkaError(ErrorCode.INVALID_CONFIG, str(e)) from None
    _apply_topic(broker, name, new, validate_only)


#: what APPEND and SUBTRACT on a broker config know of its type
_BROKER_DEFS = {**UNUSED_LIST_CONFIGS, **BROKER_CONFIGS}


def _known_broker_config(name: str) -> bool:
    return (name in BROKER_CONFIGS or name in UNUSED_DYNAMIC_CONFIGS
            or is_ignored_broker_config(name))


def _incremental_broker(broker, name: str, ops, validate_only: bool) -> None:
    _broker_resource(broker, name, alter=True)
    level = (broker.config.dynamic_broker_configs if name
             else broker.config.dynamic_default_configs)
    changes: dict[str, str | None] = {}
    for key, op, value in ops:
        if op == DELETE:
            changes[key] = None
            continue
        if op != SET and not _known_broker_config(key):
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown config name: {key}")
        try:
            new = apply_operations(level, [(key, op, value)], _BROKER_DEFS, broker=True)
        except ConfigError as e:
            raise KafkaError(ErrorCode.INVALID_CONFIG, str(e)) from None
        changes[key] = new[key]
    _apply_broker(broker, name, changes, validate_only, False)


def _apply_group(broker, name: str, new: dict[str, str | None], validate_only: bool) -> None:
    """Group configs are the controller's: any name is a group, "" the refused default."""
    if not name:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Default group resources are not allowed.")
    try:
        validate_group_configs(new, broker.config)
    except ConfigError as e:
        raise KafkaError(ErrorCode.INVALID_CONFIG, str(e)) from None
    if not validate_only:
        broker.group_configs.set(name, new)


def _incremental_group(broker, name: str, ops, validate_only: bool) -> None:
    if not name:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Default group resources are not allowed.")
    try:
        # Kafka's controller treats no group config as a list: APPEND/SUBTRACT always fail
        new = apply_operations(broker.group_configs.get(name), ops, {})
    except ConfigError as e:
        raise KafkaError(ErrorCode.INVALID_CONFIG, str(e)) from None
    _apply_group(broker, name, new, validate_only)


def _apply_client_metrics(broker, name: str, new: dict[str, str], validate_only: bool) -> None:
    """Like group configs, subscriptions are the controller's: any non-empty name."""
    try:
        validate_client_metrics(name, new)
    except ClientMetricsRequestError as e:
        raise _invalid(str(e)) from None
    except ConfigError as e:
        raise KafkaError(ErrorCode.INVALID_CONFIG, str(e)) from None
    if not validate_only:
        broker.client_metrics.set(name, new)


def _incremental_client_metrics(broker, name: str, ops, validate_only: bool) -> None:
    if not name:
        raise _invalid("Subscription name can't be empty")
    try:
        # as for groups, Kafka's controller treats no client-metrics config as a list
        new = apply_operations(broker.client_metrics.get(name), ops, {})
    except ConfigError as e:
        raise KafkaError(ErrorCode.INVALID_CONFIG, str(e)) from None
    _apply_client_metrics(broker, name, new, validate_only)


def _incremental_broker_logger(broker, name: str, ops, validate_only: bool) -> None:
    """Log levels change at once, for this process only (Kafka does not persist them either)."""
    _broker_logger_resource(broker, name, alter=True)
    try:
        validate_logger_operations(ops)
    except ConfigError as e:
        raise KafkaError(ErrorCode.INVALID_CONFIG, str(e)) from None
    except LoggerRequestError as e:
        raise _invalid(str(e)) from None
    if not validate_only:
        alter_broker_loggers(ops)


@handles(44, 0, 1)
async def handle_incremental_alter_configs(ctx: RequestContext, req) -> IncrementalAlterConfigsResponse:
    """Versions 0-1: SET, DELETE, APPEND and SUBTRACT (the last two on list configs)."""
    broker = ctx.broker
    out = []
    for res in req.resources:
        r = IncrementalResourceResponse(error_code=0, error_message=None,
                                        resource_type=res.resource_type,
                                        resource_name=res.resource_name)
        out.append(r)
        try:
            ops = _operations(res)
            if res.resource_type == TOPIC:
                _incremental_topic(broker, res.resource_name, ops, req.validate_only)
            elif res.resource_type == BROKER:
                _incremental_broker(broker, res.resource_name, ops, req.validate_only)
            elif res.resource_type == BROKER_LOGGER:
                _incremental_broker_logger(broker, res.resource_name, ops, req.validate_only)
            elif res.resource_type == GROUP:
                _incremental_group(broker, res.resource_name, ops, req.validate_only)
            elif res.resource_type == CLIENT_METRICS:
                _incremental_client_metrics(broker, res.resource_name, ops, req.validate_only)
            else:
                raise _invalid(f"Unknown resource type {res.resource_type}")
        except KafkaError as e:
            r.error_code, r.error_message = e.code, e.message
    return IncrementalAlterConfigsResponse(throttle_time_ms=0, responses=out)
