"""Dynamic quorum voters given as ``id@host:port:directory-id`` (``--initial-controllers``,
``--standalone``; Kafka's DynamicVoter/DynamicVoters), and the VotersRecord they make."""

from __future__ import annotations

from dataclasses import dataclass

from pykafkad.metadata import features
from pykafkad.metadata.properties import uuid_from_string
from wire.messages.voters_record import Endpoint, KRaftVersionFeature, Voter, VotersRecord


class DynamicVoterError(ValueError):
    """A voter string Kafka refuses (the message is Kafka's)."""


@dataclass(frozen=True)
class DynamicVoter:
    node_id: int
    host: str
    port: int
    directory_id: str


def parse_dynamic_voter(text: str) -> DynamicVoter:
    """``id@host:port:directory`` (host may be ``[ipv6]``), with Kafka's DynamicVoter errors."""
    text = text.strip()
    at = text.find("@")
    if at < 0:
        raise DynamicVoterError("No @ found in dynamic voter string.")
    if at == 0:
        raise DynamicVoterError("Invalid @ at beginning of dynamic voter string.")
    try:
        node_id = int(text[:at])
    except ValueError:
        raise DynamicVoterError("Failed to parse node id in dynamic voter string.") from None
    if node_id < 0:
        raise DynamicVoterError(f"Invalid negative node id {node_id} in dynamic voter string.")
    rest = text[at + 1:]
    if not rest:
        raise DynamicVoterError("No hostname found after node id.")
    if rest.startswith("["):
        end = rest.find("]")
        if end < 0:
            raise DynamicVoterError("Hostname began with left bracket, but no right bracket was found.")
        host, rest = rest[1:end], rest[end + 1:]
        if not rest.startswith(":"):
            raise DynamicVoterError("Port section must start with a colon.")
        rest = rest[1:]
    else:
        colon = rest.find(":")
        if colon < 0:
            raise DynamicVoterError("No colon following hostname could be found.")
        host, rest = rest[:colon], rest[colon + 1:]
    colon = rest.find(":")
    if colon < 0:
        raise DynamicVoterError("No colon following port could be found.")
    try:
        port = int(rest[:colon])
    except ValueError:
        raise DynamicVoterError("Failed to parse port in dynamic voter string.") from None
    if not 0 <= port <= 65535:
        raise DynamicVoterError(f"Invalid port {port} in dynamic voter string.")
    directory_id = rest[colon + 1:]
    try:
        uuid_from_string(directory_id)
    except ValueError:
        raise DynamicVoterError("Failed to parse directory ID in dynamic voter string.") from None
    return DynamicVoter(node_id, host, port, directory_id)


def parse_dynamic_voters(text: str) -> dict[int, DynamicVoter]:
    voters: dict[int, DynamicVoter] = {}
    for item in text.split(","):
        voter = parse_dynamic_voter(item)
        if voter.node_id in voters:
            raise DynamicVoterError(f"Node id {voter.node_id} was specified more than once.")
        voters[voter.node_id] = voter
    if not voters:
        raise DynamicVoterError("No voters given.")
    return voters


def voters_record(voters: dict[int, DynamicVoter], listener_name: str) -> VotersRecord:
    return VotersRecord(0, [
        Voter(v.node_id, uuid_from_string(v.directory_id),
              [Endpoint(listener_name, v.host, v.port)],
              KRaftVersionFeature(0, features.LATEST_PRODUCTION[features.KRAFT_VERSION]))
        for v in voters.values()])
