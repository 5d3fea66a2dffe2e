"""The public API is small and pinned (C8)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import preflight_fsm


def test_public_names_are_pinned() -> None:
    """C8: exactly these names are public, in a sorted __all__."""
    assert [
        "AnsweredBy",
        "ClarificationMachine",
        "DecisionPatch",
        "Divergence",
        "Edge",
        "Flow",
        "FlowRegistry",
        "InvalidAnswers",
        "InvalidFlow",
        "InvalidIntention",
        "InvalidSeal",
        "InvalidSnapshot",
        "LLMResponse",
        "Migration",
        "MockLLMAdapter",
        "PasskeyProof",
        "PreflightFsmError",
        "Question",
        "SealKeys",
        "SessionFinished",
        "SessionSnapshot",
        "SnapshotFlowMismatch",
        "SnapshotVersionError",
        "TraceStep",
        "Turn",
        "default_flow",
        "load_flow",
        "load_registry",
        "transition_table",
    ] == preflight_fsm.__all__
    assert sorted(preflight_fsm.__all__) == preflight_fsm.__all__
    for name in preflight_fsm.__all__:
        assert hasattr(preflight_fsm, name)


def test_mypys_imports_and_the_lazy_map_name_the_public_names_in_their_modules() -> None:
    """The TYPE_CHECKING imports mypy reads, the map ``__getattr__`` reads and ``__all__`` agree:
    each public name, from the same module."""
    tree = ast.parse(Path(preflight_fsm.__file__).read_text(encoding="utf-8"))
    guarded = next(node for node in tree.body if isinstance(node, ast.If))
    typed = {
        alias.name: (node.module or "").removeprefix("preflight_fsm.")
        for node in guarded.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert typed == preflight_fsm._HOMES
    assert sorted(typed) == preflight_fsm.__all__


def test_the_package_imports_without_its_source() -> None:
    """Nothing is read from __init__.py at run time: a bytecode-only install imports it."""
    loaded = _modules_after(
        "import builtins\n"
        "real_open = builtins.open\n"
        "def no_source(file, *args, **kwargs):\n"
        "    assert not str(file).endswith('__init__.py'), file\n"
        "    return real_open(file, *args, **kwargs)\n"
        "builtins.open = no_source\n"
        "import preflight_fsm\n"
        "assert preflight_fsm.__all__ and preflight_fsm.default_flow"
    )
    assert "preflight_fsm.flow" in loaded


def test_every_error_derives_from_one_base() -> None:
    """C8: all errors derive from PreflightFsmError; input errors are also ValueErrors."""
    errors = [
        getattr(preflight_fsm, name)
        for name in preflight_fsm.__all__
        if isinstance(getattr(preflight_fsm, name), type)
        and issubclass(getattr(preflight_fsm, name), Exception)
    ]
    assert all(issubclass(e, preflight_fsm.PreflightFsmError) for e in errors)
    for name in ("InvalidAnswers", "InvalidIntention", "InvalidSnapshot", "InvalidFlow"):
        assert issubclass(getattr(preflight_fsm, name), ValueError)


def _modules_after(code: str) -> list[str]:
    """The modules a fresh interpreter holds after running ``code``."""
    done = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys; print('\\n'.join(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.split()


def test_importing_the_package_imports_no_engine_module() -> None:
    """D160: `import preflight_fsm` loads no engine module, pydantic nor transitions."""
    loaded = _modules_after("import preflight_fsm")
    assert [] == [
        m for m in loaded if m.startswith(("preflight_fsm.", "pydantic", "transitions", "regex"))
    ]


def test_a_public_name_is_its_defining_module_s_object() -> None:
    """D160: a name imported from the package is the object of the module that defines it."""
    from preflight_fsm import ClarificationMachine, default_flow
    from preflight_fsm.flow import default_flow as flow_default_flow
    from preflight_fsm.machine import ClarificationMachine as MachineClass

    assert (MachineClass, flow_default_flow) == (ClarificationMachine, default_flow)


def test_dir_lists_every_public_name_before_any_is_used() -> None:
    """D160: dir() of a freshly imported package lists the public names, imported or not."""
    loaded = _modules_after(
        "import preflight_fsm\n"
        "assert set(preflight_fsm.__all__) <= set(dir(preflight_fsm)), dir(preflight_fsm)"
    )
    assert "preflight_fsm" in loaded


def test_an_unknown_name_raises_attribute_error() -> None:
    """D160: a name the package does not define is an AttributeError naming it."""
    with pytest.raises(AttributeError, match="NoSuchThing"):
        _ = preflight_fsm.NoSuchThing  # type: ignore[attr-defined]
