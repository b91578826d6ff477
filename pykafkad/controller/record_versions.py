"""The version Kafka's controller writes each metadata record at.

Kafka does not always write a record at its highest version: a BrokerRegistrationChangeRecord
is written at the first version that has the field the change sets (fencing at 0, controlled
shutdown at 1, offline log dirs at 2, cordoned log dirs at 3), as Apache Kafka 4.4's own
``__cluster_metadata`` shows. Every other record goes at its highest version, which for the
metadata.version levels pykafkad accepts is the one Kafka picks too."""

from __future__ import annotations

from wire.metadata.broker_registration_change_record import BrokerRegistrationChangeRecord


def record_version(record) -> int:
    if isinstance(record, BrokerRegistrationChangeRecord):
        if record.cordoned_log_dirs is not None:
            return 3
        if record.log_dirs is not None:
            return 2
        if record.in_controlled_shutdown:
            return 1
        return 0
    return type(record).HIGHEST_VERSION
