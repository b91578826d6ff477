"""Client-metrics subscriptions (config resource type 16) through kafka-python's admin client:
described, altered, validated and kept as Kafka keeps them (the answers are compared with
Kafka's in test_admin_answers)."""

from __future__ import annotations

import json

import pytest
from kafka.admin import AlterConfigOp, ConfigResource, ConfigResourceType, KafkaAdminClient

from pykafkad.config.client_metrics import CLIENT_METRICS_FILE
from pykafkad.testing import run_broker

SUBSCRIPTION = "producers"


def _admin(bootstrap: str) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=bootstrap)


def _describe(admin: KafkaAdminClient, name: str = SUBSCRIPTION) -> dict:
    res = ConfigResource(ConfigResourceType.CLIENT_METRICS, name)
    return admin.describe_configs([res], include_synonyms=True,
                                  config_filter="all")["client_metrics"][name]


def _alter(admin: KafkaAdminClient, configs: dict, *, incremental: bool = True,
           validate_only: bool = False):
    res = ConfigResource(ConfigResourceType.CLIENT_METRICS, SUBSCRIPTION, configs)
    return admin.alter_configs([res], validate_only=validate_only, raise_on_unknown=False,
                               incremental=incremental)["client_metrics"][SUBSCRIPTION]


def test_a_subscription_without_overrides_describes_kafkas_defaults(broker):
    admin = _admin(broker.bootstrap_servers)
    try:
        configs = _describe(admin)
    finally:
        admin.close()
    assert {k: (v["value"], v["config_source"], v["config_type"], v["read_only"], v["synonyms"])
            for k, v in configs.items()} == {
        "interval.ms": ("300000", "DEFAULT_CONFIG", "INT", False, []),
        "match": ("", "DEFAULT_CONFIG", "LIST", False, []),
        "metrics": ("", "DEFAULT_CONFIG", "LIST", False, []),
    }  # fmt: skip


def test_overrides_are_described_and_survive_a_restart(tmp_path):
    data = tmp_path / "data"
    with run_broker(data) as b:
        admin = _admin(b.bootstrap_servers)
        try:
            assert _alter(admin, {"metrics": " org.apache.kafka.producer. , org.apache.kafka"
                                             ".consumer.", "interval.ms": "+1000",
                                  "match": "client_id=app-.*"}) == "OK"
            assert _alter(admin, {"interval.ms": "2000"}, validate_only=True) == "OK"
        finally:
            admin.close()
    stored = json.loads((data / CLIENT_METRICS_FILE).read_text())
    assert set(stored["subscriptions"]) == {SUBSCRIPTION}
    with run_broker(data) as b:
        admin = _admin(b.bootstrap_servers)
        try:
            configs = _describe(admin)
            assert {k: (v["value"], v["config_source"],
                        [(y["name"], y["value"], y["source"]) for y in v["synonyms"]])
                    for k, v in configs.items()} == {
                "interval.ms": ("1000", "DYNAMIC_CLIENT_METRICS_CONFIG",
                                [("interval.ms", "1000", "DYNAMIC_CLIENT_METRICS_CONFIG")]),
                "match": ("client_id=app-.*", "DYNAMIC_CLIENT_METRICS_CONFIG",
                          [("match", "client_id=app-.*", "DYNAMIC_CLIENT_METRICS_CONFIG")]),
                "metrics": ("org.apache.kafka.producer.,org.apache.kafka.consumer.",
                            "DYNAMIC_CLIENT_METRICS_CONFIG",
                            [("metrics", "org.apache.kafka.producer.,org.apache.kafka."
                                         "consumer.", "DYNAMIC_CLIENT_METRICS_CONFIG")]),
            }  # fmt: skip
            assert _alter(admin, {"interval.ms": (AlterConfigOp.DELETE, None)}) == "OK"
            assert _describe(admin)["interval.ms"]["value"] == "300000"
            # AlterConfigs (kafka-python sends the other overrides along, as it must)
            assert _alter(admin, {"interval.ms": "500"}, incremental=False) == "OK"
            assert {k: (v["value"], v["config_source"]) for k, v in _describe(admin).items()
                    if k != "metrics"} == {
                "interval.ms": ("500", "DYNAMIC_CLIENT_METRICS_CONFIG"),
                "match": ("client_id=app-.*", "DYNAMIC_CLIENT_METRICS_CONFIG")}
        finally:
            admin.close()


@pytest.mark.parametrize(("configs", "error"), [
    ({"interval.ms": "50"}, "[Error 42] InvalidRequestError: Invalid value 50 for "
     "interval.ms, interval must be between 100 and 3600000 (1 hour)"),
    ({"interval.ms": "soon"}, "[Error 40] InvalidConfigurationError: Invalid value soon for "
     "configuration interval.ms: Not a number of type INT"),
    ({"match": "client_rack=a"},
     "[Error 40] InvalidConfigurationError: Illegal client matching pattern: client_rack=a"),
    ({"match": "client_id=("},
     "[Error 40] InvalidConfigurationError: Illegal client matching pattern: client_id=("),
    ({"metrics": "a,,b"}, "[Error 40] InvalidConfigurationError: Configuration 'metrics' "
     "values must not be empty."),
    ({"push.interval": "1000"}, "[Error 42] InvalidRequestError: Unknown client metrics "
     "configuration: push.interval"),
    ({"metrics": (AlterConfigOp.APPEND, "a")}, "[Error 40] InvalidConfigurationError: Can't "
     "APPEND to key metrics because its type is not LIST."),
])  # fmt: skip
def test_kafkas_refusals(broker, configs, error):
    admin = _admin(broker.bootstrap_servers)
    try:
        assert str(_alter(admin, configs)) == error
        assert {v["config_source"] for v in _describe(admin).values()} == {"DEFAULT_CONFIG"}
    finally:
        admin.close()
    assert not (broker.data_dir / CLIENT_METRICS_FILE).exists()
