"""The clarification state machine: states, named pure guards, ``step`` and ``Turn`` (C1-C9).

One ``transitions.Machine`` is built per flow and shared by every session. A session is a plain
object (:class:`_Session`) that the shared machine steps without registering it, so nothing grows
with the number of sessions. :class:`ClarificationMachine` is the public face of one session.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Literal, TypeVar

from pydantic import BaseModel
from transitions import Machine
from transitions.core import Condition, Event, EventData, Transition

from preflight_fsm import snapshot as _snap
from preflight_fsm.answers import AnswerRules
from preflight_fsm.errors import (
    InvalidFlow,
    InvalidIntention,
    InvalidSnapshot,
    SessionFinished,
    SnapshotFlowMismatch,
)
from preflight_fsm.flow import OTHER_SUFFIX, Category, Flow, Hint, default_flow
from preflight_fsm.keywords import KeywordIndex
from preflight_fsm.patch import DecisionPatch, progress_of
from preflight_fsm.turn import Question, StateName, Turn

__all__ = [
    "DONE",
    "NEED_CATEGORY",
    "NEED_OTHER",
    "NEED_PRIMARY_FIELD",
    "NO_PATCH",
    "QUESTION_STATES",
    "STATES",
    "TERMINAL_STATES",
    "ClarificationMachine",
    "Edge",
    "machine_definition",
    "transition_table",
]

NEED_CATEGORY: Final = "NeedCategory"
NEED_PRIMARY_FIELD: Final = "NeedPrimaryField"
NEED_OTHER: Final = "NeedOther"
DONE: Final = "Done"
NO_PATCH: Final = "NoPatch"
STATES: tuple[StateName, ...] = (NEED_CATEGORY, NEED_PRIMARY_FIELD, NEED_OTHER, DONE, NO_PATCH)
QUESTION_STATES = frozenset({NEED_CATEGORY, NEED_PRIMARY_FIELD, NEED_OTHER})
TERMINAL_STATES = frozenset({DONE, NO_PATCH})
_STATE_BY_NAME: dict[str, StateName] = {name: name for name in STATES}

# transitions logs several lines per transition at INFO; keep it quiet in the serving path.
logging.getLogger("transitions").setLevel(logging.WARNING)


# -- transitions without its per-call overhead ----------------------------------------------------
# transitions' own extension points (Machine.event_cls / transition_cls, Transition.condition_cls):
# the same machine, the same transitions tried in the same order with the same callbacks, minus
# what a step paid for nothing: a functools.partial and a queue check per trigger, a debug/info log
# call per callback list, and name lookups of callables. Every hook transitions offers still runs
# when set (prepare, before/after, enter/exit, machine-wide callbacks, on_final); a machine with a
# queue, `on_exception`, `finalize_event` or `send_event` takes the library's own path unchanged.


class _Condition(Condition):
    """A guard: called directly when it is a callable, compared ``== target`` like transitions."""

    def check(self, event_data: EventData) -> bool:
        if isinstance(self.func, str) or event_data.machine.send_event:
            return bool(super().check(event_data))
        return bool(self.func(*event_data.args, **event_data.kwargs) == self.target)


class _Transition(Transition):
    """Transition.execute without logging; empty callback lists are skipped, not iterated."""

    condition_cls = _Condition

    def execute(self, event_data: EventData) -> bool:
        machine = event_data.machine
        if self.prepare:
            _callbacks(machine, self.prepare, event_data)
        if machine.send_event:
            for condition in self.conditions:
                if not condition.check(event_data):
                    return False
        else:
            # Condition.check inlined for plain callables: the guard's own call is most of it.
            args, kwargs = event_data.args, event_data.kwargs
            for condition in self.conditions:
                func = condition.func
                if type(condition) is _Condition and not isinstance(func, str):
                    passed = func(*args, **kwargs) == condition.target
                    if not passed:
                        return False
                elif not condition.check(event_data):
                    return False
        if machine.before_state_change:
            _callbacks(machine, machine.before_state_change, event_data)
        if self.before:
            _callbacks(machine, self.before, event_data)
        if self.dest:  # None is an internal transition: no state change
            self._change_state(event_data)
        if self.after:
            _callbacks(machine, self.after, event_data)
        if machine.after_state_change:
            _callbacks(machine, machine.after_state_change, event_data)
        return True

    def _change_state(self, event_data: EventData) -> None:
        machine = event_data.machine
        states = machine.states
        source = states.get(self.source) or machine.get_state(self.source)
        if source.on_exit:
            source.exit(event_data)
        name = self.dest
        assert name is not None  # execute() changes state only when dest is set
        dest = states.get(name) or machine.get_state(name)
        setattr(event_data.model, machine.model_attribute, dest.value)
        event_data.state = dest
        if dest.on_enter:
            dest.enter(event_data)
        if dest.final:
            _callbacks(machine, machine.on_final, event_data)


class _Event(Event):
    """Event.trigger straight to the transitions of the model's state, for unqueued machines."""

    def trigger(self, model: object, *args: Any, **kwargs: Any) -> bool:
        machine = self.machine
        if machine.has_queue or machine.on_exception or machine.finalize_event:
            return bool(super().trigger(model, *args, **kwargs))
        # Machine._process would call this at once: without a queue, nothing is ever pending.
        event_data = EventData(None, self, machine, model, args=args, kwargs=kwargs)
        name = getattr(model, machine.model_attribute)
        state = machine.states.get(name) if isinstance(name, str) else None
        event_data.state = state or machine.get_model_state(model)
        transitions = self.transitions.get(event_data.state.name)
        if transitions is None and not self._is_valid_source(event_data.state):
            return False  # ignored as invalid (ignore_invalid_triggers); else it raised
        if machine.prepare_event:
            _callbacks(machine, machine.prepare_event, event_data)
        for transition in transitions or ():
            event_data.transition = transition
            if transition.execute(event_data):
                event_data.result = True
                break
        return bool(event_data.result)


