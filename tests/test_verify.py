"""verify.py and `preflight-fsm verify`: decision files checked offline, attacked as an agent
without the person's authenticator would attack them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from preflight_fsm import ClarificationMachine, default_flow
from preflight_fsm.attestation import Statement, parse_statement, replayed
from preflight_fsm.cli import app
from preflight_fsm.decision_record import compose, decision_document, section, split
from preflight_fsm.flow_registry import FlowRegistry
from preflight_fsm.passkeys import proof_of, step_challenge
from preflight_fsm.people import People
from preflight_fsm.verify import EXIT_CODES, Requirement, Verdict, verify_text
from software_authenticator import SoftwareAuthenticator

ADA = SoftwareAuthenticator(seed=1)
PEOPLE = People((ADA.person("Ada Lovelace"),))
FLOWS = FlowRegistry(default_flow())


def signed_session(session_id: str, field_answer: str = "MySQL") -> ClarificationMachine:
    """Two steps, each confirmed with Ada's passkey over its own challenge."""
    machine = ClarificationMachine("Improve the feedback form", owner="ada")
    for answers in ({"change_category": "Database"}, {"db_type": field_answer}):
        proof = proof_of(ADA.sign(step_challenge(machine, session_id, answers)), PEOPLE)
        machine.step(answers, "user_passkey", principal="ada", proof=proof)
    return machine


def signed_file(session_id: str = "s-1", field_answer: str = "MySQL") -> str:
    return decision_document(signed_session(session_id, field_answer), session_id)


def check(text: str, require: Requirement = "any", people: People = PEOPLE) -> Verdict:
    return verify_text(text, path="adr.md", flows=FLOWS, people=lambda: people, require=require)


def forged(text: str, change: Callable[[dict[str, Any]], None]) -> str:
    """``text`` with its statement's predicate changed by ``change`` and everything that can be
    recomputed recomputed, as a forger holding this package would (section, canonical JSON)."""
    parts = split(text)
    assert parts is not None
    data = json.loads(parts.statement)
    change(data["predicate"])
    statement = Statement.model_validate(data)
    rebuilt = section(replayed(statement, FLOWS), statement)
    return compose(parts.head, rebuilt, statement)


def text_with_statement(head: str, record_section: str, statement: str) -> str:
    """A decision file put together by hand around ``statement`` (its JSON as given)."""
    return f"{head}\n{record_section}<!-- preflight-fsm:attestation v1\n{statement}\n-->\n"


def test_a_signed_decision_verifies_under_the_strictest_policy() -> None:
    """Every step signed by a listed person: verified under --require person, signer named."""
    verdict = check(signed_file(), "person")
    assert ("verified", ("Ada Lovelace",)) == (verdict.outcome, verdict.signers)


def test_a_file_without_a_record_is_unsigned() -> None:
    """An ADR written by hand, without a record, is unsigned."""
    assert "unsigned" == check("# ADR\n\nWe use MySQL.\n").outcome


@pytest.mark.parametrize(
    "edit",
    [
        lambda t: t.replace("- Type: MySQL", "- Type: MySQM", 1),
        lambda t: t.replace("- Category: user_passkey", "- Category: user_form", 1),
        lambda t: t.replace('"principal":"ada"', '"principal":"bob"', 1),
        lambda t: t.replace("# Decision", "# Decisiom", 1),
    ],
    ids=["value-above", "section", "attestation", "title"],
)
def test_one_character_changed_anywhere_is_tampering(edit: Callable[[str], str]) -> None:
    """Above the record, in the section or in the attestation: refused as tampered."""
    text = signed_file()
    changed = edit(text)
    assert text != changed
    assert "tampered" == check(changed).outcome


def test_an_assertion_moved_from_another_session_is_tampering() -> None:
    """Ada's signature over session s-2's first step, moved into session s-1, is refused."""
    other = json.loads(split(signed_file("s-2")).statement)  # type: ignore[union-attr]

    def swap(predicate: dict[str, Any]) -> None:
        predicate["steps"][0]["proof"] = other["predicate"]["steps"][0]["proof"]

    verdict = check(forged(signed_file("s-1"), swap))
    assert ("tampered", True) == (verdict.outcome, "another session" in verdict.reason)


def test_an_assertion_moved_from_another_turn_is_tampering() -> None:
    """The first step's signature presented for the second step is refused."""

    def swap(predicate: dict[str, Any]) -> None:
        predicate["steps"][1]["proof"] = predicate["steps"][0]["proof"]

    assert "tampered" == check(forged(signed_file(), swap)).outcome


def test_an_assertion_over_other_answers_is_tampering() -> None:
    """A signature over MySQL does not sign MongoDB: the answers are in the challenge."""

    def change(predicate: dict[str, Any]) -> None:
        predicate["steps"][1]["answers"]["db_type"] = "MongoDB"

    assert "tampered" == check(forged(signed_file(), change)).outcome


def test_a_credential_not_in_the_people_file_is_an_unknown_signer() -> None:
    """Signed by a passkey nobody enrolled: refused as an unknown signer."""
    stranger = People((SoftwareAuthenticator(seed=7).person("Ada Lovelace"),))
    assert "unknown_signer" == check(signed_file(), people=stranger).outcome


def test_a_people_file_edited_after_signing_refuses_the_signature() -> None:
    """Ada's public key replaced by another in the people file: her signature no longer
    verifies with what the file lists."""
    other_key = SoftwareAuthenticator(seed=8).person("x").public_key
    edited = People((replace(ADA.person("Ada Lovelace"), public_key=other_key),))
    assert "unknown_signer" == check(signed_file(), people=edited).outcome


