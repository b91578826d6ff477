"""``pykafkad format`` against Kafka 4.4.0's own ``kafka.tools.StorageTool format``: the same
config and arguments give the same exit status, output lines, meta.properties (but the random
directory.id) and bootstrap snapshot, and Kafka's kafka-dump-log reads pykafkad's snapshot as
it reads its own."""

from __future__ import annotations

import base64
import io
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from compat.kafka_broker import JAVA_OPTS, kafka_classpath
from pykafkad.metadata.bootstrap import bootstrap_snapshot_path
from pykafkad.metadata.java_properties import java_hash_copy_order, java_hash_order
from pykafkad.metadata.properties import MetaProperties
from pykafkad.metadata.snapshot import read_snapshot
from pykafkad.metadata.storage_tool import main as storage_main
from tests.integration.clients import needs_java

pytestmark = needs_java

CLUSTER_ID = "OQyDbVTuRv6SLDRTnfTrPw"


def run_kafka_storage(args: list[str]) -> tuple[int, str, str]:
    java = shutil.which("java")
    proc = subprocess.run([java, *JAVA_OPTS, "-cp", kafka_classpath(), "kafka.tools.StorageTool",
                           *args], capture_output=True, text=True, timeout=120)
    stderr = "\n".join(line for line in proc.stderr.splitlines() if not line.startswith("SLF4J"))
    return proc.returncode, proc.stdout, stderr


