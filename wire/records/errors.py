"""The one exception the record-batch code raises for bad batches.

A malformed batch in a Produce request is not a protocol violation (the frame parsed fine): Kafka
answers it as a partition error in the response, so this is a ``KafkaError`` (an error *value*),
never a ``RemoteProtocolError`` (which closes the connection). The code follows Kafka's broker:
CORRUPT_MESSAGE for framing, CRC and decompression failures, INVALID_RECORD for batches and records
that parse but break the format's rules, UNSUPPORTED_COMPRESSION_TYPE for an unknown codec.
"""

from __future__ import annotations

from wire.errors import ErrorCode, KafkaError


class InvalidRecordError(KafkaError):
    """A record batch (or a record in it) that Kafka would refuse, with the code Kafka answers."""

    def __init__(self, code: ErrorCode, message: str | None = None):
        super().__init__(code, message)


def corrupt(message: str) -> InvalidRecordError:
    return InvalidRecordError(ErrorCode.CORRUPT_MESSAGE, message)


def invalid(message: str) -> InvalidRecordError:
    return InvalidRecordError(ErrorCode.INVALID_RECORD, message)
