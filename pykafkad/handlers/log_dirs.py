"""DescribeLogDirs (key 35) and AlterReplicaLogDirs (key 34): the broker's log directories.

Every entry of ``log.dirs`` is listed with the partitions it holds (JBOD, KIP-858), so
``kafka-log-dirs --describe``, the Java Admin's describeLogDirs and kafka-python's
describe_log_dirs see each dir with each partition's size, and a replica can be moved between
them (pykafkad.replica.alter_log_dirs).  kafka-python also infers the broker's release from
DescribeLogDirs' highest version, so serving v5 makes it infer the same release from pykafkad
as from Kafka 4.4.  No authorizer means no CLUSTER checks.
"""

from __future__ import annotations

import os
from pathlib import Path

from pykafkad.dispatch import RequestContext, handles
from pykafkad.log.dir_move import dir_size
from pykafkad.log.log_dirs import log_dirs_of
from pykafkad.replica.alter_log_dirs import ReplicaAlterLogDirsManager
from wire.errors import ErrorCode
from wire.messages.alter_replica_log_dirs_response import (
    AlterReplicaLogDirPartitionResult,
    AlterReplicaLogDirsResponse,
    AlterReplicaLogDirTopicResult,
)
from wire.messages.describe_log_dirs_response import (
    DescribeLogDirsPartition,
    DescribeLogDirsResponse,
    DescribeLogDirsResult,
    DescribeLogDirsTopic,
)

DESCRIBE_LOG_DIRS = 35
ALTER_REPLICA_LOG_DIRS = 34
CORDONED_LOG_DIRS = "cordoned.log.dirs"


def log_dir_path(data_dir: Path) -> str:
    """The dir as Kafka names it: absolute, links kept (Java's File.getAbsolutePath would also
    keep a ``./`` the CLI's Path has already dropped)."""
    return str(Path(data_dir).absolute())


def served_log_dir_names(data_dir: Path) -> set[str]:
    """The names that denote pykafkad's one log dir (what Kafka's ``log.dirs`` lists)."""
    return {str(data_dir), log_dir_path(data_dir)}


def is_cordoned(broker, data_dir: Path | None = None) -> bool:
    """KIP-1066's ``cordoned.log.dirs`` (a per-broker dynamic config, or static): ``*`` or a
    list naming the dir.  pykafkad applies nothing else of it; Kafka 4.4 reports it in
    DescribeLogDirs v5 (a dynamic change shows once the broker has applied it)."""
    config = broker.config
    value = config.dynamic_broker_configs.get(CORDONED_LOG_DIRS)
    if value is None:
        value = config.ignored.get(CORDONED_LOG_DIRS)
    if value is None:
        return False
    entries = value if isinstance(value, list) else str(value).split(",")
    names = {e.strip() for e in entries}
    own = served_log_dir_names(broker.data_dir if data_dir is None else data_dir)
    return "*" in names or bool(names & own)


def _requested_partitions(ctx: RequestContext, topics) -> list[tuple[str, int]]:
    """The (topic, partition) pairs that exist, in name order: Kafka leaves out unknown topics
    and partitions silently, an empty partition list asks for nothing, null asks for all."""
    known = ctx.broker.logs.keys()
    if topics is None:
        return sorted(known)
    wanted = {(t.topic, p) for t in topics for p in t.partitions}
    return sorted(wanted & known)


