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

import trio

from pykafkad import __version__

DEFAULT_DATA_DIR = "./pykafkad-data"
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
#: descriptors beyond the data dir's files: the interpreter, listeners, clients' connections
FD_HEADROOM = 128


class UsageError(Exception):
    pass


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
    (HotSpot's MaxFDLimit): each partition keeps its segment files open."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def descriptors_needed(data_dir: Path) -> tuple[int, int]:
    """(partitions, descriptors) a start on ``data_dir`` needs: one per segment file, two more
    per partition for the active segment's indexes, plus the process's own and some clients."""
    partitions = segments = 0
    with contextlib.suppress(OSError):
        for entry in os.scandir(data_dir):
            if entry.is_dir() and "-" in entry.name and not entry.name.endswith("-delete"):
                partitions += 1
                with contextlib.suppress(OSError):
                    segments += sum(1 for f in os.scandir(entry.path) if f.name.endswith(".log"))
    return partitions, segments + 2 * partitions + FD_HEADROOM


def too_few_descriptors(data_dir: Path, partitions: int, needed: int) -> str:
    limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return (f"too many open files: the {partitions} partitions in {data_dir} need about "
            f"{needed} file descriptors, the limit is {limit}; raise it with `ulimit -n {needed}`")


def build(args: argparse.Namespace):
    from pykafkad.broker import Broker
    from pykafkad.cluster import TopicsFileError
    from pykafkad.config import BrokerConfig, ConfigError
    from pykafkad.server import Server

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
    except ConfigError as e:
        raise UsageError(str(e)) from None
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
    # counted first: once the descriptors are exhausted even listing a directory fails
    partitions, needed = descriptors_needed(data_path)
    try:
        broker = Broker(config, data_path)
    except TopicsFileError as e:
        raise UsageError(str(e)) from None
    except OSError as e:
        if e.errno not in (errno.EMFILE, errno.ENFILE):
            raise
        raise UsageError(too_few_descriptors(data_path, partitions, needed)) from None
    return Server(broker, host, port, advertised_host, advertised_port), data_path


async def serve(server) -> None:
    async with trio.open_nursery() as nursery:
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            try:
                port = await nursery.start(server.run)
            except OSError as e:
                reason = "address already in use" if e.errno == errno.EADDRINUSE else (e.strerror or str(e))
                raise UsageError(f"cannot listen on {server.host}:{server.port}: {reason}") from None
            print(f"pykafkad listening on {server.host}:{port}", flush=True)
            async for _ in signals:
                server.request_shutdown()
                break


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(
        level=args.log_level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    raise_descriptor_limit()
    try:
        server, _ = build(args)
        trio.run(serve, server)
    except UsageError as e:
        print(f"pykafkad: {e}", file=sys.stderr)
        return 2
    except BaseExceptionGroup as group:
        usage = group.subgroup(UsageError)
        if usage is None:
            raise
        while isinstance(usage, BaseExceptionGroup):
            usage = usage.exceptions[0]
        print(f"pykafkad: {usage}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
