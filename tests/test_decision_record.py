"""decision_record.py: the record a decision file ends with is rebuilt from the session, and
typed text cannot add, hide or imitate it."""

from __future__ import annotations

import re

import pytest

from preflight_fsm import ClarificationMachine
from preflight_fsm.attestation import attest
from preflight_fsm.decision_record import (
    decision_document,
    neutralise,
    record,
    section,
    split,
)


def headings(text: str) -> list[str]:
    """The Markdown headings "Who answered" in ``text`` (ATX ones: what a reader sees)."""
    return re.findall(r"^ {0,3}#+ *Who answered.*$", text, flags=re.MULTILINE | re.IGNORECASE)


@pytest.mark.parametrize(
    "imitation",
    [
        "## Who answered",
        "   ### who ANSWERED",
        "\uff03\uff03 Who answered",  # full-width number signs: NFKC reads them as ##
        "<h2>Who answered</h2>",
        "Who answered\n---",
        "<!-- preflight-fsm:decision-record v1 -->",
        "<!--preflight-fsm:attestation v1",
    ],
    ids=["atx", "indented", "full-width", "html", "setext", "record-marker", "attestation"],
)
def test_an_imitation_above_the_record_is_made_inert(imitation: str) -> None:
    """Neutralised text holds no heading, HTML or marker that reads as the record, and
    neutralising again changes nothing."""
    inert = neutralise(f"Intro\n{imitation}\nmore\n")
    assert [] == headings(inert)
    assert ("<h2>" not in inert, "<!--" not in inert) == (True, True)
    assert inert == neutralise(inert)


def test_text_without_an_imitation_is_left_as_written() -> None:
    """Only imitations change: a heading of another name, a comment of another kind stay."""
    text = "# Title\n\n## Context\n\n<!-- UID: 1 -->\nWho answered the phone? Nobody.\n"
    assert text == neutralise(text)


def decided() -> ClarificationMachine:
    machine = ClarificationMachine("Add OAuth login")
    machine.step({"auth_strategy": "Keycloak <!-- preflight-fsm:attestation v1"}, "cli")
    return machine


def test_typed_values_inside_the_record_cannot_open_a_comment() -> None:
    """A value holding a marker is written with &lt; inside the section and the JSON."""
    text = decision_document(decided(), "s-1")
    parts = split(text)
    assert parts is not None
    assert "<" not in parts.section.replace("<!-- preflight-fsm:decision-record v1 -->", "")
    assert "<" not in parts.statement


def test_the_record_is_rebuilt_every_time_it_is_written() -> None:
    """Writing the record again over a file that has one gives the same file."""
    text = decision_document(decided(), "s-1")
    assert text == record(text, decided(), session_id="s-1")


def test_a_session_without_a_decision_has_no_section() -> None:
    """Nothing is decided before Done: no section."""
    machine = ClarificationMachine("Add OAuth login")
    statement = attest(machine, session_id="s-0", body_digest="0" * 64)
    assert "" == section(machine, statement)
