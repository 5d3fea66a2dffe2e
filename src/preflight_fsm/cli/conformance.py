"""``preflight-fsm conformance ADAPTER``: how far an LLM adapter agrees with the engine.

ADAPTER is a provider Preflights has an adapter for (``anthropic``, ``openai``, ``openrouter``:
keys and model as ``pf --llm-provider`` reads them), ``preflights-mock`` (Preflights' own
``MockLLMAdapter``), ``engine`` (this engine: 100% by construction), ``module:factory`` (a
callable returning an ``LLMPort``), or a recording (a ``.jsonl`` file, replayed with no
network). The adapter is driven through every path of the flow (``preflight_fsm.llm.conformance``)
and agreement is printed per rule and per transition.

Exit codes: 0, or 1 when agreement is below ``--min-agreement``; 2 when the adapter cannot be
made (no key, no SDK, a missing or unreadable recording, a factory that does not import).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Annotated, Any

import typer

from preflight_fsm.cli import app

__all__ = ["EXIT_BELOW", "EXIT_UNUSABLE", "adapter_for"]

EXIT_BELOW = 1
EXIT_UNUSABLE = 2


def adapter_for(target: str, *, deadline: float, record: str | None = None) -> Any:
    """The adapter ``target`` names; raises ValueError saying what to send instead."""
    from preflight_fsm.llm.providers import PROVIDERS, provider_adapter
    from preflight_fsm.llm.recording import RecordingLLMAdapter, ReplayLLMAdapter

    if target in PROVIDERS:
        adapter = provider_adapter(target, deadline=deadline)
        return RecordingLLMAdapter(adapter, record) if record else adapter
    if target == "preflights-mock":
        from preflights.adapters.mock_llm import MockLLMAdapter

        return MockLLMAdapter()
    if target == "engine":
        from preflight_fsm.integrations.preflights import FsmLLMAdapter

        return FsmLLMAdapter()
    if target.endswith(".jsonl") or Path(target).is_file():
        return ReplayLLMAdapter(target)
    module_name, colon, factory = target.partition(":")
    if colon and module_name and factory:
        try:
            made = getattr(importlib.import_module(module_name), factory)
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"cannot load {target}: {exc}") from None
        if not callable(made):
            raise ValueError(f"{target} is not callable: name a function returning an LLMPort")
        try:
            return made()
        except Exception as exc:  # the factory is the user's code: its failure is theirs to see
            raise ValueError(f"{target}() failed: {type(exc).__name__}: {exc}") from None
    raise ValueError(
        f"{target!r} is no adapter: send a provider ({', '.join(PROVIDERS)}), preflights-mock, "
        "engine, module:factory, or a recording file (.jsonl)"
    )


@app.command()
def conformance(
    adapter: Annotated[
        str,
        typer.Argument(
            help="anthropic|openai|openrouter, preflights-mock, engine, module:factory, or a "
            ".jsonl recording."
        ),
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    markdown: Annotated[
        bool, typer.Option("--markdown", help="Print the report as Markdown tables.")
    ] = False,
    min_agreement: Annotated[
        float | None,
        typer.Option(
            "--min-agreement",
            min=0.0,
            max=1.0,
            help="Exit 1 when the share of checks agreed (0 to 1) is below this.",
        ),
    ] = None,
    record: Annotated[
        str | None,
        typer.Option("--record", help="A provider's exchanges are appended to this JSONL file."),
    ] = None,
    deadline: Annotated[
        str | None,
        typer.Option(
            "--deadline", help="Seconds a provider has per call (PREFLIGHT_FSM_LLM_DEADLINE)."
        ),
    ] = None,
) -> None:
    """Drive an LLM adapter through every path of the flow; print agreement with the engine."""
    from preflight_fsm.cli.report import CommandFailed
    from preflight_fsm.llm.conformance import conform, report_json
    from preflight_fsm.llm.guard import deadline_from

    try:
        made = adapter_for(adapter, deadline=deadline_from(deadline), record=record)
    except ValueError as exc:
        raise CommandFailed("adapter_unusable", str(exc), EXIT_UNUSABLE) from None
    report = conform(made, name=adapter)
    if as_json:
        typer.echo(report_json(report))
    elif markdown:
        typer.echo(report.markdown())
    else:
        typer.echo(report.text())
    if min_agreement is not None and report.agreement < min_agreement:
        if not as_json:
            typer.echo(
                f"agreement {report.agreement:.3f} is below --min-agreement {min_agreement:g}",
                err=True,
            )
        raise typer.Exit(EXIT_BELOW)
