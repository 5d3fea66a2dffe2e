"""The committed pictures (`make diagrams`): rendered through Graphviz at README size, and equal
to what the code generates (the drift test)."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import graphviz
import pytest

from diagram_svg import svg_size
from preflight_fsm import transition_table
from preflight_fsm.diagrams import Graph, diff_graph, flow_graph, render, session_graph
from preflight_fsm.diagrams.generate import (
    GeneratedPartMissing,
    example_flows,
    example_session,
    flow_doc,
    generated_files,
    svg_files,
    write_diagrams,
)
from preflight_fsm.diagrams.render import pipe
from preflight_fsm.errors import GraphvizFailed, GraphvizMissing

ROOT = Path(__file__).resolve().parents[1]
NEEDS_DOT = pytest.mark.skipif(
    shutil.which("dot") is None,
    reason="Graphviz's `dot` is not on PATH (apt-get install graphviz): SVG and PNG not checked",
)
REGENERATE = "run `make diagrams` and commit the result"
README_WIDTH_PX = 1000
SMALLEST_TEXT_PX = 11


def _kinds() -> dict[str, Graph]:
    old, new = example_flows(ROOT)
    return {
        "flow": flow_graph(),
        "session path": session_graph(example_session()),
        "diff": diff_graph(old, new),
    }


KINDS = _kinds()


# -- rendered through Graphviz, as a reader sees it ----------------------------------------------


@NEEDS_DOT
@pytest.mark.parametrize("graph", KINDS.values(), ids=KINDS.keys())
def test_picture_fits_a_readme_at_natural_size(graph: Graph) -> None:
    """Each kind renders at most 1,000 px wide, its smallest text at least 11 px."""
    size = svg_size(render(graph, "svg"))
    assert size.width_px <= README_WIDTH_PX, size
    assert size.smallest_font_px >= SMALLEST_TEXT_PX, size


@NEEDS_DOT
@pytest.mark.parametrize("graph", KINDS.values(), ids=KINDS.keys())
def test_picture_draws_every_edge_of_the_table(graph: Graph) -> None:
    """Every edge of transition_table() is an edge of the rendered SVG, found by its id."""
    ids = svg_size(render(graph, "svg")).ids
    for arrow in graph.arrows:
        assert arrow.edge_id in ids
    table = {(e.source, e.trigger, e.dest, e.guards) for e in transition_table(None)}
    if graph.kind != "diff":
        assert table == {(a.source, a.trigger, a.dest, a.guards) for a in graph.arrows}


@NEEDS_DOT
def test_session_picture_shows_intention_answers_category_and_patch() -> None:
    """The rendered session path holds its intention, each answer, the category and the patch."""
    texts = " ".join(svg_size(render(KINDS["session path"], "svg")).texts)
    for expected in (
        "Keep user sessions somewhere",
        "turn 1",
        "change_category = Database",
        "turn 2",
        "db_type = Other (specify)",
        "turn 3",
        "db_type__other = CockroachDB",
        "category: Database",
        "Type: CockroachDB",
        "a session, not the generated flow",
    ):
        assert expected in texts, expected


@NEEDS_DOT
def test_flow_picture_shows_no_guard_definitions_or_rule_ids() -> None:
    """The flow picture has no guard docstrings or contract rule ids: those live in docs/flow.md."""
    texts = " ".join(svg_size(render(KINDS["flow"], "svg")).texts)
    assert [] == re.findall(r"\bC\d+\b", texts)
    assert "pending_question_answered" not in texts


@NEEDS_DOT
def test_png_is_rendered_by_graphviz() -> None:
    """The png format is a PNG image made by dot."""
    assert render(flow_graph(), "png").startswith(b"\x89PNG\r\n\x1a\n")


def test_missing_graphviz_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without `dot` on PATH, SVG fails with GraphvizMissing naming the Debian package."""
    monkeypatch.setenv("PATH", "")
    with pytest.raises(GraphvizMissing, match="apt-get install graphviz"):
        render(flow_graph(), "svg")


@NEEDS_DOT
def test_dot_refusing_a_graph_is_graphviz_failed_with_what_it_reported() -> None:
    """A graph dot cannot read fails with GraphvizFailed holding dot's own message."""
    broken = graphviz.Digraph()
    broken.node("A", label="<<B>never closed>")
    with pytest.raises(GraphvizFailed, match=r"`dot -Tsvg` failed \(1\): Error: mismatched tag"):
        pipe(broken, "svg")


