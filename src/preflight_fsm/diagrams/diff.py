"""What a flow change does: questions, options, keywords, settings and edges added, removed or
changed between two :class:`~preflight_fsm.Flow` objects, as a list for a pull-request comment
and as the new flow's picture with the changes marked on it.

Both are functions of two flows, wherever they come from: two TOML files
(``preflight-fsm diagram --diff OLD.toml NEW.toml``) or two registered versions of a flow.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Final, Literal

from preflight_fsm import Flow, transition_table
from preflight_fsm.diagrams.dot import MINUS
from preflight_fsm.diagrams.model import (
    Arrow,
    Ask,
    Change,
    Graph,
    Node,
    Text,
    arrows_of,
    flow_graph,
)
from preflight_fsm.flow import Category
from preflight_fsm.states import NEED_CATEGORY, NEED_OTHER, NEED_PRIMARY_FIELD

__all__ = ["FlowChange", "FlowDiff", "Subject", "diff_graph", "flow_diff"]

Subject = Literal["category", "question", "option", "keyword", "field", "setting", "edge"]

SIGNS: Final[dict[Change, str]] = {"added": "+", "removed": "-", "changed": "~"}


@dataclass(frozen=True, slots=True)
class FlowChange:
    """One difference: what (``subject`` ``name``), where, and for a change, from what to what."""

    change: Change
    subject: Subject
    name: str
    where: str = ""
    old: str = ""
    new: str = ""

    def text(self, code: str = '"') -> str:
        """One line: ``option "Passkeys" of auth_strategy (Authentication)``."""
        close = code
        phrase = f"{self.subject} {code}{self.name}{close}"
        if self.where:
            phrase += f" {self.where}"
        if self.change == "changed":
            phrase += f": {code}{self.old}{close} → {code}{self.new}{close}"
        return phrase


@dataclass(frozen=True, slots=True)
class FlowDiff:
    """Every difference between two flows, in a fixed order (flow order, then edges)."""

    old: Flow
    new: Flow
    changes: tuple[FlowChange, ...]

    def to_text(self) -> str:
        """Plain text, one change a line signed ``+`` ``-`` ``~``."""
        head = f"Flow change: {self.old.name} → {self.new.name} ({_count(self.changes)})"
        lines = [head, *(f"{SIGNS[c.change]} {c.text()}" for c in self.changes)]
        return "\n".join(lines) + "\n"

    def to_markdown(self) -> str:
        """Markdown for a pull-request comment: a heading, then one bullet per change."""
        lines = [
            f"### Flow change: `{self.old.name}` → `{self.new.name}`",
            "",
            f"{_count(self.changes).capitalize()} (`preflight-fsm diagram --diff`).",
        ]
        if self.changes:
            lines.append("")
            lines += [f"- **{c.change}** {c.text('`')}" for c in self.changes]
        return "\n".join(lines) + "\n"


def _count(changes: tuple[FlowChange, ...]) -> str:
    if not changes:
        return "no change"
    return f"{len(changes)} change{'' if len(changes) == 1 else 's'}"


def flow_diff(old: Flow, new: Flow) -> FlowDiff:
    """The differences between ``old`` and ``new``: a function of the two flows alone."""
    changes: list[FlowChange] = []
    if old.name != new.name:
        changes.append(FlowChange("changed", "setting", "name", old=old.name, new=new.name))
    changes += _question_changes(
        old.category_question.model_dump(), new.category_question.model_dump(), "category question"
    )
    if old.other_option != new.other_option:
        changes.append(
            FlowChange(
                "changed", "setting", "other_option", old=old.other_option, new=new.other_option
            )
        )
    old_categories = {c.name: c for c in old.categories}
    new_categories = {c.name: c for c in new.categories}
    for name, category in old_categories.items():
        if name not in new_categories:
            changes.append(
                FlowChange("removed", "category", name, where=f"asking {category.question.id}")
            )
    for name, category in new_categories.items():
        if name not in old_categories:
            changes.append(
                FlowChange("added", "category", name, where=f"asking {category.question.id}")
            )
            continue
        changes += _category_changes(old_categories[name], category)
    for section in ("other_category", "limits", "placeholders"):
        changes += _setting_changes(section, getattr(old, section), getattr(new, section))
    changes += _edge_changes(old, new)
    return FlowDiff(old, new, tuple(changes))


def _question_changes(old: dict[str, Any], new: dict[str, Any], where: str) -> list[FlowChange]:
    return [
        FlowChange("changed", "question", key, where=where, old=str(old[key]), new=str(new[key]))
        for key in ("id", "text", "field")
        if key in old and old[key] != new.get(key)
    ]


def _added_removed(
    old: tuple[str, ...], new: tuple[str, ...], subject: Subject, where: str
) -> list[FlowChange]:
    return [FlowChange("removed", subject, o, where=where) for o in old if o not in new] + [
        FlowChange("added", subject, n, where=where) for n in new if n not in old
    ]


def _category_changes(old: Category, new: Category) -> list[FlowChange]:
    where = f"of {new.question.id} ({new.name})"
    changes = _question_changes(old.question.model_dump(), new.question.model_dump(), where)
    changes += _added_removed(old.question.options, new.question.options, "option", where)
    changes += _added_removed(old.keywords, new.keywords, "keyword", f"of {new.name}")
    changes += _added_removed(
        tuple(f"{s.id} → {s.field}" for s in old.secondary),
        tuple(f"{s.id} → {s.field}" for s in new.secondary),
        "field",
        f"of {new.name}",
    )
    if old.hint != new.hint:
        changes.append(
            FlowChange(
                "changed", "setting", "hint", where=f"of {new.name}", old=old.hint, new=new.hint
            )
        )
    return changes


def _setting_changes(section: str, old: Any, new: Any) -> list[FlowChange]:
    if section == "placeholders":
        return _added_removed(old, new, "setting", "in placeholders")
    before, after = old.model_dump(), new.model_dump()
    return [
        FlowChange("changed", "setting", f"{section}.{key}", old=str(before[key]), new=str(value))
        for key, value in after.items()
        if before.get(key) != value
    ]


def _edge_text(arrow: Arrow) -> str:
    condition = " & ".join(arrow.condition) or arrow.fallthrough or "—"
    return f"{arrow.source} → {arrow.dest} on {arrow.trigger} [{condition}]"


def _edge_changes(old: Flow, new: Flow) -> list[FlowChange]:
    before = {a.key: a for a in arrows_of(transition_table(old))}
    after = {a.key: a for a in arrows_of(transition_table(new))}
    changes = [
        FlowChange("removed", "edge", _edge_text(a)) for k, a in before.items() if k not in after
    ]
    for key, arrow in after.items():
        if key not in before:
            changes.append(FlowChange("added", "edge", _edge_text(arrow)))
        elif before[key].order != arrow.order:
            changes.append(
                FlowChange(
                    "changed",
                    "edge",
                    _edge_text(arrow),
                    where="tried",
                    old=before[key].order,
                    new=arrow.order,
                )
            )
    return changes


# -- the picture -------------------------------------------------------------------------------


def diff_graph(old: Flow, new: Flow) -> Graph:
    """``new``'s picture with what changed since ``old`` marked: added, removed, changed."""
    diff = flow_diff(old, new)
    base = flow_graph(new)
    nodes = [_diff_node(node, old, new) for node in base.nodes]
    before = {a.key: a for a in arrows_of(transition_table(old))}
    after_keys = {a.key for a in base.arrows}
    arrows = [
        a
        if a.key in before and before[a.key].order == a.order
        else replace(a, change="changed" if a.key in before else "added")
        for a in base.arrows
    ]
    arrows += [replace(a, change="removed") for k, a in before.items() if k not in after_keys]
    names = {n.name for n in nodes}
    for arrow in arrows:
        for state in (arrow.source, arrow.dest):
            if state not in names:
                nodes.append(Node(state, terminal=False, change="removed"))
                names.add(state)
    return replace(
        base,
        kind="diff",
        title=f"Flow change “{old.name}” → “{new.name}”: {_count(diff.changes)} "
        "(a diff, not the generated flow)",
        legend=(
            f"+ green: added · {MINUS} red, struck through: removed · ~ amber: changed; "
            "edges are tried 1st, 2nd, …, else.",
            *(f"{SIGNS[c.change]} {c.text()}" for c in diff.changes if c.subject == "setting"),
        ),
        nodes=tuple(nodes),
        arrows=tuple(arrows),
    )


