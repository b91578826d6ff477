"""``meta.properties``: the identity of a log directory (Kafka's MetaProperties and
MetaPropertiesEnsemble), and the Java properties-file format it and server.properties use.

A KRaft node's every log directory holds ``version=1``, ``cluster.id``, ``node.id`` and
``directory.id``. At start Kafka refuses directories that were never formatted or that disagree
(another cluster, another node id, a repeated directory id); the messages here are Kafka's.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from pykafkad.log.checkpoint import atomic_write
from pykafkad.metadata.java_properties import format_properties, java_hash_order, load_properties

META_PROPERTIES = "meta.properties"
VERSION_PROP = "version"
CLUSTER_ID_PROP = "cluster.id"
NODE_ID_PROP = "node.id"
BROKER_ID_PROP = "broker.id"
DIRECTORY_ID_PROP = "directory.id"


class MetaPropertiesError(RuntimeError):
    """A log directory that cannot be used as it is; ``str()`` is Kafka's one-line message."""


# -- UUIDs as Kafka prints them -------------------------------------------------------------------
def uuid_to_string(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).decode().rstrip("=")


def uuid_from_string(text: str) -> bytes:
    if len(text) > 24:
        raise ValueError(f"Input string with prefix `{text[:24]}` is too long to be decoded as "
                         f"a base64 UUID")
    try:
        b = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except ValueError as e:
        raise ValueError(f"Input string `{text}` decoded as {e}") from None
    if len(b) != 16:
        raise ValueError(f"Input string `{text}` decoded as {len(b)} bytes, which is not equal "
                         f"to the expected 16 bytes of a base64-encoded UUID")
    return b


def _reserved_directory(b: bytes) -> bool:
    """DirectoryId.reserved: the first 100 UUIDs are sentinels (MIGRATING, UNASSIGNED, LOST)."""
    return b[:8] == bytes(8) and int.from_bytes(b[8:], "big") < 100


def random_uuid() -> str:
    """Kafka's Uuid.randomUuid(): never the zero or metadata-topic id, never starting with '-'."""
    while True:
        b = os.urandom(16)
        s = uuid_to_string(b)
        if not _reserved_directory(b) and not s.startswith("-"):
            return s


# -- meta.properties ---------------------------------------------------------------------------
@dataclass(frozen=True)
class MetaProperties:
    """One log directory's meta.properties; version 1 (KRaft) always has both ids."""

    version: int = 1
    cluster_id: str | None = None
    node_id: int | None = None
    directory_id: str | None = None

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> MetaProperties:
        raw_version = props.get(VERSION_PROP, "0")
        try:
            version = int(raw_version)
        except ValueError:
            raise MetaPropertiesError(
                f"Invalid meta.properties version string '{raw_version}'") from None
        if version not in (0, 1):
            raise MetaPropertiesError(f"Unknown meta.properties version number {version}")
        id_prop = BROKER_ID_PROP if version == 0 else NODE_ID_PROP
        node_id = None
        if id_prop in props:
            try:
                node_id = int(props[id_prop])
            except ValueError:
                raise MetaPropertiesError(
                    f"Failed to parse {id_prop} property as an int: {props[id_prop]}") from None
        elif version == 1:
            raise MetaPropertiesError(f"Failed to find required property {id_prop}.")
        directory_id = props.get(DIRECTORY_ID_PROP)
        if directory_id is not None:
            try:
                uuid_from_string(directory_id)
            except ValueError as e:
                raise MetaPropertiesError(
                    f"Unable to read {DIRECTORY_ID_PROP} as a Uuid: {e}") from None
        meta = cls(version, props.get(CLUSTER_ID_PROP), node_id, directory_id)
        if version == 1 and meta.cluster_id is None:
            raise MetaPropertiesError("cluster.id was not found.")
        return meta

    def to_properties(self) -> dict[str, str]:
        props = {VERSION_PROP: str(self.version)}
        if self.cluster_id is not None:
            props[CLUSTER_ID_PROP] = self.cluster_id
        if self.node_id is not None:
            props[BROKER_ID_PROP if self.version == 0 else NODE_ID_PROP] = str(self.node_id)
        if self.directory_id is not None:
            props[DIRECTORY_ID_PROP] = self.directory_id
        return props

    @classmethod
    def read(cls, log_dir: str | Path) -> MetaProperties:
        """This dir's meta.properties (FileNotFoundError when it has none)."""
        return cls.from_properties(load_properties(Path(log_dir) / META_PROPERTIES))

    def write(self, log_dir: str | Path, *, sync: bool = True) -> None:
        """Writes ``<log_dir>/meta.properties`` atomically (tmp file, fsync, rename), as Kafka's
        PropertiesUtils.writePropertiesFile does."""
        Path(log_dir).mkdir(parents=True, exist_ok=True)
        atomic_write(Path(log_dir) / META_PROPERTIES,
                     format_properties(self.to_properties()).encode("latin-1"), sync=sync)


