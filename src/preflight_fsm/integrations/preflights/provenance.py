"""Who answered each decided value, written into the ADR and task Preflights wrote (C9).

Preflights' own files say what was decided, not who decided it. Once a session completes, the
application (``application.py``) appends a short section to each file it wrote: every value of
the decision with its source, the ``answered_by`` of the step that supplied it (``cli`` for
``pf``, ``agent`` or ``user_form`` for ``mcp --preflights``), or ``intention`` where the intention's
own words decided it (the keyword shortcut, or a value Preflights pre-filled from them).
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Final

from preflight_fsm.answered_by import Source
from preflight_fsm.flow import Flow

__all__ = ["HEADING", "answered_by_section", "decided_sources", "note_who_answered"]

HEADING: Final = "## Who answered"

logger = logging.getLogger("preflight_fsm.integrations.preflights")


def decided_sources(
    flow: Flow,
    category: str,
    decided_by: Sequence[tuple[str, Source]],
    prefilled: Collection[str],
) -> tuple[tuple[str, Source], ...]:
    """``decided_by`` with ``intention`` for each value whose question Preflights pre-filled
    from the intention (``prefilled``: question ids) before anyone answered it."""
    qids = {"Category": flow.category_question.id}
    qids[flow.other_category.field] = flow.other_category.description_id
    for candidate in flow.categories:
        if candidate.name == category:
            qids[candidate.question.field] = candidate.question.id
            qids.update((s.field, s.id) for s in candidate.secondary)
    return tuple(
        (name, "intention" if qids.get(name) in prefilled else source)
        for name, source in decided_by
    )


def answered_by_section(decided: Sequence[tuple[str, Source]]) -> str:
    """The Markdown section listing who supplied each decided value."""
    lines = [
        HEADING,
        "",
        "Who supplied each decided value, as preflight-fsm recorded it (`answered_by`: user_form "
        "= the person in a form, agent = the AI agent's tool arguments, cli = typed at the "
        "command line, intention = the intention's own words).",
        "",
    ]
    lines += [f"- {name}: {source}" for name, source in decided]
    return "\n".join(lines) + "\n"


def note_who_answered(
    repo_path: str, paths: Sequence[str | None], decided: Sequence[tuple[str, Source]]
) -> None:
    """Append :func:`answered_by_section` to each file of ``paths`` (relative to the repository)
    that exists and does not hold one yet."""
    if not decided:
        return
    section = answered_by_section(decided)
    for relative in paths:
        if not relative:
            continue
        path = Path(repo_path) / relative
        try:
            text = path.read_text(encoding="utf-8")
            if HEADING in text:
                continue
            path.write_text(text.rstrip("\n") + "\n\n" + section, encoding="utf-8")
        except OSError as exc:  # the decision is written; its note is not worth failing it
            logger.warning("could not note who answered in %s: %s", path, exc)
