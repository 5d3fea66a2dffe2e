"""Conformance: an LLM adapter driven through every path of the flow, judged turn by turn.

:func:`flow_paths` lists sessions that together take every row of the table (C1): the keyword
shortcut for each category that has keywords, the category question for each category, each
"Other (specify)" path (of the category question: a text naming a category, a text of its own,
given in a later turn or with the choice; of each category's question), a decline (of the
category, of an "Other" text), and the turn budget running out. :func:`conform`
asks the adapter for each turn of each path, as Preflights' application on the engine asks it
(the session so far in an ``AnsweredSnapshot``), and for the patch where a path ends, and
judges each reply against the engine (``judge``): agreement per rule (questions, missing_info,
progress, hint, patch) and per transition (the engine's state before and after the turn).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from typing import Any, Final

from preflights.core.types import default_v1_heuristics

from preflight_fsm.flow import OTHER_SUFFIX, Flow, default_flow
from preflight_fsm.integrations.preflights import (
    AnsweredSnapshot,
    FsmLLMAdapter,
    to_preflights_patch,
    to_preflights_response,
)
from preflight_fsm.integrations.preflights.position import STAND_IN_INTENTION
from preflight_fsm.llm.guard import complete_turn
from preflight_fsm.llm.judge import AGREEMENT_RULES, Disagreement, judge_patch, judge_turn

__all__ = ["Check", "ConformancePath", "Report", "conform", "flow_paths", "report_json"]

TURN_RULES: Final = AGREEMENT_RULES[:-1]
"""The rules a turn is judged by; the patch is judged once a path ends."""


@dataclasses.dataclass(frozen=True, slots=True)
class ConformancePath:
    """One session: its name, intention and the answers given at each turn."""

    name: str
    intention: str
    rounds: tuple[dict[str, str], ...]


@dataclasses.dataclass(frozen=True, slots=True)
class Check:
    """One rule judged at one turn of one path: agreed, or the disagreement."""

    path: str
    turn: int
    transition: str
    rule: str
    disagreement: str | None = None

    @property
    def agreed(self) -> bool:
        """True when the adapter agreed with the engine on this rule here."""
        return self.disagreement is None


def flow_paths(flow: Flow | None = None) -> tuple[ConformancePath, ...]:
    """Sessions through every row of ``flow``'s table (the default flow's by default)."""
    flow = flow or default_flow()
    engine = FsmLLMAdapter(flow=flow)
    other, category_id = flow.other_option, flow.category_question.id
    paths: list[ConformancePath] = []
    for category in flow.categories:
        question = category.question
        for keyword in category.keywords:
            intention = f"Change the {keyword}"
            turn = engine.position(intention, {}).turn
            if turn is not None and [q.id for q in turn.questions][:1] == [question.id]:
                paths.append(
                    ConformancePath(
                        f"shortcut:{category.name}",
                        intention,
                        ({question.id: question.options[-1]},),
                    )
                )
                break
        paths.append(
            ConformancePath(
                f"category:{category.name}",
                STAND_IN_INTENTION,
                ({category_id: category.name}, {question.id: question.options[0]}),
            )
        )
        paths.append(
            ConformancePath(
                f"other:{question.id}",
                STAND_IN_INTENTION,
                (
                    {category_id: category.name},
                    {question.id: other},
                    {f"{question.id}{OTHER_SUFFIX}": f"Our own {question.field.lower()}"},
                ),
            )
        )
    if flow.categories:
        first = flow.categories[0]
        paths.append(
            ConformancePath(
                f"other:{category_id}:names-{first.name}",
                STAND_IN_INTENTION,
                (
                    {category_id: other},
                    {f"{category_id}{OTHER_SUFFIX}": first.name},
                    {first.question.id: first.question.options[0]},
                ),
            )
        )
        paths.append(
            ConformancePath(
                "out-of-budget",
                STAND_IN_INTENTION,
                (
                    {category_id: other},
                    {f"{category_id}{OTHER_SUFFIX}": first.name},
                    {first.question.id: other},
                ),
            )
        )
    paths.append(
        ConformancePath(
            f"other:{category_id}:own",
            STAND_IN_INTENTION,
            ({category_id: other}, {f"{category_id}{OTHER_SUFFIX}": "Payments"}),
        )
    )
    paths.append(
        ConformancePath(
            f"other:{category_id}:own-at-once",
            STAND_IN_INTENTION,
            ({category_id: other, f"{category_id}{OTHER_SUFFIX}": "Payments"},),
        )
    )
    paths.append(ConformancePath("declined", STAND_IN_INTENTION, ({category_id: "tbd"},)))
    paths.append(
        ConformancePath(
            "declined-other-text",
            STAND_IN_INTENTION,
            ({category_id: other}, {f"{category_id}{OTHER_SUFFIX}": "tbd"}),
        )
    )
    return tuple(paths)


@dataclasses.dataclass(frozen=True)
class Report:
    """Every check of a conformance run, and agreement counted from them."""

    adapter: str
    paths: int
    checks: tuple[Check, ...]

    @property
    def agreement(self) -> float:
        """The share of checks agreed, 0.0 to 1.0 (1.0 when there are none)."""
        return _share(self.checks)

    def by_rule(self) -> dict[str, tuple[int, int]]:
        """rule -> (agreed, checks), in AGREEMENT_RULES order."""
        return {rule: _count(c for c in self.checks if c.rule == rule) for rule in AGREEMENT_RULES}

    def by_transition(self) -> dict[str, tuple[int, int]]:
        """transition -> (agreed, checks), in the order first met."""
        names = dict.fromkeys(c.transition for c in self.checks)
        return {t: _count(c for c in self.checks if c.transition == t) for t in names}

    def disagreements(self) -> list[Check]:
        """The checks not agreed, in run order."""
        return [c for c in self.checks if not c.agreed]

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data."""

        def table(counts: dict[str, tuple[int, int]]) -> dict[str, Any]:
            return {
                k: {"agreed": a, "checks": n, "agreement": round(a / n, 4) if n else 1.0}
                for k, (a, n) in counts.items()
            }

        return {
            "adapter": self.adapter,
            "paths": self.paths,
            "checks": len(self.checks),
            "agreement": round(self.agreement, 4),
            "rules": table(self.by_rule()),
            "transitions": table(self.by_transition()),
            "disagreements": [dataclasses.asdict(c) for c in self.disagreements()],
        }

    def text(self, *, limit: int = 20) -> str:
        """The report for a terminal: totals, per rule, per transition, first disagreements."""
        lines = [
            f"{self.adapter}: {_pct(self.agreement)} agreement with the engine "
            f"({len(self.checks)} checks over {self.paths} paths)",
            "per rule:",
        ]
        lines += [f"  {r:<14} {_ratio(a, n)}" for r, (a, n) in self.by_rule().items()]
        lines.append("per transition:")
        lines += [f"  {t:<34} {_ratio(a, n)}" for t, (a, n) in self.by_transition().items()]
        found = self.disagreements()
        if found:
            lines.append(f"disagreements ({len(found)}; the first {min(limit, len(found))}):")
            lines += [
                f"  {c.path} turn {c.turn} ({c.transition}) {c.rule}: {c.disagreement}"
                for c in found[:limit]
            ]
        return "\n".join(lines)

    def markdown(self) -> str:
        """The report as Markdown tables."""
        lines = [
            f"**{self.adapter}**: {_pct(self.agreement)} agreement with the engine "
            f"({len(self.checks)} checks over {self.paths} paths)",
            "",
            "| rule | agreed | agreement |",
            "|---|---|---|",
        ]
        lines += [
            f"| {r} | {a}/{n} | {_pct(a / n if n else 1.0)} |"
            for r, (a, n) in self.by_rule().items()
        ]
        lines += ["", "| transition | agreed | agreement |", "|---|---|---|"]
        lines += [
            f"| {t} | {a}/{n} | {_pct(a / n if n else 1.0)} |"
            for t, (a, n) in self.by_transition().items()
        ]
        return "\n".join(lines)


