"""Kafka's AclPublisher and ScramPublisher: a node's authorizer and SCRAM credentials are what
its metadata image holds.

The controller writes AccessControlEntryRecords and UserScramCredentialRecords (CreateAcls,
DeleteAcls, AlterUserScramCredentials through any node, ``format --add-scram``); every node,
broker or controller, replays them here, so an ACL or a user applies on each node and survives
restarts."""

from __future__ import annotations

from typing import Any

from pykafkad.security.credentials import scram_credentials


class SecurityPublisher:
    def __init__(self, broker: Any):
        self.broker = broker
        self._acls: Any = None
        self._scram: Any = None

    def name(self) -> str:
        return "SecurityPublisher"

    def on_metadata_update(self, delta: Any, image: Any, manifest: Any) -> None:
        # an image's mappings are replaced only when a delta changed them
        authorizer = getattr(self.broker, "authorizer", None)
        if authorizer is not None and image.acls is not self._acls:
            authorizer.load(image.acls)
            self._acls = image.acls
        if image.scram is not self._scram:
            scram_credentials(self.broker).load(image.scram)
            self._scram = image.scram