def _callbacks(machine: Machine, funcs: Any, event_data: EventData) -> None:
    """Machine.callbacks without its log line per callback; a name is resolved as there."""
    for func in funcs:
        if isinstance(func, str) or machine.send_event:
            machine.callback(func, event_data)
        else:
            func(*event_data.args, **event_data.kwargs)


class _SharedMachine(Machine):
    """The machine every session of a flow is stepped through (see the classes above)."""

    event_cls = _Event
    transition_cls = _Transition


class _Session:
    """One session's data; the shared machine reads and sets ``state``. Never shared."""

    __slots__ = (
        "answers",
        "asked",
        "category",
        "declined",
        "engine",
        "intention",
        "other_for",
        "state",
        "trace",
        "turn",
        "unresolved",
    )

    def __init__(self, engine: _Engine, intention: str) -> None:
        self.engine = engine
        self.intention = intention
        self.state: StateName = NEED_CATEGORY
        self.category: str | None = None  # a known category, the Other category, or None
        self.other_for: str | None = None  # NeedOther: the question whose free text is owed
        self.unresolved: str | None = None  # NoPatch: the key left unresolved
        self.answers: dict[str, str] = {}  # recorded concrete answers, canonical choices
        self.turn = 0  # question turns asked so far
        self.asked: list[str] = []
        self.trace: list[_snap.TraceStep] = []
        self.declined = False  # the pending question was answered blank in this step

    def clone(self) -> _Session:
        copy = _Session.__new__(_Session)
        copy.engine = self.engine
        copy.intention = self.intention
        copy.state = self.state
        copy.category = self.category
        copy.other_for = self.other_for
        copy.unresolved = self.unresolved
        copy.answers = self.answers
        copy.turn = self.turn
        copy.asked = list(self.asked)
        copy.trace = list(self.trace)
        copy.declined = False
        return copy


# -- what a state asks about ---------------------------------------------------------------------


def _choice_key(s: _Session) -> str:
    """The choice question the current state resolves (its `__other` text included)."""
    engine = s.engine
    if s.state == NEED_CATEGORY:
        return engine.category_qid
    if s.state == NEED_PRIMARY_FIELD:
        return engine.primary_qid[s.category]  # type: ignore[index]
    return s.other_for  # type: ignore[return-value]


def _pending_key(s: _Session) -> str:
    """The key this state waits for: the choice, or in NeedOther its free text (C5)."""
    if s.state == NEED_OTHER:
        return f"{s.other_for}{OTHER_SUFFIX}"
    return _choice_key(s)


def _answered_category(s: _Session) -> str | None:
    """The known category the category answer names, by option or by its free text (C6)."""
    engine = s.engine
    value = s.answers.get(engine.category_qid)
    if value is None:
        return None
    if value != engine.rules.other:
        return value
    text = s.answers.get(engine.category_companion)
    if text is None:
        return None
    return engine.category_by_name.get(text.casefold()) or engine.keywords.only_category(text)


# -- guards: named, pure, returning real bools (their names are what the diagrams print) ---------


def intention_names_one_category(s: _Session) -> bool:
    """C4: the intention's words match exactly one category's keywords."""
    return s.engine.keywords.only_category(s.intention) is not None


def pending_question_answered(s: _Session) -> bool:
    """C3, the lock: the current state's question has a recorded answer (or was declined now).

    Every ``answer`` edge carries it, so a step moves on only through states whose question is
    already answered and stops at the first that is not: a turn never asks a second field.
    """
    return s.declined or _pending_key(s) in s.answers


def category_is_known(s: _Session) -> bool:
    """C6: the category answer names a known category (directly, or by its free text)."""
    return _answered_category(s) is not None


def category_is_custom(s: _Session) -> bool:
    """C6: "Other (specify)" with text that names no known category."""
    engine = s.engine
    return (
        s.answers.get(engine.category_qid) == engine.rules.other
        and engine.category_companion in s.answers
        and _answered_category(s) is None
    )


def other_text_missing(s: _Session) -> bool:
    """C5: "Other (specify)" was chosen but its text is still owed."""
    key = _choice_key(s)
    return s.answers.get(key) == s.engine.rules.other and f"{key}{OTHER_SUFFIX}" not in s.answers