def conform(
    adapter: Any,
    *,
    name: str | None = None,
    flow: Flow | None = None,
    heuristics_config: Any = None,
    paths: Iterable[ConformancePath] | None = None,
) -> Report:
    """Drive ``adapter`` (Preflights' ``LLMPort``) through ``paths`` (:func:`flow_paths`)."""
    flow = flow or default_flow()
    config = heuristics_config if heuristics_config is not None else default_v1_heuristics()
    engine = FsmLLMAdapter(flow=flow)
    chosen = tuple(paths) if paths is not None else flow_paths(flow)
    checks: list[Check] = []
    for path in chosen:
        checks += _walk(adapter, engine, path, config, flow)
    label = name or str(getattr(adapter, "provider", type(adapter).__name__))
    return Report(label, len(chosen), tuple(checks))


def _walk(
    adapter: Any, engine: FsmLLMAdapter, path: ConformancePath, config: Any, flow: Flow
) -> list[Check]:
    checks: list[Check] = []
    answers: dict[str, str] = {}
    asked: list[str] = []
    before = "start"
    for number in range(len(path.rounds) + 1):
        # Each round one step, as Preflights' application on the engine steps (the turn budget).
        where = engine.position(path.intention, answers, path.rounds[:number])
        turn = where.turn
        if turn is None:  # a path the engine refuses: the flow changed under the paths
            break
        transition = f"{before} → {turn.state}"
        if turn.finished:
            reference = to_preflights_patch(turn.patch) if turn.patch is not None else None
            found = _patch_findings(adapter, path, answers, config, reference)
            checks += _checks(path.name, number, transition, ("patch",), found)
            break
        state = None
        if number:
            state = AnsweredSnapshot(
                intention=path.intention,
                asked_questions=tuple(asked),
                answered_questions=tuple(answers),
                missing_info=tuple(turn.missing_info),
                answers=tuple(answers.items()),
            )
        expected = to_preflights_response(turn)
        found = _turn_findings(adapter, path, config, state, expected, flow)
        checks += _checks(path.name, number, transition, TURN_RULES, found)
        asked += [q.id for q in turn.questions if q.id not in asked]
        if number < len(path.rounds):
            answers.update(path.rounds[number])
        before = turn.state
    return checks


