"""What every controller operation returns, and Kafka's ApiError (an error code with a message).

The controller never writes: an operation reads the state built by replay and returns the
records to append to the metadata log plus the response to send once they are committed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from wire.errors import ErrorCode

# Errors.X.message() in Kafka: the message an ApiError carries when none is given.
DEFAULT_MESSAGES: dict[ErrorCode, str] = {
    ErrorCode.UNKNOWN_SERVER_ERROR:
        "The server experienced an unexpected error when processing the request.",
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: "This server does not host this topic-partition.",
    ErrorCode.TOPIC_AUTHORIZATION_FAILED: "Topic authorization failed.",
    ErrorCode.GROUP_AUTHORIZATION_FAILED: "Group authorization failed.",
    ErrorCode.CLUSTER_AUTHORIZATION_FAILED: "Cluster authorization failed.",
    ErrorCode.UNSUPPORTED_VERSION: "The version of API is not supported.",
    ErrorCode.TOPIC_ALREADY_EXISTS: "Topic with this name already exists.",
    ErrorCode.INVALID_PARTITIONS: "Number of partitions is below 1.",
    ErrorCode.INVALID_REPLICATION_FACTOR:
        "Replication factor is below 1 or larger than the number of available brokers.",
    ErrorCode.INVALID_REPLICA_ASSIGNMENT: "Replica assignment is invalid.",
    ErrorCode.INVALID_CONFIG: "Configuration is invalid.",
    ErrorCode.NOT_CONTROLLER: "This is not the correct controller for this cluster.",
    ErrorCode.INVALID_REQUEST:
        "This most likely occurs because of a request being malformed by the client library "
        "or the message was sent to an incompatible broker. See the broker logs for more "
        "details.",
    ErrorCode.FENCED_LEADER_EPOCH:
        "The leader epoch in the request is older than the epoch on the broker.",
    ErrorCode.STALE_BROKER_EPOCH: "Broker epoch has changed.",
    ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE: "The preferred leader was not available.",
    ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE:
        "Eligible topic partition leaders are not available.",
    ErrorCode.ELECTION_NOT_NEEDED: "Leader election not needed for topic partition.",
    ErrorCode.NO_REASSIGNMENT_IN_PROGRESS: "No partition reassignment is in progress.",
    ErrorCode.INVALID_UPDATE_VERSION: "The given update version was invalid.",
    ErrorCode.UNKNOWN_TOPIC_ID: "This server does not host this topic ID.",
    ErrorCode.DUPLICATE_BROKER_REGISTRATION: "This broker ID is already in use.",
    ErrorCode.BROKER_ID_NOT_REGISTERED: "The given broker ID was not registered.",
    ErrorCode.INCONSISTENT_CLUSTER_ID:
        "The clusterId in the request does not match that found on the server.",
    ErrorCode.INELIGIBLE_REPLICA: "The new ISR contains at least one ineligible replica.",
    ErrorCode.NEW_LEADER_ELECTED:
        "The AlterPartition request successfully updated the partition state but the leader "
        "has changed.",
    ErrorCode.INVALID_REGISTRATION:
        "The controller has considered the broker registration to be invalid.",
}


_DEFAULT = object()


class ApiError(Exception):
    """Kafka's ApiError: raised inside an operation, answered as (code, message).

    Without a message it carries the error's default one, as ``new ApiError(Errors.X)``
    does; ``message=None`` answers no message, as an exception thrown without one does.
    """

    def __init__(self, code: ErrorCode, message=_DEFAULT) -> None:
        if message is _DEFAULT:
            message = DEFAULT_MESSAGES.get(code)
        super().__init__(message or code.name)
        self.code = code
        self.message = message

    @property
    def is_failure(self) -> bool:
        return self.code != ErrorCode.NONE

    def __repr__(self) -> str:
        return f"ApiError({self.code.name}, {self.message!r})"


NONE = ApiError(ErrorCode.NONE, None)


@dataclass
class ControllerResult:
    """Records to append (generated wire/metadata instances) and the response to send.

    ``atomic`` says the records must be appended as one batch (Kafka's atomicOf).
    """

    records: list = field(default_factory=list)
    response: Any = None
    atomic: bool = False
