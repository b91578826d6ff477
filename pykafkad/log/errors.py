"""Errors the partition log raises: Kafka error values (``KafkaError``) with Kafka's codes."""

from __future__ import annotations

from wire.errors import ErrorCode, KafkaError


class LogError(KafkaError):
    """Base class; ``code`` is what the handler answers for the partition."""

    code_default = ErrorCode.UNKNOWN_SERVER_ERROR

    def __init__(self, message: str | None = None):
        super().__init__(self.code_default, message)


class OffsetOutOfRangeError(LogError):
    """The offset is below the log start offset or beyond the log end offset."""

    code_default = ErrorCode.OFFSET_OUT_OF_RANGE


class RecordTooLargeError(LogError):
    """A batch is larger than ``max.message.bytes`` (Kafka: RecordTooLargeException)."""

    code_default = ErrorCode.MESSAGE_TOO_LARGE


class RecordBatchTooLargeError(LogError):
    """The append is larger than ``segment.bytes`` (Kafka: RecordBatchTooLargeException)."""

    code_default = ErrorCode.RECORD_LIST_TOO_LARGE


class CorruptRecordError(LogError):
    """The bytes handed to ``append`` do not frame as v2 batches."""

    code_default = ErrorCode.CORRUPT_MESSAGE


class LogClosedError(LogError):
    """The partition log was closed or deleted (e.g. its topic was deleted meanwhile)."""

    code_default = ErrorCode.NOT_LEADER_OR_FOLLOWER


class KafkaStorageError(LogError):
    """A file of the log could not be written or opened (disk full, out of descriptors, I/O
    error).  Kafka takes the log dir offline and, when it was the only one, halts the broker;
    pykafkad, whose single data dir is all it has, answers this for the one append that failed
    (which is rolled back) and keeps serving, so clients retry once space is back."""

    code_default = ErrorCode.KAFKA_STORAGE_ERROR


class RecordValidationError(KafkaError):
    """Some records of a produced batch break a rule (Kafka: RecordValidationException): the
    whole batch is refused and ``record_errors`` names each bad record as (index, message)."""

    def __init__(self, code: ErrorCode, message: str, record_errors: list[tuple[int, str]]):
        super().__init__(code, message)
        self.record_errors = record_errors


class UnexpectedAppendOffsetError(LogError):
    """A follower's append starts below its log end offset (Kafka's
    UnexpectedAppendOffsetException); ``first_offset``/``last_offset`` are the append's."""

    def __init__(self, message: str, first_offset: int, last_offset: int):
        super().__init__(message)
        self.first_offset = first_offset
        self.last_offset = last_offset


class OffsetsOutOfOrderError(LogError):
    """A follower's append whose batches' offsets do not increase (Kafka's
    OffsetsOutOfOrderException)."""
