"""The people file: who may sign decisions with a passkey, committed and reviewed like CODEOWNERS.

A TOML file (default ``.preflight-fsm/people.toml``, ``--people FILE`` wherever it is read) with
one ``[[person]]`` table per person::

    [[person]]
    name = "Ada Lovelace"                       # as decisions show it (a clean one-line name)
    credential_id = "..."                       # base64url, as WebAuthn gives it
    public_key = "..."                          # the credential's COSE public key, base64url
    rp_id = "localhost"                         # the relying party it was enrolled for
    origins = ["http://localhost:8765"]         # the page origins it was enrolled on

Whoever can change this file decides whose passkey counts: keep it under review. The file is
untrusted input all the same: read up to a limit, unknown keys and duplicates refused, every value
checked, each error naming the file and the entry.
"""

from __future__ import annotations

import json
import os
import re
import stat
import tempfile
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from preflight_fsm.bounded import Unreadable, read_bounded
from preflight_fsm.errors import InvalidPeopleFile
from preflight_fsm.principal import principal_problem
from preflight_fsm.proof import PROOF_LIMITS

__all__ = [
    "DEFAULT_PEOPLE_FILE",
    "MAX_PEOPLE_FILE_BYTES",
    "People",
    "Person",
    "add_person",
    "copy_people",
]

DEFAULT_PEOPLE_FILE: Final = Path(".preflight-fsm") / "people.toml"
"""Where the people file is read from, relative to the repository, unless ``--people`` says."""

MAX_PEOPLE_FILE_BYTES: Final = 1024 * 1024
"""A larger people file is refused (a thousand people take about a tenth of it)."""

MAX_PUBLIC_KEY: Final = 2048
"""The longest COSE public key, in base64url characters (an RSA-4096 key takes about 740)."""

_B64URL: Final = re.compile(r"[A-Za-z0-9_-]+")
# A relying-party id is a domain: labels of letters, digits and hyphens (WebAuthn refuses IPs).
_RP_ID: Final = re.compile(
    r"(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*"
)
_ORIGIN: Final = re.compile(r"https?://[a-z0-9.-]{1,253}(?::[0-9]{1,5})?")
_KEYS: Final = ("name", "credential_id", "public_key", "rp_id", "origins")


@dataclass(frozen=True, slots=True)
class Person:
    """One person who may sign: their name and the passkey credential they enrolled."""

    name: str
    credential_id: str
    public_key: str
    rp_id: str
    origins: tuple[str, ...]

    def problems(self) -> list[str]:
        """What is wrong with this entry, each as ``key: problem``; [] when nothing is."""
        found: list[str] = []
        name_problem = principal_problem(self.name)
        if name_problem is not None:
            found.append(f"name {name_problem}")
        for key, value, limit in (
            ("credential_id", self.credential_id, PROOF_LIMITS["credential_id"]),
            ("public_key", self.public_key, MAX_PUBLIC_KEY),
        ):
            if type(value) is not str or not _B64URL.fullmatch(value) or len(value) > limit:
                found.append(
                    f"{key} must be base64url (A-Z a-z 0-9 - _) of 1 to {limit} characters"
                )
        if type(self.rp_id) is not str or not _RP_ID.fullmatch(self.rp_id):
            found.append("rp_id must be a lower-case domain such as 'localhost' or 'team.example'")
        if not self.origins or not all(
            type(o) is str and _ORIGIN.fullmatch(o) for o in self.origins
        ):
            found.append(
                "origins must list the page origins, such as 'http://localhost:8765' "
                "(scheme, host and port only)"
            )
        return found

    def as_toml(self) -> str:
        """This entry as a ``[[person]]`` table (strings written as JSON, which TOML reads)."""
        origins = ", ".join(json.dumps(o) for o in self.origins)
        return (
            "[[person]]\n"
            f"name = {json.dumps(self.name, ensure_ascii=False)}\n"
            f"credential_id = {json.dumps(self.credential_id)}\n"
            f"public_key = {json.dumps(self.public_key)}\n"
            f"rp_id = {json.dumps(self.rp_id)}\n"
            f"origins = [{origins}]\n"
        )


