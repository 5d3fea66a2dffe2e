"""``preflight-fsm people add NAME... --from FILE`` and ``people list``: the team server's
enrollments brought into the repository's people file, where their commit is the review."""

from __future__ import annotations

import contextlib
from dataclasses import replace
from pathlib import Path

from typer.testing import CliRunner, Result

from preflight_fsm.people import People
from software_authenticator import SoftwareAuthenticator

ADA = SoftwareAuthenticator(seed=1, origin="https://pf.example").person("Ada Lovelace")
GRACE = SoftwareAuthenticator(seed=2).person("Grace Hopper")


def people(cwd: Path, *args: str) -> Result:
    """``preflight-fsm people ARGS`` run in this process from ``cwd``."""
    from preflight_fsm.cli import app

    with contextlib.chdir(cwd):
        return CliRunner().invoke(app, ["people", *args], catch_exceptions=False)


def server_file(tmp_path: Path) -> Path:
    """The team server's people file, where `mcp --enroll` wrote Ada and Grace."""
    path = tmp_path / "server-people.toml"
    path.write_text(ADA.as_toml() + "\n" + GRACE.as_toml(), encoding="utf-8")
    return path


def test_people_add_copies_the_named_entry_into_the_repository_s_people_file(
    tmp_path: Path,
) -> None:
    """Only the named person is copied, to the default .preflight-fsm/people.toml."""
    done = people(tmp_path, "add", "Ada Lovelace", "--from", str(server_file(tmp_path)))
    assert (0, (ADA,)) == (
        done.exit_code,
        People.load(tmp_path / ".preflight-fsm" / "people.toml").persons,
    )
    assert f"added Ada Lovelace: credential {ADA.credential_id}" in done.stdout
    assert "the commit is the review" in done.stderr


def test_people_add_of_an_entry_already_there_as_is_changes_nothing(tmp_path: Path) -> None:
    """Run twice, the second run exits 0 and says the entry is already there."""
    source = server_file(tmp_path)
    people(tmp_path, "add", "Ada Lovelace", "--from", str(source))
    before = (tmp_path / ".preflight-fsm" / "people.toml").read_bytes()
    again = people(tmp_path, "add", "Ada Lovelace", "--from", str(source))
    assert (0, before) == (again.exit_code, (tmp_path / ".preflight-fsm/people.toml").read_bytes())
    assert "0 added to .preflight-fsm/people.toml, 1 already there as is" in again.stderr


def test_people_add_refuses_to_replace_a_listed_key_and_exits_2(tmp_path: Path) -> None:
    """A name the repository lists with another credential is refused, nothing written."""
    target = tmp_path / "people.toml"
    target.write_text(replace(ADA, credential_id="b3RoZXI").as_toml(), encoding="utf-8")
    before = target.read_bytes()
    done = people(
        tmp_path,
        "add",
        "Ada Lovelace",
        "--from",
        str(server_file(tmp_path)),
        "--people",
        str(target),
    )
    assert (2, before) == (done.exit_code, target.read_bytes())
    assert "never replaced" in done.stderr


def test_people_list_prints_each_person_on_a_line(tmp_path: Path) -> None:
    """Name, credential, relying party and origins: what a reviewer checks."""
    done = people(tmp_path, "list", "--people", str(server_file(tmp_path)))
    assert 0 == done.exit_code
    assert [
        f"Ada Lovelace: credential {ADA.credential_id}, relying party localhost, "
        "origins https://pf.example",
        f"Grace Hopper: credential {GRACE.credential_id}, relying party localhost, "
        "origins http://localhost:8765",
    ] == done.stdout.splitlines()


def test_from_goes_only_with_people_add(tmp_path: Path) -> None:
    """`people list --from FILE` is a usage error (exit 2) naming where --from goes."""
    done = people(tmp_path, "list", "--from", str(server_file(tmp_path)))
    assert (2, True) == (done.exit_code, "--from FILE goes with people add" in done.stderr)
