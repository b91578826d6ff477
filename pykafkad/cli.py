"""The ``pykafkad`` command: flags plus Kafka's broker property names.

Precedence: flags > ``--set key=value`` > ``--config server.properties`` > Kafka's defaults.
Every problem with the command line exits with status 2 and one line naming it.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import logging
import os
import resource
import signal
import sys
from pathlib import Path

from pykafkad import __version__

DEFAULT_DATA_DIR = "./pykafkad-data"
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
#: descriptors a running broker holds besides segment files and connections: trio's epoll and
#: wake-up socket pair, the listeners, the checkpoint and metadata files it writes
FD_RUNTIME = 13
#: connections a broker at the smallest limit has room for
FD_CLIENTS = 32


class UsageError(Exception):
    pass


#: ``pykafkad <subcommand> ...``: the module whose ``main(argv) -> int`` runs it
SUBCOMMANDS = {"cluster": "pykafkad.launcher", "faults": "pykafkad.faults.cli"}
#: subcommands that are Kafka's kafka-storage.sh (pykafkad/metadata/storage_tool.py)
STORAGE_COMMANDS = ("format", "random-uuid", "info", "version-mapping")


class HelpConfig(argparse.Action):
    """``--help-config``: prints the settings table and exits, like ``--help``."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        from pykafkad.config.help import help_config_text

        print(help_config_text())
        parser.exit()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="pykafkad",
        description="A Kafka broker in Python that stock Kafka clients use unchanged.",
        epilog="`pykafkad cluster --help`: several KRaft node processes on this machine.  "
               "`pykafkad faults --help`: fault rules on a running node.  "
               "pykafkad format | random-uuid | info | version-mapping: Kafka's "
               "kafka-storage.sh commands (pykafkad format --help).",
    )
    p.add_argument("--host", default=None, help="address to listen on (default: localhost)")
    p.add_argument("--port", type=int, default=None, help="port to listen on (default: 9092; 0 = any free port)")
    p.add_argument("--data-dir", default=None, help=f"where logs live (default: {DEFAULT_DATA_DIR})")
    p.add_argument("--advertised-host", default=None,
                   help="host name given to clients in Metadata (default: the listen host)")
    p.add_argument("--config", default=None, metavar="server.properties",
                   help="a Kafka server.properties file")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="a Kafka broker property, e.g. --set num.partitions=3 (repeatable)")
    p.add_argument("--log-level", default="INFO", type=str.upper, choices=LOG_LEVELS)
    p.add_argument("--help-config", action=HelpConfig, nargs=0,
                   help="list every broker setting with its default and whether it is applied")
    p.add_argument("--version", action="version", version=f"pykafkad {__version__}")
    return p.parse_args(argv)


def check_data_dir(path: Path) -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".pykafkad-write-test"
        probe.write_text("ok")
        probe.unlink()
    except OSError as e:
        raise UsageError(f"data directory {path} is not writable: {e.strerror or e}") from None


def raise_descriptor_limit() -> None:
    """Lifts the soft open-files limit to the hard one, as the JVM running Kafka does
    (HotSpot's MaxFDLimit): connections and the recently used segment files share it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def descriptors_open() -> int:
    """Descriptors this process holds now (inherited ones too), or the standard three."""
    for listing in ("/proc/self/fd", "/dev/fd"):
        with contextlib.suppress(OSError):
            return len(os.listdir(listing)) - 1  # less the listing's own
    return 3


def descriptors_needed() -> int:
    """Descriptors a broker needs, whatever its data dir (logs open lazily): those open now,
    trio's and the listeners' (FD_RUNTIME), the fewest segment files the LRU keeps open, and
    room for some clients' connections (FD_CLIENTS)."""
    from pykafkad.log.region import MIN_OPEN_FILES

    return descriptors_open() + FD_RUNTIME + MIN_OPEN_FILES + FD_CLIENTS


def descriptor_limit() -> int:
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return -1 if soft == resource.RLIM_INFINITY else soft


def too_few_descriptors(needed: int) -> str:
    return (f"too few file descriptors: pykafkad needs about {needed}, the limit is "
            f"{descriptor_limit()}; raise it with `ulimit -n {needed}`")


def check_descriptor_limit(needed: int) -> None:
    """Refuses a start under a limit the broker could not run within (it would fail later,
    loading logs or accepting connections, with errors spread over the log)."""
    limit = descriptor_limit()
    if 0 <= limit < needed:
        raise UsageError(too_few_descriptors(needed))


def out_of_descriptors(e: BaseException) -> bool:
    return isinstance(e, OSError) and e.errno in (errno.EMFILE, errno.ENFILE)


