"""Share groups (KIP-932): the group coordinator's share-group membership and assignment, and
the partition leaders' share partitions (in-flight records under acquisition locks) and share
sessions."""
