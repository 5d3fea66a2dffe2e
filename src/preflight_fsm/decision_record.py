"""The decision record a decision file ends with: the "## Who answered" section and the
attestation (``attestation.py``), rebuilt from the session's record every time it is written.

A decision file (an ADR or task Preflights wrote, or ``preflight-fsm show --decision``) is::

    <the text above the record>                 its SHA-256 is the statement's subject digest

    <!-- preflight-fsm:decision-record v1 -->
    ## Who answered
    ...                                         rebuilt from the attested inputs, byte for byte
    <!-- preflight-fsm:attestation v1
    {"_type":"https://in-toto.io/Statement/v1",...}
    -->

The record is found from the end of the file. Typed text (an intention, an "Other (specify)"
text) may land in the text above it, so before the record is written that text is
neutralised: a line that imitates the section's heading (``## Who answered`` in any case or
width, as a setext heading or HTML) or either marker loses what would make it one, and
``preflight-fsm verify`` refuses a file whose text above the record still holds an imitation.
Inside the record, typed values are written with ``<`` as ``&lt;``: they cannot open a comment.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Final

from preflight_fsm.answered_by import MEANINGS, SIGNED
from preflight_fsm.attestation import Statement, attest, serialise
from preflight_fsm.machine import ClarificationMachine
from preflight_fsm.text import match_key

__all__ = [
    "ATTESTATION_OPEN",
    "HEADING",
    "MAX_DECISION_FILE_BYTES",
    "RECORD_MARKER",
    "DecisionFile",
    "compose",
    "decision_document",
    "head_of",
    "neutralise",
    "record",
    "section",
    "split",
]

MAX_DECISION_FILE_BYTES: Final = 2 * 1024 * 1024
"""A larger decision file is refused unread."""

HEADING: Final = "## Who answered"
RECORD_MARKER: Final = "<!-- preflight-fsm:decision-record v1 -->"
ATTESTATION_OPEN: Final = "<!-- preflight-fsm:attestation v1"
_CLOSE: Final = "\n-->\n"
_LEGEND: Final = (
    "Who supplied each decided value, as preflight-fsm recorded it (`answered_by`: "
    + "; ".join(f"{source} = {meaning}" for source, meaning in MEANINGS.items())
    + "; intention = the intention's own words). `preflight-fsm verify` rebuilds this section "
    "from the attestation below and checks every passkey signature."
)
_IMITATED: Final = match_key("Who answered")
_MARKERS: Final = re.compile(r"<!--(\s*)preflight-fsm", re.IGNORECASE)
_ATX: Final = re.compile(r"^ {0,3}#")
_SETEXT: Final = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")


@dataclass(frozen=True, slots=True)
class DecisionFile:
    """A decision file cut in three: the text above the record, the section, the statement."""

    head: str
    section: str
    statement: str

    @property
    def head_digest(self) -> str:
        """The SHA-256 of the text above the record: the statement's subject digest."""
        return hashlib.sha256(self.head.encode("utf-8")).hexdigest()


def section(machine: ClarificationMachine, statement: Statement) -> str:
    """The "## Who answered" section of a Done session attested by ``statement`` (whose
    ``prefilled`` ids a front end filled in from the intention, decided by it), ending with a
    blank line; "" before Done. Its last line is the statement's SHA-256: the section a reader
    sees names the attestation below it, character for character."""
    patch = machine.turn.patch
    if patch is None:
        return ""
    prefilled = statement.predicate.prefilled
    values = {"Category": patch.category, **dict(patch.fields)}
    qids = _question_ids(machine, patch.category)
    decided = ", ".join(f"{name} = {_inline(value)}" for name, value in values.items())
    lines = [RECORD_MARKER, HEADING, "", _LEGEND, "", f"The record decides: {decided}.", ""]
    for name, step in machine.deciding_steps:
        if step is None or qids.get(name) in prefilled:
            lines.append(f"- {name}: intention")
            continue
        source = machine.answered_by[step]
        who = []
        proof = machine.proofs[step]
        if source == SIGNED and proof is not None:
            who.append(f"signed by {_inline(proof.person)}")
        principal = machine.principals[step]
        if principal is not None:
            who.append(f"as {_inline(principal)}")
        lines.append(f"- {name}: {source}" + (f" ({' '.join(who)})" if who else ""))
    if machine.owner is not None:
        lines += ["", f"Started by {_inline(machine.owner)}."]
    attested = hashlib.sha256(serialise(statement).encode("utf-8")).hexdigest()
    lines += ["", f"Attestation (below): sha256 `{attested}`."]
    return "\n".join(lines) + "\n\n"