def budget_left(s: _Session) -> bool:
    """C3: another question turn fits in the session's budget."""
    return s.turn < s.engine.flow.limits.max_turns


def field_is_concrete(s: _Session) -> bool:
    """C6: the primary field holds an option, or "Other (specify)" with its text."""
    key = _choice_key(s)
    value = s.answers.get(key)
    if value is None:
        return False
    return value != s.engine.rules.other or f"{key}{OTHER_SUFFIX}" in s.answers


def text_names_known_category(s: _Session) -> bool:
    """C6: NeedOther for the category, and its text names one known category."""
    return s.other_for == s.engine.category_qid and _answered_category(s) is not None


def text_is_concrete(s: _Session) -> bool:
    """C5: the free text NeedOther waits for was given."""
    return f"{s.other_for}{OTHER_SUFFIX}" in s.answers


Guard = Callable[[_Session], bool]
Trigger = Literal["start", "answer"]

# -- effects: run as the transition's `before`, so the destination sees them ---------------------


def _adopt_intention_category(s: _Session) -> None:
    s.category = s.engine.keywords.only_category(s.intention)


def _adopt_answered_category(s: _Session) -> None:
    s.category = _answered_category(s)
    s.other_for = None


def _file_under_other(s: _Session) -> None:
    s.category = s.engine.flow.other_category.name


def _await_other_text(s: _Session) -> None:
    s.other_for = _choice_key(s)


def _accept_other_text(s: _Session) -> None:
    if s.other_for == s.engine.category_qid:
        s.category = s.engine.flow.other_category.name
    s.other_for = None


def _accept_field(s: _Session) -> None:
    pass


def _give_up(s: _Session) -> None:
    s.unresolved = _choice_key(s)
    s.other_for = None


@dataclass(frozen=True, slots=True)
class Edge:
    """One row of the transition table (C1): taken when all its guards pass, first row first."""

    source: StateName
    trigger: Trigger
    dest: StateName
    guards: tuple[str, ...]
    effect: str

    @property
    def label(self) -> str:
        """``trigger [guard & guard]``, as the diagrams print it."""
        return f"{self.trigger} [{' & '.join(self.guards)}]" if self.guards else self.trigger


_Row = tuple[StateName, Trigger, tuple[Guard, ...], StateName, Callable[[_Session], None]]
_LOCK: tuple[Guard, ...] = (pending_question_answered,)


def _rows(flow: Flow) -> list[_Row]:
    """C1's table for ``flow``; edges a flow cannot take (no categories, no keywords) are left out,
    so the build-time check reports what they leave unreachable."""
    has_categories = bool(flow.categories)
    has_keywords = any(c.keywords for c in flow.categories)
    rows: list[_Row] = []
    if has_keywords:
        rows.append(
            (
                NEED_CATEGORY,
                "start",
                (intention_names_one_category,),
                NEED_PRIMARY_FIELD,
                _adopt_intention_category,
            )
        )
    if has_categories:
        rows.append(
            (
                NEED_CATEGORY,
                "answer",
                (*_LOCK, category_is_known),
                NEED_PRIMARY_FIELD,
                _adopt_answered_category,
            )
        )
    rows += [
        (NEED_CATEGORY, "answer", (*_LOCK, category_is_custom), DONE, _file_under_other),
        (
            NEED_CATEGORY,
            "answer",
            (*_LOCK, other_text_missing, budget_left),
            NEED_OTHER,
            _await_other_text,
        ),
        (NEED_CATEGORY, "answer", _LOCK, NO_PATCH, _give_up),
        (NEED_PRIMARY_FIELD, "answer", (*_LOCK, field_is_concrete), DONE, _accept_field),
        (
            NEED_PRIMARY_FIELD,
            "answer",
            (*_LOCK, other_text_missing, budget_left),
            NEED_OTHER,
            _await_other_text,
        ),
        (NEED_PRIMARY_FIELD, "answer", _LOCK, NO_PATCH, _give_up),
    ]
    if has_categories:
        rows.append(
            (
                NEED_OTHER,
                "answer",
                (*_LOCK, text_names_known_category, budget_left),
                NEED_PRIMARY_FIELD,
                _adopt_answered_category,
            )
        )
    rows += [
        (NEED_OTHER, "answer", (*_LOCK, text_is_concrete), DONE, _accept_other_text),
        (NEED_OTHER, "answer", _LOCK, NO_PATCH, _give_up),
    ]
    return rows


