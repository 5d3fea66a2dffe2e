"""`preflight-fsm diagram` (cli/diagram.py): the flow, a stored or saved session, a flow diff."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import preflight_fsm.cli.diagram  # registers the command on `app`
from preflight_fsm.cli import app
from preflight_fsm.diagrams import flow_graph, render, session_graph, to_dot
from preflight_fsm.diagrams.generate import example_session

ROOT = Path(__file__).resolve().parents[1]
OLD, NEW = ROOT / "diagrams/examples/default.toml", ROOT / "diagrams/examples/next.toml"
HAS_DOT = shutil.which("dot") is not None
runner = CliRunner()

assert preflight_fsm.cli.diagram.diagram is not None  # imported for its side effect


def _assert_clean_failure(result: Any, code: int, message: str) -> None:
    assert code == result.exit_code
    assert message in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert "" == result.stdout


def test_cli_prints_the_committed_flow() -> None:
    """`preflight-fsm diagram` prints the committed DOT; --format mmd the committed Mermaid."""
    result = runner.invoke(app, ["diagram"])
    assert 0 == result.exit_code, result.output
    assert (ROOT / "diagrams/clarification.dot").read_text(encoding="utf-8") == result.stdout
    result = runner.invoke(app, ["diagram", "--format", "mmd"])
    assert (ROOT / "diagrams/clarification.mmd").read_text(encoding="utf-8") == result.stdout


@pytest.mark.parametrize("fmt", ["dot", "mmd", "svg", "png"], ids=str)
def test_cli_writes_each_format_to_out(fmt: str, tmp_path: Path) -> None:
    """--out PATH receives the diagram in the format asked for."""
    if fmt in {"svg", "png"} and not HAS_DOT:
        pytest.skip("Graphviz's `dot` is not on PATH (apt-get install graphviz)")
    out = tmp_path / f"flow.{fmt}"
    result = runner.invoke(app, ["diagram", "--format", fmt, "--out", str(out)])
    assert 0 == result.exit_code, result.output
    assert render(flow_graph(), fmt) == out.read_bytes()  # type: ignore[arg-type]


def test_cli_draws_a_session_from_a_snapshot_file(tmp_path: Path) -> None:
    """--snapshot FILE draws that session's path: the same DOT as from the live machine."""
    machine = example_session()
    snapshot = tmp_path / "session.json"
    snapshot.write_text(machine.snapshot().model_dump_json(), encoding="utf-8")
    result = runner.invoke(app, ["diagram", "--snapshot", str(snapshot)])
    assert 0 == result.exit_code, result.output
    assert "db_type__other = CockroachDB" in result.stdout
    assert "a session, not the generated flow" in result.stdout


def test_cli_draws_a_stored_session_by_its_id(tmp_path: Path) -> None:
    """--session ID --store PATH draws a session stepped by `preflight-fsm answer`, unchanged
    (each command run in this process: what a store holds once a command exits is
    tests/test_cli_sessions.py's)."""
    store = str(tmp_path / "sessions.sqlite3")
    started = runner.invoke(
        app, ["start", "Keep user sessions somewhere faster", "--store", store, "--json"]
    )
    assert 0 == started.exit_code, started.stderr
    session_id = json.loads(started.stdout)["session_id"]
    for answer in (
        "change_category=Database",
        "db_type=Other (specify)",
        "db_type__other=CockroachDB",
    ):
        stepped = runner.invoke(app, ["answer", session_id, answer, "--store", store])
        assert 0 == stepped.exit_code, stepped.stderr
    drawn = runner.invoke(app, ["diagram", "--session", session_id, "--store", store])
    assert 0 == drawn.exit_code, drawn.stderr
    assert to_dot(session_graph(example_session())) == drawn.stdout


