"""The single-node default as what it is in Kafka: a combined broker+controller KRaft node whose
quorum is itself.

``pykafkad`` without ``process.roles`` (the command, ``pykafkad.testing.run_broker``, the
pytest fixture) gets the node settings Kafka's own single-node config/server.properties has:
``process.roles=broker,controller``, ``node.id`` (1 unless given), a CONTROLLER listener on a
free loopback port that only this node's broker side dials (a KRaft broker never advertises
controllers to clients), and the internal topics at replication factor 1 unless set. The data
dir formats itself on first start (a random cluster id, as ``kafka-storage format``), and a dir
the released single-node pykafkad wrote (meta.properties, pykafkad-topics.json, no metadata log)
starts as it is: its first active controller carries the topics into the metadata log
(pykafkad/kraft/migration.py).
"""

from __future__ import annotations

import contextlib
import io
import os
import socket
import tempfile
from pathlib import Path

from pykafkad.metadata.properties import META_PROPERTIES, random_uuid

CONTROLLER_LISTENER = "CONTROLLER"
LOOPBACK = "127.0.0.1"
#: Kafka's config/server.properties for one node sets these (the defaults need 3 brokers)
ONE_BROKER_DEFAULTS = {
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
}


def free_loopback_port() -> int:
    """A port free on the loopback address now (the controller listener binds it at once)."""
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def one_voter_settings(config, host: str, port: int,
                       advertised: tuple[str, int | None] | None = None) -> dict[str, str]:
    """The settings that make ``config`` (a config without process.roles) a one-voter combined
    node serving clients on host:port, advertised as ``advertised`` (host, port or None)."""
    node_id = config["node.id"]
    controller_port = free_loopback_port()
    # a `listeners` the user set names the client listeners and so their security protocols
    # (SSL, SASL_*): the first is served on host:port, the others where they say, as Kafka
    # serves every listener
    configured = config.broker_listeners if config.is_set("listeners") else []
    name = configured[0].listener_name if configured else "PLAINTEXT"
    listeners = [f"{name}://{host}:{port}", *(_entry(e) for e in configured[1:]),
                 f"{CONTROLLER_LISTENER}://{LOOPBACK}:{controller_port}"]
    settings = {
        "process.roles": "broker,controller",
        "node.id": str(node_id),
        "controller.quorum.voters": f"{node_id}@{LOOPBACK}:{controller_port}",
        "controller.listener.names": CONTROLLER_LISTENER,
        "listeners": ",".join(listeners),
        "inter.broker.listener.name": name,
    }
    protocols = config["listener.security.protocol.map"]
    if f"{CONTROLLER_LISTENER}:" not in protocols:
        settings["listener.security.protocol.map"] = f"{protocols},{CONTROLLER_LISTENER}:PLAINTEXT"
    if advertised is not None and advertised[0]:
        adv_host, adv_port = advertised
        others = [_entry(e) for e in config.advertised_listeners if e.listener_name != name]
        settings["advertised.listeners"] = ",".join(
            [f"{name}://{adv_host}:{adv_port or port}", *others])
    for key, value in ONE_BROKER_DEFAULTS.items():
        if not config.is_set(key):
            settings[key] = value
    return settings


def _entry(endpoint) -> str:
    return f"{endpoint.listener_name}://{endpoint.host or ''}:{endpoint.port}"


def format_if_new(config, data_dir: Path) -> None:
    """Formats ``data_dir`` as ``pykafkad format --cluster-id <random>`` would for this node,
    unless it has a meta.properties already (formatted before, or written by the released
    single-node pykafkad: then the controller migrates its topics on the first start)."""
    if (data_dir / META_PROPERTIES).exists():
        return
    from pykafkad.kraft.broker_lifecycle import format_feature_flags
    from pykafkad.metadata.storage_tool import main as storage_main

    data_dir.mkdir(parents=True, exist_ok=True)
    props = {
        "process.roles": "broker,controller",
        "node.id": str(config.node_id),
        "controller.quorum.voters": config["controller.quorum.voters"],
        "controller.listener.names": CONTROLLER_LISTENER,
        "listeners": config["listeners"],
        "log.dirs": str(data_dir),
    }
    fd, path = tempfile.mkstemp(prefix="pykafkad-format-", suffix=".properties")
    try:
        with os.fdopen(fd, "w") as f:
            f.write("".join(f"{k}={v}\n" for k, v in props.items()))
        args = ["format", "--cluster-id", random_uuid(), "--config", path]
        for flag in format_feature_flags():
            args += ["--feature", flag]
        report = io.StringIO()
        with contextlib.redirect_stdout(report), contextlib.redirect_stderr(report):
            status = storage_main(args)
    finally:
        os.unlink(path)
    if status != 0:
        raise OSError(f"formatting {data_dir} failed: {report.getvalue().strip()}")
