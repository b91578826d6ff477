"""ApiVersions: advertises exactly the registered handlers' version ranges."""

from __future__ import annotations

from pykafkad.dispatch import HANDLERS, RequestContext, handles
from wire.errors import ErrorCode
from wire.messages.api_versions_response import ApiVersion, ApiVersionsResponse

API_KEY = 18


@handles(API_KEY, 0, 4)
async def handle_api_versions(ctx: RequestContext, request) -> ApiVersionsResponse:
    """Versions 0-4.  ``request`` is None when the client asked for a version we lack: the
    answer is then a v0 body with UNSUPPORTED_VERSION and our range for key 18, from which
    every client picks its retry version.  No finalized features are listed (in particular
    not ``transaction.version``, see CLIENTS.md)."""
    keys = [ApiVersion(h.api_key, h.min_version, h.max_version) for h in sorted(
        HANDLERS.values(), key=lambda h: h.api_key)]
    if request is None:
        return ApiVersionsResponse(error_code=ErrorCode.UNSUPPORTED_VERSION, api_keys=keys)
    return ApiVersionsResponse(error_code=0, api_keys=keys, throttle_time_ms=0)
