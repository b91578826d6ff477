"""``pykafkad format`` / ``random-uuid`` / ``info`` / ``version-mapping``: Kafka 4.4's
``kafka-storage.sh``.

Same options, output lines, error messages and exit statuses (0, or 1 with the message on
stderr) as ``kafka.tools.StorageTool``: format writes meta.properties into every log directory
and, on a controller, the bootstrap snapshot into the metadata log directory. Only the
server.properties keys formatting needs are read here; the node validates the rest at start.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from pykafkad.metadata import features
from pykafkad.metadata.bootstrap import BootstrapMetadata, write_bootstrap_snapshot
from pykafkad.metadata.dynamic_voters import (
    DynamicVoter,
    DynamicVoterError,
    parse_dynamic_voters,
    voters_record,
)
from pykafkad.metadata.java_properties import java_hash_copy_order, java_hash_order, load_properties
from pykafkad.metadata.properties import (
    MetaProperties,
    MetaPropertiesEnsemble,
    MetaPropertiesError,
    random_uuid,
)
from pykafkad.metadata.scram import ScramError, parse_add_scram

DEFAULT_LOG_DIR = "/tmp/kafka-logs"


class TerseFailure(Exception):
    """A failure reported as its message alone, exit status 1 (Kafka's TerseFailure)."""


class _Parser(argparse.ArgumentParser):
    """argparse that exits with status 1 on a usage error, as Kafka's argparse4j tools do."""

    def error(self, message: str):
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


# -- server.properties: the few keys format needs ------------------------------------------------
@dataclass
class StorageConfig:
    node_id: int
    process_roles: list[str]
    log_dirs: list[str]
    metadata_log_dir: str
    voters: list[str]
    controller_listener_names: list[str]
    listeners: list[tuple[str, str | None, int]]
    advertised_listeners: list[tuple[str, str | None, int]]

    @property
    def is_controller(self) -> bool:
        return "controller" in self.process_roles


def _csv(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def _listeners(value: str | None) -> list[tuple[str, str | None, int]]:
    out = []
    for item in _csv(value):
        name, sep, rest = item.partition("://")
        if not sep:
            raise TerseFailure(f"Unable to parse {item} to a broker endpoint")
        host, _, port = rest.rpartition(":")
        host = host.strip("[]") or None
        try:
            out.append((name, host, int(port)))
        except ValueError:
            raise TerseFailure(f"Unable to parse {item} to a broker endpoint") from None
    return out


def read_storage_config(path: str) -> StorageConfig:
    try:
        props = load_properties(path)
    except FileNotFoundError:
        raise TerseFailure(f"NoSuchFileException: {path}") from None
    if not _csv(props.get("process.roles")):
        raise TerseFailure("The kafka configuration file appears to be for a legacy cluster. "
                           "Formatting is only supported for clusters in KRaft mode.")
    raw_node_id = props.get("node.id")
    if raw_node_id is None:
        raise TerseFailure('Missing required configuration "node.id" which has no default '
                           'value.')
    try:
        node_id = int(raw_node_id.strip())
    except ValueError:
        raise TerseFailure(f'Invalid value {raw_node_id} for configuration node.id: Not a '
                           f'number of type INT') from None
    log_dirs = _csv(props.get("log.dirs")) or _csv(props.get("log.dir")) or [DEFAULT_LOG_DIR]
    listeners = _listeners(props.get("listeners"))
    return StorageConfig(
        node_id=node_id,
        process_roles=_csv(props.get("process.roles")),
        log_dirs=log_dirs,
        metadata_log_dir=(props.get("metadata.log.dir") or "").strip() or log_dirs[0],
        voters=_csv(props.get("controller.quorum.voters")),
        controller_listener_names=_csv(props.get("controller.listener.names")),
        listeners=listeners,
        advertised_listeners=_listeners(props.get("advertised.listeners")) or listeners,
    )


# -- format ---------------------------------------------------------------------------------------
def _feature_levels(args: argparse.Namespace) -> dict[str, int]:
    levels: dict[str, int] = {}
    for item in args.feature or ():
        name, sep, level = item.partition("=")
        if not sep:
            raise TerseFailure(f"Can't parse feature=level string {item}: equals sign not found.")
        try:
            value = int(level.strip())
            if not -32768 <= value <= 32767:
                raise ValueError
        except ValueError:
            raise TerseFailure(f"Can't parse feature=level string {item}: unable to parse "
                               f"{level.strip()} as a short.") from None
        levels[name.strip()] = value
    return levels


def _release_version(args: argparse.Namespace, levels: dict[str, int]) -> int:
    if features.METADATA_VERSION in levels:
        if args.release_version is not None:
            raise TerseFailure("Use --release-version instead of --feature metadata.version=X "
                               "to avoid ambiguity.")
        level = levels[features.METADATA_VERSION]
        try:
            features.release_name(level)
        except ValueError as e:
            raise TerseFailure(str(e)) from None
        if level > features.LATEST_PRODUCTION_LEVEL:
            raise TerseFailure(f"metadata.version {features.release_name(level)} is not yet "
                               f"stable.")
        return level
    if args.release_version is not None:
        try:
            return features.parse_release_version(args.release_version)
        except ValueError as e:
            raise TerseFailure(str(e)) from None
    return features.LATEST_PRODUCTION_LEVEL


def _effective_levels(requested: dict[str, int], mv: int, dynamic: bool) -> dict[str, int]:
    for name in requested:
        if name != features.METADATA_VERSION and name not in features.PRODUCTION_FEATURES:
            raise TerseFailure(f"Unsupported feature: {name}. Supported features are: "
                               + ", ".join(features.PRODUCTION_FEATURES))
    levels = dict(requested)
    levels[features.METADATA_VERSION] = mv
    for name in features.PRODUCTION_FEATURES:
        if name == features.KRAFT_VERSION:
            levels[name] = _kraft_version(requested.get(name), dynamic)
        elif name not in levels:
            levels[name] = features.default_level(name, mv)
    for name, level in levels.items():
        if name != features.METADATA_VERSION and not 0 <= level <= features.LATEST_PRODUCTION[name]:
            raise TerseFailure(f"No feature:{name} with feature level {level}")
    return levels


def _kraft_version(requested: int | None, dynamic: bool) -> int:
    if requested is None:
        return 1 if dynamic else 0
    if requested == 0 and dynamic:
        raise TerseFailure(
            "Cannot set kraft.version to 0 if controller.quorum.voters is empty and one of the "
            "flags --standalone, --initial-controllers, or --no-initial-controllers is used. For "
            "dynamic controllers support, try removing the --feature flag for kraft.version.")
    if requested != 0 and not dynamic:
        raise TerseFailure(
            f"Cannot set kraft.version to {requested} unless controller.quorum.voters is empty "
            f"and one of the flags --standalone, --initial-controllers, or "
            f"--no-initial-controllers is used. For dynamic controllers support, try using one "
            f"of --standalone, --initial-controllers, or --no-initial-controllers and removing "
            f"controller.quorum.voters.")
    return requested


def _parse_voters(text: str) -> dict[int, DynamicVoter]:
    try:
        return parse_dynamic_voters(text)
    except DynamicVoterError as e:
        raise TerseFailure(str(e)) from None


def _standalone_voters(config: StorageConfig) -> dict[int, DynamicVoter]:
    if not config.is_controller:
        raise TerseFailure("You can only use --standalone on a controller.")
    names = set(config.controller_listener_names)
    controller_listeners = [e for e in config.advertised_listeners if e[0] in names] or \
        [e for e in config.listeners if e[0] in names]
    if not controller_listeners:
        raise TerseFailure("No controller listeners found.")
    _, host, port = controller_listeners[0]
    return {config.node_id: DynamicVoter(config.node_id, host or "localhost", port,
                                         random_uuid())}


def _directory_type(log_dir: str, config: StorageConfig,
                    voters: dict[int, DynamicVoter] | None) -> str:
    if log_dir != config.metadata_log_dir:
        return "data directory"
    if voters is None:
        return "metadata directory"
    if config.node_id in voters:
        return "dynamic metadata voter directory"
    return "dynamic metadata directory"


def format_command(args: argparse.Namespace, out: TextIO) -> int:
    config = read_storage_config(args.config)
    if config.node_id < 0:
        raise TerseFailure("You must specify a valid non-negative node ID.")
    if not config.controller_listener_names:
        raise TerseFailure("You must specify the name of the initial controller listener.")
    requested = _feature_levels(args)
    voters: dict[int, DynamicVoter] | None = None
    if args.initial_controllers or args.standalone:
        if config.voters:
            raise TerseFailure(
                "You cannot specify controller.quorum.voters and format the node with "
                "--initial-controllers or --standalone. If you want to use dynamic quorum, "
                "please remove controller.quorum.voters and specify "
                "controller.quorum.bootstrap.servers instead.")
        voters = (_standalone_voters(config) if args.standalone
                  else _parse_voters(args.initial_controllers))
    elif not args.no_initial_controllers and config.is_controller and not config.voters:
        raise TerseFailure(
            "Because controller.quorum.voters is not set on this controller, you must specify "
            "one of the following: --standalone, --initial-controllers, or "
            "--no-initial-controllers.")
    mv = _release_version(args, requested)
    levels = _effective_levels(requested, mv, dynamic=not config.voters)
    bootstrap = BootstrapMetadata.from_versions(mv, levels, "format command")
    if args.add_scram:
        if mv < features.SCRAM_MINIMUM_LEVEL:
            raise TerseFailure(f"SCRAM is only supported in metadata.version "
                               f"{features.release_name(features.SCRAM_MINIMUM_LEVEL)} or later.")
        try:
            credentials = [parse_add_scram(a) for a in args.add_scram]
        except ScramError as e:
            raise TerseFailure(str(e)) from None
        bootstrap = BootstrapMetadata.from_records([*bootstrap.records, *credentials],
                                                   "format command")
    directories = sorted({*config.log_dirs, config.metadata_log_dir})

    ensemble = MetaPropertiesEnsemble.load(directories)
    try:
        ensemble.verify(args.cluster_id, config.node_id)
    except MetaPropertiesError as e:
        raise TerseFailure(str(e)) from None
    if ensemble.props and not args.ignore_formatted:
        # Kafka's Copier holds a HashMap copy of the loader's TreeMap: sorted, then rehashed
        first = java_hash_copy_order(sorted(ensemble.props))[0]
        raise TerseFailure(f"Log directory {first} is already formatted. Use --ignore-formatted "
                           f"to ignore this directory and format the others.")
    for error_dir in java_hash_order(ensemble.errors):
        print(f"I/O error trying to read log directory {error_dir}. Ignoring...", file=out)
    if ensemble.errors and not ensemble.empty and not ensemble.props:
        raise TerseFailure("No available log directories to format.")
    if ensemble.empty:
        print(f"Bootstrap metadata: {bootstrap}", file=out)
        _write_directories(ensemble, config, args.cluster_id, voters, bootstrap, levels, mv, out)
    else:
        print("All of the log directories are already formatted.", file=out)
    return 0


def _write_directories(ensemble: MetaPropertiesEnsemble, config: StorageConfig, cluster_id: str,
                       voters: dict[int, DynamicVoter] | None, bootstrap: BootstrapMetadata,
                       levels: dict[str, int], mv: int, out: TextIO) -> None:
    """meta.properties into each unformatted dir (and the bootstrap snapshot into a
    controller's metadata dir), printing one line per dir in Kafka's (hash) order."""
    release = features.release_name(mv)
    planned: dict[str, MetaProperties] = {}
    for log_dir in ensemble.empty:
        kind = _directory_type(log_dir, config, voters)
        if kind == "dynamic metadata voter directory":
            directory_id = voters[config.node_id].directory_id
        else:
            directory_id = ensemble.new_directory_id()
            while directory_id in {m.directory_id for m in planned.values()}:
                directory_id = ensemble.new_directory_id()
        planned[log_dir] = MetaProperties(1, cluster_id, config.node_id, directory_id)
    for log_dir in java_hash_order(planned):
        kind = _directory_type(log_dir, config, voters)
        print(f"Formatting {kind} {log_dir} with metadata.version {release}.", file=out)
        os.makedirs(log_dir, exist_ok=True)
        if log_dir == config.metadata_log_dir and config.is_controller:
            write_bootstrap_snapshot(
                log_dir, bootstrap, kraft_version=levels[features.KRAFT_VERSION],
                voters=(voters_record(voters, config.controller_listener_names[0])
                        if voters else None))
        try:
            planned[log_dir].write(log_dir)
        except OSError as e:
            raise TerseFailure(f"Error while writing meta.properties file {log_dir}: {e}") from e


# -- info / random-uuid ---------------------------------------------------------------------------
def info_command(args: argparse.Namespace, out: TextIO) -> int:
    config = read_storage_config(args.config)
    directories = sorted({*config.log_dirs, config.metadata_log_dir})
    problems: list[str] = []
    found: list[str] = []
    prev: MetaProperties | None = None
    for directory in directories:
        path = Path(directory)
        if not path.is_dir():
            problems.append(f"{directory} does not exist" if not path.exists()
                            else f"{directory} is not a directory")
            continue
        found.append(directory)
        if not (path / "meta.properties").exists():
            problems.append(f"{directory} is not formatted.")
            continue
        try:
            meta = MetaProperties.read(path)
        except MetaPropertiesError as e:
            problems.append(f"Error loading {path / 'meta.properties'}: {e}")
            continue
        if prev is None:
            prev = meta
        elif prev.cluster_id != meta.cluster_id:
            problems.append("Mismatched cluster IDs between storage directories.")
        elif prev.node_id != meta.node_id:
            problems.append("Mismatched node IDs between storage directories.")
    if prev is not None and prev.version == 0:
        problems.append("The kafka configuration file appears to be for a cluster in KRaft mode, "
                        "but the directories are formatted for legacy mode.")
    if found:
        print("Found log directory:" if len(found) == 1 else "Found log directories:", file=out)
        for d in found:
            print(f"  {d}", file=out)
        print("", file=out)
    if prev is not None:
        body = ", ".join(f"{k}={v}" for k, v in sorted(prev.to_properties().items()))
        print(f"Found metadata: {{{body}}}", file=out)
        print("", file=out)
    if problems:
        print("Found problem:" if len(problems) == 1 else "Found problems:", file=out)
        for p in problems:
            print(f"  {p}", file=out)
        print("", file=out)
        return 1
    return 0


def version_mapping_command(args: argparse.Namespace, out: TextIO) -> int:
    """The feature levels a release formats with, printed as Kafka prints them."""
    text = args.release_version or features.release_name(features.LATEST_PRODUCTION_LEVEL)
    try:
        level = features.parse_release_version(text, unstable=True)
    except ValueError as e:
        raise TerseFailure(str(e)) from None
    print(f"metadata.version={level} ({text})", file=out)
    for name in features.FEATURE_ORDER:
        print(f"{name}={features.default_level(name, level)}", file=out)
    return 0


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = _Parser(prog=prog, description="The Kafka storage tool.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    info = sub.add_parser("info", help="Get information about the Kafka log directories on "
                                       "this node.")
    info.add_argument("--config", "-c", required=True, help="The Kafka configuration file to use.")
    fmt = sub.add_parser("format", help="Format the Kafka log directories on this node.")
    fmt.add_argument("--config", "-c", required=True, help="The Kafka configuration file to use.")
    fmt.add_argument("--cluster-id", "-t", required=True, help="The cluster ID to use.")
    fmt.add_argument("--add-scram", "-S", action="append",
                     help="A SCRAM_CREDENTIAL to add to the __cluster_metadata log.")
    fmt.add_argument("--ignore-formatted", "-g", action="store_true",
                     help="Skip over already formatted directories rather than failing.")
    fmt.add_argument("--release-version", "-r",
                     help="The release version to use for the initial feature settings. The "
                          f"minimum is {features.RELEASES[0][0]}; the default is "
                          f"{features.release_name(features.LATEST_PRODUCTION_LEVEL)}.")
    fmt.add_argument("--feature", "-f", action="append",
                     help="The setting to use for a specific feature, in feature=level format.")
    quorum = fmt.add_mutually_exclusive_group()
    quorum.add_argument("--standalone", "-s", action="store_true",
                        help="Initialize a controller as a single-node dynamic quorum.")
    quorum.add_argument("--no-initial-controllers", "-N", action="store_true",
                        help="Initialize a server without specifying a dynamic quorum.")
    quorum.add_argument("--initial-controllers", "-I",
                        help="The dynamic quorum: a comma-separated list of "
                             "id@hostname:port:directory.")
    mapping = sub.add_parser("version-mapping", help="Look up the corresponding features for a "
                                                     "given metadata version.")
    mapping.add_argument("--release-version", "-r",
                         help="The release version to use for the corresponding feature mapping.")
    sub.add_parser("random-uuid", help="Print a random UUID.")
    return parser


def main(argv: list[str] | None = None, *, prog: str = "pykafkad",
         out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Runs one storage command; returns the exit status."""
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    try:
        args = _parser(prog).parse_args(sys.argv[1:] if argv is None else argv)
    except SystemExit as e:
        return int(e.code or 0)
    try:
        if args.command == "random-uuid":
            print(random_uuid(), file=out)
            return 0
        if args.command == "info":
            return info_command(args, out)
        if args.command == "version-mapping":
            return version_mapping_command(args, out)
        return format_command(args, out)
    except TerseFailure as e:
        print(str(e), file=err)
        return 1

