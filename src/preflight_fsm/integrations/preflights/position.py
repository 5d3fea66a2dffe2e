"""Where a Preflights session stands on the engine, from the answers Preflights holds.

Preflights keeps a session's answers as one flat mapping (``Session.all_answers``), and hands its
LLM port an intention the engine may refuse (a placeholder such as ``TBD``, or over 2,000
characters once its MCP server appends ``optional_context``). This module turns both into an
engine position, never raising for either:

- :func:`engine_intention` picks the text the engine runs on (the intention itself whenever the
  engine takes it), and says why when it had to pick another;
- :func:`position` replays the rounds the engine already accepted (one step each, when they are
  kept: ``sessions.recorded_rounds``), then settles the current answers: it steps
  again while the question the machine now asks is already answered, so a placeholder given to
  it (``"tbd"``) ends the session as the user declining (C5 → NoPatch) instead of asking it
  forever.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from preflight_fsm.answered_by import AnsweredBy, Provenance, Source
from preflight_fsm.errors import InvalidAnswers, InvalidIntention, PreflightFsmError
from preflight_fsm.flow import Flow
from preflight_fsm.machine import ClarificationMachine
from preflight_fsm.principal import principal_problem
from preflight_fsm.turn import Turn

__all__ = [
    "STAND_IN_INTENTION",
    "EngineIntention",
    "Standing",
    "engine_intention",
    "log_position",
    "position",
]

logger = logging.getLogger("preflight_fsm.integrations.preflights")
# A library logs, its application decides where to (`preflight-fsm pf` prints warnings).
logger.addHandler(logging.NullHandler())

STAND_IN_INTENTION: Final = "Unspecified change"
"""What the engine runs on when the intention gives it nothing to read (``TBD``, blank)."""

# Characters the engine refuses in an intention (C5): controls other than tab and newline,
# format, private-use, unassigned and surrogate code points.
_REFUSED_CATEGORIES: Final = frozenset({"Cc", "Cf", "Co", "Cn", "Cs"})
_KEPT_CONTROLS: Final = frozenset("\t\n\r")


@dataclass(frozen=True, slots=True)
class EngineIntention:
    """The text the engine runs on, and why it is not the intention itself (None when it is)."""

    text: str
    note: str | None = None


@dataclass(frozen=True, slots=True)
class Standing:
    """Where a Preflights session stands: its turn, or the feedback refusing its answers (C5).

    ``turn`` is None exactly when ``feedback`` is set; ``intention`` is what the engine ran on.
    """

    intention: EngineIntention
    turn: Turn | None
    feedback: dict[str, Any] | None = None
    answers: dict[str, Any] = field(default_factory=dict)
    decided_by: tuple[tuple[str, Source], ...] = ()  # who supplied each decided value, once Done
    record: ClarificationMachine | None = None  # the session the answers replayed into

    def describe(self) -> dict[str, Any]:
        """A JSON-serialisable account, as ``debug_llm`` writes it and logs read it."""
        account: dict[str, Any] = {"engine_intention": self.intention.text}
        if self.intention.note:
            account["intention_note"] = self.intention.note
        account["answers_used"] = self.answers
        if self.feedback is not None:
            account["feedback"] = self.feedback
        if self.turn is not None:
            account.update(
                state=self.turn.state,
                missing_info=list(self.turn.missing_info),
                questions=[q.id for q in self.turn.questions],
                progress=self.turn.progress,
                patch=None if self.turn.patch is None else self.turn.patch.model_dump(mode="json"),
            )
        return account


def engine_intention(intention: object, flow: Flow) -> EngineIntention:
    """The intention if the engine takes it; else the closest text it takes, with the reason.

    Tried in order: the intention; its first ``max_intention_chars`` characters (cut at a space);
    the same without the characters C5 refuses; :data:`STAND_IN_INTENTION`. The stand-in has no
    keyword, so the session asks the category (C4) — a sensible first turn for any intention.
    """
    text = intention if isinstance(intention, str) else ""
    limit = flow.limits.max_intention_chars
    candidates: list[tuple[str, str | None]] = [(text, None)]
    if len(text.strip()) > limit:
        note = f"the intention is over {limit} characters: the engine reads the first {limit}"
        candidates.append((_clip(text.strip(), limit), note))
    cleaned = "".join(
        ch
        for ch in unicodedata.normalize("NFC", text)
        if ch in _KEPT_CONTROLS or unicodedata.category(ch) not in _REFUSED_CATEGORIES
    )
    if cleaned != text:
        note = "the intention holds characters the engine refuses (C5): they were left out"
        candidates.append((_clip(cleaned.strip(), limit), note))
    refusal = ""
    for candidate, why in candidates:
        try:
            ClarificationMachine(candidate, flow)
        except InvalidIntention as exc:
            refusal = str(exc)
            continue
        return EngineIntention(candidate, why)
    return EngineIntention(
        STAND_IN_INTENTION,
        f"the engine cannot read the intention ({refusal}): it asks the category first",
    )


def position(
    intention: object,
    answers: Mapping[str, Any],
    flow: Flow,
    rounds: Sequence[Mapping[str, Any]] = (),
    answered_by: AnsweredBy | Provenance = "api",
    sources: Sequence[AnsweredBy | Provenance] = (),
    owner: object = None,
    *,
    one_step: bool = False,
) -> Standing:
    """Replay the ``rounds`` already accepted (round i supplied by ``sources[i]``, else by
    ``answered_by``), then settle ``answers`` on them, supplied by ``answered_by`` (C9: a
    source, or a :class:`Provenance` with the principal and proof), in a session started by
    ``owner`` (a principal kept with the session; left out unless it is clean). Never raises.

    Each round is one step, as it was when it was accepted, so the turn budget (C3) and the
    conflicts of changed answers (C5) are the engine's own; without rounds the flat answers are
    replayed alone (Preflights keeps no others). Ids the flow does not know are ignored. A step is
    taken only while the question the machine asks is among the answers, so never a step
    without its pending answer (which C5 refuses as missing), and at most one per round and per
    question turn. A signed round (``answered_by`` carries a proof), or one settled with
    ``one_step``, takes at most one step: a passkey signs one step's challenge (docs/web.md).
    """
    now = Provenance.of(answered_by)
    steps_left = 1 if one_step or now.proof is not None else flow.limits.max_turns + 1
    chosen = engine_intention(intention, flow)
    relevant = _relevant(answers, flow) if isinstance(answers, Mapping) else {}
    started_by = owner if isinstance(owner, str) and principal_problem(owner) is None else None
    machine = ClarificationMachine(chosen.text, flow, started_by)
    turn = machine.turn
    try:
        for i, accepted in enumerate(rounds):
            source = Provenance.of(sources[i] if i < len(sources) else answered_by)
            turn = _step_if_answered(machine, turn, _relevant(accepted, flow), source)
    except PreflightFsmError as exc:  # a recorded round no longer replays (another flow)
        logger.warning("recorded rounds do not replay (%s): the answers are replayed alone", exc)
        machine = ClarificationMachine(chosen.text, flow, started_by)
        turn = machine.turn
    try:
        if rounds and _changes(_relevant(rounds[-1], flow), relevant) and not turn.finished:
            # An accepted answer changed while the question it answered is gone: step anyway,
            # so the engine reports the conflict (C5). A step refused only for the missing
            # pending answer changes nothing (errors never do) and is no conflict.
            try:
                turn = _step(machine, relevant, now)
                steps_left -= 1
            except InvalidAnswers as exc:
                if exc.feedback.get("issues", {}).get("invalid"):
                    raise
        for _ in range(steps_left):
            stepped = _step_if_answered(machine, turn, relevant, now)
            if stepped is turn:
                break
            turn = stepped
    except InvalidAnswers as exc:
        return Standing(chosen, None, exc.feedback, relevant)
    except PreflightFsmError as exc:  # pragma: no cover - no step is taken once finished
        feedback = {"result": "validation_failed", "action": str(exc)}
        return Standing(chosen, None, feedback, relevant)
    return Standing(chosen, turn, None, relevant, machine.decided_by, machine)


def _step_if_answered(
    machine: ClarificationMachine, turn: Turn, answers: dict[str, Any], by: Provenance
) -> Turn:
    """The next turn if the question asked now is answered; else ``turn`` itself."""
    if turn.finished or not turn.questions or turn.questions[0].id not in answers:
        return turn
    return _step(machine, answers, by)


def _step(machine: ClarificationMachine, answers: dict[str, Any], by: Provenance) -> Turn:
    return machine.step(answers, by.answered_by, principal=by.principal, proof=by.proof)


def _changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
    """True when an answer of ``before`` has another value in ``after`` (case and spaces aside)."""
    return any(
        key in after and _comparable(value) != _comparable(after[key])
        for key, value in before.items()
    )


def _comparable(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return tuple(_comparable(v) for v in value)
    return " ".join(str(value).split()).casefold() if value is not None else None


def _relevant(answers: Mapping[str, Any], flow: Flow) -> dict[str, Any]:
    known = flow.answer_ids
    return {k: _as_engine_value(v) for k, v in answers.items() if k in known}


def log_position(operation: str, where: Standing, *, level: int = logging.INFO) -> None:
    """Log, in one line, why the engine gives no patch, or runs on another text than the intention.

    The adapter never raises where Preflights' port does not; this is where the reason goes.
    """
    if not logger.isEnabledFor(level):
        return
    parts = []
    if where.intention.note:
        parts.append(where.intention.note)
    if where.feedback is not None:
        parts.append(f"answers refused: {where.feedback.get('action', where.feedback)}")
    if where.turn is not None:
        parts.append(f"the session stands at {where.turn.state}")
        if where.turn.missing_info:
            parts.append(f"waiting for {', '.join(where.turn.missing_info)}")
    logger.log(level, "%s: %s", operation, "; ".join(parts))


def _as_engine_value(value: Any) -> Any:
    # Preflights holds multiple choices as tuples; the engine takes lists or tuples of str (C5).
    return list(value) if isinstance(value, tuple) else value


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = text[:limit]
    cut = max((m.start() for m in re.finditer(r"\s", head)), default=0)
    return (head[:cut] if cut > limit // 2 else head).rstrip()
