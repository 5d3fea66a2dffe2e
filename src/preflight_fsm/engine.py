"""One ``transitions`` machine per flow, built once from the table and shared by every session,
and the step loop (C1, C3).

A session is a plain object (``session.py``) that the shared machine steps without registering
it, so nothing grows with the number of sessions. Every transition of every session runs through
this machine.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from preflight_fsm.answered_by import SIGNED, SOURCES, AnsweredBy, check_provenance
from preflight_fsm.answers import AnswerRules
from preflight_fsm.errors import SessionFinished
from preflight_fsm.flow_data import (
    OTHER_OPTION,
    OTHER_SUFFIX,
    CategoryData,
    FlowData,
    Hint,
    other_text_question,
)
from preflight_fsm.guards import EFFECTS, GUARDS, pending_key
from preflight_fsm.keywords import KeywordIndex
from preflight_fsm.principal import check_principal
from preflight_fsm.session import Session
from preflight_fsm.states import (
    DONE,
    NEED_CATEGORY,
    QUESTION_STATES,
    STATES,
    TERMINAL_STATES,
    AskingCategory,
    AskingField,
    AwaitingText,
    Position,
)
from preflight_fsm.table import Edge, edges_for
from preflight_fsm.text import match_key
from preflight_fsm.trigger import SharedMachine
from preflight_fsm.turn_data import QuestionData

if TYPE_CHECKING:
    from preflight_fsm.flow import Flow
    from preflight_fsm.proof import PasskeyProof
    from preflight_fsm.turn import Turn

__all__ = ["Engine", "engine_for"]

_UNSIGNED = SOURCES - {SIGNED}  # the sources a step takes without a proof: one set lookup


class _Recorder:
    """A row's ``before`` callback: its effect, then the row added to the session's trace."""

    __slots__ = ("edge", "effect")

    def __init__(self, edge: Edge) -> None:
        self.edge = edge
        self.effect = EFFECTS[edge.effect]

    def __call__(self, s: Session) -> None:
        self.effect(s)
        s.trace = (*s.trace, (s.turn, self.edge))
        s.declined = False


class Engine:
    """Everything compiled once per flow, from its plain form: the shared machine, the rules,
    the static questions. The flow's model (:attr:`flow`) is built only when asked for."""

    def __init__(self, flow: FlowData) -> None:
        self.flow_data = flow
        self._model: Flow | None = None
        self.rules = AnswerRules(flow)
        self.keywords = KeywordIndex({c.name: c.keywords for c in flow.categories})
        self.category_qid = flow.category_question.id
        self.category_companion = self.category_qid + OTHER_SUFFIX
        self.categories: dict[str, CategoryData] = {c.name: c for c in flow.categories}
        self.other_category_name = flow.other_category.name
        # C7: the hint of each position's category, the Other category's while none is known.
        other_hint = flow.other_category.hint
        self.hints: dict[str | None, Hint] = dict.fromkeys(
            (None, self.other_category_name), other_hint
        )
        self.hints.update((c.name, c.hint) for c in flow.categories)
        self.category_of_primary = {c.question.id: c.name for c in flow.categories}
        # What each position resolves, by its category (None: the category itself): the choice
        # question, and the free text owed for its "Other (specify)" (guards.py).
        self.choice_of: dict[str | None, str] = {None: self.category_qid}
        self.choice_of.update((c.name, c.question.id) for c in flow.categories)
        self.text_of = {category: qid + OTHER_SUFFIX for category, qid in self.choice_of.items()}
        self._category_by_name = {match_key(name): name for name in self.categories}

        self.edges = edges_for(flow)
        self.machine = SharedMachine(
            model=None,
            states=list(STATES),
            initial=NEED_CATEGORY,
            auto_transitions=False,
            name=f"clarification[{flow.name}]",
        )
        for edge in self.edges:
            self.machine.add_transition(
                edge.trigger,
                edge.source,
                edge.dest,
                conditions=[GUARDS[name] for name in edge.guards],
                before=[_Recorder(edge)],
            )
        self._start = self.machine.events.get("start")
        self._answer = self.machine.events["answer"]
        self._questions = self._build_questions()
        # Each question's id by position, and the asked ids after a position opens a turn, by
        # the ids asked before: sessions on one path share one tuple (bounded: the flow's
        # paths are few).
        self._question_ids = {
            where: tuple(q.id for q in questions) for where, questions in self._questions.items()
        }
        self._asked_after: dict[tuple[tuple[str, ...], tuple[str, ...]], tuple[str, ...]] = {}
        self.turns: dict[tuple[object, ...], Turn] = {}  # turn.py's, by every field's value

    @property
    def flow(self) -> Flow:
        """The flow's model (the public type, C8), built on first ask: running sessions never
        needs it, so a command on the default flow builds none (issue 32)."""
        model = self._model
        if model is None:
            from preflight_fsm.flow import flow_model

            model = self._model = flow_model(self.flow_data)
        return model

    # -- C6: naming a category ----------------------------------------------------------------

    def category_named(self, text: str) -> str | None:
        """The known category ``text`` names: by its name, or by exactly one's keywords (C6)."""
        by_name = self._category_by_name.get(match_key(text))
        return by_name if by_name is not None else self.keywords.only_category(text)

    # -- C2: the questions of each position, built once -----------------------------------------

    def _build_questions(self) -> dict[tuple[type, str | None], tuple[QuestionData, ...]]:
        flow = self.flow_data
        other = OTHER_OPTION  # C2: the canonical value; a person sees flow.other_option (cli)

        def choice(qid: str, text: str, options: tuple[str, ...]) -> tuple[QuestionData, ...]:
            return (
                QuestionData(
                    id=qid, type="single_choice", question=text, options=(*options, other)
                ),
                QuestionData(
                    id=qid + OTHER_SUFFIX,
                    type="free_text",
                    question=other_text_question(text),
                    optional=True,
                    depends_on_question_id=qid,
                    depends_on_value=other,
                ),
            )

        def alone(qid: str, text: str) -> tuple[QuestionData, ...]:
            return (
                QuestionData(
                    id=qid + OTHER_SUFFIX, type="free_text", question=other_text_question(text)
                ),
            )

        cq = flow.category_question
        table: dict[tuple[type, str | None], tuple[QuestionData, ...]] = {
            (AskingCategory, None): choice(cq.id, cq.text, tuple(self.categories)),
            (AwaitingText, None): alone(cq.id, cq.text),
        }
        for c in flow.categories:
            q = c.question
            table[(AskingField, c.name)] = choice(q.id, q.text, q.options)
            table[(AwaitingText, c.name)] = alone(q.id, q.text)
        return table

    def questions(self, position: Position) -> tuple[QuestionData, ...]:
        """What a position asks: nothing once the session has ended."""
        return self._questions.get((type(position), position.category), ())

    # -- running sessions -------------------------------------------------------------------

    def begin(self, intention: object, owner: str | None = None) -> Session:
        """A new session started by ``owner`` (a principal, None: unauthenticated): the
        intention and the owner checked (C5), the shortcut tried (C4), turn 1 opened."""
        intention = self.rules.check_intention(intention)
        s = Session(self, intention, None if owner is None else check_principal(owner, "owner"))
        if self._start is not None:
            self._start.trigger(s, s)
        self._open_turn(s)
        return s

    def step(
        self,
        s: Session,
        answers: Mapping[str, Any] | object,
        answered_by: AnsweredBy = "api",
        principal: str | None = None,
        proof: PasskeyProof | None = None,
    ) -> Session:
        """The session after one step, its answers supplied by ``answered_by`` through
        ``principal`` with ``proof`` (recorded inputs, C9); ``s`` itself is never changed (C5:
        errors change nothing)."""
        if (
            principal is not None
            or proof is not None
            or type(answered_by) is not str
            or answered_by not in _UNSIGNED
        ):
            check_provenance(answered_by, principal, proof)  # InvalidAnswers naming the field
        if s.position.state in TERMINAL_STATES:
            how = "with a decision" if s.position.state == DONE else "without a decision"
            raise SessionFinished(
                f"the session already ended {how}; start a new session to ask again"
            )
        recorded, declined, given = self.rules.merge(
            s.answers, pending_key(s), answers, s.named_category
        )
        work = s.stepped(recorded, declined, given, answered_by, principal, proof)
        answer = self._answer
        # Fire `answer` until the lock refuses (the state's question is not answered yet) or the
        # session has ended; each pass moves to another state, so this ends within four passes.
        while work.position.state not in TERMINAL_STATES and answer.trigger(work, work):
            pass
        work.declined = False
        if work.position.state in QUESTION_STATES:
            self._open_turn(work)
        return work

    def _open_turn(self, s: Session) -> None:
        s.turn += 1
        position = s.position
        ids = self._question_ids.get((type(position), position.category), ())
        key = (s.asked, ids)
        asked = self._asked_after.get(key)
        if asked is None:
            grown = (*s.asked, *(qid for qid in ids if qid not in s.asked))
            asked = self._asked_after.setdefault(key, grown)
        s.asked = asked


_ENGINES: dict[str, Engine] = {}
_ENGINES_LOCK = threading.Lock()


def engine_for(flow: Flow | FlowData) -> Engine:
    """The one engine (and shared machine) of ``flow`` (a model or its plain form), built on
    first use: one per content (its questions show their wording, which the replay fingerprint
    leaves out)."""
    model: Flow | None = None
    if isinstance(flow, FlowData):
        data = flow
    else:
        data, model = flow.plain, flow
    key = data.content_fingerprint
    engine = _ENGINES.get(key)
    if engine is None:
        with _ENGINES_LOCK:
            engine = _ENGINES.get(key)
            if engine is None:
                engine = _ENGINES[key] = Engine(data)
    if model is not None and engine._model is None:  # the model given: the one it answers with
        engine._model = model
    return engine