def test_cli_refuses_an_unknown_session(tmp_path: Path) -> None:
    """--session with an id the store lacks exits 4, as `show` does, with the store's message."""
    result = runner.invoke(
        app, ["diagram", "--session", "nope", "--store", str(tmp_path / "s.sqlite3")]
    )
    _assert_clean_failure(result, 4, "preflight-fsm: no session has the id 'nope'")


@pytest.mark.parametrize(
    ("fmt", "expected"),
    [
        ("text", '+ option "Passkeys" of auth_strategy (Authentication)\n'),
        ("markdown", "- **added** option `Passkeys` of auth_strategy (Authentication)\n"),
        ("dot", ">+Passkeys<"),
    ],
    ids=str,
)
def test_cli_diff_prints_the_change(fmt: str, expected: str) -> None:
    """--diff OLD NEW prints the list (text, markdown) or the marked picture (dot)."""
    result = runner.invoke(app, ["diagram", "--diff", str(OLD), str(NEW), "--format", fmt])
    assert 0 == result.exit_code, result.output
    assert expected in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "text"], "--format text lists a flow change: pass --diff"),
        (["--snapshot", "x.json", "--diff", str(OLD), str(NEW)], "--snapshot and --diff"),
        (["--store", "s.sqlite3"], "pass --session ID with it"),
    ],
    ids=["text without diff", "two pictures", "store without session"],
)
def test_cli_refuses_options_that_do_not_go_together(args: list[str], message: str) -> None:
    """Contradictory options are a usage error (exit 2) saying what to pass instead."""
    _assert_clean_failure(runner.invoke(app, ["diagram", *args]), 2, message)


def test_cli_refuses_a_broken_flow_file_in_a_diff(tmp_path: Path) -> None:
    """A diff side with unknown keys is an invalid flow file: exit 2, as for every command."""
    broken = tmp_path / "broken.toml"
    broken.write_text("colour = 'blue'\n", encoding="utf-8")
    result = runner.invoke(app, ["diagram", "--diff", str(OLD), str(broken)])
    _assert_clean_failure(result, 2, "unknown keys: colour")


def test_cli_refuses_an_invalid_snapshot(tmp_path: Path) -> None:
    """An invalid snapshot exits 2 (malformed input) with InvalidSnapshot's message on stderr,
    no traceback."""
    snapshot = tmp_path / "session.json"
    snapshot.write_text('{"intention": "x"}', encoding="utf-8")
    result = runner.invoke(app, ["diagram", "--snapshot", str(snapshot)])
    _assert_clean_failure(result, 2, "invalid snapshot: asked_questions")


def test_cli_refuses_an_unreadable_snapshot(tmp_path: Path) -> None:
    """A snapshot file that cannot be read exits 1 naming it."""
    missing = tmp_path / "nope.json"
    result = runner.invoke(app, ["diagram", "--snapshot", str(missing)])
    _assert_clean_failure(result, 1, f"cannot read snapshot {missing}")


def test_cli_refuses_png_to_stdout() -> None:
    """png without --out is a usage error: binary data is not written to the terminal."""
    _assert_clean_failure(runner.invoke(app, ["diagram", "--format", "png"]), 2, "pass --out")


def test_cli_says_which_package_provides_dot(monkeypatch: pytest.MonkeyPatch) -> None:
    """svg without Graphviz exits 1 naming the graphviz package, with no traceback."""
    monkeypatch.setenv("PATH", "")
    result = runner.invoke(app, ["diagram", "--format", "svg"])
    _assert_clean_failure(result, 1, "apt-get install graphviz")


