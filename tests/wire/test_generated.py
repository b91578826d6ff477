"""The generated codec: fresh against the specs, round trips every message at every version,
and turns any byte string into either a message or RemoteProtocolError."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import wire.messages as messages
from wire.errors import RemoteProtocolError
from wire.messages._base import Message

ROOT = Path(__file__).resolve().parents[2]

INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
}


def all_message_classes() -> list[type[Message]]:
    out = []
    for mod in messages.MODULES:
        m = importlib.import_module(f"wire.messages.{mod}")
        for v in vars(m).values():
            if isinstance(v, type) and issubclass(v, Message) and v is not Message:
                if v.__module__ == m.__name__:
                    out.append(v)
    return out


CASES = [
    (cls, v)
    for cls in all_message_classes()
    for v in range(cls.LOWEST_VERSION, cls.HIGHEST_VERSION + 1)
]


def _in(rng: tuple[int, int], v: int) -> bool:
    return rng[0] <= v <= rng[1]


def scalar(typ: str, nullable: bool) -> st.SearchStrategy:
    if typ in INT_RANGES:
        lo, hi = INT_RANGES[typ]
        return st.integers(lo, hi)
    if typ == "bool":
        return st.booleans()
    if typ == "float64":
        return st.floats(allow_nan=False)
    if typ == "uuid":
        return st.binary(min_size=16, max_size=16)
    if typ == "string":
        s = st.text(max_size=8)
        return st.one_of(st.none(), s) if nullable else s
    if typ in ("bytes", "records"):
        b = st.binary(max_size=8)
        return st.one_of(st.none(), b) if nullable or typ == "records" else b
    raise AssertionError(typ)


def struct_strategy(cls: type, version: int, depth: int = 0) -> st.SearchStrategy:
    kwargs = {}
    for attr, typ, versions, nullable, tagged, _tag, _fo, struct in cls._FIELDS:
        if not (_in(versions, version) or _in(tagged, version)):
            continue
        nul = _in(nullable, version)
        if typ.startswith("[]"):
            elem = (
                struct_strategy(struct, version, depth + 1)
                if struct is not None
                else scalar(typ[2:], False)
            )
            s = st.lists(elem, max_size=2 if depth < 2 else 1)
            kwargs[attr] = st.one_of(st.none(), s) if nul else s
        elif struct is not None:
            s = struct_strategy(struct, version, depth + 1)
            kwargs[attr] = st.one_of(st.none(), s) if nul else s
        else:
            kwargs[attr] = scalar(typ, nul)
    return st.builds(cls, **kwargs)


@pytest.mark.parametrize(
    "cls,version", CASES, ids=[f"{c.__name__}-v{v}" for c, v in CASES]
)
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_round_trip(cls: type[Message], version: int, data: st.DataObject) -> None:
    msg = data.draw(struct_strategy(cls, version))
    encoded = msg.encode(version)
    decoded = cls.decode(encoded, version)
    assert decoded == msg
    assert decoded.encode(version) == encoded


@pytest.mark.parametrize("cls,version", CASES[::7], ids=[f"{c.__name__}-v{v}" for c, v in CASES[::7]])
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(blob=st.binary(max_size=64))
def test_any_bytes_decode_or_protocol_error(cls: type[Message], version: int, blob: bytes) -> None:
    try:
        cls.decode(blob, version)
    except RemoteProtocolError:
        pass


def test_registry_covers_every_api() -> None:
    for key, spec in messages.API_KEYS.items():
        assert spec.request_type().API_KEY == key
        assert spec.response_type().API_KEY == key
        assert spec.lowest_version <= spec.highest_version


def specs_jar() -> Path:
    """The kafka-clients jar the codec is generated from; outside CI a machine that cannot
    fetch it (no Maven, no network) skips the freshness check, in CI that is a failure."""
    from compat import maven
    from compat.kafka_specs import specs_jar

    try:
        return specs_jar()
    except (maven.MavenError, FileNotFoundError, OSError) as e:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"the kafka-clients jar with Kafka's message specs cannot be had: {e}")


def test_generated_code_is_fresh(tmp_path: Path) -> None:
    jar = specs_jar()
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_messages.py"), "--specs", str(jar),
         str(tmp_path)],
        check=True,
        capture_output=True,
    )
    committed = ROOT / "wire" / "messages"
    fresh = {p.name: p.read_text() for p in tmp_path.glob("*.py")}
    have = {p.name: p.read_text() for p in committed.glob("*.py") if p.name != "_base.py"}
    stale = sorted(n for n in fresh.keys() | have.keys() if fresh.get(n) != have.get(n))
    assert not stale, f"wire/messages is stale; run scripts/gen_messages.py: {stale[:10]}"


def test_generated_metadata_records_are_fresh(tmp_path: Path) -> None:
    """wire/metadata is generated from the kafka-metadata jar of the same release."""
    from compat import maven
    from compat.kafka_specs import metadata_specs_jar

    try:
        jar = metadata_specs_jar()
    except (maven.MavenError, FileNotFoundError, OSError) as e:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"the kafka-metadata jar with Kafka's record specs cannot be had: {e}")
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_messages.py"), "--metadata", "--specs",
         str(jar), str(tmp_path)],
        check=True,
        capture_output=True,
    )
    committed = ROOT / "wire" / "metadata"
    fresh = {p.name: p.read_text() for p in tmp_path.glob("*.py")}
    have = {p.name: p.read_text() for p in committed.glob("*.py")}
    stale = sorted(n for n in fresh.keys() | have.keys() if fresh.get(n) != have.get(n))
    assert not stale, f"wire/metadata is stale; run scripts/gen_messages.py --metadata: {stale[:10]}"
