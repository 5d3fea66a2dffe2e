"""cli/coercion.py: every command's parameters read as typer reads them, without pydantic."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
from hypothesis import given, settings
from hypothesis import strategies as st
from typer._coercion import RuntimeParam, build_runtime_param
from typer.core import TyperArgument, TyperOption

from preflight_fsm.cli import app
from preflight_fsm.cli.coercion import plain_reader


def _commands() -> Iterator[tuple[str, Any]]:
    group = typer.main.get_command(app)
    ctx = typer.Context(group)
    for name in group.list_commands(ctx):  # type: ignore[attr-defined]
        command = group.get_command(ctx, name)  # type: ignore[attr-defined]
        yield name, command
        for sub_name, sub in getattr(command, "commands", {}).items():
            yield f"{name} {sub_name}", sub


PARAMETERS: dict[str, tuple[Any, TyperArgument | TyperOption]] = {
    f"{name} {param.name}": (command, param)
    for name, command in _commands()
    for param in command.params
    if isinstance(param, (TyperArgument, TyperOption))
}


def _kinds() -> dict[str, tuple[Any, TyperArgument | TyperOption]]:
    """One parameter of each type and bounds the commands use."""
    kinds: dict[str, tuple[Any, TyperArgument | TyperOption]] = {}
    for command, param in PARAMETERS.values():
        info = param.type_descriptor.parameter_info
        kind = repr((param.type_descriptor.annotation, info.min, info.max, param.multiple))
        kinds.setdefault(kind, (command, param))
    return kinds


KINDS = _kinds()

SPELLINGS = [
    "",
    " ",
    "0",
    "-0",
    "1",
    "7",
    "007",
    " 7",
    "1_000",
    "1.0",
    "1.5",
    "0.05",
    "0.1",
    "-3",
    "+3",
    "1e3",
    "inf",
    "nan",
    "65535",
    "65536",
    "1023",
    "1024",
    "99999999999999999999",
    "true",
    "FALSE",
    " yes ",
    "dot",
    "SVG",
    "jpg",
    "flow.toml",
    "./flow.toml",
    "a/./b/",
    "/",
    "~",
    "-",
    "\u0661",
]


def _read(runtime: RuntimeParam, value: Any, command: Any, param: Any) -> tuple[str, Any]:
    ctx = typer.Context(command)
    try:
        read = runtime.coerce(value, param=param, ctx=ctx)
    except Exception as refused:  # the refusal's type and message are what must agree
        return type(refused).__name__, getattr(refused, "message", str(refused))
    if isinstance(read, float) and math.isnan(read):
        return "nan", None
    return type(read).__name__, read


TYPERS = {kind: build_runtime_param(param.type_descriptor) for kind, (_, param) in KINDS.items()}
"""typer's own coercion of each kind, pydantic's adapters built once."""


def _same_as_typer(kind: str, value: Any) -> None:
    command, param = KINDS[kind]
    ours = param.get_runtime_param()
    for one in (value, (value,) if param.multiple or param.nargs != 1 else value):
        assert _read(TYPERS[kind], one, command, param) == _read(ours, one, command, param), one


def test_every_parameter_of_every_command_is_read_without_typers_adapter() -> None:
    """A new option of a type the readers do not know would import pydantic at every run."""
    assert [] == [
        where
        for where, (_, param) in PARAMETERS.items()
        if plain_reader(param.type_descriptor) is None
    ]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_spelling_is_read_or_refused_exactly_as_typer_does(kind: str) -> None:
    """Accepted values are equal and of one type; a refusal has typer's own message."""
    for value in SPELLINGS:
        _same_as_typer(kind, value)


# The texts of r"[-+ ]?[0-9]{1,20}(\.[0-9]{0,16})?", built from their parts: st.from_regex drew
# them at about 2.5 ms of CPU each, three times these.
NUMBERS = st.builds(
    "{}{}{}".format,
    st.sampled_from(["", "-", "+", " "]),
    st.text("0123456789", min_size=1, max_size=20),
    st.just("") | st.text("0123456789", max_size=16).map(".{}".format),
)


@pytest.mark.parametrize("kind", sorted(KINDS))
@settings(max_examples=40, deadline=None)
@given(
    value=st.one_of(
        NUMBERS, st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=12)
    )
)
def test_any_text_is_read_or_refused_exactly_as_typer_does(kind: str, value: str) -> None:
    """Numbers, bounds, paths and choices: whatever is typed, ours and typer's agree."""
    _same_as_typer(kind, value)


def test_a_path_refused_is_named_in_the_words_it_was_typed(tmp_path: Path) -> None:
    """typer names a refused path as typed (`DIR/./`), not as Path prints it (`DIR`)."""
    (tmp_path / "file").write_text("x")
    checked = [
        (where, command, param)
        for where, (command, param) in PARAMETERS.items()
        if param.type_descriptor.annotation is Path
        and not (param.type_descriptor.parameter_info.dir_okay)
    ]
    assert checked  # `show --snapshot`, `diagram --out`: a file, never a directory
    for where, command, param in checked:
        typers = build_runtime_param(param.type_descriptor)
        for typed in (f"{tmp_path}/./", str(tmp_path), f"{tmp_path}/./file", f"{tmp_path}/no"):
            assert _read(typers, typed, command, param) == _read(
                param.get_runtime_param(), typed, command, param
            ), where


COMMAND_LINES = [
    ["start", "Add login", "--json", "--expire-after", "30", "--flow", "flow.toml"],
    ["answer", "abc123", "category=3", "--text", "--store", "s.sqlite3"],
    ["people", "add", "Ada", "--port", "8080", "--link-ttl", "60", "--people", "p.json"],
    ["conformance", "mod:Adapter", "--min-agreement", "0.9", "--deadline", "5"],
]
"""Text, flags, paths, lists, bounded ints and floats: each command's module imports no pydantic."""

PROBE = """
import json, sys
import typer.main
from preflight_fsm.cli import app
group = typer.main.get_command(app)
read = []
for argv in json.loads(sys.argv[1]):
    command = group.get_command(typer.Context(group), argv[0])
    command.callback = lambda **values: read.append(sorted(values))
    command.main(argv[1:], standalone_mode=False)
print(json.dumps([read, sorted(m for m in sys.modules if "pydantic" in m)]))
"""


def test_the_commands_read_their_parameters_without_importing_pydantic() -> None:
    """Run with their engine replaced by a stub, the commands have read their values, no pydantic.

    One interpreter for the four: none may import pydantic, so none leaves it for the next.
    """
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(COMMAND_LINES)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert 0 == done.returncode, done.stderr
    read, pydantic = json.loads(done.stdout)
    assert len(COMMAND_LINES) == len(read)
    assert all(read)
    assert [] == pydantic


WHOLE = """
import atexit, sys
atexit.register(lambda: print(sorted(m for m in sys.modules if "pydantic" in m), file=sys.stderr))
sys.argv[0] = "preflight-fsm"
from preflight_fsm.__main__ import main
main()
"""


@pytest.mark.parametrize("argv", [["start", "--help"], ["answer", "--help"]])
def test_a_command_help_page_imports_no_pydantic(argv: list[str]) -> None:
    """typer built the root's --version adapter for every command: even a help page paid it."""
    done = subprocess.run(
        [sys.executable, "-c", WHOLE, *argv], capture_output=True, text=True, timeout=120
    )
    assert 0 == done.returncode, done.stderr
    assert "[]" == done.stderr.strip().splitlines()[-1]
