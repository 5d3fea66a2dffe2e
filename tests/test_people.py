"""people.py: the people file is read strictly and added to without losing anything."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from preflight_fsm.errors import InvalidPeopleFile
from preflight_fsm.people import MAX_PEOPLE_FILE_BYTES, People, Person, add_person, copy_people
from software_authenticator import SoftwareAuthenticator

ADA = SoftwareAuthenticator(seed=1).person("Ada Lovelace")
GRACE = SoftwareAuthenticator(seed=2).person("Grace Hopper")


def written(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "people.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_people_file_lists_each_person_by_name_and_credential(tmp_path: Path) -> None:
    """Each [[person]] table is one person, found by name and by credential id."""
    people = People.load(written(tmp_path, ADA.as_toml() + "\n" + GRACE.as_toml()))
    assert (ADA, GRACE) == (
        people.by_name("Ada Lovelace"),
        people.by_credential(GRACE.credential_id),
    )


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('version = 1\n' + ADA.as_toml(), "unknown key(s) version"),
        (ADA.as_toml() + 'counter = 3\n', "unknown key(s) counter"),
        (ADA.as_toml().replace('rp_id = "localhost"\n', ""), "missing rp_id"),
        (ADA.as_toml() + GRACE.as_toml().replace("Grace Hopper", "Ada Lovelace"), "listed twice"),
        (ADA.as_toml() + ADA.as_toml().replace("Ada Lovelace", "Ada L"), "a credential belongs"),
        (ADA.as_toml().replace('"localhost"', '"127.0.0.1:80"'), "rp_id must be"),
        (ADA.as_toml().replace("Ada Lovelace", "Ada\u202eLovelace"), "name holds"),
        (ADA.as_toml().replace('["http://localhost:8765"]', "[]"), "origins must"),
        ("[[person]\n", "not valid TOML"),
    ],
    ids=["top-key", "person-key", "missing", "dup-name", "dup-credential", "rp-id", "name",
         "origins", "toml"],
)  # fmt: skip
def test_a_bad_people_file_is_refused_naming_what_is_wrong(
    tmp_path: Path, text: str, named: str
) -> None:
    """Unknown keys, missing keys, duplicates and bad values are refused, each named."""
    with pytest.raises(InvalidPeopleFile) as info:
        People.load(written(tmp_path, text))
    assert named in str(info.value)


def test_a_people_file_that_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    """A directory (or a device) given as the people file is refused, not read."""
    with pytest.raises(InvalidPeopleFile) as info:
        People.load(tmp_path)
    assert "not a regular file" in str(info.value)


def test_a_people_file_over_the_limit_is_refused(tmp_path: Path) -> None:
    """Read up to the limit, never to its end."""
    with pytest.raises(InvalidPeopleFile) as info:
        People.load(written(tmp_path, "#" * (MAX_PEOPLE_FILE_BYTES + 1)))
    assert "larger than" in str(info.value)


def test_a_missing_people_file_says_how_to_make_one(tmp_path: Path) -> None:
    """The error names the enroll command and --people."""
    with pytest.raises(InvalidPeopleFile) as info:
        People.load(tmp_path / "absent.toml")
    assert "people enroll" in str(info.value)


def test_adding_a_person_keeps_every_other_entry_and_comment(tmp_path: Path) -> None:
    """The file is appended to: what a reviewer wrote stays as written."""
    path = written(tmp_path, "# reviewed by the platform team\n\n" + ADA.as_toml())
    people = add_person(path, GRACE)
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# reviewed by the platform team\n\n" + ADA.as_toml())
    assert (ADA, GRACE) == people.persons


def test_adding_to_a_missing_file_creates_it_with_its_folder(tmp_path: Path) -> None:
    """The default .preflight-fsm/people.toml is created on the first enrollment."""
    path = tmp_path / ".preflight-fsm" / "people.toml"
    assert (ADA,) == add_person(path, ADA).persons
    assert (ADA,) == People.load(path).persons


@pytest.mark.parametrize(
    "duplicate",
    [replace(GRACE, name=ADA.name), replace(GRACE, credential_id=ADA.credential_id)],
    ids=["name", "credential"],
)
def test_adding_a_duplicate_is_refused_and_writes_nothing(
    tmp_path: Path, duplicate: Person
) -> None:
    """A name or credential already listed is refused; the file is as it was."""
    path = written(tmp_path, ADA.as_toml())
    with pytest.raises(InvalidPeopleFile):
        add_person(path, duplicate)
    assert ADA.as_toml() == path.read_text(encoding="utf-8")


def test_copying_people_adds_the_named_entries_and_keeps_the_file_s_own(tmp_path: Path) -> None:
    """people add --from: the named entries as the source lists them, after the file's own."""
    target = written(tmp_path, "# reviewed\n" + GRACE.as_toml())
    server = People((ADA, replace(GRACE, name="Someone Else", credential_id="c2")))
    assert (ADA,) == copy_people(server, ["Ada Lovelace"], target)
    assert (GRACE, ADA) == People.load(target).persons


def test_copying_an_entry_already_there_as_is_writes_nothing(tmp_path: Path) -> None:
    """Copying twice is harmless: the second time adds nothing and leaves the file as it was."""
    target = written(tmp_path, ADA.as_toml())
    assert () == copy_people(People((ADA,)), ["Ada Lovelace"], target)
    assert ADA.as_toml() == target.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("listed", "named"),
    [
        (replace(ADA, public_key=GRACE.public_key), "already lists 'Ada Lovelace'"),
        (replace(GRACE, credential_id=ADA.credential_id), "already lists 'Grace Hopper'"),
        (replace(ADA, origins=("https://pf.example",)), "never replaced"),
    ],
    ids=["same-name-other-key", "same-credential-other-name", "other-origins"],
)
def test_copying_never_replaces_a_listed_key_and_writes_nothing(
    tmp_path: Path, listed: Person, named: str
) -> None:
    """A name or credential the file lists with another entry is refused: all or nothing."""
    target = written(tmp_path, listed.as_toml())
    with pytest.raises(InvalidPeopleFile) as info:
        copy_people(People((GRACE, ADA)), ["Ada Lovelace", "Grace Hopper"], target)
    assert named in str(info.value)
    assert listed.as_toml() == target.read_text(encoding="utf-8")


def test_copying_a_name_the_source_does_not_list_names_whom_it_lists(tmp_path: Path) -> None:
    """The error names the people the source file does list; nothing is written."""
    target = tmp_path / "people.toml"
    with pytest.raises(InvalidPeopleFile) as info:
        copy_people(People((ADA,), "server.toml"), ["Ada Lovelace", "Grace"], target)
    assert "server.toml does not list 'Grace' (it lists 'Ada Lovelace')" in str(info.value)
    assert not target.exists()