def open_broker(config, data_path: Path, needed: int):
    """The Broker on ``data_path``; a damaged topics file or too few descriptors end the start
    with one line."""
    from pykafkad.broker import Broker
    from pykafkad.cluster import TopicsFileError

    try:
        return Broker(config, data_path)
    except TopicsFileError as e:
        raise UsageError(str(e)) from None
    except OSError as e:
        if not out_of_descriptors(e):
            raise
        raise UsageError(too_few_descriptors(needed)) from None


def build(args: argparse.Namespace, needed: int):
    from pykafkad.config import BrokerConfig, ConfigError

    overrides: dict[str, str] = {}
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--set expects KEY=VALUE, got {item!r}")
        overrides[key.strip()] = value.strip()
    props = Path(args.config) if args.config else None
    if props is not None and not props.is_file():
        raise UsageError(f"config file {props} does not exist")
    try:
        config = BrokerConfig.from_sources(props, overrides)
        config.check_served_listeners()
    except ConfigError as e:
        raise UsageError(str(e)) from None
    if config.is_kraft:
        return build_node(args, config, needed)
    host, port = args.host, args.port
    if config.is_set("listeners"):  # the first listener that is not a controller's
        first = config.broker_listeners[0]
        host = host if host is not None else first.host
        port = port if port is not None else first.port
    advertised_host, advertised_port = args.advertised_host, None
    if advertised_host is None and config.is_set("advertised.listeners"):
        first = config.advertised_listeners[0]
        advertised_host, advertised_port = first.host, first.port or None
    host = host if host is not None else "localhost"
    port = port if port is not None else 9092
    if not 0 <= port <= 65535:
        raise UsageError(f"--port must be between 0 and 65535, got {port}")
    data_dir = args.data_dir
    if data_dir is None and config.is_set("log.dirs"):
        dirs = config["log.dirs"]
        data_dir = dirs[0] if isinstance(dirs, list) else str(dirs).split(",")[0]
    if data_dir is None and config.is_set("log.dir"):
        data_dir = config["log.dir"]
    data_path = Path(data_dir or DEFAULT_DATA_DIR)
    check_data_dir(data_path)
    return build_single_node(config, props, overrides, data_path, needed, host, port,
                             (advertised_host, advertised_port)), data_path


def build_single_node(config, props, overrides: dict[str, str], data_path: Path, needed: int,
                      host: str, port: int, advertised: tuple[str | None, int | None]):
    """The default: a combined broker+controller KRaft node whose quorum is itself
    (pykafkad/kraft/single_node.py), its data dir formatted on first start."""
    from pykafkad.config import BrokerConfig, ConfigError
    from pykafkad.kraft.kraft_server import KafkaRaftServer
    from pykafkad.kraft.shared_server import check_storage
    from pykafkad.kraft.single_node import format_if_new, one_voter_settings
    from pykafkad.metadata.properties import MetaPropertiesError
    from pykafkad.server import Server, served_listeners

    try:
        config = BrokerConfig.from_sources(
            props, {**overrides, **one_voter_settings(config, host, port, advertised)})
    except ConfigError as e:
        raise UsageError(str(e)) from None
    try:
        format_if_new(config, data_path)
        meta = check_storage(config, data_path)
    except MetaPropertiesError as e:
        raise UsageError(str(e)) from None
    except OSError as e:
        raise UsageError(f"data directory {data_path}: {e.strerror or e}") from None
    broker = open_broker(config, data_path, needed)
    broker.internal_controller_listener = True
    server = Server(broker, "", 0, listeners=served_listeners(config))
    quiet_internal_quorum()
    node = KafkaRaftServer(config, data_path, broker, server, meta=meta)
    node.single_node = True
    return node


#: loggers of the KRaft machinery a single node runs for itself (its one-voter quorum, its
#: controller, its registration): at INFO they would narrate a quorum the user never set up
QUORUM_LOGGERS = ("pykafkad.raft", "pykafkad.controller", "pykafkad.kraft")


def quiet_internal_quorum() -> None:
    """At INFO a single node prints what it always printed; --log-level DEBUG shows it all.
    The migration of a released data dir's topics is still told (pykafkad.kraft.migration)."""
    if logging.getLogger().level != logging.INFO:
        return
    for name in QUORUM_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    logging.getLogger("pykafkad.kraft.migration").setLevel(logging.INFO)


