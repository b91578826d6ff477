"""The KRaft metadata layer: Kafka's metadata records framed as Kafka frames them, the immutable
MetadataImage and the MetadataDelta that replays records onto it, snapshots, and the storage
files ``kafka-storage format`` writes (meta.properties and the bootstrap snapshot)."""
