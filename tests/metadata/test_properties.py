"""meta.properties and the start-up check of formatted log directories, with Kafka's messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from pykafkad.metadata.java_properties import format_properties, java_hash_order, parse_properties
from pykafkad.metadata.properties import (
    MetaProperties,
    MetaPropertiesError,
    check_formatted,
    random_uuid,
    uuid_from_string,
)


def test_written_as_java_properties_store_writes_it(tmp_path: Path) -> None:
    meta = MetaProperties(1, "AAAAAAAAAAAAAAAAAAAAAA", 1, "ydmr5sD0qX-NgL-AVjhcvQ")
    meta.write(tmp_path)
    lines = (tmp_path / "meta.properties").read_text().splitlines()
    # Kafka 4.4 writes exactly these lines, in this (hash) order, after an empty comment and date
    assert lines[0] == "#" and lines[1].startswith("#")
    assert lines[2:] == ["node.id=1", "directory.id=ydmr5sD0qX-NgL-AVjhcvQ", "version=1",
                         "cluster.id=AAAAAAAAAAAAAAAAAAAAAA"]
    assert MetaProperties.read(tmp_path) == meta
    assert not list(tmp_path.glob("*.tmp"))


def test_java_properties_syntax() -> None:
    text = "# c\n! c\n a = b \\\n   c\nk\\:x : v\\=w\nspaced value\nempty\nu=\\u0041\n"
    assert parse_properties(text) == {"a": "b c", "k:x": "v=w", "spaced": "value", "empty": "",
                                      "u": "A"}
    assert parse_properties(format_properties({"a:b": "c=d #e"}).split("\n", 2)[2]) == \
        {"a:b": "c=d #e"}


def test_hash_order_is_javas() -> None:
    # the order Kafka 4.4 printed "Formatting ..." lines in for these two dirs
    assert java_hash_order(["/tmp/hmeta/d1", "/tmp/hmeta/d2"]) == ["/tmp/hmeta/d2", "/tmp/hmeta/d1"]


def test_uuids() -> None:
    u = random_uuid()
    assert len(u) == 22 and not u.startswith("-") and len(uuid_from_string(u)) == 16


@pytest.mark.parametrize("text,message", [
    ("version=2\nnode.id=1\ncluster.id=x\n", "Unknown meta.properties version number 2"),
    ("version=x\n", "Invalid meta.properties version string 'x'"),
    ("version=1\ncluster.id=x\n", "Failed to find required property node.id."),
    ("version=1\nnode.id=1\n", "cluster.id was not found."),
    ("version=1\nnode.id=1\ncluster.id=x\ndirectory.id=zz\n", "Unable to read directory.id as a Uuid"),
])
def test_bad_files(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "meta.properties").write_text(text)
    with pytest.raises(MetaPropertiesError, match=message):
        MetaProperties.read(tmp_path)


def formatted(d: Path, cluster_id: str = "AAAAAAAAAAAAAAAAAAAAAA", node_id: int = 1,
              directory_id: str | None = None) -> Path:
    MetaProperties(1, cluster_id, node_id, directory_id or random_uuid()).write(d)
    return d


def test_check_formatted(tmp_path: Path) -> None:
    a, b = formatted(tmp_path / "a"), formatted(tmp_path / "b")
    meta = check_formatted([a, b], node_id=1)
    assert meta == MetaProperties.read(a)


def test_unformatted_dirs_are_refused(tmp_path: Path) -> None:
    with pytest.raises(MetaPropertiesError) as e:
        check_formatted([tmp_path / "never"])
    assert str(e.value) == "No readable meta.properties files found."
    a = formatted(tmp_path / "a")
    with pytest.raises(MetaPropertiesError) as e:
        check_formatted([a, tmp_path / "b"])
    assert str(e.value) == (f"No `meta.properties` found in {tmp_path / 'b'} (have you run "
                            f"`kafka-storage.sh` to format the directory?)")


def test_mismatches_are_refused(tmp_path: Path) -> None:
    a = formatted(tmp_path / "a")
    b = formatted(tmp_path / "b", cluster_id="BBBBBBBBBBBBBBBBBBBBBB")
    with pytest.raises(MetaPropertiesError, match="Invalid cluster.id in: "):
        check_formatted([a, b])
    with pytest.raises(MetaPropertiesError, match=r"Stored node id 1 doesn't match previous node "
                                                  r"id 2 in .*If you moved your data"):
        check_formatted([a], node_id=2)
    c = formatted(tmp_path / "c", directory_id=MetaProperties.read(a).directory_id)
    with pytest.raises(MetaPropertiesError, match="Duplicate directory ID"):
        check_formatted([a, c])
    (a / "__cluster_metadata-0").mkdir()
    d = formatted(tmp_path / "d")
    with pytest.raises(MetaPropertiesError, match="Found unexpected metadata location in data "
                                                  "directory"):
        check_formatted([d, a], metadata_log_dir=d)


def test_a_dir_without_a_directory_id_gets_one(tmp_path: Path) -> None:
    (tmp_path / "meta.properties").write_text("version=1\nnode.id=3\ncluster.id=x\n")
    meta = check_formatted([tmp_path])
    assert meta.directory_id and MetaProperties.read(tmp_path).directory_id == meta.directory_id


def test_an_unparsable_meta_properties_is_a_failed_dir(tmp_path: Path) -> None:
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "meta.properties").write_text("version=7\n")
    with pytest.raises(MetaPropertiesError, match="^No readable meta.properties files found.$"):
        check_formatted([tmp_path / "bad"])
    good = formatted(tmp_path / "good")
    with pytest.raises(MetaPropertiesError, match=f"^Encountered I/O error in metadata log "
                                                  f"directory {tmp_path / 'bad'}. Cannot continue.$"):
        check_formatted([good, tmp_path / "bad"], metadata_log_dir=tmp_path / "bad")
