"""BrokerHeartbeatManager's state decisions on the cases of Kafka's
BrokerHeartbeatManagerTest.testCalculateNextBrokerState."""

from __future__ import annotations

from pykafkad.controller.heartbeat import BrokerControlState, BrokerHeartbeatManager

FENCED = BrokerControlState.FENCED
UNFENCED = BrokerControlState.UNFENCED
CONTROLLED_SHUTDOWN = BrokerControlState.CONTROLLED_SHUTDOWN
SHUTDOWN_NOW = BrokerControlState.SHUTDOWN_NOW


def test_calculate_next_broker_state():
    m = BrokerHeartbeatManager(session_timeout_ms=10_000)
    for broker in range(6):
        m.register(broker, True, 0)
    for broker, fenced, offset in [(0, True, 100), (1, False, 98), (2, False, 100),
                                   (3, False, 100), (4, True, 100), (5, False, 99)]:
        m.touch(broker, fenced, offset, 0)
    m.maybe_update_controlled_shutdown_offset(5, 99)
    assert m.lowest_active_offset() == 98

    def step(broker, *, want_fence=False, want_shut_down=False, offset=0, leaderships=False):
        return m.next_state(broker, want_fence=want_fence, want_shut_down=want_shut_down,
                            current_metadata_offset=offset, register_offset=100,
                            has_leaderships=leaderships)

    assert step(0, want_shut_down=True) == (FENCED, SHUTDOWN_NOW)
    assert step(0, offset=100) == (FENCED, UNFENCED)
    assert step(0, offset=50) == (FENCED, FENCED)
    assert step(0, want_fence=True) == (FENCED, FENCED)
    assert step(1, want_shut_down=True, leaderships=True) == (UNFENCED, CONTROLLED_SHUTDOWN)
    assert step(1, want_shut_down=True) == (UNFENCED, SHUTDOWN_NOW)
    assert step(1) == (UNFENCED, UNFENCED)
    assert step(5, want_shut_down=True, leaderships=True) == (CONTROLLED_SHUTDOWN,
                                                              CONTROLLED_SHUTDOWN)
    assert step(5, want_shut_down=True) == (CONTROLLED_SHUTDOWN, CONTROLLED_SHUTDOWN)
    m.fence(1)
    assert step(5, want_shut_down=True) == (CONTROLLED_SHUTDOWN, SHUTDOWN_NOW)
    assert step(5, want_shut_down=True, leaderships=True) == (CONTROLLED_SHUTDOWN,
                                                              CONTROLLED_SHUTDOWN)


def test_stale_brokers_are_found_oldest_first():
    m = BrokerHeartbeatManager(session_timeout_ms=10_000)
    m.register(1, False, 0)
    m.register(2, False, 5_000)
    m.register(3, True, 0)                       # fenced brokers have no session to expire
    assert m.find_one_stale_broker(10_000) is None
    assert m.find_one_stale_broker(10_001) == 1
    m.fence(1)
    assert m.find_one_stale_broker(10_001) is None
    assert m.find_one_stale_broker(15_001) == 2
    assert m.next_check_time_ms() == 15_000