def test_cli_diffs_two_registered_versions_of_a_flow(tmp_path: Path) -> None:
    """C10: with --flow FILE, a --diff side may name a version kept in FILE.versions/ by its
    fingerprint, or `current`."""
    from preflight_fsm.flow import load_flow

    current = tmp_path / "team.toml"
    current.write_text(NEW.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "team.versions").mkdir()
    (tmp_path / "team.versions" / "old.toml").write_text(OLD.read_text(encoding="utf-8"))
    old = load_flow(OLD).fingerprint
    args = ["diagram", "--flow", str(current), "--diff", old, "current", "--format", "text"]
    result = runner.invoke(app, args)
    assert 0 == result.exit_code, result.output
    assert '+ option "Passkeys" of auth_strategy (Authentication)\n' in result.stdout


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "invalid snapshot"),
        ("x" * 300_000, "larger than 262,144 bytes"),
    ],
    ids=["not-json", "too-large"],
)
def test_a_malformed_snapshot_file_is_a_usage_error(
    tmp_path: Path, content: str, message: str
) -> None:
    """`diagram --snapshot FILE` with a file that is no snapshot exits 2 (a usage error, like any
    malformed input), reading no more than a snapshot's limit of it."""
    snapshot = tmp_path / "s.json"
    snapshot.write_text(content)
    result = CliRunner().invoke(app, ["diagram", "--snapshot", str(snapshot)])
    _assert_clean_failure(result, 2, message)


@pytest.mark.parametrize("fmt", ["dot", "mmd", "svg", "png"], ids=str)
def test_out_takes_the_format_from_its_extension(fmt: str, tmp_path: Path) -> None:
    """`--out guess.png` writes a PNG, not DOT text in a .png file."""
    if fmt in {"svg", "png"} and not HAS_DOT:
        pytest.skip("Graphviz's `dot` is not on PATH (apt-get install graphviz)")
    out = tmp_path / f"guess.{fmt}"
    result = runner.invoke(app, ["diagram", "--out", str(out)])
    assert 0 == result.exit_code, result.output
    assert render(flow_graph(), fmt) == out.read_bytes()  # type: ignore[arg-type]


def test_a_format_the_out_extension_contradicts_is_refused(tmp_path: Path) -> None:
    """--format svg with --out x.png exits 2 naming both, and writes nothing."""
    out = tmp_path / "guess.png"
    result = runner.invoke(app, ["diagram", "--format", "svg", "--out", str(out)])
    _assert_clean_failure(result, 2, "--format svg but --out")
    assert not out.exists()


def test_scale_sizes_a_png(tmp_path: Path) -> None:
    """--scale 2 draws the PNG at twice the resolution: twice as wide."""
    if not HAS_DOT:
        pytest.skip("Graphviz's `dot` is not on PATH (apt-get install graphviz)")
    widths = []
    for scale in ("1", "2"):
        out = tmp_path / f"flow-{scale}.png"
        result = runner.invoke(app, ["diagram", "--out", str(out), "--scale", scale])
        assert 0 == result.exit_code, result.output
        widths.append(int.from_bytes(out.read_bytes()[16:20], "big"))  # the IHDR width
    assert 2.0 == pytest.approx(widths[1] / widths[0], abs=0.01)  # Graphviz rounds a pixel


def test_scale_sizes_an_svg(tmp_path: Path) -> None:
    """--scale 2 draws the SVG twice as wide and high (its width and height, in points)."""
    if not HAS_DOT:
        pytest.skip("Graphviz's `dot` is not on PATH (apt-get install graphviz)")
    sizes = []
    for scale in ("1", "2"):
        result = runner.invoke(app, ["diagram", "--format", "svg", "--scale", scale])
        assert 0 == result.exit_code, result.output
        found = re.search(r'<svg width="(\d+)pt" height="(\d+)pt"', result.stdout)
        assert found is not None, result.stdout[:300]
        sizes.append((int(found.group(1)), int(found.group(2))))
    (width, height), (scaled_width, scaled_height) = sizes
    assert (2.0, 2.0) == pytest.approx((scaled_width / width, scaled_height / height), abs=0.01)


def test_scale_of_a_text_format_is_refused() -> None:
    """--scale sizes pictures only: with dot it is a usage error."""
    result = runner.invoke(app, ["diagram", "--scale", "2"])
    _assert_clean_failure(result, 2, "--scale sizes svg and png pictures, not dot")
