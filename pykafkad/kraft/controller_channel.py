"""Kafka's NodeToControllerChannelManager: a broker's requests to the active controller.

It knows the controllers' endpoints (controller.quorum.voters), follows the quorum's leader
as the node's raft client learns it (a controller is active only while it leads), and retries
what did not reach the active controller: a refused connection, a dropped one, a timeout, or
NOT_CONTROLLER anywhere in the answer (the leader moved), with a backoff, until the request's
deadline. ``await channel.send(request) -> response``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import trio

from pykafkad.kraft.error_responses import has_error
from pykafkad.network.client import NodeClient, NodeUnavailableError
from wire.errors import ErrorCode

log = logging.getLogger("pykafkad.kraft.channel")

#: retry.backoff.ms / retry.backoff.max.ms of Kafka's channel
RETRY_BACKOFF_S = 0.05
RETRY_BACKOFF_MAX_S = 1.0
#: how often a backing-off request looks whether the quorum has named a new leader
LEADER_POLL_S = 0.02


class ControllerChannel:
    def __init__(self, voters: dict[int, tuple[str, int]], *,
                 leader: Callable[[], int] | None = None, client_id: str = "pykafkad",
                 request_timeout_s: float = 30.0,
                 network: Callable[[str, int], Any] | None = None, security: Any = None):
        """``voters``: id -> (host, port) of the controller listeners; ``leader``: the raft
        leader id as this node knows it (-1: none), e.g. ``lambda: raft.leader_and_epoch[0]``."""
        #: kept by reference: an observer of a dynamic quorum learns the leader's endpoint
        #: from its raft client, which adds it to this same dict
        self.voters = voters
        self.leader = leader or (lambda: -1)
        self.client_id = client_id
        self.request_timeout_s = request_timeout_s
        self._network = network or (lambda host, port: NodeClient(
            host, port, client_id=client_id, security=security))
        self._clients: dict[int, Any] = {}
        self._guess = 0
        #: the controller that answered last (where the next request goes first)
        self.active_controller: int | None = None

    def _target(self, attempt: int) -> int | None:
        """The controller to try next; None while no controller endpoint is known yet."""
        leader = self.leader()
        if leader in self.voters and attempt == 0:
            return leader
        if self.active_controller is not None and attempt == 0:
            return self.active_controller
        if leader in self.voters and attempt % 2 == 0:
            return leader
        ids = sorted(self.voters)
        if not ids:
            return None
        self._guess = (self._guess + 1) % len(ids)
        return ids[self._guess]

    def _client(self, node: int) -> Any:
        client = self._clients.get(node)
        if client is None:
            client = self._clients[node] = self._network(*self.voters[node])
        return client

    async def send(self, request: Any, *, version: int | None = None,
                   timeout_s: float | None = None) -> Any:
        """The active controller's response to ``request``; trio.TooSlowError when none
        answered within ``timeout_s`` (default: the channel's request timeout)."""
        deadline = trio.current_time() + (timeout_s or self.request_timeout_s)
        backoff = RETRY_BACKOFF_S
        attempt = 0
        while True:
            node = self._target(attempt)
            attempt += 1
            remaining = deadline - trio.current_time()
            if remaining <= 0:
                raise trio.TooSlowError(f"no active controller answered {type(request).__name__}")
            if node is None:  # no controller known yet (the raft client is looking)
                await self._backoff(min(RETRY_BACKOFF_S, remaining), -1)
                continue
            try:
                response = await self._client(node).request(
                    request, version=version, timeout_s=min(remaining, self.request_timeout_s))
            except (NodeUnavailableError, trio.TooSlowError, OSError) as e:
                log.debug("%s to controller %d failed: %s", type(request).__name__, node, e)
                if self.active_controller == node:
                    self.active_controller = None
            else:
                if not has_error(response, ErrorCode.NOT_CONTROLLER):
                    self.active_controller = node
                    return response
                if self.active_controller == node:
                    self.active_controller = None
                # the quorum is up, its leader not yet active (or just moved): try again soon
                await self._backoff(min(RETRY_BACKOFF_S, max(0.0, deadline - trio.current_time())),
                                    node)
                continue
            # unreachable: back off longer each time
            await self._backoff(min(backoff, max(0.0, deadline - trio.current_time())), node)
            backoff = min(backoff * 2, RETRY_BACKOFF_MAX_S)

    async def _backoff(self, delay_s: float, tried: int) -> None:
        """Sleeps ``delay_s``, or less when the quorum names another leader meanwhile (as
        Kafka's channel sends to a new controller as soon as the metadata names it)."""
        end = trio.current_time() + delay_s
        while (now := trio.current_time()) < end:
            leader = self.leader()
            if leader in self.voters and leader != tried:
                return
            await trio.sleep(min(LEADER_POLL_S, end - now))

    async def aclose(self) -> None:
        clients, self._clients = self._clients, {}
        for c in clients.values():
            await c.aclose()
