"""C5 for what an LLM writes: its texts reach people, agents and decision files as they are.

A question, an option, a category or a patch value of an LLM's reply is shown on a terminal,
returned in an MCP tool result, and written to an ADR, a task and ``ARCHITECTURE_STATE.md``. Each
is held to C5's rules as what a person types is (``preflight_fsm.text``: :func:`~text.refused`,
:func:`~text.lookalike`), and, being one line where it is shown, may hold no line break. A reply
with any such text is not used: the guard answers with the engine's and reports why.

>>> len(c5_problems(["Which database?", "MySQL\\r      1. Postgre\\u200bSQL"], ["PostgreSQL"]))
1
>>> c5_problems(["Use OAuth 2.0"], ["OAuth"])
[]
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from typing import Any, Final

from preflight_fsm.text import describe_refused, lookalike, refused

__all__ = ["c5_problems", "patch_texts", "turn_texts"]

# Line breaks as str.splitlines knows them: each starts a line where one text is shown.
_BREAKS: Final = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


def c5_problems(texts: Iterable[str], options: Iterable[str] = ()) -> list[str]:
    """What in ``texts`` C5 refuses: a refused code point, a line break, a look-alike word or a
    look-alike of one of ``options``; one line each, [] when nothing is."""
    choices = tuple(options)
    problems: list[str] = []
    for text in texts:
        # The report shows the text escaped to ASCII: it reaches a terminal and a log itself.
        names = sorted(set(refused(text)))
        breaks = sorted(c for c in _BREAKS.intersection(text) if f"U+{ord(c):04X}" not in names)
        if names or breaks:
            found = [describe_refused(names).split(": send")[0]] if names else []
            if breaks:
                shown = ", ".join(f"U+{ord(c):04X} {_break_name(c)}" for c in breaks)
                found.append(f"breaks its line ({shown})")
            problems.append(f"C5: {text!a} {'; and '.join(found)}")
            continue
        deceptive = lookalike(text, choices)
        if deceptive is not None:
            like = f", like {deceptive.resembles!a}" if deceptive.resembles else ""
            problems.append(
                f"C5: {text!a} has the look-alike {deceptive.text!a} "
                f"({', '.join(deceptive.scripts)}{like})"
            )
    return problems


def _break_name(char: str) -> str:
    return unicodedata.name(char, "control")


def turn_texts(reply: Any) -> list[str]:
    """Every text of a Preflights ``LLMResponse`` that is shown: questions and options."""
    texts: list[str] = []
    for question in getattr(reply, "questions", ()):
        texts.append(str(question.question))
        texts.extend(str(option) for option in question.options or ())
    return texts


def patch_texts(patch: Any) -> list[str]:
    """Every text of a Preflights ``DecisionPatch`` that is written: category, keys, values."""
    if patch is None:
        return []
    texts = [str(patch.category)]
    for key, value in patch.fields:
        texts += [str(key), str(value)]
    return texts