def run_pykafkad_format(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = storage_main(args, out=out, err=err)
    return rc, out.getvalue(), err.getvalue().rstrip("\n")


STATIC = {
    "process.roles": "broker,controller", "node.id": "1",
    "controller.quorum.voters": "1@127.0.0.1:29093",
    "listeners": "PLAINTEXT://127.0.0.1:29092,CONTROLLER://127.0.0.1:29093",
    "controller.listener.names": "CONTROLLER", "log.dirs": "{root}/logs",
}
DYNAMIC = {
    "process.roles": "broker,controller", "node.id": "1",
    "controller.quorum.bootstrap.servers": "127.0.0.1:29093",
    "listeners": "PLAINTEXT://127.0.0.1:29092,CONTROLLER://127.0.0.1:29093",
    "controller.listener.names": "CONTROLLER", "log.dirs": "{root}/d1,{root}/d2",
}
BROKER = {
    "process.roles": "broker", "node.id": "2",
    "controller.quorum.bootstrap.servers": "127.0.0.1:29093",
    "listeners": "PLAINTEXT://127.0.0.1:29092", "controller.listener.names": "CONTROLLER",
    "log.dirs": "{root}/b1", "metadata.log.dir": "{root}/bm",
}


def write_config(root: Path, props: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    path = root / "server.properties"
    path.write_text("".join(f"{k}={v.format(root=root)}\n" for k, v in props.items()))
    return path


def run_both(tmp_path: Path, props: dict[str, str], *commands: list[str]):
    """Runs the same format commands with each tool in the same root dir (Kafka prints
    directories in the hash order of their paths), then moves each tool's result to
    ``tmp_path/<tool>``; returns those roots and the last (rc, stdout, stderr) of each, with
    the root written as {root}."""
    root = tmp_path / "root"
    results = []
    for name, run in (("kafka", run_kafka_storage), ("pykafkad", run_pykafkad_format)):
        config = write_config(root, props)
        for args in commands:
            rc, out, err = run(["format", "-t", CLUSTER_ID, "-c", str(config), *args])
        results.append((rc, out.replace(str(root), "{root}"), err.replace(str(root), "{root}")))
        root.rename(tmp_path / name)
    return tmp_path / "kafka", tmp_path / "pykafkad", results[0], results[1]


def snapshot_view(path: Path) -> tuple:
    snap = read_snapshot(path)
    voters = None
    if snap.voters is not None:
        voters = [(v.voter_id, [(e.name, e.host, e.port) for e in v.endpoints],
                   v.k_raft_version_feature.to_dict()) for v in snap.voters.voters]
    return (snap.end_offset, snap.epoch, snap.kraft_version, voters,
            [(b.base_offset, b.last_offset, b.epoch) for b in snap.batches],
            list(snap.records()), path.stat().st_mode & 0o777)


FORMATS = {
    "static-quorum": (STATIC, []),
    "standalone": (DYNAMIC, ["--standalone"]),
    "no-initial-controllers-3.9": (DYNAMIC, ["--no-initial-controllers", "--release-version", "3.9"]),
    "initial-controllers": (DYNAMIC, ["--initial-controllers",
                                      "1@127.0.0.1:29093:XZUVYwLmRqi6DKXE0JDswg,"
                                      "2@localhost:9999:ydmr5sD0qX-NgL-AVjhcvQ"]),
    "not-a-voter": (DYNAMIC, ["-I", "2@localhost:9999:ydmr5sD0qX-NgL-AVjhcvQ"]),
    "features": (DYNAMIC, ["-N", "--feature", "group.version=0", "-f", "share.version=0"]),
    "release-4.0": (STATIC, ["--release-version", "4.0"]),
    "scram": (STATIC, ["-S", 'SCRAM-SHA-256=[name=alice,iterations=8192,salt="N3E=",'
                             'saltedpassword="YCE="]',
                       "--add-scram", 'SCRAM-SHA-512=[name=bob,salt="c2FsdA==",saltedpassword="YWJjZA=="]']),
    "broker-only": (BROKER, []),
}


@pytest.mark.parametrize("case", list(FORMATS))
def test_format_writes_what_kafka_writes(tmp_path: Path, case: str) -> None:
    props, args = FORMATS[case]
    kafka_root, py_root, kafka, pykafkad = run_both(tmp_path, props, args)
    assert pykafkad == kafka
    assert kafka[0] == 0
    kafka_dirs = sorted(p.parent.relative_to(kafka_root) for p in kafka_root.rglob("meta.properties"))
    assert kafka_dirs == sorted(p.parent.relative_to(py_root) for p in py_root.rglob("meta.properties"))
    for rel in kafka_dirs:
        k, p = MetaProperties.read(kafka_root / rel), MetaProperties.read(py_root / rel)
        assert (p.version, p.cluster_id, p.node_id) == (k.version, k.cluster_id, k.node_id)
        if case == "initial-controllers" and str(rel) == "d1":
            assert p.directory_id == k.directory_id == "XZUVYwLmRqi6DKXE0JDswg"
        k_text = (kafka_root / rel / "meta.properties").read_text().splitlines()
        p_text = (py_root / rel / "meta.properties").read_text().splitlines()
        # same lines in the same order, but the date comment and the random directory.id
        assert [line.split("=")[0] for line in p_text[2:]] == [line.split("=")[0] for line in k_text[2:]]
        kafka_snapshot = bootstrap_snapshot_path(kafka_root / rel)
        py_snapshot = bootstrap_snapshot_path(py_root / rel)
        assert kafka_snapshot.exists() == py_snapshot.exists()
        if kafka_snapshot.exists():
            assert snapshot_view(py_snapshot) == snapshot_view(kafka_snapshot)
            assert py_snapshot.stat().st_size == kafka_snapshot.stat().st_size
            voters = read_snapshot(py_snapshot).voters
            if case == "standalone":  # the voter's directory is this dir's own id
                assert voters.voters[0].voter_directory_id == \
                    bytes_of(MetaProperties.read(py_root / rel).directory_id)


def bytes_of(uuid: str) -> bytes:
    from pykafkad.metadata.properties import uuid_from_string

    return uuid_from_string(uuid)


ERRORS = {
    "standalone-with-voters": (STATIC, ["--standalone"]),
    "dynamic-controller-without-flag": (DYNAMIC, []),
    "standalone-on-a-broker": (BROKER, ["--standalone"]),
    "unsupported-feature": (DYNAMIC, ["-N", "--feature", "foo=1"]),
    "unknown-release": (DYNAMIC, ["-N", "--release-version", "9.9"]),
    "kraft-version-0-dynamic": (DYNAMIC, ["-N", "--feature", "kraft.version=0"]),
    "kraft-version-1-static": (STATIC, ["--feature", "kraft.version=1"]),
    "bad-feature-syntax": (DYNAMIC, ["-N", "--feature", "bad"]),
    "feature-level-unknown": (DYNAMIC, ["-N", "--feature", "group.version=5"]),
    "bad-initial-controllers": (DYNAMIC, ["-I", "1@localhost9093"]),
    "scram-mechanism": (STATIC, ["-S", "SCRAM-SHA-1=[name=a,password=b]"]),
    "scram-unknown-keys": (STATIC, ["-S", "SCRAM-SHA-256=[name=a,password=b,foo=1,bar=2]"]),
    "scram-iterations": (STATIC, ["-S", "SCRAM-SHA-512=[name=a,password=b,iterations=10]"]),
    "scram-salted-without-salt": (STATIC, ["-S", 'SCRAM-SHA-256=[name=a,saltedpassword="YCE="]']),
    "scram-before-3.5-IV2": (STATIC, ["-r", "3.5-IV1", "-S", "SCRAM-SHA-256=[name=a,password=b]"]),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_format_refuses_what_kafka_refuses(tmp_path: Path, case: str) -> None:
    props, args = ERRORS[case]
    _, py_root, kafka, pykafkad = run_both(tmp_path, props, args)
    assert (pykafkad[0], pykafkad[1]) == (kafka[0], kafka[1]) == (1, "")
    # Kafka prints TerseFailures as the message alone, other exceptions with a stack trace
    # around the same message: pykafkad prints the message alone
    assert pykafkad[2] and pykafkad[2] in kafka[2]
    assert not list(py_root.rglob("meta.properties"))


def two_dirs_root(tmp_path: Path, hashed_apart: bool) -> Path:
    """A directory whose ``root/d1`` and ``root/d2`` come out of a 16-bucket HashMap in the
    same order as from a 4-bucket one (``hashed_apart`` false) or in another order (true):
    Kafka's formatter reads them from a copied HashMap sized for two entries."""
    for n in range(1000):
        dirs = [str(tmp_path / f"two{n}" / "root" / d) for d in ("d1", "d2")]
        if (java_hash_order(dirs) != java_hash_copy_order(dirs)) == hashed_apart:
            return tmp_path / f"two{n}"
    raise AssertionError("no such root in 1000 tries")


def test_formatting_twice(tmp_path: Path) -> None:
    _, _, kafka, pykafkad = run_both(tmp_path / "again", STATIC, [], [])
    assert pykafkad == kafka
    assert kafka == (1, "", "Log directory {root}/logs is already formatted. Use "
                            "--ignore-formatted to ignore this directory and format the others.")
    for hashed_apart in (False, True):  # roots where a fresh HashMap orders d1, d2 as a copy
        _, _, kafka, pykafkad = run_both(two_dirs_root(tmp_path, hashed_apart), DYNAMIC,
                                         ["-N"], ["-N"])
        assert pykafkad == kafka  # of two formatted dirs, the one Kafka's HashMap yields first
    _, _, kafka, pykafkad = run_both(tmp_path / "ignored", STATIC, [], ["--ignore-formatted"])
    assert pykafkad == kafka == (0, "All of the log directories are already formatted.\n", "")


def test_another_cluster_id_on_a_formatted_dir(tmp_path: Path) -> None:
    results = []
    for name, run in (("kafka", run_kafka_storage), ("pykafkad", run_pykafkad_format)):
        config = write_config(tmp_path / name, STATIC)
        run(["format", "-t", CLUSTER_ID, "-c", str(config)])
        rc, out, err = run(["format", "-t", "AAAAAAAAAAAAAAAAAAAAAA", "-c", str(config), "-g"])
        results.append((rc, err.replace(str(tmp_path / name), "{root}")))
    (k_rc, k_err), (p_rc, p_err) = results
    assert p_rc == k_rc == 1
    assert p_err == ("Invalid cluster.id in: {root}/logs/meta.properties. Expected "
                     "AAAAAAAAAAAAAAAAAAAAAA, but read " + CLUSTER_ID)
    assert p_err in k_err


def test_info_prints_what_kafka_prints(tmp_path: Path) -> None:
    for name, run in (("kafka", run_kafka_storage), ("pykafkad", run_pykafkad_format)):
        config = write_config(tmp_path / name, DYNAMIC)
        run(["format", "-t", CLUSTER_ID, "-c", str(config), "-N"])
        (tmp_path / name / "d2" / "meta.properties").unlink()
    outputs = []
    for name, run in (("kafka", run_kafka_storage), ("pykafkad", run_pykafkad_format)):
        rc, out, _ = run(["info", "-c", str(tmp_path / name / "server.properties")])
        out = re.sub(r"directory.id=[\w-]+", "directory.id=X", out.replace(str(tmp_path / name), ""))
        outputs.append((rc, out))
    assert outputs[1] == outputs[0]
    assert outputs[0][0] == 1 and "/d2 is not formatted." in outputs[0][1]


def test_random_uuid(tmp_path: Path) -> None:
    rc, out, _ = run_pykafkad_format(["random-uuid"])
    k_rc, k_out, _ = run_kafka_storage(["random-uuid"])
    assert rc == k_rc == 0
    assert re.fullmatch(r"[A-Za-z0-9_-]{22}\n", out) and re.fullmatch(r"[A-Za-z0-9_-]{22}\n", k_out)


def test_kafka_dump_log_reads_pykafkads_bootstrap_snapshot(tmp_path: Path) -> None:
    from compat.kafka_tools import run_tool

    kafka_root, py_root, _, _ = run_both(tmp_path, DYNAMIC, ["--standalone"])
    dumps = []
    for root in (kafka_root, py_root):
        proc = run_tool("kafka-dump-log", ["--cluster-metadata-decoder", "--files",
                                           str(bootstrap_snapshot_path(root / "d1"))])
        assert proc.returncode == 0, proc.stderr
        text = proc.stdout.replace(str(root), "{root}")
        # what differs between two formats: times, CRCs, the voter's random directory id
        text = re.sub(r"(CreateTime|crc|lastContainedLogTimestamp)(\W+)\d+", r"\1\2N", text)
        dumps.append(re.sub(r'"voterDirectoryId":"[\w-]+"', '"voterDirectoryId":"X"', text))
    assert "FEATURE_LEVEL_RECORD" in dumps[1] and "KRaftVoters" in dumps[1]
    assert dumps[1] == dumps[0]


def test_check_formatted_refuses_what_kafka_refuses_at_start(tmp_path: Path) -> None:
    """Kafka started on a log dir never formatted logs one fatal line and exits with status 1;
    check_formatted raises with the same message."""
    import os

    from compat import maven
    from compat.kafka_tools import tools_dir
    from pykafkad.metadata.properties import MetaPropertiesError, check_formatted

    root = tmp_path / "unformatted"
    config = write_config(root, STATIC)
    (root / "logs").mkdir()
    slf4j = [j for j in maven.jars(tools_dir()) if j.name.startswith("slf4j-simple")]
    proc = subprocess.run(
        [shutil.which("java"), *JAVA_OPTS, "-Dorg.slf4j.simpleLogger.logFile=System.out", "-cp",
         os.pathsep.join([kafka_classpath(), *map(str, slf4j)]), "kafka.Kafka", str(config)],
        capture_output=True, text=True, timeout=120)
    with pytest.raises(MetaPropertiesError) as e:
        check_formatted([root / "logs"], node_id=1)
    assert proc.returncode == 1
    assert "Exiting Kafka due to fatal exception" in proc.stdout
    assert f"java.lang.RuntimeException: {e.value}" in proc.stdout.splitlines()
    assert str(e.value) == "No readable meta.properties files found."


@pytest.mark.parametrize("args", [[], ["-r", "3.9"], ["-r", "4.0"], ["-r", "3.3-IV3"],
                                  ["-r", "4.5-IV0"], ["-r", "9.9"]])
def test_version_mapping_prints_what_kafka_prints(args: list[str]) -> None:
    assert run_pykafkad_format(["version-mapping", *args]) == \
        run_kafka_storage(["version-mapping", *args])


def test_scram_password_is_salted_as_kafka_salts_it(tmp_path: Path) -> None:
    """A password credential has a random salt: recompute Kafka's keys from its salt."""
    from pykafkad.metadata.scram import parse_add_scram

    config = write_config(tmp_path, STATIC)
    rc, _, err = run_kafka_storage(["format", "-t", CLUSTER_ID, "-c", str(config), "-S",
                                    "SCRAM-SHA-512=[name=bob,password=bob-secret]"])
    assert rc == 0, err
    (kafka_record,) = [r for r in read_snapshot(bootstrap_snapshot_path(tmp_path / "logs")).records()
                       if type(r).__name__ == "UserScramCredentialRecord"]
    salt = base64.b64encode(kafka_record.salt).decode()
    ours = parse_add_scram(f'SCRAM-SHA-512=[name=bob,password=bob-secret,salt="{salt}"]')
    assert ours == kafka_record
    assert len(parse_add_scram("SCRAM-SHA-256=[name=x,password=y]").salt) <= 26


def test_kafka_starts_from_dirs_pykafkad_formatted(tmp_path: Path) -> None:
    """Apache Kafka 4.4 starts on a log dir ``pykafkad format`` wrote (meta.properties and the
    bootstrap snapshot) and serves the cluster id and metadata.version it was formatted with."""
    from confluent_kafka.admin import AdminClient

    from compat.kafka_broker import run_kafka
    from compat.wire_client import WireClient
    from tests.integration.clients import WAIT_S
    from wire.messages.api_versions_request import ApiVersionsRequest

    config = write_config(tmp_path, {**STATIC, "log.dirs": "{root}/logs"})
    rc, out, err = run_pykafkad_format(["format", "-t", CLUSTER_ID, "-c", str(config),
                                        "--release-version", "4.3"])
    assert rc == 0, err
    # run_kafka formats only a dir without meta.properties: this one starts as it is
    with run_kafka(data_dir=tmp_path) as kafka:
        admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
        cluster = admin.describe_cluster().result(WAIT_S)
        assert cluster.cluster_id == CLUSTER_ID
        with WireClient(kafka.bootstrap_servers) as client:
            versions = client.request(18, 3, ApiVersionsRequest("pykafkad-test", "1"))
        finalized = {f.name: f.max_version_level for f in versions.finalized_features}
    # the release it was formatted with (4.3-IV0 is level 30), not Kafka's default (33)
    assert finalized["metadata.version"] == 30
    assert finalized["share.version"] == 1
    assert MetaProperties.read(tmp_path / "logs").cluster_id == CLUSTER_ID