def data_dir_of(args: argparse.Namespace, config) -> Path:
    """--data-dir, else the first of log.dirs / log.dir when set, else the default."""
    if args.data_dir is not None:
        return Path(args.data_dir)
    if config.is_set("log.dirs") or config.is_set("log.dir"):
        return Path(config.log_dirs[0])
    return Path(DEFAULT_DATA_DIR)


def build_node(args: argparse.Namespace, config, needed: int):
    """A KRaft node (process.roles set): every listener bound, each serving its API set, around
    the raft client, the controller (controller role) and the broker's registration (broker
    role); the storage must have been formatted first, as Kafka's must."""
    from pykafkad.kraft.kraft_server import KafkaRaftServer
    from pykafkad.kraft.shared_server import check_storage
    from pykafkad.metadata.properties import MetaPropertiesError
    from pykafkad.server import Server, served_listeners

    if args.port is not None and not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be between 0 and 65535, got {args.port}")
    data_path = data_dir_of(args, config)
    try:
        meta = check_storage(config, data_path)
    except MetaPropertiesError as e:
        raise UsageError(str(e)) from None
    check_data_dir(data_path)
    broker = open_broker(config, data_path, needed)
    listeners = served_listeners(config, args.host, args.port)
    if args.advertised_host is not None:
        for spec in listeners:
            spec.advertised_host = spec.advertised_host or args.advertised_host
    server = Server(broker, "", 0, listeners=listeners)
    try:
        return KafkaRaftServer(config, data_path, broker, server, meta=meta), data_path
    except ValueError as e:
        raise UsageError(str(e)) from None


def ready_line(server) -> str:
    """The one line a started process prints (the launcher and scripts wait for it)."""
    if getattr(server, "single_node", False):
        return f"pykafkad listening on {server.host}:{server.port}"
    config = server.broker.config
    roles = ",".join(r for r in ("broker", "controller") if r in config.node_roles)
    bound = ",".join(f"{s.name}://{s.host or '0.0.0.0'}:{s.port}" for s in server.listeners)
    return f"pykafkad node {config.node_id} ({roles}) listening on {bound}"


def visible_listeners(server) -> list:
    """The listeners the user configured: a single node's own controller listener is not one."""
    if not getattr(server, "single_node", False):
        return server.listeners
    from pykafkad.dispatch import BROKER

    return [s for s in server.listeners if s.kind is BROKER]


async def serve(server, needed: int) -> None:
    import trio

    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGUSR1) as signals:
        async with trio.open_nursery() as nursery:
            async def stop_on_signal() -> None:  # also while a KRaft node is still starting
                async for signum in signals:
                    if signum == signal.SIGUSR1:  # the launcher stops the whole cluster
                        if hasattr(server, "request_cluster_stop"):
                            server.request_cluster_stop()
                        continue
                    server.request_shutdown()
                    return

            nursery.start_soon(stop_on_signal)
            try:
                await nursery.start(server.run)
            except OSError as e:
                if out_of_descriptors(e):
                    raise UsageError(too_few_descriptors(needed)) from None
                reason = "address already in use" if e.errno == errno.EADDRINUSE else (e.strerror or str(e))
                where = ", ".join(f"{s.host}:{s.port}" for s in visible_listeners(server))
                raise UsageError(f"cannot listen on {where}: {reason}") from None
            print(ready_line(server), flush=True)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in STORAGE_COMMANDS:
        from pykafkad.metadata.storage_tool import main as storage_main

        return storage_main(argv)
    if argv[:1] and argv[0] in SUBCOMMANDS:
        import importlib

        return importlib.import_module(SUBCOMMANDS[argv[0]]).main(argv[1:])
    args = parse_args(argv)
    logging.basicConfig(
        level=args.log_level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    raise_descriptor_limit()
    # counted before anything else opens: trio itself needs descriptors to import
    needed = descriptors_needed()
    try:
        check_descriptor_limit(needed)
        server, _ = build(args, needed)
        import trio  # here, not at the top: under a tiny limit its import already fails

        trio.run(serve, server, needed)
    except UsageError as e:
        print(f"pykafkad: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # out of descriptors wherever it happens (trio's own, a listener)
        if not out_of_descriptors(e):
            raise
        print(f"pykafkad: {too_few_descriptors(needed)}", file=sys.stderr)
        return 2
    except BaseExceptionGroup as group:
        usage = group.subgroup(lambda e: isinstance(e, UsageError) or out_of_descriptors(e))
        if usage is None:
            raise
        while isinstance(usage, BaseExceptionGroup):
            usage = usage.exceptions[0]
        message = usage if isinstance(usage, UsageError) else too_few_descriptors(needed)
        print(f"pykafkad: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