def _marked_texts(old: tuple[str, ...], new: tuple[str, ...]) -> tuple[Text, ...]:
    """``new``'s items, those not in ``old`` marked added, then ``old``'s removed ones."""
    return tuple(Text(n, None if n in old else "added") for n in new) + tuple(
        Text(o, "removed") for o in old if o not in new
    )


def _changed_text(old: str, new: str) -> tuple[Text, tuple[Text, ...]]:
    """The new text (marked changed when it is), and the old one as a struck-through note."""
    if old == new:
        return Text(new), ()
    return Text(new, "changed"), (Text(old, "removed"),)


def _diff_node(node: Node, old: Flow, new: Flow) -> Node:
    if node.name == NEED_CATEGORY:
        text, notes = _changed_text(old.category_question.text, new.category_question.text)
        names = (*(c.name for c in new.categories), new.other_option)
        before = (*(c.name for c in old.categories), old.other_option)
        return replace(node, asks=(Ask(text, _marked_texts(before, names), notes=notes),))
    if node.name == NEED_PRIMARY_FIELD:
        old_by_name = {c.name: c for c in old.categories}
        new_names = {c.name for c in new.categories}
        asks = [_category_ask(old_by_name.get(c.name), c, new.other_option) for c in new.categories]
        asks += [
            replace(_category_ask(None, c, old.other_option), change="removed")
            for c in old.categories
            if c.name not in new_names
        ]
        return replace(node, asks=tuple(asks))
    if node.name == NEED_OTHER and old.other_option != new.other_option:
        ask = node.asks[0]
        notes = (Text(f"the text owed after “{new.other_option}”", "changed"),)
        return replace(node, asks=(replace(ask, notes=notes),))
    return node


def _category_ask(old: Category | None, new: Category, other: str) -> Ask:
    if old is None:
        keywords = (Text("keywords: " + ", ".join(new.keywords)),) if new.keywords else ()
        return Ask(
            Text(new.question.text),
            (*(Text(o) for o in new.question.options), Text(other)),
            who=Text(new.name),
            notes=keywords,
            change="added",
        )
    text, changed_notes = _changed_text(old.question.text, new.question.text)
    options = (*_marked_texts(old.question.options, new.question.options), Text(other))
    keyword_notes = tuple(
        Text(f"keyword {t.text}", t.change)
        for t in _marked_texts(old.keywords, new.keywords)
        if t.change is not None
    )
    return Ask(text, options, who=Text(new.name), notes=(*changed_notes, *keyword_notes))