@handles(DESCRIBE_LOG_DIRS, 1, 5)
async def handle_describe_log_dirs(ctx: RequestContext, req) -> DescribeLogDirsResponse:
    """Versions 1-5 (Kafka 4.4's range).  One result per log dir (``log.dirs`` order), error
    NONE, each known requested partition in the dir that holds it, with its size (the sum of its segment files, as Kafka's
    ``UnifiedLog.size``), offset lag 0 (the leader's HW never trails its own end offset here)
    and no future log.  v4+ add the file system's total and usable bytes (statvfs, as Java's
    FileStore); v5's is_cordoned is whether ``cordoned.log.dirs`` names the dir (or is ``*``).
    Compared field by field with Apache Kafka 4.4.0."""
    logs = ctx.broker.logs
    by_dir: dict[Path, dict[str, list[DescribeLogDirsPartition]]] = {}
    for name, index in _requested_partitions(ctx, req.topics):
        size = logs.size_in_bytes(name, index)
        by_dir.setdefault(logs.dir_of(name, index), {}).setdefault(name, []).append(
            DescribeLogDirsPartition(partition_index=index, partition_size=size, offset_lag=0,
                                     is_future_key=False))
    mover = getattr(ctx.broker, "log_dir_mover", None)
    for (name, index), future in (dict(mover.futures) if mover is not None else {}).items():
        if req.topics is not None and (name, index) not in {
                (t.topic, p) for t in req.topics for p in t.partitions}:
            continue
        by_dir.setdefault(future.parent, {}).setdefault(name, []).append(
            DescribeLogDirsPartition(partition_index=index, partition_size=dir_size(future),
                                     offset_lag=mover.offset_lag(name, index),
                                     is_future_key=True))
    results = []
    for log_dir in log_dirs_of(ctx.broker):
        topics = by_dir.get(Path(log_dir.path), {})
        result = DescribeLogDirsResult(
            error_code=ErrorCode.NONE,
            log_dir=log_dir_path(log_dir.path),
            topics=[DescribeLogDirsTopic(name=t, partitions=ps) for t, ps in topics.items()],
        )
        if ctx.version >= 4:
            fs = os.statvfs(log_dir.path)
            result.total_bytes = fs.f_blocks * fs.f_frsize
            result.usable_bytes = fs.f_bavail * fs.f_frsize
        result.is_cordoned = is_cordoned(ctx.broker, log_dir.path)
        results.append(result)
    return DescribeLogDirsResponse(throttle_time_ms=0, error_code=ErrorCode.NONE,
                                   results=results)


@handles(ALTER_REPLICA_LOG_DIRS, 1, 2)
async def handle_alter_replica_log_dirs(ctx: RequestContext, req) -> AlterReplicaLogDirsResponse:
    """Versions 1-2.  A replica named to another of the broker's log dirs is moved there
    (pykafkad.replica.alter_log_dirs), answered NONE at once; to the dir it is in, NONE without
    doing anything.  As Kafka 4.4.0 answers: a path that is not
    exactly the dir's absolute name (a trailing slash or ``./`` included) is LOG_DIR_NOT_FOUND,
    checked before the partition; an unknown topic or partition is UNKNOWN_TOPIC_OR_PARTITION,
    one of the cluster's that this broker holds no replica of REPLICA_NOT_AVAILABLE;
    a partition named twice is answered once, for the last dir that names it."""
    dirs = {log_dir_path(d.path): Path(d.path) for d in log_dirs_of(ctx.broker)}
    destinations: dict[tuple[str, int], str] = {}
    for d in req.dirs:
        for t in d.topics:
            for p in t.partitions:
                destinations[(t.name, p)] = d.path
    results: dict[str, list[AlterReplicaLogDirPartitionResult]] = {}
    for (name, index), path in destinations.items():
        if path not in dirs:
            code = ErrorCode.LOG_DIR_NOT_FOUND
        elif ctx.broker.logs.get(name, index) is None:
            # a partition of the cluster that this broker holds no replica of (Kafka's
            # ReplicaNotAvailableException), else one nobody has
            topic = ctx.broker.topics.get(name)
            code = (ErrorCode.REPLICA_NOT_AVAILABLE
                    if topic is not None and 0 <= index < topic.num_partitions
                    else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        else:
            code = ErrorCode.NONE
            if ctx.broker.logs.dir_of(name, index) != dirs[path]:
                ReplicaAlterLogDirsManager.of(ctx.broker).start(name, index, dirs[path])
        results.setdefault(name, []).append(
            AlterReplicaLogDirPartitionResult(partition_index=index, error_code=code))
    return AlterReplicaLogDirsResponse(throttle_time_ms=0, results=[
        AlterReplicaLogDirTopicResult(topic_name=n, partitions=ps) for n, ps in results.items()])
