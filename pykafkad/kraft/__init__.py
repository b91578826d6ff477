"""A KRaft node's parts, with Kafka's names: SharedServer (the raft client and the metadata
loader every node runs), ControllerServer (the active controller), BrokerLifecycleManager
(registration and heartbeats), ControllerChannel (requests to the active controller) and
KafkaRaftServer (the node by its process.roles)."""
