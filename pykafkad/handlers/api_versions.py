"""ApiVersions: advertises exactly the registered handlers' version ranges, and the features."""

from __future__ import annotations

import re

from pykafkad.controller.supported_features import controller_supported_features
from pykafkad.dispatch import BROKER, CONTROLLER, RequestContext, handles
from pykafkad.features import FEATURES, finalized_levels
from wire.errors import ErrorCode
from wire.messages.api_versions_response import (
    ApiVersion,
    ApiVersionsResponse,
    FinalizedFeatureKey,
    SupportedFeatureKey,
)

API_KEY = 18
#: before v4 a supported feature's min_version could not be 0 (KAFKA-17011): Kafka leaves
#: such features out of v3 answers
ZERO_MIN_FEATURES_VERSION = 4
#: v5 lets a client name the cluster and node it means to reach (KIP-1242)
CLUSTER_CHECK_VERSION = 5
#: v3+ name the client software (KIP-511); Kafka refuses names and versions not of this form
SOFTWARE_NAME_VERSION = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")
SOFTWARE_VERSION = 3


def _supported(ctx: RequestContext) -> list[tuple[str, int, int]]:
    """A controller listener reports the controller's ranges (what it can finalize), a broker
    listener the broker's, as Kafka's ControllerApis and KafkaApis do."""
    if ctx.listener_kind == CONTROLLER:
        return controller_supported_features()
    return [(f.name, f.min_version, f.max_version) for f in FEATURES]


def _error(code: int) -> ApiVersionsResponse:
    return ApiVersionsResponse(error_code=code, api_keys=[], throttle_time_ms=0,
                               finalized_features_epoch=-1)


@handles(API_KEY, 0, 5, listeners=(BROKER, CONTROLLER))
async def handle_api_versions(ctx: RequestContext, request) -> ApiVersionsResponse:
    """Versions 0-5, on every listener: each advertises its own API set (dispatch).
    ``request`` is None when the client asked for a version we lack: the
    answer is then a v0 body with UNSUPPORTED_VERSION and only our range for key 18, as
    Kafka's, from which every client picks its retry version.  v3+ carry the features (see
    pykafkad.features) and a client software name and version, INVALID_REQUEST unless both
    are of Kafka's form (letters, digits, '-' and '.', starting and ending with a letter or
    digit).  v5: a client that names the cluster id and node id it expects gets
    REBOOTSTRAP_REQUIRED when either is not ours, INVALID_REQUEST when it names only one."""
    if request is None:
        h = ctx.handlers[API_KEY]
        return ApiVersionsResponse(
            error_code=ErrorCode.UNSUPPORTED_VERSION,
            api_keys=[ApiVersion(API_KEY, h.advertised_min_version, h.max_version)])
    v = ctx.version
    if v >= SOFTWARE_VERSION and not (
        SOFTWARE_NAME_VERSION.fullmatch(request.client_software_name or "")
        and SOFTWARE_NAME_VERSION.fullmatch(request.client_software_version or "")
    ):
        return _error(ErrorCode.INVALID_REQUEST)
    if v >= CLUSTER_CHECK_VERSION:
        named_cluster, named_node = request.cluster_id is not None, request.node_id != -1
        if named_cluster != named_node:
            return _error(ErrorCode.INVALID_REQUEST)
        if named_cluster and (request.cluster_id != ctx.broker.cluster_id
                              or request.node_id != ctx.broker.node_id):
            return _error(ErrorCode.REBOOTSTRAP_REQUIRED)
    epoch, levels = finalized_levels(ctx.broker)
    keys = [ApiVersion(h.api_key, h.advertised_min_version, h.max_version) for h in sorted(
        ctx.handlers.values(), key=lambda h: h.api_key) if h.served_by(ctx.broker)]
    return ApiVersionsResponse(
        error_code=0, api_keys=keys, throttle_time_ms=0,
        supported_features=[
            SupportedFeatureKey(name, lo, hi) for name, lo, hi in _supported(ctx)
            if lo > 0 or v >= ZERO_MIN_FEATURES_VERSION],
        finalized_features_epoch=epoch,
        finalized_features=[FinalizedFeatureKey(n, level, level) for n, level in levels],
    )
