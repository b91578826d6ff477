"""Streams groups (KIP-1071): the StreamsGroupHeartbeat protocol, served next to the classic
groups on the same __consumer_offsets coordinator."""
