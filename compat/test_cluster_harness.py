"""The harness's copy of Kafka's group-to-partition rule (compat/clients/cluster.py), on values
Java gives; the cluster scenarios then check the coordinator it predicts against Kafka's."""

from __future__ import annotations

from compat.clients.cluster import java_string_hash, offsets_partition


def test_java_string_hash_is_javas():
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("") == 0
    assert java_string_hash("\U0001F600") == 1772899  # a surrogate pair: two UTF-16 units
    assert java_string_hash("polygenelubricants") == -(1 << 31)


def test_offsets_partition_maps_min_value_to_zero_as_utils_abs():
    assert offsets_partition("polygenelubricants", 50) == 0
    assert offsets_partition("hello", 50) == 99162322 % 50
    assert 0 <= offsets_partition("compat-group-7", 50) < 50
