"""The partition log: Kafka's segment files, append, read, retention and recovery."""

from pykafkad.log.config import LogConfig
from pykafkad.log.errors import (
    CorruptRecordError,
    KafkaStorageError,
    LogClosedError,
    LogError,
    OffsetOutOfRangeError,
    RecordBatchTooLargeError,
    RecordTooLargeError,
)
from pykafkad.log.manager import LogManager
from pykafkad.log.partition import AppendInfo, PartitionLog, ReadResult, TimestampAndOffset
from pykafkad.log.region import FileRegion, SegmentFile

__all__ = [
    "AppendInfo",
    "CorruptRecordError",
    "FileRegion",
    "KafkaStorageError",
    "LogClosedError",
    "LogConfig",
    "LogError",
    "LogManager",
    "OffsetOutOfRangeError",
    "PartitionLog",
    "ReadResult",
    "RecordBatchTooLargeError",
    "RecordTooLargeError",
    "SegmentFile",
    "TimestampAndOffset",
]
