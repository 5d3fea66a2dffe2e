"""The answer page's HTML: server-rendered, no script, every control labelled (docs/web.md).

Every text a person or an agent typed (the intention, answers, the engine's feedback) is
escaped here, once. The page's only asset is the stylesheet the server serves itself
(:data:`STYLESHEET`), so the Content-Security-Policy can forbid everything else.
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape
from typing import Final

from preflight_fsm.turn import Question, Turn

__all__ = [
    "CSRF_FIELD",
    "DECLINE",
    "STYLESHEET",
    "STYLESHEET_PATH",
    "decision_page",
    "document",
    "notice_page",
    "questions_page",
    "turn_page",
]

CSRF_FIELD: Final = "csrf_token"
"""The form's hidden field holding the link's cross-site token."""
DECLINE: Final = "decline"
"""The value of the submit button that declines the turn (no decision)."""
STYLESHEET_PATH: Final = "/answer-assets/page.css"

STYLESHEET: Final = """\
body { font: 16px/1.5 system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem;
  color: #1b1b1b; background: #fff; }
h1 { font-size: 1.4rem; }
.intention { border-left: 4px solid #4a6fa5; padding: .25rem .75rem; background: #f3f6fa;
  white-space: pre-wrap; }
fieldset { border: 1px solid #b8c2cc; border-radius: 4px; margin: 1rem 0; padding: .75rem 1rem; }
legend { font-weight: 600; padding: 0 .25rem; }
label { display: block; padding: .2rem 0; }
input[type=text] { width: 100%; box-sizing: border-box; font: inherit; padding: .35rem; }
.problem { border: 2px solid #b00020; background: #fdecee; padding: .5rem .75rem; }
.decision { border: 2px solid #2e7d32; background: #edf7ee; padding: .5rem .75rem; }
button { font: inherit; padding: .4rem 1rem; margin-right: .5rem; }
pre { background: #f3f6fa; border: 1px solid #b8c2cc; padding: .5rem .75rem; font-size: .85rem;
  white-space: pre-wrap; overflow-wrap: anywhere; }
:focus-visible { outline: 3px solid #4a6fa5; outline-offset: 2px; }
"""


def document(title: str, body: str, script: str | None = None) -> str:
    """A whole page around ``body``, with the server's stylesheet and, if given, its
    same-origin ``script`` (never inline: the Content-Security-Policy forbids that)."""
    loaded = f'<script src="{escape(script)}" defer></script>\n' if script else ""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n"
        f'<link rel="stylesheet" href="{STYLESHEET_PATH}">\n{loaded}</head>\n'
        f"<body>\n<main>\n{body}</main>\n</body>\n</html>\n"
    )


def _intention(intention: str) -> str:
    return (
        '<h2 id="intention-label">What is being decided</h2>\n'
        f'<p class="intention" aria-labelledby="intention-label">{escape(intention)}</p>\n'
    )


def _choice(q: Question, companion: Question | None) -> str:
    kind = "checkbox" if q.type == "multi_choice" else "radio"
    required = " required" if kind == "radio" and not q.optional else ""
    rows = []
    for i, option in enumerate(q.options or ()):
        ident = f"{q.id}-{i}"
        rows.append(
            f'<label for="{escape(ident)}"><input type="{kind}" id="{escape(ident)}" '
            f'name="{escape(q.id)}" value="{escape(option)}"{required}> {escape(option)}</label>'
        )
    if companion is not None:
        ident = f"{companion.id}-text"
        rows.append(
            f'<label for="{escape(ident)}">{escape(companion.question)}</label>'
            f'<input type="text" id="{escape(ident)}" name="{escape(companion.id)}" '
            'maxlength="500" autocomplete="off">'
        )
    return (
        f"<fieldset>\n<legend>{escape(q.question)}</legend>\n" + "\n".join(rows) + "\n</fieldset>\n"
    )


def _free_text(q: Question) -> str:
    ident = f"{q.id}-text"
    required = "" if q.optional else " required"
    return (
        f'<fieldset>\n<legend><label for="{escape(ident)}">{escape(q.question)}</label></legend>\n'
        f'<input type="text" id="{escape(ident)}" name="{escape(q.id)}" maxlength="500" '
        f'autocomplete="off"{required}>\n</fieldset>\n'
    )


def _questions(questions: Iterable[Question]) -> str:
    questions = tuple(questions)
    companions = {q.depends_on_question_id: q for q in questions if q.depends_on_question_id}
    parts = []
    for q in questions:
        if q.depends_on_question_id in {p.id for p in questions}:
            continue  # shown with its choice question
        if q.type == "free_text":
            parts.append(_free_text(q))
        else:
            parts.append(_choice(q, companions.get(q.id)))
    return "".join(parts)


def turn_page(
    intention: str, turn: Turn, action: str, csrf: str, problem: str | None = None
) -> str:
    """The form for ``turn``, posting to ``action``, with the engine's ``problem`` above it."""
    return questions_page(intention, turn.number, turn.questions, action, csrf, problem)


def questions_page(
    intention: str,
    number: int,
    questions: Iterable[Question],
    action: str,
    csrf: str,
    problem: str | None = None,
) -> str:
    """The form asking ``questions`` (turn ``number``), posting to ``action``, with
    ``problem`` above it: any front end's round (Preflights' too, in its own wording)."""
    shown = ""
    if problem:
        shown = (
            '<div class="problem" role="alert"><p><strong>Not recorded:</strong> '
            f"{escape(problem)}</p><p>Answer again below.</p></div>\n"
        )
    body = (
        "<h1>A decision needs your answer</h1>\n"
        + _intention(intention)
        + shown
        + f'<form method="post" action="{escape(action)}">\n'
        + f'<input type="hidden" name="{CSRF_FIELD}" value="{escape(csrf)}">\n'
        + f"<p>Question turn {number}.</p>\n"
        + _questions(questions)
        + '<button type="submit" name="action" value="answer">Answer</button>'
        + f'<button type="submit" name="action" value="{DECLINE}" formnovalidate>'
        "Decline (no decision)</button>\n</form>\n"
    )
    return document("Answer: " + intention[:60], body)


def decision_page(intention: str, turn: Turn) -> str:
    """The session's outcome: the decision's category and fields, or that there is none."""
    if turn.patch is None:
        outcome = "<p>No decision was recorded: the questions were declined or left open.</p>"
    else:
        rows = [f"<dt>Category</dt><dd>{escape(turn.patch.category)}</dd>"]
        rows += [f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in turn.patch.fields]
        outcome = "<dl>" + "".join(rows) + "</dl>"
    body = (
        "<h1>Thank you: the session is finished</h1>\n"
        + _intention(intention)
        + f'<div class="decision" role="status">{outcome}</div>\n'
        "<p>You can close this page.</p>\n"
    )
    return document("Decided: " + intention[:60], body)


def notice_page(title: str, message: str) -> str:
    """A page saying why nothing could be done (a used, expired or unknown link)."""
    body = f'<h1>{escape(title)}</h1>\n<p role="alert">{escape(message)}</p>\n'
    return document(title, body)
