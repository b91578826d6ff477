"""Kafka record batches (magic 2): header view, CRC32C, records, control records, codecs."""
