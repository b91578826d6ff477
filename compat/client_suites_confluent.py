"""confluent-kafka-python's own integration suite (its tests/integration) against a running
single node, as its CI runs it against one trivup broker.

The PyPI sdist of confluent-kafka ships no tests, and no registry serves them, so the suite is
taken from a git copy of the confluent-kafka-python repository (``CONFLUENT_KAFKA_PYTHON_SRC``:
a source tree, or a bare/mirror git directory read with ``git archive``) and unpacked under
.cache/client_suites/.  The suite aims at an existing cluster when ``BROKERS`` is set (its
``ByoFixture``); its cluster_fixture.py imports trivup, which only builds clusters we don't use,
so a stand-in ``trivup`` package is written beside it.  Its fixtures import the Schema Registry
client, whose extra dependencies (httpx2, authlib, ...) are installed from PyPI with
``pip install --target`` into the cache, with pytest-timeout, which bounds the suite's loops
that have no deadline of their own.  Nothing in their test bodies is changed.

The broker gets the settings their ``TestUtils.broker_conf()`` gives trivup's broker, plus the
StandardAuthorizer with the suite's (PLAINTEXT, ANONYMOUS) user as super user, since
test_basic_operations ends with CreateAcls/DescribeAcls/DeleteAcls, which need an authorizer.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from compat.client_suites import CACHE, INTERNAL_TOPICS_ON_ONE_NODE, junit_outcomes

#: where the suite's source is looked for when CONFLUENT_KAFKA_PYTHON_SRC is not set: a
#: snapshot of the GitHub repository (newest there: v2.15.0; no v2.16.1 tag)
DEFAULT_SOURCES = (Path("/work/.mirror/confluentinc+confluent-kafka-python/repo"),)

#: the tests issues 12 and 13 name, and the module each lives in
NAMED_TESTS = {
    "test_basic_operations": "tests/integration/admin/test_basic_operations.py",
    "test_user_scram_credentials": "tests/integration/admin/test_user_scram_credentials.py",
    "test_consumer_upgrade_downgrade":
        "tests/integration/consumer/test_consumer_upgrade_downgrade.py",
}

#: the modules a plain Kafka node can serve: the Schema Registry ones need a registry, and
#: the OAuth/SASL share-consumer ones and test_describe_operations build their own trivup
#: cluster (no BROKERS path)
SUITE_PATHS = (
    "tests/integration/admin",
    "tests/integration/consumer",
    "tests/integration/producer",
    "tests/integration/serialization",
    "tests/integration/share_consumer",
    "tests/integration/integration_test.py",
)
DESELECT = (
    "tests/integration/admin/test_describe_operations.py",
    # these need a Schema Registry (SR_URL)
    "tests/integration/share_consumer/test_share_consumer_deserialization.py"
    "::test_schema_registry_roundtrip",
    "tests/integration/share_consumer/test_share_consumer_deserialization.py"
    "::test_schema_registry_poison_marked",
)

STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"

#: their TestUtils.broker_conf() (single-node replication of the internal topics, a short
#: share-group lock) and an authorizer for the ACL step, the PLAINTEXT user a super user.
#: Less their ``offsets.topic.min.isr=1``: no Kafka config has that name (Kafka 4.4 starts
#: and logs it as unused), and pykafkad refuses a server.properties with an unknown name
BROKER_CONFIG = {
    **INTERNAL_TOPICS_ON_ONE_NODE,
    "group.share.record.lock.duration.ms": "1000",
    "group.share.min.record.lock.duration.ms": "1000",
    "authorizer.class.name": STANDARD_AUTHORIZER,
    "super.users": "User:ANONYMOUS",
}

#: PyPI packages the suite imports beyond the installed confluent-kafka (its
#: requirements-schemaregistry.txt for Python >= 3.10 and requirements-avro.txt,
#: -json.txt and -protobuf.txt: their test helpers and serializer tests import them)
DEPENDENCIES = ("httpx2>=2.0", "authlib>=1.8.0", "certifi", "cachetools",
                "fastavro>=1.5.4,<2", "requests", "avro>=1.11.1,<2",
                "jsonschema>=4.18.0", "protobuf", "googleapis-common-protos")
#: installed without its dependencies: the venv's pytest runs it (found by its entry point)
PYTEST_PLUGINS = ("pytest-timeout",)

# Written beside the suite: cluster_fixture.py imports trivup's KafkaCluster at module level.
_TRIVUP_ADAPTER = '''"""Added by pykafkad's compat/client_suites_confluent.py: the suite runs
against an existing cluster (BROKERS), so trivup's clusters are never built."""


