"""KRaft (KIP-595 Raft with KIP-996 pre-vote): the controller quorum and its metadata log."""
