"""The configured quotas, with AlterClientQuotas and DescribeClientQuotas as Kafka 4.4 answers
them (ClientQuotaControlManager.alterClientQuotas, ClientQuotasImage.describe).

``quotas`` maps an entity to its ``{key: value}``: on a single node the table owns it; on a
KRaft broker it is the metadata image's ``client_quotas`` and changes arrive as
ClientQuotaRecords (``records_for``).
"""

from __future__ import annotations

from collections.abc import Mapping

from pykafkad.quotas.entity import (
    INVALID_REQUEST,
    IP,
    UNSUPPORTED_VERSION,
    Entity,
    QuotaError,
    describe_entity,
    entity_of,
    validate_entity,
    validate_value,
)
from wire.messages.alter_client_quotas_response import AlterClientQuotasResponse
from wire.messages.alter_client_quotas_response import EntityData as AlterEntity
from wire.messages.alter_client_quotas_response import EntryData as AlterEntry
from wire.messages.describe_client_quotas_response import (
    DescribeClientQuotasResponse,
    EntityData,
    EntryData,
    ValueData,
)
from wire.metadata.client_quota_record import ClientQuotaRecord
from wire.metadata.client_quota_record import EntityData as RecordEntity

MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED = 0, 1, 2


def alter_changes(request) -> tuple[AlterClientQuotasResponse, list[tuple[Entity, str, float | None]]]:
    """Validates every entry; the response and the changes (entity, key, value or None to
    remove) of the entries that passed (none when ``validate_only``)."""
    out, changes = [], []
    for entry in request.entries:
        pairs = [(e.entity_type, e.entity_name) for e in entry.entity]
        entity = entity_of(pairs)
        answer = AlterEntry(error_code=0, error_message=None,
                            entity=[AlterEntity(t, n) for t, n in pairs])
        out.append(answer)
        try:
            validate_entity(entity)
            ops: dict[str, float | None] = {}
            for op in entry.ops:
                if op.key in ops:
                    raise QuotaError(INVALID_REQUEST,
                                     f"Ignoring duplicate entity {describe_entity(entity)}")
                if not op.remove:
                    validate_value(entity, op.key, op.value)
                ops[op.key] = None if op.remove else op.value
        except QuotaError as e:
            answer.error_code, answer.error_message = e.code, e.message
            continue
        if not request.validate_only:
            changes += [(entity, k, v) for k, v in ops.items()]
    return AlterClientQuotasResponse(throttle_time_ms=0, entries=out), changes


def records_for(changes) -> list[ClientQuotaRecord]:
    return [ClientQuotaRecord(entity=[RecordEntity(t, n) for t, n in entity], key=key,
                              value=0.0 if value is None else value, remove=value is None)
            for entity, key, value in changes]


def apply_changes(quotas: dict[Entity, dict[str, float]], changes) -> None:
    for entity, key, value in changes:
        values = quotas.setdefault(entity, {})
        if value is None:
            values.pop(key, None)
        else:
            values[key] = value
        if not values:
            del quotas[entity]


def describe(quotas: Mapping[Entity, Mapping[str, float]], request) -> DescribeClientQuotasResponse:
    """The entities matching the request's filter, each with its values."""
    exact: dict[str, str | None] = {}
    specified: set[str] = set()
    try:
        for c in request.components:
            if c.entity_type not in ("user", "client-id", "ip"):
                raise QuotaError(UNSUPPORTED_VERSION, f"Unsupported entity type {c.entity_type}")
            if c.entity_type in exact or c.entity_type in specified:
                raise QuotaError(INVALID_REQUEST, f"Entity type {c.entity_type} cannot appear "
                                 "more than once in the filter.")
            if c.match_type == MATCH_EXACT:
                if c.match is None:
                    raise QuotaError(INVALID_REQUEST, "Request specified MATCH_TYPE_EXACT, but "
                                     "set match string to null.")
                exact[c.entity_type] = c.match
            elif c.match_type == MATCH_DEFAULT:
                if c.match is not None:
                    raise QuotaError(INVALID_REQUEST, "Request specified MATCH_TYPE_DEFAULT, but "
                                     "also specified a match string.")
                exact[c.entity_type] = None
            elif c.match_type == MATCH_SPECIFIED:
                specified.add(c.entity_type)
            else:
                raise QuotaError(INVALID_REQUEST, f"Unknown match type {c.match_type}")
        types = set(exact) | specified
        if IP in types and len(types) > 1:
            raise QuotaError(INVALID_REQUEST, "Invalid entity filter component combination. IP "
                             "filter component should not be used with user or clientId filter "
                             "component.")
    except QuotaError as e:
        return DescribeClientQuotasResponse(throttle_time_ms=0, error_code=e.code,
                                            error_message=e.message, entries=None)
    entries = []
    for entity, values in sorted(quotas.items(), key=lambda kv: (len(kv[0]), _order(kv[0]))):
        named = dict(entity)
        if request.strict and len(named) != len(types):
            continue
        if any(t not in named or named[t] != n for t, n in exact.items()):
            continue
        if any(t not in named for t in specified):
            continue
        entries.append(EntryData(
            entity=[EntityData(t, n) for t, n in sorted(entity, key=lambda e: hash_order(e[0]))],
            values=[ValueData(k, v) for k, v in sorted(values.items(),
                                                       key=lambda kv: hash_order(kv[0]))]))
    return DescribeClientQuotasResponse(throttle_time_ms=0, error_code=0, error_message="",
                                        entries=entries)


def _order(entity: Entity):
    return [(t, n is not None, n or "") for t, n in entity]


def hash_order(key: str) -> tuple[int, str]:
    """Where a key falls in a small java.util.HashMap (16 buckets): Kafka lists an entity's
    types and values in that order, and kafka-configs prints them so."""
    h = 0
    for ch in key:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return (h ^ (h >> 16)) & 15, key
