"""``preflight-fsm pf``'s LLM options: Preflights' own selection, run under the guard.

pf's ``--llm``, ``--llm-provider NAME`` and ``--llm-strict`` are taken out of the arguments
before Preflights' command line sees them (its own handling would swap the engine's application
for its own), and so are the guard's: ``--llm-deadline SECONDS``, ``--llm-record FILE``,
``--llm-replay FILE`` and ``--quiet``. Any pf command takes them, so ``pf answer`` asks the LLM
for the next turn too.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final

from preflight_fsm.flow import Flow
from preflight_fsm.llm.guard import GuardedLLMAdapter, Replacement, deadline_from
from preflight_fsm.llm.providers import ProviderUnavailable, chosen_provider, provider_adapter
from preflight_fsm.llm.recording import RecordingLLMAdapter, ReplayLLMAdapter

__all__ = [
    "ENGINE_HEADER",
    "FLAGS",
    "VALUED",
    "LLMOptions",
    "configured_guard",
    "engine_header",
    "split_llm_options",
]

ENGINE_HEADER: Final = "LLM: none, the preflight-fsm engine answers"
"""pf's header when no LLM runs (none asked, or a fallback): Preflights' would name the engine's
adapter as if it were a provider."""

FLAGS: Final = ("--llm", "--llm-strict", "--quiet")
"""The options without a value."""
VALUED: Final = ("--llm-provider", "--llm-deadline", "--llm-record", "--llm-replay")
"""The options with one (``--opt VALUE`` or ``--opt=VALUE``)."""


@dataclass(frozen=True, slots=True)
class LLMOptions:
    """What pf's arguments ask of an LLM."""

    llm: bool = False
    strict: bool = False
    quiet: bool = False
    provider: str | None = None
    deadline: str | None = None
    record: str | None = None
    replay: str | None = None

    @property
    def asked(self) -> bool:
        """True when any option asks for an LLM."""
        return self.llm or self.provider is not None or self.replay is not None

    def guard(
        self,
        flow: Flow | None = None,
        *,
        environ: Mapping[str, str] | None = None,
        report: Callable[[str], None] | None = None,
    ) -> GuardedLLMAdapter | None:
        """The guarded adapter these options choose; None for the engine alone.

        Raises ValueError (ProviderUnavailable, RecordingError) naming what to set: always for
        a bad deadline, an unknown provider or a missing recording; for a missing key or SDK
        only with ``--llm-strict`` (else ``report`` is told the engine answers alone, as
        Preflights falls back to its mock).
        """
        if self.deadline is not None:
            deadline_from(self.deadline)  # a bad --llm-deadline is refused, LLM or not
        if not self.asked:
            return None
        say = report or _stderr
        deadline = deadline_from(self.deadline)
        environ = os.environ if environ is None else environ
        if self.replay is not None:
            llm: object = ReplayLLMAdapter(self.replay)
        else:
            name = chosen_provider(self.provider, environ)
            if name == "mock":
                return None
            try:
                llm = provider_adapter(name, deadline=deadline, environ=environ)
            except ProviderUnavailable as exc:
                if self.strict:
                    raise
                say(f"preflight-fsm: {exc}; the engine answers alone")
                return None
            if self.record is not None:
                llm = RecordingLLMAdapter(llm, self.record)  # type: ignore[arg-type]

        # Preflights' adapters log each failure as a warning; the guard's one line says it.
        logging.getLogger("preflights.adapters").setLevel(logging.ERROR)

        def replaced(replacement: Replacement) -> None:
            if not self.quiet:
                say(replacement.line())

        return GuardedLLMAdapter(llm, flow=flow, deadline=deadline, on_replacement=replaced)


def configured_guard(
    flow: Flow | None = None, *, report: Callable[[str], None] | None = None
) -> GuardedLLMAdapter | None:
    """The guard over the provider ``$PREFLIGHTS_LLM_PROVIDER`` names, if any (a server's way:
    ``mcp --preflights``); None for the engine alone. Raises ValueError as LLMOptions.guard."""
    if chosen_provider(None) == "mock" or not os.environ.get("PREFLIGHTS_LLM_PROVIDER"):
        return None
    return LLMOptions(llm=True).guard(flow, report=report)


def split_llm_options(args: Sequence[str]) -> tuple[LLMOptions, list[str]]:
    """The LLM options in ``args`` (up to a ``--``), and the arguments left for pf.

    Raises ValueError for an option given without its value.
    """
    values: dict[str, str] = {}
    flags: set[str] = set()
    rest: list[str] = []
    items = list(args)
    i = 0
    while i < len(items):
        arg = items[i]
        if arg == "--":
            rest += items[i:]
            break
        name, has_value, value = arg.partition("=")
        if arg in FLAGS:
            flags.add(arg)
        elif name in VALUED:
            if not has_value:
                if i + 1 >= len(items) or items[i + 1].startswith("--"):
                    raise ValueError(f"{name} needs a value, e.g. {name} {_EXAMPLES[name]}")
                i += 1
                value = items[i]
            values[name] = value
        else:
            rest.append(arg)
        i += 1
    options = LLMOptions(
        llm="--llm" in flags,
        strict="--llm-strict" in flags,
        quiet="--quiet" in flags,
        provider=values.get("--llm-provider"),
        deadline=values.get("--llm-deadline"),
        record=values.get("--llm-record"),
        replay=values.get("--llm-replay"),
    )
    return options, rest


_EXAMPLES: Final = {
    "--llm-provider": "anthropic",
    "--llm-deadline": "10",
    "--llm-record": "exchanges.jsonl",
    "--llm-replay": "exchanges.jsonl",
}


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@contextmanager
def engine_header() -> Iterator[None]:
    """Within: pf's ``LLM: …`` header says the engine answers when no LLM runs, not a provider."""
    from preflights.cli import main as pf_main

    from preflight_fsm.integrations.preflights.adapter import FsmLLMAdapter

    # pf's main module imports the function by name: that name is the one its commands call.
    original: Callable[..., None] = pf_main.print_llm_provider_info  # type: ignore[attr-defined]

    def print_llm_provider_info(provider: str, *args: Any, **kwargs: Any) -> None:
        if provider != FsmLLMAdapter.provider:
            original(provider, *args, **kwargs)
        elif not kwargs.get("json_output"):
            import click

            click.echo(click.style(ENGINE_HEADER, fg="cyan"))

    pf_main.print_llm_provider_info = print_llm_provider_info  # type: ignore[attr-defined]
    try:
        yield
    finally:
        pf_main.print_llm_provider_info = original  # type: ignore[attr-defined]
