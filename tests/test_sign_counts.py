"""sign_counts.py: the last signature count of each credential, beside the people file, so that
the answer page refuses a cloned authenticator's assertion (D277)."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight_fsm.errors import PasskeyRefused
from preflight_fsm.people import People, add_person
from preflight_fsm.sign_counts import SignCounts
from software_authenticator import SoftwareAuthenticator

ADA = SoftwareAuthenticator(seed=1).person("Ada Lovelace")


def counts_beside(tmp_path: Path) -> SignCounts:
    """The counts of a people file listing Ada, in .preflight-fsm/ as by default."""
    path = tmp_path / ".preflight-fsm" / "people.toml"
    return SignCounts.beside(People.load(path) if path.exists() else add_person(path, ADA))


def test_the_counts_are_kept_beside_the_people_file_not_in_it(tmp_path: Path) -> None:
    """people.toml's counts go to people.sign-counts.json; the people file is not touched."""
    counts = counts_beside(tmp_path)
    people_file = tmp_path / ".preflight-fsm" / "people.toml"
    before = people_file.read_bytes()
    counts.advance(ADA.credential_id, 7)
    assert (tmp_path / ".preflight-fsm" / "people.sign-counts.json", before) == (
        counts.path,
        people_file.read_bytes(),
    )


def test_a_count_above_the_last_one_is_kept_for_the_next_server_run(tmp_path: Path) -> None:
    """Another SignCounts on the same file (a restarted server) knows the last count."""
    counts_beside(tmp_path).advance(ADA.credential_id, 7)
    assert 7 == counts_beside(tmp_path).last(ADA.credential_id)


@pytest.mark.parametrize("count", [7, 6, 0])
def test_a_count_not_above_the_last_one_is_refused_and_kept_nowhere(
    tmp_path: Path, count: int
) -> None:
    """The same count again, a lower one, or none after counting: a clone's; nothing changes."""
    counts = counts_beside(tmp_path)
    counts.advance(ADA.credential_id, 7)
    with pytest.raises(PasskeyRefused) as info:
        counts.advance(ADA.credential_id, count)
    assert ("counter_not_increased", 7) == (info.value.reason, counts.last(ADA.credential_id))
    assert f"counter ({count}) does not exceed the last one seen for it (7)" in str(info.value)


def test_an_authenticator_that_keeps_no_counter_is_accepted_every_time(tmp_path: Path) -> None:
    """It reports 0 each time (synced passkeys do): nothing to compare, nothing written."""
    counts = counts_beside(tmp_path)
    counts.advance(ADA.credential_id, 0)
    counts.advance(ADA.credential_id, 0)
    assert counts.path is not None
    assert not counts.path.exists()


def test_a_broken_counts_file_refuses_every_signature_naming_the_file(tmp_path: Path) -> None:
    """Nothing is signed while the counts cannot be kept: fail closed, say how to recover."""
    counts = counts_beside(tmp_path)
    assert counts.path is not None
    counts.path.write_text('{"version": 1, "counts": {"x": -1}}', encoding="utf-8")
    with pytest.raises(PasskeyRefused) as info:
        counts.advance(ADA.credential_id, 9)
    assert "counts_unusable" == info.value.reason
    assert f"{counts.path} is not a counts file" in str(info.value)


def test_people_made_in_memory_keep_their_counts_in_memory() -> None:
    """No file is written for a people list that came from none."""
    counts = SignCounts.beside(People((ADA,)))
    counts.advance(ADA.credential_id, 3)
    assert (None, 3) == (counts.path, counts.last(ADA.credential_id))
