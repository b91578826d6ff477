"""pykafkad: a Kafka broker in Python on trio that stock Kafka clients use unchanged."""

__version__ = "0.1.0"
