"""The package's modules import each other without a cycle, at module level or in a function."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import preflight_fsm

ROOT = Path(preflight_fsm.__file__).parent


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking(test: ast.expr) -> bool:
    """``TYPE_CHECKING`` or ``typing.TYPE_CHECKING`` anywhere in an ``if``'s condition."""
    return any(
        (isinstance(node, ast.Name) and node.id == "TYPE_CHECKING")
        or (isinstance(node, ast.Attribute) and node.attr == "TYPE_CHECKING")
        for node in ast.walk(test)
    )


def _run_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements that can run: every one but those under ``if TYPE_CHECKING:``.
    Only statements are visited (an import is one), not the expressions in them."""
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
            continue
        if isinstance(node, ast.If) and _type_checking(node.test):
            pending.extend(node.orelse)
            continue
        pending.extend(
            child
            for child in ast.iter_child_nodes(node)
            if isinstance(child, ast.stmt | ast.excepthandler | ast.match_case)
        )


def _imports(name: str, path: Path, modules: set[str]) -> set[str]:
    """The package modules importing ``name`` runs: each named module and the packages above
    it, except ``name``'s own packages (already running when it is imported)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _run_imports(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                kept = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*kept, base] if base else kept)
            targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        for target in targets:
            parts = target.split(".")
            for end in range(1, len(parts) + 1):
                module = ".".join(parts[:end])
                if module in modules and not f"{name}.".startswith(f"{module}."):
                    found.add(module)
    return found


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle in ``graph``, or []."""
    done: set[str] = set()
    path: list[str] = []

    def visit(module: str) -> list[str]:
        if module in path:
            return [*path[path.index(module) :], module]
        if module in done:
            return []
        path.append(module)
        for imported in sorted(graph[module]):
            cycle = visit(imported)
            if cycle:
                return cycle
        path.pop()
        done.add(module)
        return []

    for module in sorted(graph):
        cycle = visit(module)
        if cycle:
            return cycle
    return []


def test_no_module_takes_part_in_an_import_cycle() -> None:
    """Layers import downwards only: no cycle, and none dodged by an import inside a function."""
    paths = {_module_name(path): path for path in ROOT.rglob("*.py")}
    graph = {name: _imports(name, path, set(paths)) for name, path in paths.items()}
    assert [] == _cycle(graph)
