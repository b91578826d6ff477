"""DescribeCluster's checks common to broker and controller listeners (Kafka's
AuthHelper.computeDescribeClusterResponse): the endpoint type asked for must be the
listener's, and the controller id is -1 unless it is among the nodes described."""

from __future__ import annotations

from pykafkad.handlers import authorized_operations
from wire.errors import ErrorCode
from wire.messages.describe_cluster_response import DescribeClusterBroker, DescribeClusterResponse

BROKER_ENDPOINT, CONTROLLER_ENDPOINT = 1, 2
_NAMES = {BROKER_ENDPOINT: "BROKER", CONTROLLER_ENDPOINT: "CONTROLLER"}


def endpoint_error(version: int, req, served: int) -> DescribeClusterResponse | None:
    """Kafka's answer when ``req`` asks for another endpoint type than ``served`` (v0 cannot
    say which it wants: it asks for brokers); None when the request is for this listener."""
    wanted = req.endpoint_type if version >= 1 else BROKER_ENDPOINT
    if wanted == served:
        return None
    if wanted not in _NAMES:
        code, message = ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, f"Unsupported endpoint type {wanted}"
    else:
        code = ErrorCode.MISMATCHED_ENDPOINT_TYPE
        message = (f"The request was sent to an endpoint of type {_NAMES[served]}, but we "
                   f"wanted an endpoint of type {_NAMES[wanted]}")
    # Kafka leaves every other field at its default (endpoint_type 1, cluster id "")
    return DescribeClusterResponse(
        error_code=ErrorCode.INVALID_REQUEST if version == 0 else code, error_message=message,
        endpoint_type=BROKER_ENDPOINT, cluster_id="", controller_id=-1, brokers=[])


def described(req, served: int, cluster_id: str, controller_id: int,
              nodes: list[tuple[int, str, int, str | None, bool]],
              cluster_ops: int = authorized_operations.CLUSTER) -> DescribeClusterResponse:
    """The answer listing ``nodes`` (id, host, port, rack, fenced)."""
    ids = {n[0] for n in nodes}
    return DescribeClusterResponse(
        throttle_time_ms=0, error_code=ErrorCode.NONE, endpoint_type=served,
        cluster_id=cluster_id, controller_id=controller_id if controller_id in ids else -1,
        brokers=[DescribeClusterBroker(broker_id=i, host=h, port=p, rack=r, is_fenced=f)
                 for i, h, p, r, f in nodes],
        cluster_authorized_operations=cluster_ops
        if req.include_cluster_authorized_operations else authorized_operations.OMITTED)