class _Recorder:
    """A transition's `before` callback: apply its effect and append to the session's trace.

    A trace step is frozen and depends only on the edge and the turn, so each edge keeps one per
    turn number (at most the flow's budget plus one) and every session shares them.
    """

    __slots__ = ("edge", "effect", "steps")

    def __init__(self, effect: Callable[[_Session], None], edge: Edge) -> None:
        self.effect = effect
        self.edge = edge
        self.steps: dict[int, _snap.TraceStep] = {}

    def __call__(self, s: _Session) -> None:
        self.effect(s)
        step = self.steps.get(s.turn)
        s.trace.append(self.at(s.turn) if step is None else step)
        s.declined = False

    def at(self, turn: int) -> _snap.TraceStep:
        """The shared trace step of this edge taken during ``turn``."""
        step = self.steps.get(turn)
        if step is None:
            edge = self.edge
            step = self.steps.setdefault(
                turn,
                _snap.TraceStep(
                    turn=turn,
                    trigger=edge.trigger,
                    source=edge.source,
                    dest=edge.dest,
                    guards=edge.guards,
                ),
            )
        return step


class _Engine:
    """Everything compiled once per flow: the shared machine, rules, keywords, static questions."""

    def __init__(self, flow: Flow) -> None:
        self.flow = flow
        self.rules = AnswerRules(flow)
        self.keywords = KeywordIndex({c.name: c.keywords for c in flow.categories})
        self.category_qid = flow.category_question.id
        self.category_companion = f"{self.category_qid}{OTHER_SUFFIX}"
        self.categories: dict[str, Category] = {c.name: c for c in flow.categories}
        self.category_by_name = {c.name.casefold(): c.name for c in flow.categories}
        self.primary_qid = {c.name: c.question.id for c in flow.categories}
        self.category_of_primary = {c.question.id: c.name for c in flow.categories}

        rows = _rows(flow)
        self.edges = tuple(
            Edge(src, trig, dest, tuple(g.__name__ for g in guards), effect.__name__)
            for src, trig, guards, dest, effect in rows
        )
        _check_graph(self.edges)
        self.edge_keys = frozenset((e.source, e.trigger, e.dest, e.guards) for e in self.edges)
        self.machine = _SharedMachine(
            model=None,
            states=list(STATES),
            initial=NEED_CATEGORY,
            auto_transitions=False,
            send_event=False,
            name=f"clarification[{flow.name}]",
        )
        self.recorders: dict[tuple[str, str, str, tuple[str, ...]], _Recorder] = {}
        for (src, trig, guards, dest, effect), edge in zip(rows, self.edges, strict=True):
            recorder = _Recorder(effect, edge)
            self.recorders[(edge.source, edge.trigger, edge.dest, edge.guards)] = recorder
            self.machine.add_transition(trig, src, dest, conditions=list(guards), before=[recorder])
        # A restored session takes these string objects instead of the copies its JSON held, so
        # it compares and looks up by identity like a live one (and holds no copies).
        self.canonical: dict[str, str] = {
            text: text
            for text in (
                *STATES,
                *self.rules.known,
                *self.categories,
                flow.other_category.name,
                *(o for table in self.rules.choice_options.values() for o in table.values()),
            )
        }
        self._start = self.machine.events.get("start")
        self._answer = self.machine.events["answer"]
        self._questions = self._build_questions()
        self._turns: dict[tuple[str, str | None, str | None, str | None, int], Turn] = {}

    # -- questions (C2), built once ---------------------------------------------------------------

    def _build_questions(self) -> dict[tuple[str, str | None], tuple[Question, ...]]:
        flow = self.flow
        other = flow.other_option

        def choice(qid: str, text: str, options: tuple[str, ...]) -> tuple[Question, ...]:
            return (
                Question(id=qid, type="single_choice", question=text, options=(*options, other)),
                Question(
                    id=f"{qid}{OTHER_SUFFIX}",
                    type="free_text",
                    question=f"Please specify ({text}):",
                    optional=True,
                    depends_on_question_id=qid,
                    depends_on_value=other,
                ),
            )

        def alone(qid: str, text: str) -> tuple[Question, ...]:
            return (
                Question(
                    id=f"{qid}{OTHER_SUFFIX}",
                    type="free_text",
                    question=f"Please specify ({text}):",
                ),
            )

        cq = flow.category_question
        names = tuple(c.name for c in flow.categories)
        table = {
            (NEED_CATEGORY, None): choice(cq.id, cq.text, names),
            (NEED_OTHER, cq.id): alone(cq.id, cq.text),
        }
        for c in flow.categories:
            q = c.question
            table[(NEED_PRIMARY_FIELD, c.name)] = choice(q.id, q.text, q.options)
            table[(NEED_OTHER, q.id)] = alone(q.id, q.text)
        return table

    def questions(self, s: _Session) -> tuple[Question, ...]:
        if s.state == NEED_CATEGORY:
            return self._questions[(NEED_CATEGORY, None)]
        if s.state == NEED_PRIMARY_FIELD:
            return self._questions[(NEED_PRIMARY_FIELD, s.category)]
        if s.state == NEED_OTHER:
            return self._questions[(NEED_OTHER, s.other_for)]
        return ()

    # -- running sessions -------------------------------------------------------------------

    def begin(self, intention: object) -> _Session:
        s = _Session(self, self.rules.check_intention(intention))
        if self._start is not None:
            self._start.trigger(s, s)
        self._open_turn(s)
        return s

    def step(self, s: _Session, answers: object) -> _Session:
        """The session after one step; ``s`` itself is never changed (C5: errors change nothing)."""
        if s.state in TERMINAL_STATES:
            raise SessionFinished(
                f"the session already ended in {s.state}; start a new session to ask again"
            )
        merge = self.rules.merge(s.answers, _pending_key(s), answers)
        work = s.clone()
        work.answers = merge.recorded
        work.declined = merge.declined
        answer = self._answer
        # Fire `answer` until the lock refuses (the state's question is not answered yet) or the
        # session has ended; each pass moves to another state, so this ends within four passes.
        while work.state not in TERMINAL_STATES and answer.trigger(work, work):
            pass
        work.declined = False
        if work.state in QUESTION_STATES:
            self._open_turn(work)
        return work

    def _open_turn(self, s: _Session) -> None:
        s.turn += 1
        for q in self.questions(s):
            if q.id not in s.asked:
                s.asked.append(q.id)

    # -- what a position shows (C6, C7) -----------------------------------------------------------

    def missing_info(self, s: _Session) -> tuple[str, ...]:
        if s.state == DONE:
            return ()
        if s.state == NO_PATCH:
            return (s.unresolved,) if s.unresolved else ()
        return (_choice_key(s),)

    def category_known(self, s: _Session) -> bool:
        if s.state == NEED_OTHER:
            return s.other_for != self.category_qid
        if s.state == NO_PATCH:
            return s.unresolved != self.category_qid
        return s.state != NEED_CATEGORY

    def hint(self, s: _Session) -> Hint:
        category = self.categories.get(s.category or "")
        return category.hint if category is not None else self.flow.other_category.hint

    def patch(self, s: _Session) -> DecisionPatch | None:
        if s.state != DONE:
            return None
        other = self.flow.other_category
        if s.category == other.name:
            description = s.answers.get(other.description_id, s.intention)
            return _built(
                DecisionPatch,
                {"category": other.name, "fields": ((other.field, description),), "references": ()},
                _PATCH_SET,
            )
        category = self.categories[s.category or ""]
        q = category.question
        value = s.answers[q.id]
        if value == self.rules.other:
            value = s.answers[f"{q.id}{OTHER_SUFFIX}"]
        fields = [(q.field, value)]
        fields += [(f.field, s.answers[f.id]) for f in category.secondary if f.id in s.answers]
        return _built(
            DecisionPatch,
            {"category": category.name, "fields": tuple(fields), "references": ()},
            _PATCH_SET,
        )

    def turn(self, s: _Session) -> Turn:
        if s.state == DONE:  # the one turn that depends on the answers: its patch
            return self._make_turn(s)
        # Any other turn depends only on this key, which takes a few dozen values per flow:
        # build each once and share it (Turn is frozen).
        key = (s.state, s.category, s.other_for, s.unresolved, s.turn)
        turn = self._turns.get(key)
        if turn is None:
            turn = self._turns.setdefault(key, self._make_turn(s))
        return turn

    def _make_turn(self, s: _Session) -> Turn:
        values = {
            "state": s.state,
            "questions": self.questions(s),
            "missing_info": self.missing_info(s),
            "decision_hint": self.hint(s),
            "progress": progress_of(s.state, self.category_known(s)),
            "patch": self.patch(s),
            "number": s.turn,
        }
        return _built(Turn, values, _TURN_SET)


