"""Sans-IO Kafka protocol codec: bytes <-> objects. No sockets, no trio, never imports pykafkad."""
