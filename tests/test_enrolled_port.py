"""The loopback port a command serves the signing page on (``cli/web.py``): the one every
person enrolled on localhost can sign on, else a refusal naming who is on which port."""

from __future__ import annotations

import dataclasses

import pytest

from preflight_fsm.cli.web import enrolled_port
from preflight_fsm.errors import InvalidPeopleFile
from preflight_fsm.people import People
from software_authenticator import SoftwareAuthenticator


def _people(*entries: tuple[str, tuple[str, ...]]) -> People:
    persons = []
    for seed, (name, origins) in enumerate(entries, 1):
        person = SoftwareAuthenticator(seed, origin=origins[0]).person(name)
        persons.append(dataclasses.replace(person, origins=origins))
    return People(tuple(persons), source="people.toml")


def test_the_page_is_served_on_the_port_everybody_enrolled_on() -> None:
    people = _people(
        ("Ada", ("http://localhost:9000", "http://localhost:8765")),
        ("Grace", ("http://localhost:8765",)),
    )
    assert 8765 == enrolled_port(people)


def test_people_on_different_ports_are_refused_naming_who_is_where_and_what_to_do() -> None:
    people = _people(
        ("Ada", ("http://localhost:8765",)),
        ("Grace", ("http://localhost:8765",)),
        ("Linus", ("http://localhost:9000",)),
    )
    with pytest.raises(InvalidPeopleFile) as refused:
        enrolled_port(people)
    assert (
        "people.toml: the passkeys were enrolled on different localhost ports (Ada, Grace on "
        "8765; Linus on 9000), and the signing page is served on one port (a passkey signs only "
        "on the origin it was enrolled on): enroll everyone on one port (remove the others' "
        "entries, then preflight-fsm people enroll NAME --port 8765), or give --people a file "
        "listing only the people of one port"
    ) == str(refused.value)