@dataclass
class MetaPropertiesEnsemble:
    """The meta.properties of every log directory: read, missing (``empty``) or unreadable
    (``errors``). Directory order is Kafka's (a TreeSet of the paths)."""

    props: dict[str, MetaProperties] = field(default_factory=dict)
    empty: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    metadata_log_dir: str | None = None

    @classmethod
    def load(cls, log_dirs: Iterable[str | Path],
             metadata_log_dir: str | Path | None = None) -> MetaPropertiesEnsemble:
        dirs = sorted({str(d) for d in log_dirs} | ({str(metadata_log_dir)}
                                                     if metadata_log_dir else set()))
        out = cls(metadata_log_dir=str(metadata_log_dir) if metadata_log_dir else None)
        for d in dirs:
            try:
                out.props[d] = MetaProperties.read(d)
            except FileNotFoundError:
                out.empty.append(d)
            except (OSError, MetaPropertiesError, UnicodeDecodeError):
                # unreadable or unparsable: Kafka's loader counts the dir as failed, not fatal
                out.errors.append(d)
        return out

    def verify(self, expected_cluster_id: str | None = None, expected_node_id: int | None = None,
               *, require_at_least_one_valid: bool = False,
               require_metadata_log_dir: bool = False) -> None:
        """Kafka's MetaPropertiesEnsemble.verify, with its messages."""
        if require_at_least_one_valid and not self.props:
            raise MetaPropertiesError("No readable meta.properties files found.")
        seen: dict[str, str] = {}
        for log_dir in java_hash_order(self.props):
            meta = self.props[log_dir]
            path = os.path.join(log_dir, META_PROPERTIES)
            if meta.cluster_id is None:
                if meta.version == 1:
                    raise MetaPropertiesError(f"cluster.id was not specified in the v1 file: {path}")
            elif expected_cluster_id is None:
                expected_cluster_id = meta.cluster_id
            elif meta.cluster_id != expected_cluster_id:
                raise MetaPropertiesError(
                    f"Invalid cluster.id in: {path}. Expected {expected_cluster_id}, but read "
                    f"{meta.cluster_id}")
            if meta.node_id is None:
                if meta.version == 1:
                    raise MetaPropertiesError(f"node.id was not specified in {path}")
            elif expected_node_id is None:
                expected_node_id = meta.node_id
            elif meta.node_id != expected_node_id:
                raise MetaPropertiesError(
                    f"Stored node id {meta.node_id} doesn't match previous node id "
                    f"{expected_node_id} in {path}. If you moved your data, make sure your "
                    f"configured node id matches. If you intend to create a new node, you "
                    f"should remove all data in your data directories.")
            if meta.directory_id is not None:
                if _reserved_directory(uuid_from_string(meta.directory_id)):
                    raise MetaPropertiesError(
                        f"Invalid resrved directory ID {meta.directory_id} found in {log_dir}")
                prev = seen.setdefault(meta.directory_id, log_dir)
                if prev != log_dir:
                    raise MetaPropertiesError(
                        f"Duplicate directory ID Optional[{meta.directory_id}] found. It was the "
                        f"ID of {prev}, but also of {log_dir}")
        if require_metadata_log_dir and self.metadata_log_dir is None:
            raise MetaPropertiesError("No metadata log directory was specified.")
        if self.metadata_log_dir is not None and self.metadata_log_dir in self.errors:
            raise MetaPropertiesError(
                f"Encountered I/O error in metadata log directory {self.metadata_log_dir}. "
                f"Cannot continue.")

    def new_directory_id(self) -> str:
        """A directory id no directory here has yet (Copier.generateValidDirectoryId)."""
        taken = {m.directory_id for m in self.props.values()}
        while True:
            candidate = random_uuid()
            if candidate not in taken:
                return candidate


def check_formatted(
    log_dirs: Iterable[str | Path],
    *,
    metadata_log_dir: str | Path | None = None,
    node_id: int | None = None,
    assign_directory_ids: bool = True,
) -> MetaProperties:
    """What Kafka checks when a KRaft node starts (KafkaRaftServer.initializeLogDirs): every log
    directory formatted, for one cluster and this node. Returns the metadata log directory's
    MetaProperties (the first log dir when none is named); raises MetaPropertiesError with
    Kafka's message otherwise. Kafka logs that message as a fatal exception and exits with
    status 1. Directories formatted before directory ids existed get one, as Kafka rewrites
    them (``assign_directory_ids``)."""
    log_dirs = [str(d) for d in log_dirs]
    metadata_log_dir = str(metadata_log_dir) if metadata_log_dir else (log_dirs or [None])[0]
    ensemble = MetaPropertiesEnsemble.load(log_dirs, metadata_log_dir)
    ensemble.verify(None, node_id, require_at_least_one_valid=True,
                    require_metadata_log_dir=True)
    metadata_topic = "__cluster_metadata-0"
    for log_dir in java_hash_order(ensemble.props):
        if log_dir != metadata_log_dir and os.path.exists(os.path.join(log_dir, metadata_topic)):
            raise MetaPropertiesError(
                f"Found unexpected metadata location in data directory "
                f"`{os.path.join(log_dir, metadata_topic)}` (the configured metadata directory is "
                f"{metadata_log_dir}).")
    for log_dir in [*ensemble.props, *ensemble.empty]:
        if log_dir in ensemble.empty:
            raise MetaPropertiesError(
                f"No `meta.properties` found in {log_dir} (have you run `kafka-storage.sh` to "
                f"format the directory?)")
        meta = ensemble.props[log_dir]
        if meta.node_id is None:
            raise MetaPropertiesError(f"Error: node ID not found in {log_dir}")
        if meta.cluster_id is None:
            raise MetaPropertiesError(f"Error: cluster ID not found in {log_dir}")
        if meta.directory_id is None and assign_directory_ids:
            meta = replace(meta, directory_id=ensemble.new_directory_id())
            meta.write(log_dir)
            ensemble.props[log_dir] = meta
    return ensemble.props[metadata_log_dir]
