"""Command-line values read without pydantic, exactly as typer reads them.

typer 0.29 coerces every parameter through a pydantic ``TypeAdapter`` built when the command runs
(``typer/_coercion.py``, ``typer/_adapters.py``): any command with a parameter imports pydantic
and builds adapters, which alone costs more than twice ``pf --help`` (docs/performance.md, D276).
:func:`plain_coercion` gives each parameter a reader that decides the plain spellings itself: a
string, a flag, a decimal number within its bounds, a path, one of a choice's values, and lists
and tuples of them. Anything else (a refused value, ``1_000``, `` 7``, a type it does not know) is
handed to typer's own coercion, so what is accepted, and every refusal's message, stay typer's;
``tests/test_cli_coercion.py`` holds the readers equal to typer's. Applied once, when the command
line is imported. typer has no public way to coerce without an adapter (``parser=`` builds one
too), so this replaces ``_TyperParameter.get_runtime_param``: pyproject pins typer below 0.30.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any, cast, get_args, get_origin

from typer._coercion import RuntimeParam, TypeDescriptor, build_runtime_param
from typer._param_types import choice_coercion_annotation, coerce_cli_choice, coerce_cli_path
from typer.core import _TyperParameter
from typer.models import ParameterInfo

__all__ = ["plain_coercion", "plain_reader"]

UNDECIDED: Any = object()
"""What a reader returns for a value it leaves to typer's own coercion."""

Reader = Callable[[Any, Any, Any], Any]
"""``(value, param, ctx) -> the coerced value``, or :data:`UNDECIDED`."""

_INT = r"-?(?:0|[1-9][0-9]{0,17})"
_FLOAT = r"-?(?:0|[1-9][0-9]{0,14})(?:\.[0-9]{1,15})?"
"""The decimal spellings read here (compiled at the first number read, not by ``--help``)."""
_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE = frozenset({"0", "off", "f", "false", "n", "no"})


def _read_str(value: Any, param: Any, ctx: Any) -> Any:
    return value if type(value) is str else UNDECIDED


def _read_bool(value: Any, param: Any, ctx: Any) -> Any:
    if type(value) is bool:
        return value
    if type(value) is str:
        word = value.strip().lower()
        if word in _TRUE:
            return True
        if word in _FALSE or word == "":
            return False
    return UNDECIDED


def _number_reader(kind: type[Any], info: ParameterInfo) -> Reader | None:
    if info.clamp:
        return None
    spelling = _INT if kind is int else _FLOAT
    low, high = info.min, info.max

    def read_number(value: Any, param: Any, ctx: Any) -> Any:
        typed = type(value) is str and re.fullmatch(spelling, value) is not None
        if not (typed or type(value) is kind or (kind is float and type(value) is int)):
            return UNDECIDED
        number = kind(value)
        if (low is not None and number < low) or (high is not None and number > high):
            return UNDECIDED  # typer's own refusal and its message
        return number

    return read_number


def _path_reader(info: ParameterInfo) -> Reader | None:
    if info.path_type is not None or info.allow_dash:
        return None

    def read_path(value: Any, param: Any, ctx: Any) -> Any:
        # typer builds Path(value) through pydantic, then checks the path (exists, readable...)
        # and names it in its messages as it was typed: checked as typed, then made a Path.
        if isinstance(value, Path):
            return coerce_cli_path(value, info, path_type=Path, param=param, ctx=ctx)
        if type(value) is str and value and "\x00" not in value:
            checked = coerce_cli_path(value, info, path_type=None, param=param, ctx=ctx)
            return Path(cast("str", checked))  # with no path_type, the str it was given
        return UNDECIDED

    return read_path


def _choice_reader(annotation: Any, info: ParameterInfo) -> Reader | None:
    choice = choice_coercion_annotation(annotation, info)
    if choice is None:
        return None
    choices, case_sensitive = choice

    def read_choice(value: Any, param: Any, ctx: Any) -> Any:
        if not isinstance(value, (str, Enum)):
            return UNDECIDED
        try:
            return coerce_cli_choice(value, choices=choices, case_sensitive=case_sensitive, ctx=ctx)
        except ValueError:
            return UNDECIDED  # typer's own refusal, in pydantic's words ("Value error, ...")

    return read_choice


def _leaf_reader(annotation: Any, info: ParameterInfo) -> Reader | None:
    if info.parser is not None:
        return None
    if annotation is str:
        return _read_str
    if annotation is bool:
        return _read_bool
    if annotation is int or annotation is float:
        return _number_reader(annotation, info)
    if annotation is Path:
        return _path_reader(info)
    return _choice_reader(annotation, info)  # an Enum or a Literal; None for any other type


def _sequence_reader(annotation: Any, info: ParameterInfo) -> Reader | None:
    origin = get_origin(annotation)
    if origin is list:
        (item,) = get_args(annotation)
        read_item = _leaf_reader(item, info)
        if read_item is None:
            return None

        def read_list(value: Any, param: Any, ctx: Any) -> Any:
            items = value if isinstance(value, (list, tuple)) else [value]
            read = [read_item(one, param, ctx) for one in items]
            return UNDECIDED if any(one is UNDECIDED for one in read) else read

        return read_list
    readers = [_leaf_reader(item, info) for item in get_args(annotation)]
    if not readers or any(reader is None for reader in readers):
        return None
    known: list[Reader] = [reader for reader in readers if reader is not None]

    def read_tuple(value: Any, param: Any, ctx: Any) -> Any:
        if not isinstance(value, (list, tuple)) or len(value) != len(known):
            return UNDECIDED
        read = tuple(reader(one, param, ctx) for reader, one in zip(known, value, strict=True))
        return UNDECIDED if any(one is UNDECIDED for one in read) else read

    return read_tuple


def plain_reader(descriptor: TypeDescriptor) -> Reader | None:
    """The reader of a parameter's type, or None where typer's own coercion is the only one."""
    if descriptor.is_file or descriptor.is_datetime:
        return None
    annotation, info = descriptor.annotation, descriptor.parameter_info
    origin: Any = get_origin(annotation)
    if (origin is list or origin is tuple) and info.parser is None:
        return _sequence_reader(annotation, info)
    return _leaf_reader(annotation, info)


class _PlainRuntimeParam(RuntimeParam):
    """A parameter read by its reader; what the reader leaves undecided, by typer's coercion.

    Not a dataclass of its own: making one costs about 1 ms at import, which ``--help`` would pay.
    """

    def __init__(self, descriptor: TypeDescriptor, read: Reader) -> None:
        super().__init__(parameter_info=descriptor.parameter_info, annotation=descriptor.annotation)
        object.__setattr__(self, "descriptor", descriptor)  # frozen, as typer's RuntimeParam is
        object.__setattr__(self, "read", read)

    descriptor: TypeDescriptor
    read: Reader

    def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
        read = self.read(value, param, ctx)
        if read is not UNDECIDED:
            return read
        typers = build_runtime_param(self.descriptor)  # imports pydantic: rare spellings only
        return typers._coerce_value(value, param=param, ctx=ctx)


def _runtime_param(self: _TyperParameter) -> RuntimeParam:
    if self._runtime_param is None:
        descriptor = self.type_descriptor
        read = plain_reader(descriptor)
        plain = None if read is None else _PlainRuntimeParam(descriptor, read)
        self._runtime_param = build_runtime_param(descriptor) if plain is None else plain
    return self._runtime_param


def plain_coercion() -> None:
    """Every command's parameters from now on are read without pydantic where typer allows."""
    _TyperParameter.get_runtime_param = _runtime_param  # type: ignore[method-assign]
