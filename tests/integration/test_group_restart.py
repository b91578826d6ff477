"""A group whose first member is static survives a broker restart before its first rebalance
completes (found by restarting the broker every 5 s under franz-go's group tests)."""

from __future__ import annotations

from confluent_kafka import Consumer, KafkaError, KafkaException
from confluent_kafka.admin import AdminClient

from pykafkad.testing import run_broker
from tests.integration.clients import create_topic
from tests.integration.groups_support import WAIT_S, wait_until

GROUP = "static-first"


def _static_consumer(bootstrap: str, errors: list) -> Consumer:
    return Consumer({
        "bootstrap.servers": bootstrap, "group.id": GROUP, "group.instance.id": "static-1",
        # a ghost member would block the group for this long: far beyond the test's waits
        "session.timeout.ms": 300000, "auto.offset.reset": "earliest",
        "error_cb": errors.append,
    })


def _group_state(bootstrap: str) -> str:
    """The group's state; while a restarted broker still loads __consumer_offsets in the
    background the describe answers COORDINATOR_LOAD_IN_PROGRESS, as Kafka's does, and is
    asked again."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    state: list[str] = []

    def described() -> bool:
        try:
            state.append(admin.describe_consumer_groups([GROUP])[GROUP].result(WAIT_S).state.name)
        except KafkaException as e:
            if e.args[0].code() != KafkaError.COORDINATOR_LOAD_IN_PROGRESS:
                raise
        return bool(state)

    wait_until(described, f"a description of {GROUP}")
    return state[0]


def test_static_member_joins_at_once_after_a_restart_before_the_first_rebalance(
        tmp_path, topic_name):
    data = tmp_path / "data"
    errors: list = []
    # the first rebalance waits a minute, so the broker stops in the middle of it
    with run_broker(data, config={"group.initial.rebalance.delay.ms": "60000"}) as b:
        create_topic(b.bootstrap_servers, topic_name)
        first = _static_consumer(b.bootstrap_servers, errors)
        first.subscribe([topic_name])
        wait_until(lambda: first.poll(0.05) is None and
                   _group_state(b.bootstrap_servers) == "PREPARING_REBALANCING",
                   "the static member's JoinGroup to be parked")
    first.close()

    with run_broker(data, config={"group.initial.rebalance.delay.ms": "0"}) as b:
        assert _group_state(b.bootstrap_servers) == "EMPTY"
        errors.clear()
        again = _static_consumer(b.bootstrap_servers, errors)
        try:
            again.subscribe([topic_name])
            failures: list = []

            def assigned() -> bool:
                msg = again.poll(0.05)
                if msg is not None and msg.error() and \
                        msg.error().code() != KafkaError._PARTITION_EOF:
                    failures.append(msg.error())
                return bool(again.assignment())

            wait_until(assigned, "the static member's assignment")
            assert not failures
            assert not [e for e in errors
                        if e.code() == KafkaError.INCONSISTENT_GROUP_PROTOCOL]
        finally:
            again.close()
