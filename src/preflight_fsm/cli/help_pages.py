"""Help pages in a person's words: names and values, never Python's types.

typer 0.2x prints each argument with its type (``SESSION_ID <str>``, ``ANSWERS <list[str]>``),
an option without a metavar as ``--host <str>``, and a required argument in braces on the usage
line (``{SESSION_ID}``). :func:`plain_help` makes them read as click prints them: the name alone,
``[OPTIONAL]``, a choice as ``[dot|svg|png]``, any other value by its option's name (``--host
HOST``); each page ends with its examples (``examples.py``) before its exit codes. Applied once,
when the command line is imported.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

from preflight_fsm.cli.examples import examples_of

__all__ = ["plain_help"]


def _argument_type(self: TyperArgument, ctx: Any) -> str:
    return ""  # the argument's name, in capitals, is what the page shows


def _usage_name(self: TyperArgument) -> str:
    name = self.display_name_raw if self.required else f"[{self.display_name_raw}]"
    return name if self.nargs == 1 else f"{name}..."


def _option_value(self: TyperOption, ctx: Any) -> str:
    choices = self.type_descriptor.choices
    if choices is not None:
        return "[" + "|".join(str(getattr(c, "value", c)) for c in choices) + "]"
    return (self.name or "value").upper()


def _with_examples(format_epilog: Any) -> Any:
    def with_examples(self: Any, ctx: Any, formatter: Any) -> None:
        command = None if ctx.parent is None else ctx.info_name
        shown = examples_of(command)
        if shown:
            formatter.write_paragraph()
            formatter.write_text("Examples:")
            with formatter.indentation():
                for example in shown:
                    formatter.write(f"{'':>{formatter.current_indent}}$ {example}\n")
        format_epilog(self, ctx, formatter)

    return with_examples


def plain_help() -> None:
    """Every help page from now on shows names and values instead of types."""
    TyperArgument.display_type = _argument_type  # type: ignore[method-assign,assignment]
    TyperArgument._usage_display_name = _usage_name  # type: ignore[method-assign]
    TyperOption.display_type = _option_value  # type: ignore[method-assign,assignment]
    for page in (TyperCommand, TyperGroup):
        page.format_epilog = _with_examples(page.format_epilog)  # type: ignore[method-assign]
