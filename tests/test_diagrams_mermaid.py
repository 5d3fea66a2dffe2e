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


def _pictures() -> dict[str, str]:
    """Every Mermaid text the tests check, by name: one node process parses them all (node and
    Mermaid's import take about a second of CPU each run)."""
    old, new = example_flows(ROOT)
    graphs = {
        "flow": flow_graph(),
        "session": session_graph(example_session()),
        "diff": diff_graph(old, new),
    }
    texts = {name: to_mermaid(graph) for name, graph in graphs.items()}
    texts["broken"] = 'flowchart TD\n    A -->|"x"|\n'
    doc = (ROOT / "docs/flow.md").read_text(encoding="utf-8")
    texts["flow-doc"] = doc.split("```mermaid\n", 1)[1].split("```", 1)[0]
    return texts


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Mermaid's verdict on each of :func:`_pictures`, by name: ``ok <type>`` or ``FAIL <why>``;
    the checker exits 1, as one of them (``broken``) fails."""
    folder = tmp_path_factory.mktemp("mermaid")
    paths = {}
    for name, text in _pictures().items():
        paths[name] = folder / f"{name}.mmd"
        paths[name].write_text(text, encoding="utf-8")
    result = _parse(list(paths.values()))
    lines = result.stdout.splitlines()
    assert (1, len(paths)) == (result.returncode, len(lines)), result.stdout + result.stderr
    return {
        name: line.replace(f" {path}", "", 1)
        for (name, path), line in zip(paths.items(), lines, strict=True)
    }


@NEEDS_MERMAID
def test_every_kind_of_picture_parses_as_a_mermaid_flowchart(verdicts: dict[str, str]) -> None:
    """The flow, a session path and a diff are flowcharts Mermaid's parser accepts."""
    expected = {name: "ok flowchart-v2" for name in ("flow", "session", "diff")}
    assert expected == {name: verdicts[name] for name in expected}


@NEEDS_MERMAID
def test_the_parser_refuses_broken_mermaid(verdicts: dict[str, str]) -> None:
    """The check is real: a link without a target is refused."""
    assert verdicts["broken"].startswith("FAIL ")


@NEEDS_MERMAID
def test_docs_flow_mermaid_block_parses(verdicts: dict[str, str]) -> None:
    """The Mermaid block GitHub draws in docs/flow.md parses."""
    assert verdicts["flow-doc"].startswith("ok ")
