"""Broker and topic configs with Kafka's exact names, types, defaults and validation (Kafka 4.4).

Users switch between pykafkad and Kafka by changing an address, so a server.properties, a
``--set`` override, a CreateTopics config or an AlterConfigs request means here what it means
there, and is rejected with the same message when Kafka would reject it.
"""

from pykafkad.config.broker import BrokerConfig, Endpoint
from pykafkad.config.broker_defs import (
    BROKER_CONFIGS,
    DYNAMIC_BROKER_CONFIGS,
    IGNORED_BROKER_CONFIG_PREFIXES,
    IGNORED_BROKER_CONFIGS,
    PER_BROKER_CONFIGS,
    is_ignored_broker_config,
)
from pykafkad.config.describe import (
    ConfigEntry,
    ConfigSource,
    ConfigSynonym,
    describe_broker_configs,
    describe_topic_configs,
)
from pykafkad.config.properties import parse_properties, read_properties
from pykafkad.config.topic import TopicConfig, resolve_topic_config, validate_topic_configs
from pykafkad.config.topic_defs import TOPIC_BROKER_SYNONYMS, TOPIC_CONFIGS
from pykafkad.config.types import ConfigDef, ConfigError, ConfigType, Importance, Password

__all__ = [
    "BROKER_CONFIGS",
    "DYNAMIC_BROKER_CONFIGS",
    "IGNORED_BROKER_CONFIGS",
    "IGNORED_BROKER_CONFIG_PREFIXES",
    "PER_BROKER_CONFIGS",
    "TOPIC_BROKER_SYNONYMS",
    "TOPIC_CONFIGS",
    "BrokerConfig",
    "ConfigDef",
    "ConfigEntry",
    "ConfigError",
    "ConfigSource",
    "ConfigSynonym",
    "ConfigType",
    "Endpoint",
    "Importance",
    "Password",
    "TopicConfig",
    "describe_broker_configs",
    "describe_topic_configs",
    "is_ignored_broker_config",
    "parse_properties",
    "read_properties",
    "resolve_topic_config",
    "validate_topic_configs",
]
