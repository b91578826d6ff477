"""``pykafkad format`` / ``info`` / ``random-uuid`` on their own (the comparison with Kafka's
StorageTool is in test_format_oracle.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pykafkad.metadata.bootstrap import bootstrap_snapshot_path, read_bootstrap
from pykafkad.metadata.java_properties import java_hash_copy_order
from pykafkad.metadata.properties import check_formatted
from pykafkad.metadata.snapshot import read_snapshot

ROOT = Path(__file__).resolve().parents[2]


def pykafkad(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pykafkad", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=60)


def config(tmp_path: Path, **extra: str) -> Path:
    props = {"process.roles": "broker,controller", "node.id": "3",
             "controller.listener.names": "CONTROLLER",
             "listeners": "PLAINTEXT://:9092,CONTROLLER://localhost:9093",
             "log.dirs": f"{tmp_path}/a,{tmp_path}/b", **extra}
    path = tmp_path / "server.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


def test_format_standalone_then_start_checks_pass(tmp_path: Path) -> None:
    cfg = config(tmp_path, **{"controller.quorum.bootstrap.servers": "localhost:9093"})
    proc = pykafkad("format", "-t", "OQyDbVTuRv6SLDRTnfTrPw", "-c", str(cfg), "--standalone")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("Bootstrap metadata: BootstrapMetadata(records=[")
    assert sorted(lines[1:]) == [
        f"Formatting data directory {tmp_path}/b with metadata.version 4.4-IV2.",
        f"Formatting dynamic metadata voter directory {tmp_path}/a with metadata.version 4.4-IV2.",
    ]
    meta = check_formatted([tmp_path / "a", tmp_path / "b"], node_id=3)
    assert (meta.cluster_id, meta.node_id) == ("OQyDbVTuRv6SLDRTnfTrPw", 3)
    snap = read_snapshot(bootstrap_snapshot_path(tmp_path / "a"))
    assert snap.kraft_version == 1 and snap.voters.voters[0].voter_id == 3
    assert not bootstrap_snapshot_path(tmp_path / "b").exists()
    bootstrap = read_bootstrap(tmp_path / "a")
    assert bootstrap.metadata_version_level == 33
    assert bootstrap.feature_levels()["transaction.version"] == 2

    again = pykafkad("format", "-t", "OQyDbVTuRv6SLDRTnfTrPw", "-c", str(cfg), "--standalone")
    assert (again.returncode, again.stdout) == (1, "")
    first = java_hash_copy_order([f"{tmp_path}/a", f"{tmp_path}/b"])[0]  # Formatter's HashMap copy
    assert again.stderr == (f"Log directory {first} is already formatted. Use "
                            f"--ignore-formatted to ignore this directory and format the others.\n")
    info = pykafkad("info", "-c", str(cfg))
    assert info.returncode == 0
    assert "Found log directories:\n" in info.stdout and "node.id=3, version=1}" in info.stdout


def test_a_dynamic_controller_needs_a_quorum_flag(tmp_path: Path) -> None:
    proc = pykafkad("format", "-t", "OQyDbVTuRv6SLDRTnfTrPw", "-c", str(config(tmp_path)))
    assert proc.returncode == 1
    assert proc.stderr.startswith("Because controller.quorum.voters is not set on this controller")
    assert not (tmp_path / "a").exists()


def test_usage_errors_exit_1(tmp_path: Path) -> None:
    proc = pykafkad("format", "-c", str(config(tmp_path)))
    assert proc.returncode == 1 and "--cluster-id/-t" in proc.stderr
    missing = pykafkad("format", "-t", "x", "-c", str(tmp_path / "nope.properties"))
    assert missing.returncode == 1 and "nope.properties" in missing.stderr


def test_random_uuid() -> None:
    proc = pykafkad("random-uuid")
    assert proc.returncode == 0 and len(proc.stdout.strip()) == 22


def test_legacy_bootstrap_checkpoint_is_read(tmp_path: Path) -> None:
    from pykafkad.metadata.batches import build_metadata_batch
    from wire.metadata import FeatureLevelRecord

    (tmp_path / "bootstrap.checkpoint").write_bytes(
        build_metadata_batch([FeatureLevelRecord("metadata.version", 21)]))
    assert read_bootstrap(tmp_path).metadata_version_level == 21