class KafkaCluster:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("this run uses an existing cluster (BROKERS); trivup is not here")
'''

_PYTEST_INI = ("[pytest]\naddopts = -p no:cacheprovider -p no:randomly -p no:hypothesispytest\n"
               "markers =\n    timeout\n")

#: per-test bound (pytest-timeout): their rebalance loops poll until an assignment arrives
TEST_TIMEOUT_S = 180


def _source() -> Path:
    for candidate in ([Path(os.environ["CONFLUENT_KAFKA_PYTHON_SRC"])]
                      if os.environ.get("CONFLUENT_KAFKA_PYTHON_SRC") else DEFAULT_SOURCES):
        if candidate.exists():
            return candidate
    raise FileNotFoundError(
        "confluent-kafka-python's tests: set CONFLUENT_KAFKA_PYTHON_SRC to a git copy of "
        "github.com/confluentinc/confluent-kafka-python (its sdist ships no tests)")


def _git_dir(src: Path) -> Path | None:
    if (src / ".git").exists():
        return src / ".git"
    if (src / "HEAD").exists() and (src / "objects").exists():
        return src
    return None


def confluent_suite(cache: Path = CACHE) -> Path:
    """The suite's tests/ tree with the adapter files, unpacked under ``cache`` once per
    source commit."""
    src = _source()
    git = _git_dir(src)
    if git is not None:
        rev = subprocess.run(["git", "--git-dir", str(git), "rev-parse", "--short", "HEAD"],
                             check=True, capture_output=True, text=True).stdout.strip()
    else:
        rev = "tree"
    root = cache / f"confluent-kafka-python-{rev}"
    if not (root / "tests" / "integration" / "conftest.py").exists():
        root.mkdir(parents=True, exist_ok=True)
        if git is not None:
            with tempfile.TemporaryFile() as tar_file:
                subprocess.run(["git", "--git-dir", str(git), "archive", "HEAD", "tests"],
                               check=True, stdout=tar_file)
                tar_file.seek(0)
                with tarfile.open(fileobj=tar_file) as tar:
                    tar.extractall(root, filter="data")
        else:
            shutil.copytree(src / "tests", root / "tests", dirs_exist_ok=True)
    stub = root / "trivup" / "clusters"
    stub.mkdir(parents=True, exist_ok=True)
    (root / "trivup" / "__init__.py").touch()
    (stub / "__init__.py").touch()
    (stub / "KafkaCluster.py").write_text(_TRIVUP_ADAPTER)
    (root / "pytest.ini").write_text(_PYTEST_INI)
    return root


def suite_dependencies(cache: Path = CACHE) -> Path:
    """``DEPENDENCIES`` installed (once) into a directory of their own under ``cache``."""
    target = cache / "confluent-suite-deps"
    marker = target / ".installed"
    if not marker.exists():
        shutil.rmtree(target, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--target", str(target),
                        *DEPENDENCIES], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target",
                        str(target), *PYTEST_PLUGINS], check=True, stdout=subprocess.DEVNULL)
        marker.write_text("\n".join(DEPENDENCIES + PYTEST_PLUGINS))
    return target


def run_confluent(bootstrap: str, tests: list[str] | None = None,
                  paths: list[str] | None = None, extra: list[str] = (),
                  group_protocol: str | None = None, cache: Path = CACHE,
                  capture: bool = False) -> tuple[int, dict[str, str]]:
    """Runs the suite's ``paths`` (``SUITE_PATHS``; the named tests' modules when ``tests``
    names only named ones) against ``bootstrap``; returns pytest's exit status and each test's outcome by
    name.  ``group_protocol`` "consumer" sets TEST_CONSUMER_GROUP_PROTOCOL, their switch for
    the KIP-848 variants (test_consumer_upgrade_downgrade is skipped without it)."""
    root = confluent_suite(cache)
    deps = suite_dependencies(cache)
    env = {**os.environ, "BROKERS": bootstrap, "PYTHONPATH": os.pathsep.join([str(root),
                                                                              str(deps)])}
    env.pop("TEST_CONSUMER_GROUP_PROTOCOL", None)
    if group_protocol:
        env["TEST_CONSUMER_GROUP_PROTOCOL"] = group_protocol
    if paths is None:
        paths = (sorted({NAMED_TESTS[t] for t in tests})
                 if tests and all(t in NAMED_TESTS for t in tests) else list(SUITE_PATHS))
    report_dir = tempfile.mkdtemp(prefix="confluent-suite-")
    report = Path(report_dir) / "report.xml"
    args = [sys.executable, "-m", "pytest", *paths, "-q", "-rfE", "-p", "no:pykafkad",
            f"--timeout={TEST_TIMEOUT_S}",
            "-W", "ignore::DeprecationWarning", f"--junitxml={report}",
            *(f"--deselect={d}" for d in DESELECT), *extra]
    if tests:
        args += ["-k", " or ".join(tests)]
    out = subprocess.PIPE if capture else None
    try:
        proc = subprocess.run(args, cwd=root, env=env, stdout=out, stderr=out, text=True)
        return proc.returncode, junit_outcomes(report)
    finally:
        shutil.rmtree(report_dir, ignore_errors=True)


#: the named tests by the group protocol their run needs: test_consumer_upgrade_downgrade
#: only runs with TEST_CONSUMER_GROUP_PROTOCOL=consumer, the other two are admin tests
NAMED_RUNS = (
    (None, ("test_basic_operations", "test_user_scram_credentials")),
    ("consumer", ("test_consumer_upgrade_downgrade",)),
)


def run_named(bootstrap: str, capture: bool = True) -> dict[str, str]:
    """Each named test's outcome against ``bootstrap`` (each run with its group protocol)."""
    outcomes: dict[str, str] = {}
    for group_protocol, tests in NAMED_RUNS:
        _, got = run_confluent(bootstrap, list(tests), group_protocol=group_protocol,
                               capture=capture)
        outcomes.update({t: got.get(t, "not run") for t in tests})
    return outcomes


def confluent_suite_or_skip(cache: Path = CACHE) -> Path:
    """``confluent_suite`` and its dependencies for a test, skipped when no git copy of the
    suite is on this machine (no registry serves it, so CI skips it too on a new machine);
    a failed PyPI install fails the test in CI (CI=true) and skips it elsewhere."""
    import pytest

    try:
        root = confluent_suite(cache)
    except FileNotFoundError as e:
        pytest.skip(str(e))
    try:
        suite_dependencies(cache)
    except (subprocess.CalledProcessError, OSError) as e:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"the suite's dependencies could not be installed: {e}")
    return root