class People:
    """The people file's entries, by name and by credential id; ``path``, the file they were
    read from (None for people made in memory), is where the answer page keeps their passkeys'
    signature counters beside them (``sign_counts.py``)."""

    def __init__(
        self, persons: tuple[Person, ...] = (), source: str = "<people>", path: Path | None = None
    ) -> None:
        self.persons = persons
        self.source = source
        self.path = path
        self._by_credential: dict[str, Person] = {}
        self._by_name: dict[str, Person] = {}
        for i, person in enumerate(persons):
            where = f"{source}: person {i + 1} ({person.name!r})"
            problems = person.problems()
            if problems:
                raise InvalidPeopleFile(f"{where}: " + "; ".join(problems))
            if person.name in self._by_name:
                raise InvalidPeopleFile(
                    f"{where}: the name is listed twice; give each person one entry"
                )
            if person.credential_id in self._by_credential:
                other = self._by_credential[person.credential_id].name
                raise InvalidPeopleFile(
                    f"{where}: its credential_id is {other!r}'s too; a credential belongs to one "
                    "person"
                )
            self._by_name[person.name] = person
            self._by_credential[person.credential_id] = person

    def __iter__(self) -> Iterator[Person]:
        return iter(self.persons)

    def __len__(self) -> int:
        return len(self.persons)

    def by_credential(self, credential_id: str) -> Person | None:
        """The person who enrolled ``credential_id``, or None."""
        return self._by_credential.get(credential_id)

    def by_name(self, name: str) -> Person | None:
        """The person named ``name``, or None."""
        return self._by_name.get(name)

    @classmethod
    def load(cls, path: str | Path) -> People:
        """The people file at ``path``; InvalidPeopleFile naming what is wrong (a missing file
        is an error too: ``verify`` without the file cannot check a signature)."""
        path = Path(path)
        try:
            if not stat.S_ISREG(path.stat().st_mode):
                raise InvalidPeopleFile(f"{path} is not a regular file; name the people file")
            text = read_bounded(path, MAX_PEOPLE_FILE_BYTES).decode("utf-8")
        except FileNotFoundError:
            raise InvalidPeopleFile(
                f"{path} does not exist; enroll a person (preflight-fsm people enroll NAME) or "
                "name the people file with --people FILE"
            ) from None
        except Unreadable as exc:
            raise InvalidPeopleFile(f"{path} {exc.problem}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidPeopleFile(f"cannot read the people file {path}: {exc}") from None
        people = cls.from_text(text, str(path))
        people.path = path
        return people

    @classmethod
    def from_text(cls, text: str, source: str = "<people>") -> People:
        """The people of a people file's text; InvalidPeopleFile naming what is wrong."""
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise InvalidPeopleFile(f"{source} is not valid TOML: {exc}") from None
        unknown = sorted(set(data) - {"person"})
        if unknown:
            raise InvalidPeopleFile(
                f"{source}: unknown key(s) {', '.join(unknown)}; the file holds [[person]] tables"
            )
        entries = data.get("person", [])
        if not isinstance(entries, list):
            raise InvalidPeopleFile(f"{source}: person must be [[person]] tables")
        return cls(tuple(_person(entry, i, source) for i, entry in enumerate(entries)), source)


def _person(entry: object, i: int, source: str) -> Person:
    where = f"{source}: person {i + 1}"
    if not isinstance(entry, Mapping):
        raise InvalidPeopleFile(f"{where} must be a [[person]] table")
    unknown = sorted(set(entry) - set(_KEYS))
    missing = [key for key in _KEYS if key not in entry]
    if unknown or missing:
        said = [f"unknown key(s) {', '.join(unknown)}"] if unknown else []
        said += [f"missing {', '.join(missing)}"] if missing else []
        raise InvalidPeopleFile(f"{where}: {'; '.join(said)}; keys are {', '.join(_KEYS)}")
    origins: Any = entry["origins"]
    return Person(
        name=entry["name"],
        credential_id=entry["credential_id"],
        public_key=entry["public_key"],
        rp_id=entry["rp_id"],
        origins=tuple(origins) if isinstance(origins, list) else (),
    )


def add_person(path: str | Path, person: Person) -> People:
    """Add ``person`` to the people file at ``path`` (created with its folder if missing),
    keeping every other entry and comment as written; InvalidPeopleFile for a bad entry or a
    name or credential already listed. Returns the people the file now lists."""
    return _append(Path(path), (person,))


def copy_people(source: People, names: Sequence[str], path: str | Path) -> tuple[Person, ...]:
    """Copy the entries ``source`` lists for ``names`` into the people file at ``path`` (created
    if missing), as ``people add --from`` does; the entries it added (one already there as is
    is not added again). All or nothing: InvalidPeopleFile naming the first name that
    ``source`` does not list, or that ``path`` lists with another entry, or whose credential
    ``path`` lists for someone else. A listed key is never replaced: that is a reviewed edit."""
    path = Path(path)
    target = People.load(path) if path.exists() else People((), str(path), path)
    added: list[Person] = []
    for name in dict.fromkeys(names):  # a name given twice is copied once
        person = source.by_name(name)
        if person is None:
            listed = ", ".join(repr(p.name) for p in source) or "nobody"
            raise InvalidPeopleFile(
                f"{source.source} does not list {name!r} (it lists {listed}); enroll them first"
            )
        present = target.by_name(name) or target.by_credential(person.credential_id)
        if present == person:
            continue
        if present is not None:
            raise InvalidPeopleFile(
                f"{path} already lists {present.name!r} with another entry than "
                f"{source.source}'s {name!r} (another credential, key, relying party or "
                "origins); nothing was copied. A listed key is never replaced: remove the old "
                "entry in a reviewed commit first if the person enrolled a new passkey"
            )
        added.append(person)
    if added:
        _append(path, tuple(added))
    return tuple(added)


def _append(path: Path, persons: tuple[Person, ...]) -> People:
    """Append ``persons`` to the file at ``path``, all or none: what the file now lists."""
    text = ""
    if path.exists():
        text = read_bounded(path, MAX_PEOPLE_FILE_BYTES).decode("utf-8") if path.is_file() else ""
        People.load(path)  # refuses a file that is already broken, before adding to it
    updated = (text.rstrip("\n") + "\n\n" if text.strip() else _HEADER) + "\n".join(
        person.as_toml() for person in persons
    )
    people = People.from_text(updated, str(path))  # refuses duplicates and a bad entry
    path.parent.mkdir(parents=True, exist_ok=True)
    # Written whole to a temporary file, then renamed: a reader never sees half an entry.
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".people-", suffix=".toml")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(updated)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    people.path = path
    return people


_HEADER: Final = (
    "# Who may sign decisions with a passkey (preflight-fsm, docs/web.md). Review changes to\n"
    "# this file like CODEOWNERS: whoever edits it decides whose passkey counts.\n\n"
)
