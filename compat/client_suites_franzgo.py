"""franz-go's own integration tests (package pkg/kgo of github.com/twmb/franz-go) against a
running broker.

kgo's tests reach a broker through environment variables (helpers_test.go): ``KGO_SEEDS`` names
the seed brokers, ``KGO_TEST_RF`` the replication factor of the topics they create (3 unless
told), ``KGO_TEST_RECORDS`` how many records the ETL tests produce (500,000 unless told) and
``KGO_TEST_MAX_TOPIC_PARTS`` a cap on their topics' partitions (7, 11 or 31).  Whether the
KIP-848 and share-group subtests run is decided by the broker's ApiVersions answer
(ConsumerGroupHeartbeat v1; ShareFetch and ShareAcknowledge v2), so a run reports those skips.

The pinned module is fetched through the Go module proxy (its zip carries the _test.go files)
and copied out of the read-only module cache, so ``go test`` can write its go.sum next to it.
Nothing in franz-go's tests is changed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from compat.client_suites import CACHE, INTERNAL_TOPICS_ON_ONE_NODE

FRANZ_GO_MODULE = "github.com/twmb/franz-go"
FRANZ_GO_VERSION = "v1.22.3"

#: the Go toolchain (franz-go v1.22.3's go.mod asks for go 1.26)
GO = os.environ.get("GO", shutil.which("go") or "/usr/local/go/bin/go")

#: one broker: the tests' topics get replication factor 1
SINGLE_NODE_ENV = {"KGO_TEST_RF": "1"}

#: a broker config for the kgo tests on one node: the internal topics at replication factor 1
#: (the share-group tests set their groups' own configs through IncrementalAlterConfigs)
BROKER_CONFIG = INTERNAL_TOPICS_ON_ONE_NODE

#: the tests the issue names: the consumer-group and transactional ETL chains (each with three
#: KIP-848 subtests) and the four share-group tests
NAMED_TESTS = ("TestGroupETL", "TestTxnEtl", "TestShareGroup", "TestShareGroupETL",
               "TestShareGroupAckOnClose", "TestShareGroupOffsetsAdmin")


def run_regex(tests: Iterable[str]) -> str:
    """A ``go test -run`` pattern selecting exactly these top-level tests (and their subtests)."""
    return "^(" + "|".join(tests) + ")$"


def franz_go_suite(cache: Path = CACHE, version: str = FRANZ_GO_VERSION) -> Path:
    """A writable copy of franz-go ``version``'s module (tests included) under ``cache``,
    fetched through the Go module proxy on first use."""
    dest = cache / f"franz-go@{version}"
    done = dest / ".pykafkad-complete"
    if done.exists():
        return dest
    out = subprocess.run([GO, "mod", "download", "-json", f"{FRANZ_GO_MODULE}@{version}"],
                         capture_output=True, text=True, check=True, cwd=cache_dir(cache))
    info = json.loads(out.stdout)
    if info.get("Error"):
        raise OSError(f"go mod download {FRANZ_GO_MODULE}@{version}: {info['Error']}")
    shutil.rmtree(dest, ignore_errors=True)
    # the module cache is read-only: copy the files, not their modes
    shutil.copytree(info["Dir"], dest, copy_function=shutil.copyfile)
    for path in [dest, *dest.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    done.write_text(f"{FRANZ_GO_MODULE}@{version}\n")
    return dest


def cache_dir(cache: Path) -> Path:
    cache.mkdir(parents=True, exist_ok=True)
    return cache


def franz_go_suite_or_skip(cache: Path = CACHE) -> Path:
    """``franz_go_suite`` for a test: skipped where no Go toolchain is installed or the module
    proxy cannot be reached, except in CI (CI=true), where either is a failure."""
    import pytest

    if not Path(GO).exists():
        if os.environ.get("CI"):
            raise FileNotFoundError(f"no Go toolchain at {GO} (set GO to the go command)")
        pytest.skip(f"no Go toolchain at {GO}")
    try:
        return franz_go_suite(cache)
    except (subprocess.CalledProcessError, OSError, ValueError) as e:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"franz-go {FRANZ_GO_VERSION} could not be fetched: {e}")


def run_franz_go(bootstrap: str, run: str, *, records: int = 20000, max_partitions: int | None = None,
                 env: dict[str, str] | None = None, timeout: str = "15m",
                 log_path: Path | None = None, cache: Path = CACHE) -> tuple[int, dict[str, str]]:
    """Runs ``go test -run RUN ./pkg/kgo`` of the pinned franz-go against ``bootstrap``;
    returns go test's exit status and each test's (and subtest's) outcome: pass, fail or skip.
    The tests' output goes to ``log_path`` (else nowhere but the outcomes)."""
    root = franz_go_suite(cache)
    run_env = {**os.environ, "KGO_SEEDS": bootstrap, "KGO_TEST_RECORDS": str(records),
               **SINGLE_NODE_ENV, **(env or {})}
    if max_partitions:
        run_env["KGO_TEST_MAX_TOPIC_PARTS"] = str(max_partitions)
    cmd = [GO, "test", "-json", "-count=1", f"-timeout={timeout}", "-run", run, "./pkg/kgo/"]
    proc = subprocess.Popen(cmd, cwd=root, env=run_env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    outcomes: dict[str, str] = {}
    log = open(log_path, "w") if log_path else None  # noqa: SIM115
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            event = parse_event(line)
            if event is None:
                if log:
                    log.write(line)
                continue
            if log and event.get("Output"):
                log.write(event["Output"])
            if event.get("Test") and event.get("Action") in ("pass", "fail", "skip"):
                outcomes[event["Test"]] = event["Action"]
        rc = proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if log:
            log.close()
    return rc, outcomes


def parse_event(line: str) -> dict | None:
    """One ``go test -json`` event, or None for a line that is not one (build output)."""
    try:
        event = json.loads(line)
    except ValueError:
        return None
    return event if isinstance(event, dict) else None
