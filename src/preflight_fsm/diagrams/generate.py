"""``make diagrams``: the committed pictures under ``diagrams/`` and the generated parts of
``docs/flow.md``, rewritten from the code; a test fails when the committed ones drift.

The examples are fixed: one session (:data:`EXAMPLE_INTENTION`, :data:`EXAMPLE_STEPS`) and one
flow change (``diagrams/examples/default.toml`` → ``next.toml``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar, Final

from preflight_fsm import ClarificationMachine, Flow, default_flow, load_flow, transition_table
from preflight_fsm.diagrams.diff import diff_graph, flow_diff
from preflight_fsm.diagrams.dot import dot_graph, to_dot
from preflight_fsm.diagrams.mermaid import to_mermaid
from preflight_fsm.diagrams.model import LOCK_GUARD, Graph, arrows_of, flow_graph
from preflight_fsm.diagrams.render import pipe
from preflight_fsm.diagrams.session import session_graph
from preflight_fsm.errors import PreflightFsmError

__all__ = [
    "EXAMPLE_INTENTION",
    "EXAMPLE_STEPS",
    "FLOW_DOC",
    "GeneratedPartMissing",
    "example_flows",
    "example_session",
    "flow_doc",
    "generated_files",
    "svg_files",
    "write_diagrams",
]

EXAMPLE_INTENTION: Final = "Keep user sessions somewhere faster"
EXAMPLE_STEPS: Final[tuple[dict[str, str], ...]] = (
    {"change_category": "Database"},
    {"db_type": "Other (specify)"},
    {"db_type__other": "CockroachDB"},
)
EXAMPLE_OLD: Final = "diagrams/examples/default.toml"
EXAMPLE_NEW: Final = "diagrams/examples/next.toml"
FLOW_DOC: Final = "docs/flow.md"

_BLOCK = re.compile(
    r"(<!-- begin generated: (?P<name>[a-z-]+) -->\n)(?P<body>.*?)"
    r"(<!-- end generated: (?P=name) -->)",
    re.DOTALL,
)


class GeneratedPartMissing(PreflightFsmError):
    """docs/flow.md lacks a ``<!-- begin generated: NAME -->`` … ``end`` block the code fills."""

    code: ClassVar[str] = "generated_part_missing"


def example_session(flow: Flow | None = None) -> ClarificationMachine:
    """The session drawn in docs/flow.md: a category, "Other", then its text (three turns),
    answered at the command line (``preflight-fsm answer``, so ``answered_by`` is ``cli``)."""
    machine = ClarificationMachine(EXAMPLE_INTENTION, flow)
    for answers in EXAMPLE_STEPS:
        machine.step(answers, answered_by="cli")
    return machine


def example_flows(root: Path | str = ".") -> tuple[Flow, Flow]:
    """The two flows of the example diff, read from ``diagrams/examples/`` under ``root``."""
    base = Path(root)
    return load_flow(base / EXAMPLE_OLD), load_flow(base / EXAMPLE_NEW)


def _graphs(root: Path) -> dict[str, Graph]:
    old, new = example_flows(root)
    return {
        "diagrams/clarification": flow_graph(),
        "diagrams/session-example": session_graph(example_session()),
        "diagrams/diff-example": diff_graph(old, new),
    }


def _table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _transitions(flow: Flow) -> str:
    rows = []
    for arrow in arrows_of(transition_table(flow)):
        guards = ", ".join(f"`{g}`" for g in arrow.guards if g != LOCK_GUARD)
        lock = "yes" if LOCK_GUARD in arrow.guards else "—"
        tried = arrow.order or "at start"
        shown = guards or (f"— (else: {arrow.fallthrough})" if arrow.fallthrough else "—")
        rows.append(
            (f"`{arrow.source}`", f"`{arrow.trigger}`", tried, shown, lock, f"`{arrow.dest}`")
        )
    return _table(
        ("source", "trigger", "tried", "guards besides the lock", "lock", "destination"), rows
    )


def _keywords(flow: Flow) -> str:
    rows = [(c.name, ", ".join(f"`{k}`" for k in c.keywords) or "—") for c in flow.categories]
    return _table(("category", "keywords"), rows)


def _parts(root: Path) -> dict[str, Callable[[], str]]:
    flow = default_flow()
    return {
        "mermaid": lambda: "```mermaid\n" + to_mermaid(flow_graph(flow)) + "```",
        "transitions": lambda: _transitions(flow),
        "keywords": lambda: _keywords(flow),
        "example-diff": lambda: flow_diff(*example_flows(root)).to_markdown().rstrip("\n"),
    }


def flow_doc(text: str, root: Path | str = ".") -> str:
    """``text`` (docs/flow.md) with each generated block rewritten from the code."""
    parts = _parts(Path(root))
    found = {m.group("name") for m in _BLOCK.finditer(text)}
    missing = [name for name in parts if name not in found]
    if missing:
        raise GeneratedPartMissing(
            f"{FLOW_DOC} has no generated block for: {', '.join(missing)}; add "
            + " ".join(
                f"'<!-- begin generated: {n} -->' … '<!-- end generated: {n} -->'" for n in missing
            )
        )

    def fill(match: re.Match[str]) -> str:
        name = match.group("name")
        body = parts[name]() if name in parts else match.group("body").rstrip("\n")
        return f"{match.group(1)}{body}\n{match.group(4)}"

    return _BLOCK.sub(fill, text)


def generated_files(root: Path | str = ".") -> dict[str, bytes]:
    """The committed text files, by path under ``root`` (no Graphviz needed)."""
    base = Path(root)
    files: dict[str, bytes] = {}
    for stem, graph in _graphs(base).items():
        files[f"{stem}.dot"] = to_dot(graph).encode()
        if stem == "diagrams/clarification":
            files[f"{stem}.mmd"] = to_mermaid(graph).encode()
    files[FLOW_DOC] = flow_doc((base / FLOW_DOC).read_text(encoding="utf-8"), base).encode()
    return files


def svg_files(root: Path | str = ".") -> dict[str, bytes]:
    """The committed SVGs, rendered by Graphviz (GraphvizMissing without it)."""
    return {
        f"{stem}.svg": pipe(dot_graph(graph), "svg") for stem, graph in _graphs(Path(root)).items()
    }


def write_diagrams(root: Path | str = ".", *, svg: bool = True) -> list[Path]:
    """Rewrite ``diagrams/`` and docs/flow.md's generated parts under ``root``; the paths written.

    The text files are written first, so a missing ``dot`` (GraphvizMissing) costs only the SVGs.
    """
    base = Path(root)
    written = []
    for make in (generated_files, svg_files) if svg else (generated_files,):
        for relative, content in make(base).items():
            path = base / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
            written.append(path)
    return written
