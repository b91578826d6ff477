"""The quorum-state file, as Kafka's FileQuorumStateStore writes and reads it."""

from __future__ import annotations

import pytest

from pykafkad.raft.quorum_state import (
    ElectionState,
    FileQuorumStateStore,
    QuorumStateError,
    uuid_from_str,
    uuid_to_str,
)

#: what Apache Kafka 4.4.0 (a single static voter) wrote in its quorum-state
KAFKA_V0 = ('{"clusterId":"","leaderId":1,"leaderEpoch":30,"votedId":-1,"appliedOffset":0,'
            '"currentVoters":[{"voterId":1}],"data_version":0}')


def test_reads_and_writes_kafkas_version_0_line(tmp_path):
    path = tmp_path / "quorum-state"
    path.write_text(KAFKA_V0)
    store = FileQuorumStateStore(path)
    state = store.read()
    assert state == ElectionState(epoch=30, leader_id=1, voted_id=-1, voters=(1,))
    path.unlink()
    store.write(state, 0)
    assert path.read_text() == KAFKA_V0


def test_version_1_has_the_voted_directory_id(tmp_path):
    store = FileQuorumStateStore(tmp_path / "quorum-state")
    dir_id = uuid_from_str("8l73DNElRiynq7ScTnKnhA")
    store.write(ElectionState(epoch=4, voted_id=2, voted_directory_id=dir_id), 1)
    assert (tmp_path / "quorum-state").read_text() == (
        '{"leaderId":-1,"leaderEpoch":4,"votedId":2,"votedDirectoryId":"8l73DNElRiynq7ScTnKnhA",'
        '"data_version":1}')
    assert store.read() == ElectionState(epoch=4, voted_id=2, voted_directory_id=dir_id)
    assert uuid_to_str(bytes(16)) == "AAAAAAAAAAAAAAAAAAAAAA"


def test_write_is_atomic_and_leaves_no_temp_file(tmp_path):
    store = FileQuorumStateStore(tmp_path / "quorum-state")
    for epoch in range(3):
        store.write(ElectionState(epoch=epoch, leader_id=1, voters=(1,)))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["quorum-state"]
    assert store.read().epoch == 2


def test_missing_file_is_a_fresh_node(tmp_path):
    assert FileQuorumStateStore(tmp_path / "quorum-state").read() is None


@pytest.mark.parametrize("content, message", [
    ("", "File ended prematurely"),
    ("[1]", "is not an object node"),
    ('{"leaderId":1}', "does not have data_version field"),
    ('{"data_version":2}', "data_version (2) is not within the min (0) and max (1)"),
    ("{not json", "Error while reading the Quorum status"),
])
def test_unreadable_files_refuse_to_start(tmp_path, content, message):
    path = tmp_path / "quorum-state"
    path.write_text(content)
    with pytest.raises(QuorumStateError, match=message.replace("(", r"\(").replace(")", r"\)")):
        FileQuorumStateStore(path).read()