def compose(head: str, record_section: str, statement: Statement) -> str:
    """A decision file's text: ``head`` (neutralised by the caller), the section, the
    statement (:func:`split` cuts it back)."""
    return f"{head}\n{record_section}{ATTESTATION_OPEN}\n{serialise(statement)}{_CLOSE}"


def split(text: str) -> DecisionFile | None:
    """The three parts of a decision file, found from its end; None when it ends with no
    record."""
    if not text.endswith(_CLOSE):
        return None
    opening = text.rfind(f"\n{ATTESTATION_OPEN}\n")
    if opening < 0:
        return None
    statement = text[opening + len(ATTESTATION_OPEN) + 2 : -len(_CLOSE)]
    start = text.rfind(f"\n\n{RECORD_MARKER}\n", 0, opening + 1)
    if start < 0 or "\n" in statement:
        return None
    return DecisionFile(text[: start + 1], text[start + 2 : opening + 1], statement)


def head_of(text: str) -> str:
    """The text above a file's record (the whole text when it has none), neutralised and
    ending with one newline: what a new record is written below."""
    parts = split(text)
    head = text if parts is None else parts.head
    return neutralise(head.rstrip("\n") + "\n")


def neutralise(text: str) -> str:
    """``text`` with every imitation of the record made inert (this module's docstring);
    unchanged when it holds none, and a fixed point."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if _MARKERS.search(line):
            line = _MARKERS.sub(r"&lt;!--\1preflight-fsm", line)
        if _IMITATED in match_key(line):
            line = line.replace("<", "&lt;")
            if _ATX.match(line):
                line = "\\" + line.lstrip(" ")
            following = lines[i + 1] if i + 1 < len(lines) else ""
            if _SETEXT.match(following):
                lines[i + 1] = "\\" + following.lstrip(" ")
        lines[i] = line
    return "\n".join(lines)


def record(
    text: str,
    machine: ClarificationMachine,
    *,
    session_id: str,
    prefilled: Collection[str] = (),
) -> str:
    """``text`` (a decision file, with or without a record) with its record rebuilt from
    ``machine``'s session (stored as ``session_id``): the text above neutralised, then the
    section and the statement."""
    head = head_of(text)
    statement = attest(
        machine,
        session_id=session_id,
        body_digest=hashlib.sha256(head.encode("utf-8")).hexdigest(),
        prefilled=tuple(prefilled),
    )
    return compose(head, section(machine, statement), statement)


def decision_document(machine: ClarificationMachine, session_id: str) -> str:
    """A Done session's decision as a Markdown file (``show --decision``): its category, the
    intention quoted, each decided value, then the decision record; "" before Done."""
    patch = machine.turn.patch
    if patch is None:
        return ""
    quoted = "\n".join(f"> {line}".rstrip() for line in machine.intention.split("\n"))
    values = "\n".join(f"- {name}: {value}" for name, value in patch.fields)
    head = f"# Decision: {patch.category}\n\n{quoted}\n\n{values}\n"
    return record(head, machine, session_id=session_id)


def _question_ids(machine: ClarificationMachine, category: str) -> dict[str, str]:
    """Each decided value's name -> the question id that asks it."""
    flow = machine.flow
    qids = {"Category": flow.category_question.id}
    qids[flow.other_category.field] = flow.other_category.description_id
    for candidate in flow.categories:
        if candidate.name == category:
            qids[candidate.question.field] = candidate.question.id
            qids.update((s.field, s.id) for s in candidate.secondary)
    return qids


def _inline(text: str) -> str:
    return text.replace("<", "&lt;")
