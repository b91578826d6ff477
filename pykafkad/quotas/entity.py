"""Quota entities and keys as Kafka 4.4 validates them (ClientQuotaControlManager).

An entity is a tuple of ``(entity_type, name)`` pairs sorted by type, ``name`` None for the
default (``<default>``), the same form the metadata image keys ``client_quotas`` by.
"""

from __future__ import annotations

import ipaddress
import socket

USER, CLIENT_ID, IP = "user", "client-id", "ip"

PRODUCER_BYTE_RATE = "producer_byte_rate"
CONSUMER_BYTE_RATE = "consumer_byte_rate"
REQUEST_PERCENTAGE = "request_percentage"
CONTROLLER_MUTATION_RATE = "controller_mutation_rate"
CONNECTION_CREATION_RATE = "connection_creation_rate"

#: the keys an entity may set, and whether the value must be whole (Kafka's LONG configs)
CLIENT_KEYS = {PRODUCER_BYTE_RATE: True, CONSUMER_BYTE_RATE: True, REQUEST_PERCENTAGE: False,
               CONTROLLER_MUTATION_RATE: False}
IP_KEYS = {CONNECTION_CREATION_RATE: True}

Entity = tuple[tuple[str, "str | None"], ...]


class QuotaError(Exception):
    """An entry Kafka refuses: ``code`` and ``message`` are what the client is answered."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


INVALID_REQUEST = 42
UNSUPPORTED_VERSION = 35


def entity_of(pairs) -> Entity:
    """The entity an AlterClientQuotas entry names; a type given twice keeps its last name, as
    Kafka's request-to-map conversion does."""
    named: dict[str, str | None] = {}
    for entity_type, name in pairs:
        named[entity_type] = name
    return tuple(sorted(named.items()))


def validate_entity(entity: Entity) -> None:
    if not entity:
        raise QuotaError(INVALID_REQUEST, "Invalid empty client quota entity")
    for entity_type, name in entity:
        if entity_type not in (USER, CLIENT_ID, IP):
            raise QuotaError(INVALID_REQUEST, f"Unhandled client quota entity type: {entity_type}")
        if name is not None and name == "":
            raise QuotaError(INVALID_REQUEST, f"Empty {entity_type} not supported")
    types = {t for t, _ in entity}
    if IP in types:
        if len(types) > 1:
            raise QuotaError(INVALID_REQUEST, "Invalid quota entity combination, IP entity should"
                             "not be combined with User or ClientId")  # sic: Kafka's message
        name = dict(entity)[IP]
        if name is not None and not _valid_host(name):
            raise QuotaError(INVALID_REQUEST, f"{name} is not a valid IP or resolvable host.")


def _valid_host(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        pass
    try:
        socket.getaddrinfo(name, None)
        return True
    except OSError:
        return False


def validate_value(entity: Entity, key: str, value: float) -> None:
    keys = IP_KEYS if any(t == IP for t, _ in entity) else CLIENT_KEYS
    whole = keys.get(key)
    if whole is None:
        raise QuotaError(INVALID_REQUEST, f"Invalid configuration key {key}")
    if whole and value != int(value):
        raise QuotaError(INVALID_REQUEST, f"{key} cannot be a fractional value.")
    if value <= 0:
        raise QuotaError(INVALID_REQUEST, f"Quota {key} must be greater than 0")


def describe_entity(entity: Entity) -> str:
    """Kafka's ClientQuotaEntity toString (in its duplicate-entry message)."""
    inner = ", ".join(f"{t}={n}" for t, n in entity)
    return f"ClientQuotaEntity(entries={{{inner}}})"
