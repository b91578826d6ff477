"""KIP-848 consumer groups: the consumer rebalance protocol (ConsumerGroupHeartbeat,
ConsumerGroupDescribe), with server-side assignors and incremental reconciliation."""
