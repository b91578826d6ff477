"""The pykafkad command: ready line, clear one-line errors, clean SIGTERM shutdown."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from tests.integration.broker_process import BrokerProcess


def run_cli(*args: str, timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pykafkad", *args], capture_output=True,
                          text=True, timeout=timeout)


def test_taken_port_exits_with_reason(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        res = run_cli("--host", "127.0.0.1", "--port", str(port), "--data-dir", str(tmp_path))
    assert res.returncode != 0
    assert f"cannot listen on 127.0.0.1:{port}: address already in use" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere: no unwritable dir to test")
def test_unwritable_data_dir(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    res = run_cli("--port", "0", "--data-dir", str(ro / "data"))
    assert res.returncode != 0 and "not writable" in res.stderr


def test_data_dir_that_is_a_file(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    res = run_cli("--port", "0", "--data-dir", str(f / "data"))
    assert res.returncode == 2
    assert "data directory" in res.stderr and "not writable" in res.stderr


@pytest.mark.parametrize("setting,needle", [
    ("no.such.setting=1", "no.such.setting"),
    ("num.partitions=abc", "num.partitions"),
    ("num.partitions", "KEY=VALUE"),
])
def test_bad_settings_exit_naming_the_problem(tmp_path, setting, needle):
    res = run_cli("--port", "0", "--data-dir", str(tmp_path), "--set", setting)
    assert res.returncode == 2
    assert needle in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_server_properties_file(tmp_path):
    props = tmp_path / "server.properties"
    props.write_text("# a Kafka file\nnum.partitions=4\nlog.retention.hours=1\nnum.io.threads=8\n")
    proc = BrokerProcess(tmp_path / "d", "--config", str(props)).start()
    try:
        from kafka import KafkaProducer

        p = KafkaProducer(bootstrap_servers=proc.bootstrap_servers)
        p.send("auto-created", b"x").get(30)
        assert p.partitions_for("auto-created") == {0, 1, 2, 3}
        p.close()
    finally:
        assert proc.terminate() == 0


def test_missing_config_file(tmp_path):
    res = run_cli("--port", "0", "--data-dir", str(tmp_path), "--config", str(tmp_path / "nope"))
    assert res.returncode == 2 and "does not exist" in res.stderr


def test_sigterm_is_a_clean_exit(tmp_path):
    proc = BrokerProcess(tmp_path / "d").start()
    assert proc.terminate() == 0
    assert (tmp_path / "d" / ".kafka_cleanshutdown").exists()
    assert (tmp_path / "d" / "meta.properties").exists()