def _turn_findings(
    adapter: Any,
    path: ConformancePath,
    config: Any,
    state: AnsweredSnapshot | None,
    expected: Any,
    flow: Flow,
) -> list[Disagreement]:
    """How the adapter's turn differs; an adapter that raises disagrees on every turn rule."""
    try:
        reply = adapter.generate_questions(path.intention, config, None, state)
        return judge_turn(complete_turn(reply, expected), expected, flow)
    except Exception as exc:  # whatever an adapter raises is its answer
        return [Disagreement(rule, _raised(exc)) for rule in TURN_RULES]


def _patch_findings(
    adapter: Any, path: ConformancePath, answers: dict[str, str], config: Any, reference: Any
) -> list[Disagreement]:
    """How the adapter's patch differs from the engine's from the same answers."""
    try:
        reply = adapter.extract_decision_patch(path.intention, dict(answers), config)
    except Exception as exc:  # whatever an adapter raises is its answer
        return [Disagreement("patch", _raised(exc))]
    return judge_patch(reply, reference, answers=answers)


def _raised(exc: Exception) -> str:
    return f"raised {type(exc).__name__}: {' '.join(str(exc).split())[:160]}"


def _checks(
    path: str, turn: int, transition: str, rules: tuple[str, ...], found: list[Disagreement]
) -> list[Check]:
    return [
        Check(
            path,
            turn,
            transition,
            rule,
            "; ".join(d.message for d in found if d.rule == rule) or None,
        )
        for rule in rules
    ]


def _count(checks: Iterable[Check]) -> tuple[int, int]:
    listed = list(checks)
    return sum(c.agreed for c in listed), len(listed)


def _share(checks: Iterable[Check]) -> float:
    agreed, total = _count(checks)
    return agreed / total if total else 1.0


def _pct(share: float) -> str:
    return f"{share * 100:.1f}%"


def _ratio(agreed: int, total: int) -> str:
    return f"{agreed:>3}/{total:<3} {_pct(agreed / total if total else 1.0):>6}"


def report_json(report: Report) -> str:
    """The report as indented JSON."""
    return json.dumps(report.to_dict(), ensure_ascii=False, indent=2)
