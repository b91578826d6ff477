"""The KRaft controller's logic (Kafka's QuorumController): synchronous state machines whose
state is built only by replaying metadata records, and whose operations return the records to
append plus the response (ControllerResult)."""

from pykafkad.controller.quorum_controller import QuorumController
from pykafkad.controller.result import ApiError, ControllerResult

__all__ = ["ApiError", "ControllerResult", "QuorumController"]
