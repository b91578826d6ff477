"""The plain ``pykafkad`` command: fault control is off unless pykafkad.faults.enable=true,
and the setting is no Kafka config (DescribeConfigs does not list it)."""

from __future__ import annotations

from confluent_kafka.admin import AdminClient, ConfigResource

from pykafkad.faults.client import FaultControl
from tests.faults.test_request_faults import _faults_cli
from tests.integration.broker_process import BrokerProcess
from tests.integration.clients import WAIT_S


def test_off_by_default_on_with_the_setting(tmp_path):
    plain = BrokerProcess(tmp_path / "plain").start()
    try:
        refused = _faults_cli("list", "--bootstrap-server", plain.bootstrap_servers)
        assert refused.returncode == 1
        assert "closed the control connection" in refused.stderr
    finally:
        plain.terminate()
    enabled = BrokerProcess(tmp_path / "on", "--set", "pykafkad.faults.enable=true").start()
    try:
        added = _faults_cli("add", "--bootstrap-server", enabled.bootstrap_servers, "--api",
                            "Fetch", "--delay-ms", "100", "--count", "0")
        assert added.returncode == 0, added.stderr
        host, port = enabled.bootstrap_servers.split(":")
        [rule] = FaultControl(host, int(port)).list()
        assert (rule["api"], rule["delay_ms"], rule["count"]) == ("Fetch", 100, None)
        admin = AdminClient({"bootstrap.servers": enabled.bootstrap_servers})
        resource = ConfigResource("broker", "1")
        configs = admin.describe_configs([resource])[resource].result(WAIT_S)
        assert "pykafkad.faults.enable" not in configs and "num.partitions" in configs
    finally:
        enabled.terminate()
