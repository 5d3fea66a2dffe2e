"""The Mermaid renderer (preflight_fsm.diagrams.mermaid), parsed by Mermaid 11 itself: the version
GitHub renders, so a committed .mmd or docs/flow.md block never shows GitHub's error box."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from preflight_fsm.diagrams import diff_graph, flow_graph, session_graph, to_mermaid
from preflight_fsm.diagrams.generate import example_flows, example_session

ROOT = Path(__file__).resolve().parents[1]
CHECKER = ROOT / "tests/mermaid"
NEEDS_MERMAID = pytest.mark.skipif(
    shutil.which("node") is None or not (CHECKER / "node_modules/mermaid").is_dir(),
    reason="Mermaid's parser is not installed: `npm install --prefix tests/mermaid` (.ci/run does)",
)


def _parse(paths: list[Path]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["node", str(CHECKER / "parse.mjs"), *map(str, paths)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


@NEEDS_MERMAID
def test_every_kind_of_picture_parses_as_a_mermaid_flowchart(tmp_path: Path) -> None:
    """The flow, a session path and a diff are flowcharts Mermaid's parser accepts."""
    old, new = example_flows(ROOT)
    graphs = {
        "flow": flow_graph(),
        "session": session_graph(example_session()),
        "diff": diff_graph(old, new),
    }
    paths = []
    for name, graph in graphs.items():
        path = tmp_path / f"{name}.mmd"
        path.write_text(to_mermaid(graph), encoding="utf-8")
        paths.append(path)
    result = _parse(paths)
    assert 0 == result.returncode, result.stdout + result.stderr
    assert [f"ok {p} flowchart-v2" for p in paths] == result.stdout.splitlines()


@NEEDS_MERMAID
def test_the_parser_refuses_broken_mermaid(tmp_path: Path) -> None:
    """The check is real: a link without a target is refused."""
    broken = tmp_path / "broken.mmd"
    broken.write_text('flowchart TD\n    A -->|"x"|\n', encoding="utf-8")
    result = _parse([broken])
    assert 1 == result.returncode
    assert result.stdout.startswith(f"FAIL {broken}")


@NEEDS_MERMAID
def test_docs_flow_mermaid_block_parses(tmp_path: Path) -> None:
    """The Mermaid block GitHub draws in docs/flow.md parses."""
    text = (ROOT / "docs/flow.md").read_text(encoding="utf-8")
    block = text.split("```mermaid\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "flow-doc.mmd"
    path.write_text(block, encoding="utf-8")
    result = _parse([path])
    assert 0 == result.returncode, result.stdout