_M = TypeVar("_M", bound=BaseModel)
_PATCH_SET: Final = frozenset({"category", "fields"})  # what DecisionPatch(category, fields) sets
_TURN_SET: Final = frozenset(Turn.model_fields)
_set = object.__setattr__


def _built(cls: type[_M], values: dict[str, Any], fields_set: frozenset[str]) -> _M:
    """``cls.model_construct(**values)`` for values the engine built itself, every field given in
    field order: the four attributes model_construct sets, without its per-field alias and
    default lookups, which cost more than the rest of a turn (about 8 µs in pydantic 2.14)."""
    model = cls.__new__(cls)
    _set(model, "__dict__", values)
    _set(model, "__pydantic_fields_set__", set(fields_set))
    _set(model, "__pydantic_extra__", None)
    _set(model, "__pydantic_private__", None)
    return model


def _check_graph(edges: tuple[Edge, ...]) -> None:
    """STYLE 5: every state reachable, no trap state, a terminal state reachable from each."""
    following: dict[str, set[str]] = {state: set() for state in STATES}
    for edge in edges:
        following[edge.source].add(edge.dest)
    problems: list[str] = []
    offending: list[str] = []

    def reach(start: str) -> set[str]:
        seen = {start}
        todo = [start]
        while todo:
            for nxt in following[todo.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    unreachable = [s for s in STATES if s not in reach(NEED_CATEGORY)]
    if unreachable:
        problems.append("unreachable states: " + ", ".join(unreachable))
        offending += unreachable
    traps = [s for s in STATES if s not in TERMINAL_STATES and not following[s]]
    if traps:
        problems.append("states without a way out: " + ", ".join(traps))
        offending += traps
    stuck = [s for s in STATES if not reach(s) & TERMINAL_STATES]
    stuck = [s for s in stuck if s not in traps]
    if stuck:
        problems.append("states that cannot reach Done or NoPatch: " + ", ".join(stuck))
        offending += stuck
    if problems:
        raise InvalidFlow(
            "the flow's machine is broken: " + "; ".join(problems), ids=tuple(offending)
        )


_ENGINES: dict[str, _Engine] = {}
_ENGINES_LOCK = threading.Lock()


def _engine_for(flow: Flow) -> _Engine:
    """The one engine (and shared machine) of ``flow``, built on first use."""
    key = flow.fingerprint
    engine = _ENGINES.get(key)
    if engine is None:
        with _ENGINES_LOCK:
            engine = _ENGINES.get(key)
            if engine is None:
                engine = _ENGINES[key] = _Engine(flow)
    return engine


def transition_table(flow: Flow | None = None) -> tuple[Edge, ...]:
    """Every edge of the flow's machine, in the order its guards are tried (C1)."""
    return _engine_for(flow or default_flow()).edges


def machine_definition(flow: Flow | None = None) -> dict[str, Any]:
    """Keyword arguments for a fresh ``transitions.Machine`` holding the flow's states and guarded
    transitions in the order they are tried: the engine's own rows (C1), without its session
    callbacks. The diagrams draw from such a machine, never from the shared serving one."""
    flow = flow or default_flow()
    _engine_for(flow)  # STYLE 5: a broken flow fails here, naming its offending ids
    return {
        "states": list(STATES),
        "initial": NEED_CATEGORY,
        "auto_transitions": False,
        "transitions": [
            {"trigger": trigger, "source": source, "dest": dest, "conditions": list(guards)}
            for source, trigger, guards, dest, _effect in _rows(flow)
        ],
    }


class ClarificationMachine:
    """One clarification session, stepped through its flow's shared machine (C8).

    >>> machine = ClarificationMachine("Add OAuth login")
    >>> machine.turn.state, [q.id for q in machine.turn.questions]
    ('NeedPrimaryField', ['auth_strategy', 'auth_strategy__other'])
    >>> machine.step({"auth_strategy": "OAuth"}).patch
    DecisionPatch(category='Authentication', fields=(('Strategy', 'OAuth'),), references=())
    """

    __slots__ = ("_engine", "_session")

    states: ClassVar[tuple[StateName, ...]] = STATES

    def __init__(self, intention: str, flow: Flow | None = None) -> None:
        self._engine = _engine_for(flow or default_flow())
        self._session = self._engine.begin(intention)

    @property
    def flow(self) -> Flow:
        """The flow this session runs on."""
        return self._engine.flow

    @property
    def intention(self) -> str:
        """The intention, as cleaned when the session started."""
        return self._session.intention

    @property
    def state(self) -> StateName:
        """The current state's name."""
        return self._session.state

    @property
    def finished(self) -> bool:
        """True once the session is in Done or NoPatch."""
        return self._session.state in TERMINAL_STATES

    @property
    def turn(self) -> Turn:
        """What the session shows now: the questions to ask, or the outcome."""
        return self._engine.turn(self._session)

    @property
    def answers(self) -> dict[str, str]:
        """The recorded answers (a copy): concrete, normalised, canonical options."""
        return dict(self._session.answers)

    @property
    def trace(self) -> tuple[_snap.TraceStep, ...]:
        """Every transition taken so far, in order."""
        return tuple(self._session.trace)

    def step(self, answers: Mapping[str, Any]) -> Turn:
        """Record one turn's answers and move on; on any error the session is unchanged.

        Raises InvalidAnswers (with ``.feedback``) or SessionFinished.
        """
        self._session = self._engine.step(self._session, answers)
        return self._engine.turn(self._session)

    # -- snapshots (C9) -------------------------------------------------------------------------

    def snapshot(self) -> _snap.SessionSnapshot:
        """Everything needed to restore this session exactly, with a digest of its content."""
        s, engine = self._session, self._engine
        fields: dict[str, Any] = {
            "intention": s.intention,
            "asked_questions": tuple(s.asked),
            "answered_questions": tuple(s.answers),
            "missing_info": engine.missing_info(s),
            "schema_version": _snap.SCHEMA_VERSION,
            "flow": engine.flow.name,
            "flow_fingerprint": engine.flow.fingerprint,
            "state": s.state,
            "category": s.category,
            "other_for": s.other_for,
            "answers": dict(s.answers),
            "turn": s.turn,
            "trace": tuple(s.trace),
        }
        # Digested before the model is built, so it is built (and validated) once.
        return _snap.SessionSnapshot(**fields, digest=_snap.digest_of(fields))

    @classmethod
    def from_snapshot(
        cls,
        snapshot: _snap.SessionSnapshot | str | bytes | dict[str, Any],
        flow: Flow | None = None,
        *,
        require_digest: bool = False,
    ) -> ClarificationMachine:
        """Restore a session; anything refused raises InvalidSnapshot naming the field.

        A full snapshot restores exactly; Preflights' four-field form restores to a position.
        ``require_digest`` also refuses a snapshot that carries no digest.
        """
        parsed = _snap.parse_snapshot(snapshot, require_digest=require_digest)
        engine = _engine_for(flow or default_flow())
        machine = cls.__new__(cls)
        machine._engine = engine
        machine._session = (
            _restore_minimal(engine, parsed) if parsed.is_minimal else _restore(engine, parsed)
        )
        return machine

    def __repr__(self) -> str:
        return f"<ClarificationMachine state={self.state} turn={self._session.turn}>"


# -- restoring (C9) --------------------------------------------------------------------------------


def _intention(engine: _Engine, text: str) -> str:
    try:
        cleaned = engine.rules.check_intention(text)
    except InvalidIntention as exc:
        raise InvalidSnapshot("intention", str(exc)) from None
    if cleaned != text:
        raise InvalidSnapshot("intention", "is not in its cleaned form (stripped, LF newlines)")
    return cleaned


def _restore_minimal(engine: _Engine, snap: _snap.SessionSnapshot) -> _Session:
    for name in ("category", "other_for", "turn", "flow", "flow_fingerprint", "digest"):
        if getattr(snap, name) is not None:
            raise InvalidSnapshot(name, "is set but 'state' is not; a full snapshot needs both")
    if snap.answers or snap.trace:
        field = "answers" if snap.answers else "trace"
        raise InvalidSnapshot(field, "is set but 'state' is not; a full snapshot needs both")
    s = _Session(engine, _intention(engine, snap.intention))
    if not snap.missing_info:
        raise InvalidSnapshot(
            "missing_info", "is empty: the session is complete and has no position to restore"
        )
    if len(snap.missing_info) > 1:
        raise InvalidSnapshot("missing_info", "holds more than one key; a session waits for one")
    key = snap.missing_info[0]
    if OTHER_SUFFIX in key:
        raise InvalidSnapshot("missing_info", f"holds {key!r}; it never holds __other ids")
    answered = key in snap.answered_questions
    if key == engine.category_qid:
        s.state = NEED_OTHER if answered else NEED_CATEGORY
    elif key in engine.category_of_primary:
        s.category = engine.category_of_primary[key]
        s.state = NEED_OTHER if answered else NEED_PRIMARY_FIELD
    else:
        raise InvalidSnapshot("missing_info", f"names {key!r}, which no state of this flow asks")
    if s.state == NEED_OTHER:
        s.other_for = key
        s.answers = {key: engine.rules.other}  # implied by the position
    known = engine.rules.known
    for field in ("asked_questions", "answered_questions"):
        strange = [q for q in getattr(snap, field) if q not in known]
        if strange:
            raise InvalidSnapshot(field, "holds ids this flow does not know: " + ", ".join(strange))
    visible = {q for q in snap.asked_questions if OTHER_SUFFIX not in q}
    s.turn = len(visible) + (1 if s.state == NEED_OTHER else 0)
    s.turn = max(s.turn, 1)
    if s.turn > engine.flow.limits.max_turns:
        raise InvalidSnapshot(
            "asked_questions",
            f"implies turn {s.turn}, past the budget of {engine.flow.limits.max_turns}",
        )
    s.asked = list(dict.fromkeys(snap.asked_questions))
    for q in engine.questions(s):
        if q.id not in s.asked:
            s.asked.append(q.id)
    return s


def _restore(engine: _Engine, snap: _snap.SessionSnapshot) -> _Session:
    flow = engine.flow
    if snap.flow is not None and snap.flow != flow.name:
        raise SnapshotFlowMismatch("flow", f"is {snap.flow!r}; this machine runs {flow.name!r}")
    if snap.flow_fingerprint is not None and snap.flow_fingerprint != flow.fingerprint:
        raise SnapshotFlowMismatch(
            "flow_fingerprint",
            f"is {snap.flow_fingerprint!r}; this flow's is {flow.fingerprint!r} "
            "(the flow changed since the snapshot was taken)",
        )
    s = _Session(engine, _intention(engine, snap.intention))
    canonical = engine.canonical
    s.state = _STATE_BY_NAME.get(snap.state, snap.state) if snap.state else NEED_CATEGORY
    s.category = canonical.get(snap.category, snap.category) if snap.category else None
    s.other_for = canonical.get(snap.other_for, snap.other_for) if snap.other_for else None
    s.turn = snap.turn if snap.turn is not None else 0
    s.answers = _restored_answers(engine, snap.answers)
    s.trace = list(snap.trace)
    s.asked = [canonical.get(q, q) for q in snap.asked_questions]
    if s.state == NO_PATCH:
        s.unresolved = snap.missing_info[0] if len(snap.missing_info) == 1 else None
    _check_position(engine, s)
    _check_trace(engine, s)
    # Every step is an edge (checked just now): share the engine's own step objects.
    recorders = engine.recorders
    s.trace = [recorders[(t.source, t.trigger, t.dest, t.guards)].at(t.turn) for t in s.trace]
    expected = {
        "missing_info": engine.missing_info(s),
        "answered_questions": tuple(s.answers),
    }
    for field, value in expected.items():
        if getattr(snap, field) != value:
            raise InvalidSnapshot(field, f"is {getattr(snap, field)!r}; the session says {value!r}")
    if len(set(s.asked)) != len(s.asked) or not set(s.asked) <= engine.rules.known:
        raise InvalidSnapshot("asked_questions", "holds unknown or repeated question ids")
    if s.state in QUESTION_STATES and not {q.id for q in engine.questions(s)} <= set(s.asked):
        raise InvalidSnapshot("asked_questions", "lacks the questions of the current turn")
    return s


def _restored_answers(engine: _Engine, answers: dict[str, str]) -> dict[str, str]:
    rules = engine.rules
    for key, value in answers.items():
        if key not in rules.known:
            raise InvalidSnapshot(f"answers.{key}", "is not a question id of this flow")
        cleaned, problem = rules.normalise(key, value)
        if problem or cleaned != value:
            raise InvalidSnapshot(
                f"answers.{key}", problem or "is not a concrete, normalised answer"
            )
        options = rules.choice_options.get(key)
        if options is not None and value not in options.values():
            raise InvalidSnapshot(f"answers.{key}", f"{value!r} is not one of its options")
        base = rules.companion_of.get(key)
        if base is not None and answers.get(base) != rules.other:
            raise InvalidSnapshot(f"answers.{key}", f"is set but {base} is not {rules.other!r}")
    canonical = engine.canonical
    return {canonical.get(k, k): canonical.get(v, v) for k, v in answers.items()}


def _check_position(engine: _Engine, s: _Session) -> None:
    """The state, category, NeedOther's question and the answers must tell one story."""
    cq = engine.category_qid
    other_name = engine.flow.other_category.name
    if s.category is not None and s.category not in engine.categories and s.category != other_name:
        raise InvalidSnapshot("category", f"{s.category!r} is not a category of this flow")
    if not 1 <= s.turn <= engine.flow.limits.max_turns:
        raise InvalidSnapshot(
            "turn", f"must be between 1 and the budget of {engine.flow.limits.max_turns}"
        )
    if s.state == NEED_OTHER:
        allowed = {cq} | set(engine.category_of_primary)
        if s.other_for not in allowed:
            raise InvalidSnapshot("other_for", "must name the question NeedOther waits for")
        if s.other_for == cq and s.category is not None:
            raise InvalidSnapshot("category", "must be null while the category text is owed")
        if s.other_for != cq and engine.category_of_primary[s.other_for] != s.category:
            raise InvalidSnapshot("other_for", f"is not the question of category {s.category!r}")
    elif s.other_for is not None:
        raise InvalidSnapshot("other_for", f"must be null in {s.state}")
    if s.state == NEED_CATEGORY and s.category is not None:
        raise InvalidSnapshot("category", "must be null in NeedCategory")
    if s.state == NEED_PRIMARY_FIELD and s.category not in engine.categories:
        raise InvalidSnapshot("category", "must be a known category in NeedPrimaryField")
    if s.state == DONE and s.category is None:
        raise InvalidSnapshot("category", "must be set in Done")
    if s.category == other_name and s.state != DONE:
        raise InvalidSnapshot("category", f"{other_name!r} is only reached in Done")
    if s.state == NO_PATCH:
        allowed = {cq} | set(engine.category_of_primary)
        if s.unresolved not in allowed:
            raise InvalidSnapshot("missing_info", "must name the one key left unresolved")
    # The answers must put the session exactly here: the state's question is still open,
    # and in Done the patch can be built.
    if s.state in QUESTION_STATES and pending_question_answered(s):
        raise InvalidSnapshot("answers", f"already answer {_pending_key(s)}, asked in {s.state}")
    if s.state == NEED_OTHER and s.answers.get(s.other_for or "") != engine.rules.other:
        raise InvalidSnapshot("answers", f"must record {s.other_for} as {engine.rules.other!r}")
    if s.state == DONE and s.category != other_name:
        probe = s.clone()
        probe.state = NEED_PRIMARY_FIELD
        if not field_is_concrete(probe):
            raise InvalidSnapshot("answers", "hold no concrete primary field for the Done patch")


def _check_trace(engine: _Engine, s: _Session) -> None:
    """The trace must be a walk along the machine's edges, from NeedCategory to the state."""
    edges = engine.edge_keys
    position = NEED_CATEGORY
    last_turn = 0
    for i, step in enumerate(s.trace):
        if (step.source, step.trigger, step.dest, step.guards) not in edges:
            raise InvalidSnapshot(f"trace.{i}", "is not an edge of this flow's machine")
        if step.source != position or step.turn < last_turn or step.turn > s.turn:
            raise InvalidSnapshot(f"trace.{i}", "does not continue the path before it")
        position, last_turn = step.dest, step.turn
    if s.trace and position != s.state:
        raise InvalidSnapshot("trace", f"ends in {position}, not in the state {s.state}")
    if not s.trace and s.state != NEED_CATEGORY:
        raise InvalidSnapshot("trace", f"is empty, but the state is {s.state}")
