"""Broker loggers (config resource type 8) through kafka-python's admin client: pykafkad's
Python loggers listed and changed at run time the way Kafka lists and changes its log4j
loggers (the answers are compared with Kafka's in test_admin_answers)."""

from __future__ import annotations

import logging

import pytest
from kafka.admin import AlterConfigOp, ConfigResource, ConfigResourceType, KafkaAdminClient

LOGGER = "pykafkad.coordinator"


@pytest.fixture
def admin(broker):
    client = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
    yield client
    client.close()


@pytest.fixture
def restore_levels():
    """Log levels are process-wide: whatever a test changes is put back."""
    saved = {name: logging.getLogger(name).level for name in ("", "pykafkad", LOGGER)}
    yield
    for name, level in saved.items():
        logging.getLogger(name).setLevel(level)


def _loggers(admin: KafkaAdminClient, names=None) -> dict:
    res = ConfigResource(ConfigResourceType.BROKER_LOGGER, "1", names)
    return admin.describe_configs([res], include_synonyms=True,
                                  config_filter="all")["broker_logger"]["1"]


def _alter(admin: KafkaAdminClient, configs: dict, validate_only: bool = False):
    res = ConfigResource(ConfigResourceType.BROKER_LOGGER, "1", configs)
    return admin.alter_configs([res], validate_only=validate_only,
                               raise_on_unknown=False)["broker_logger"]["1"]


def test_describe_lists_root_and_pykafkads_loggers_with_their_levels(admin, restore_levels):
    logging.getLogger().setLevel(logging.WARNING)
    logging.getLogger(LOGGER).setLevel(logging.CRITICAL)
    loggers = _loggers(admin)
    assert next(iter(loggers)) == "root"
    assert {"pykafkad", LOGGER, "pykafkad.dispatch"} <= set(loggers)
    assert all(n == "root" or n.startswith("pykafkad") for n in loggers)
    assert loggers["root"] == {
        "value": "WARN", "read_only": False, "config_source": "DYNAMIC_BROKER_LOGGER_CONFIG",
        "is_sensitive": False, "synonyms": [], "config_type": "UNKNOWN", "documentation": ""}
    assert loggers[LOGGER]["value"] == "FATAL"
    assert set(_loggers(admin, {"root": None, "no.such.logger": None})) == {"root"}


def test_set_and_delete_change_a_level_at_run_time(admin, restore_levels):
    logging.getLogger("pykafkad").setLevel(logging.ERROR)
    assert _alter(admin, {LOGGER: "TRACE"}) == "OK"
    assert logging.getLogger(LOGGER).getEffectiveLevel() < logging.DEBUG
    assert _loggers(admin, {LOGGER: None})[LOGGER]["value"] == "TRACE"
    assert _alter(admin, {LOGGER: "INFO"}, validate_only=True) == "OK"
    assert _loggers(admin, {LOGGER: None})[LOGGER]["value"] == "TRACE"
    assert _alter(admin, {LOGGER: (AlterConfigOp.DELETE, None)}) == "OK"
    # without a level of its own, a logger shows its parent's, as in log4j
    assert logging.getLogger(LOGGER).level == logging.NOTSET
    assert _loggers(admin, {LOGGER: None})[LOGGER]["value"] == "ERROR"
    assert _alter(admin, {"root": "DEBUG"}) == "OK"
    assert logging.getLogger().level == logging.DEBUG


@pytest.mark.parametrize(("configs", "error"), [
    ({"root": "info"}, "[Error 40] InvalidConfigurationError: Cannot set the log level of root "
     "to info as it is not a supported log level. Valid log levels are DEBUG, ERROR, FATAL, "
     "INFO, TRACE, WARN"),
    ({"no.such.logger": "INFO"},
     "[Error 40] InvalidConfigurationError: Logger no.such.logger does not exist!"),
    ({"root": (AlterConfigOp.DELETE, None)}, "[Error 42] InvalidRequestError: Removing the log "
     "level of the root logger is not allowed"),
    ({"root": (AlterConfigOp.APPEND, "INFO")}, "[Error 42] InvalidRequestError: APPEND "
     "operation is not allowed for the BROKER_LOGGER resource"),
])  # fmt: skip
def test_kafkas_refusals(admin, restore_levels, configs, error):
    before = _loggers(admin)
    assert str(_alter(admin, configs)) == error
    assert _loggers(admin) == before
