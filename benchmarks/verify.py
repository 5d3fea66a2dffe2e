"""Verification figures (issue 28): one signed turn's verification, one decision file, and
`preflight-fsm verify` over many ADRs in one process.

The decisions are real: two steps each, both confirmed with a software passkey (an EC P-256 key,
``tests/software_authenticator.py``) over their own challenges, written as ``show --decision``
writes them. Figures are CPU time: thread CPU for the in-process ones (medians over rounds,
``timing.py``), the process's own user + system time for the command.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.software_authenticator import SoftwareAuthenticator

from benchmarks.report import Figure
from benchmarks.timing import median_per_call
from preflight_fsm import ClarificationMachine, default_flow
from preflight_fsm.decision_record import decision_document
from preflight_fsm.flow_registry import FlowRegistry
from preflight_fsm.passkeys import proof_of, signing_challenge, step_challenge, verify_assertion
from preflight_fsm.people import People
from preflight_fsm.verify import verify_text

__all__ = ["verify_figures"]

US = 1e6
ADA = SoftwareAuthenticator(seed=1)
PEOPLE = People((ADA.person("Ada Lovelace"),))


class Mismatch(AssertionError):
    """A benchmark measured something other than the behaviour it claims to measure."""


def signed_decision(session_id: str) -> str:
    """A two-step decision, each step signed with the passkey, as a decision file."""
    machine = ClarificationMachine("Improve the feedback form", owner="ada")
    for answers in ({"change_category": "Database"}, {"db_type": "MySQL"}):
        proof = proof_of(ADA.sign(step_challenge(machine, session_id, answers)), PEOPLE)
        machine.step(answers, "user_passkey", principal="ada", proof=proof)
    return decision_document(machine, session_id)


def verify_figures(inner: int, rounds: int, files: int) -> list[Figure]:
    flows = FlowRegistry(default_flow())
    text = signed_decision("bench-0")
    verdict = verify_text(text, path="adr.md", flows=flows, people=lambda: PEOPLE, require="person")
    if verdict.outcome != "verified":
        raise Mismatch(f"the benchmark's decision does not verify: {verdict}")

    answers = {"change_category": "Database"}
    challenge = signing_challenge("bench-0", 1, answers, default_flow().fingerprint)
    proof = proof_of(ADA.sign(challenge), PEOPLE)
    if verify_assertion(PEOPLE, proof, challenge) != "Ada Lovelace":
        raise Mismatch("the signed turn does not verify")

    def one_turn() -> object:
        return verify_assertion(
            PEOPLE, proof, signing_challenge("bench-0", 1, answers, default_flow().fingerprint)
        )

    def one_file() -> object:
        return verify_text(
            text, path="adr.md", flows=flows, people=lambda: PEOPLE, require="person"
        )

    turn = median_per_call(one_turn, inner=inner, rounds=rounds)
    file = median_per_call(one_file, inner=max(1, inner // 4), rounds=rounds)
    command = _command(files)
    return [
        Figure(
            "verify.signed_turn",
            turn * US,
            "µs",
            note="one user_passkey step: its challenge, then verify_assertion (ES256, py_webauthn)",
        ),
        Figure(
            "verify.decision_file",
            file * US,
            "µs",
            note="one ADR of 2 signed steps: split, parse, replay, rebuild, 2 signatures, policy",
        ),
        Figure(
            f"verify.command.{files}_adrs",
            command,
            "s",
            note=f"`preflight-fsm verify --require person` over {files:,} signed ADRs: process CPU",
        ),
    ]


def _command(files: int) -> float:
    """CPU seconds of one `preflight-fsm verify` process over ``files`` signed ADRs."""
    command = Path(sys.executable).parent / "preflight-fsm"
    with tempfile.TemporaryDirectory(prefix="preflight-fsm-verify-") as tmp:
        folder = Path(tmp)
        people = folder / "people.toml"
        people.write_text(ADA.person("Ada Lovelace").as_toml(), encoding="utf-8")
        paths = []
        for i in range(files):
            path = folder / f"adr-{i:04d}.md"
            path.write_text(signed_decision(f"bench-{i}"), encoding="utf-8")
            paths.append(str(path))
        argv = [str(command), "verify", "--require", "person", "--people", str(people), *paths]
        with tempfile.TemporaryFile() as out:
            process = subprocess.Popen(argv, cwd=tmp, stdout=out, stderr=subprocess.STDOUT)
            _, status, usage = os.wait4(process.pid, 0)
            out.seek(0)
            lines = out.read().decode().splitlines()
        code = os.waitstatus_to_exitcode(status)
        if code != 0 or len(lines) != files or not all(x.startswith("verified:") for x in lines):
            raise Mismatch(f"verify exited {code}: {lines[:3]}")
        return usage.ru_utime + usage.ru_stime
