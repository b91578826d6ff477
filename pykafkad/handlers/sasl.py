"""SaslHandshake (17) and SaslAuthenticate (36) that reach the broker's handlers: on a listener
without SASL, or after authentication (the authenticator in pykafkad/security answers them
while it runs), Kafka's KafkaApis answers ILLEGAL_SASL_STATE."""

from __future__ import annotations

from pykafkad.dispatch import BROKER, CONTROLLER, handles
from wire.errors import ErrorCode
from wire.messages.sasl_authenticate_response import SaslAuthenticateResponse
from wire.messages.sasl_handshake_response import SaslHandshakeResponse


@handles(17, 0, 1, listeners=(BROKER, CONTROLLER))
async def handle_sasl_handshake(ctx, request) -> SaslHandshakeResponse:
    return SaslHandshakeResponse(error_code=ErrorCode.ILLEGAL_SASL_STATE, mechanisms=[])


@handles(36, 0, 2, listeners=(BROKER, CONTROLLER))
async def handle_sasl_authenticate(ctx, request) -> SaslAuthenticateResponse:
    return SaslAuthenticateResponse(
        error_code=ErrorCode.ILLEGAL_SASL_STATE,
        error_message="SaslAuthenticate request received after successful authentication",
        auth_bytes=b"")
