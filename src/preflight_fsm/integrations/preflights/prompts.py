"""``preflight-fsm pf``'s choice prompt: "did you mean" for a near miss, as ``chat`` asks.

Preflights' own prompt refuses any text that is not an option (``Databse``); ``chat`` sends such
a text as a custom value. Both now ask first: yes takes the option, no keeps the text typed, here
as the "Other (specify)" text (what the engine makes of a custom value, C5).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final

import click
from preflights.cli import prompts as pf_prompts

from preflight_fsm.suggest import nearest

__all__ = ["near_miss_prompts"]

_OTHER: Final = "Other (specify)"


Choice = tuple[str, str | None]
"""What pf's single-choice prompt returns: the option, and the Other text if any."""


def _asking(original: Callable[[Any], Choice], max_chars: int) -> Callable[[Any], Choice]:
    """Preflights' ``prompt_single_choice`` (same prompts, same errors), asking on a near miss;
    an "Other (specify)" text over ``max_chars`` asks for the text again, keeping the choice."""

    def prompt_single_choice(question: Any) -> Choice:
        options = list(question.options or ())
        if not options:
            return original(question)
        by_text = {o.casefold(): o for o in options}
        while True:
            typed = _ask(question.id)
            if not typed:
                if question.optional:
                    return ("", None)
                _error("Please select an option")
                continue
            picked = by_text.get(typed.casefold())
            if typed.isdigit() and 1 <= int(typed) <= len(options):
                picked = options[int(typed) - 1]
            if picked is None:
                near = nearest(typed, [o for o in options if o != _OTHER])
                if near is None:
                    _error(f"Invalid option. Enter 1-{len(options)} or option text")
                    continue
                if not click.confirm(f'   Did you mean "{near}"?', default=True):
                    click.echo(f'   Kept as typed: "{typed}", as the {_OTHER} text.')
                    return (_OTHER, _fitted(typed, max_chars))
                picked = near
            if picked != _OTHER:
                return (picked, None)
            text = _fitted(_ask("Please specify"), max_chars)
            if text:
                return (_OTHER, text)
            _error("Please provide a value for 'Other'")

    return prompt_single_choice


def _fitted(text: str, max_chars: int) -> str:
    """``text``, or, while it is over ``max_chars``, the text asked again (the choice stays)."""
    while len(" ".join(text.split())) > max_chars:
        _error(f"At most {max_chars} characters, this is {len(' '.join(text.split()))}")
        text = _ask("Please specify")
    return text


def _ask(label: str) -> str:
    typed: str = click.prompt(click.style(f"   {label}", fg="cyan"), default="", show_default=False)
    return typed.strip()


def _error(message: str) -> None:
    click.echo(click.style(f"   Error: {message}", fg="red"))


@contextmanager
def near_miss_prompts(max_chars: int) -> Iterator[None]:
    """Within: pf's single-choice prompts ask "did you mean" before refusing a near miss, and
    ask an "Other (specify)" text over ``max_chars`` (the flow's limit) again."""
    original = pf_prompts.prompt_single_choice
    pf_prompts.prompt_single_choice = _asking(original, max_chars)  # type: ignore[assignment]
    try:
        yield
    finally:
        pf_prompts.prompt_single_choice = original