def test_text_formats_need_no_graphviz(monkeypatch: pytest.MonkeyPatch) -> None:
    """dot and mmd are produced without Graphviz."""
    monkeypatch.setenv("PATH", "")
    assert render(flow_graph(), "dot").startswith(b"//")
    assert b"flowchart TD" in render(flow_graph(), "mmd")


# -- drift: the committed files are what the code generates ---------------------------------------


@pytest.mark.parametrize("relative", sorted(generated_files(ROOT)), ids=str)
def test_committed_text_file_matches_the_code(relative: str) -> None:
    """Each committed .dot, .mmd and docs/flow.md equals what the code generates now."""
    path = ROOT / relative
    assert path.exists(), f"{relative} is missing: {REGENERATE}"
    assert generated_files(ROOT)[relative] == path.read_bytes(), (
        f"{relative} differs from what the code generates: {REGENERATE}"
    )


def _svg_version(svg: bytes) -> bytes:
    match = re.search(rb"<!-- Generated by graphviz version ([^\n]*)", svg)
    return match.group(1) if match else b""


def _svg_texts(svg: bytes) -> list[bytes]:
    return re.findall(rb"<(?:text|title)[^>]*>(.*?)</(?:text|title)>", svg)


@NEEDS_DOT
@pytest.mark.parametrize(
    "relative", sorted(svg_files(ROOT)) if shutil.which("dot") else [], ids=str
)
def test_committed_svg_matches_the_code(relative: str) -> None:
    """Each committed SVG equals a fresh render (its text alone under another Graphviz)."""
    path = ROOT / relative
    assert path.exists(), f"{relative} is missing: {REGENERATE}"
    committed, fresh = path.read_bytes(), svg_files(ROOT)[relative]
    if _svg_version(committed) == _svg_version(fresh):
        assert fresh == committed, f"{relative} is stale: {REGENERATE}"
    else:  # another Graphviz lays out differently; what it says must still agree
        assert _svg_texts(fresh) == _svg_texts(committed), f"{relative} is stale: {REGENERATE}"


def test_flow_doc_embeds_each_committed_picture() -> None:
    """docs/flow.md shows the flow, the example session path and the example diff."""
    text = (ROOT / "docs/flow.md").read_text(encoding="utf-8")
    for svg in ("clarification.svg", "session-example.svg", "diff-example.svg"):
        assert f"](../diagrams/{svg})" in text


def test_flow_doc_defines_every_guard_of_the_table() -> None:
    """Each guard the table uses has a row in docs/flow.md's guard table."""
    text = (ROOT / "docs/flow.md").read_text(encoding="utf-8")
    for guard in {g for edge in transition_table() for g in edge.guards}:
        assert f"| `{guard}` |" in text, guard


def test_flow_doc_without_a_generated_block_is_refused() -> None:
    """A docs/flow.md that lost a generated block says which one to add back."""
    with pytest.raises(GeneratedPartMissing, match="begin generated: keywords"):
        flow_doc("<!-- begin generated: mermaid -->\n<!-- end generated: mermaid -->\n", ROOT)


def test_write_diagrams_writes_what_the_drift_test_expects(tmp_path: Path) -> None:
    """`make diagrams` (write_diagrams) writes exactly the generated text files."""
    for relative in (
        "docs/flow.md",
        "diagrams/examples/default.toml",
        "diagrams/examples/next.toml",
    ):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / relative, tmp_path / relative)
    written = write_diagrams(tmp_path, svg=False)
    expected = generated_files(ROOT)
    assert sorted(expected) == sorted(p.relative_to(tmp_path).as_posix() for p in written)
    for relative, content in expected.items():
        assert content == (tmp_path / relative).read_bytes()


_SEED_SCRIPT = """
import hashlib, sys
from preflight_fsm.diagrams import generated_files
sys.stdout.write(hashlib.sha256(b"\\0".join(generated_files(sys.argv[1]).values())).hexdigest())
"""


def test_text_output_is_identical_under_any_hash_seed() -> None:
    """DOT, Mermaid and docs/flow.md come out byte-identical under different PYTHONHASHSEEDs:
    this process's (whichever it is) and two fixed ones, each a fresh interpreter (0.4 s of CPU
    each, so two, not three: two fixed seeds still differ on every run)."""
    digests = {hashlib.sha256(b"\0".join(generated_files(ROOT).values())).hexdigest()}
    for seed in ("0", "4242"):
        result = subprocess.run(
            [sys.executable, "-c", _SEED_SCRIPT, str(ROOT)],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        )
        digests.add(result.stdout)
    assert 1 == len(digests), digests