def test_an_unsigned_channel_does_not_meet_the_person_policy() -> None:
    """A decision answered at the command line verifies under any, not under user or person."""
    machine = ClarificationMachine("Add OAuth login")
    machine.step({"auth_strategy": "OAuth"}, "cli")
    text = decision_document(machine, "s-3")
    assert ["verified", "policy_not_met", "policy_not_met"] == [
        check(text, level).outcome for level in ("any", "user", "person")
    ]


def test_a_record_claiming_a_passkey_without_a_proof_does_not_replay() -> None:
    """A forger relabels an agent step user_passkey: the engine refuses a signed step without
    its proof, so the record is tampered."""
    machine = ClarificationMachine("Add OAuth login")
    machine.step({"auth_strategy": "OAuth"}, "agent")
    parts = split(decision_document(machine, "s-4"))
    assert parts is not None
    statement = parts.statement.replace('"answered_by":"agent"', '"answered_by":"user_passkey"')
    parse_statement(statement)  # well-formed: only the replay can tell
    assert (
        "tampered"
        == check(
            parts.head
            + "\n"
            + parts.section
            + "<!-- preflight-fsm:attestation v1\n"
            + statement
            + "\n-->\n"
        ).outcome
    )


def test_an_imitation_written_above_a_recomputed_record_is_tampering() -> None:
    """A forger who adds a Who answered heading above the record and recomputes its digest is
    refused: the text above a record holds no imitation."""
    text = signed_file()
    parts = split(text)
    assert parts is not None
    head = parts.head + "\n## Who answered\n\n- Type: user_passkey\n"
    statement = parse_statement(parts.statement)
    subject = statement.subject[0].model_copy(
        update={"digest": statement.subject[0].digest.model_copy(
            update={"sha256": hashlib.sha256(head.encode()).hexdigest()})}
    )  # fmt: skip
    moved = statement.model_copy(update={"subject": (subject,)})
    assert "tampered" == check(compose(head, parts.section, moved)).outcome


def test_the_command_exits_with_the_most_severe_outcome_and_lists_each_file(
    tmp_path: Path,
) -> None:
    """`verify --json` reports every file; the exit code is the most severe one's."""
    (tmp_path / "people.toml").write_text(ADA.person("Ada Lovelace").as_toml(), encoding="utf-8")
    (tmp_path / "good.md").write_text(signed_file(), encoding="utf-8")
    (tmp_path / "plain.md").write_text("# ADR\n", encoding="utf-8")
    (tmp_path / "bad.md").write_text(signed_file().replace("MySQL", "MySQM", 1), encoding="utf-8")
    paths = [str(tmp_path / name) for name in ("good.md", "plain.md", "bad.md")]
    result = CliRunner().invoke(
        app, ["verify", *paths, "--people", str(tmp_path / "people.toml"), "--json"]
    )
    report = json.loads(result.stdout)
    assert EXIT_CODES["tampered"] == result.exit_code == report["exit_code"]
    assert ["verified", "unsigned", "tampered"] == [f["outcome"] for f in report["files"]]


def test_the_command_prints_one_line_per_file(tmp_path: Path) -> None:
    """Text output: the outcome, the path and a one-line reason for each file."""
    (tmp_path / "plain.md").write_text("# ADR\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["verify", str(tmp_path / "plain.md")])
    assert (EXIT_CODES["unsigned"], 1) == (result.exit_code, len(result.stdout.splitlines()))
    assert result.stdout.startswith("unsigned: ")


def test_every_outcome_has_its_own_exit_code() -> None:
    """Distinct documented codes, none of them usage (2) or an internal error (1)."""
    codes = list(EXIT_CODES.values())
    assert len(codes) == len(set(codes))
    assert set() == {1, 2} & set(codes)


SIGNED_TEXT = signed_file("s-prop")


@settings(max_examples=150, deadline=None)
@given(st.integers(min_value=0, max_value=len(SIGNED_TEXT) - 1), st.sampled_from("aZ0 #<-\n\u00e9"))
def test_no_one_character_change_anywhere_verifies(index: int, char: str) -> None:
    """Any single character of a signed decision file replaced by another is refused, wherever
    it is: above the record, in the section, in the attestation, in a signature."""
    if SIGNED_TEXT[index] == char:
        return
    changed = SIGNED_TEXT[:index] + char + SIGNED_TEXT[index + 1 :]
    assert "verified" != check(changed, "person").outcome


BEFORE_D261 = Path(__file__).with_name("fixtures") / "before_d261"


def test_a_decision_signed_before_the_replay_fingerprint_still_verifies() -> None:
    """D261: a record naming the flow by its old whole-content fingerprint, its steps signed over
    it, verifies under the strictest policy."""
    verdict = check((BEFORE_D261 / "signed.md").read_text(encoding="utf-8"), "person")
    assert ("verified", ("Ada Lovelace",)) == (verdict.outcome, verdict.signers)


def test_a_session_signed_before_the_change_and_finished_after_it_verifies() -> None:
    """D261: a sealed session whose first step was signed over the old fingerprint restores,
    takes a second step signed over the new one, and its record verifies both signatures."""
    from preflight_fsm.snapshot.seal import SealKeys

    saved = (BEFORE_D261 / "half_signed.json").read_text(encoding="utf-8")
    machine = ClarificationMachine.from_snapshot(saved, FLOWS, keys=SealKeys.from_text("k" * 40))
    answers = {"db_type": "MySQL"}
    proof = proof_of(ADA.sign(step_challenge(machine, "s-2", answers)), PEOPLE)
    machine.step(answers, "user_passkey", principal="ada", proof=proof)
    verdict = check(decision_document(machine, "s-2"), "person")
    assert ("verified", ("Ada Lovelace",)) == (verdict.outcome, verdict.signers)
