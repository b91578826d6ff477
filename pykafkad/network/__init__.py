"""Node-to-node networking: the requests one pykafkad node sends to another."""
