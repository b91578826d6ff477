"""Coordinators: synchronous state machines whose state lives in internal compacted topics.

The group coordinator (consumer groups and committed offsets, in __consumer_offsets) is
``coordinator.GroupCoordinator`` with its trio layer ``runtime.GroupCoordinatorService``; the
transaction coordinator (__transaction_state) is ``transaction_coordinator``.
"""
