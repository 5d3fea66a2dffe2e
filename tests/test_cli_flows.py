"""Flow versions (C10) and seals (C11) through the session commands: list by flow, migrate in
bulk with a report, sessions finishing on the flow they started on, sealed stores."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from preflight_fsm.cli import app
from preflight_fsm.flow import load_flow

FLOW_V1 = 'name = "team"\n[category_question]\ntext = "What type of change is this?"\n'
# Version 2 words the question otherwise and allows shorter answers: another replay (D261).
FLOW_V2_SHORTER = (
    'name = "team"\n[category_question]\ntext = "What kind of change is it?"\n'
    "[limits]\nmax_answer_chars = 400\n"
)
FLOW_V2_REWORDED = 'name = "team"\n[category_question]\ntext = "What kind of change is it?"\n'
# Version 3 drops the Database category: a session that chose it diverges.
FLOW_V3_FEWER = 'name = "team"\n\n' + "\n\n".join(
    block
    for block in Path(__file__)
    .parents[1]
    .joinpath("src/preflight_fsm/flows/default.toml")
    .read_text()
    .split("\n\n")
    if block.startswith(("[[categories]]", "# One table")) and 'name = "Database"' not in block
)
KEY = "k" * 40


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.startswith("PREFLIGHT_FSM_"):
            monkeypatch.delenv(name)
    return tmp_path


def run(*args: str, env: dict[str, str] | None = None) -> Any:
    result = CliRunner().invoke(app, [*args, "--json"], env=env)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, json.loads(result.stdout) if result.stdout.strip() else None


def release(cwd: Path, text: str) -> Path:
    """Make ``text`` the current team.toml, keeping the one it replaces as an earlier version."""
    current = cwd / "team.toml"
    if current.exists():
        versions = cwd / "team.versions"
        versions.mkdir(exist_ok=True)
        shutil.copy(current, versions / f"{load_flow(current).fingerprint}.toml")
    current.write_text(text)
    return current


def test_a_session_finishes_on_the_flow_it_started_on(cwd: Path) -> None:
    """C10: after the flow file changed, the session steps on its registered earlier version."""
    flow = release(cwd, FLOW_V1)
    code, started = run("start", "Improve the feedback form", "--flow", str(flow))
    release(cwd, FLOW_V2_SHORTER)
    code, shown = run("show", started["session_id"], "--flow", str(flow))
    assert (0, "What type of change is this?") == (code, shown["turn"]["questions"][0]["question"])
    code, done = run(
        "answer", started["session_id"], "change_category=Billing", "--flow", str(flow)
    )
    assert (0, "Done") == (code, done["turn"]["state"])


def test_list_names_each_sessions_flow_and_filters_by_it(cwd: Path) -> None:
    """C10: the FLOW column, read from the store without parsing snapshots; --on-flow filters."""
    flow = release(cwd, FLOW_V1)
    old = load_flow(flow).fingerprint
    _, first = run("start", "Improve the feedback form", "--flow", str(flow))
    release(cwd, FLOW_V2_SHORTER)
    _, second = run("start", "Improve the feedback form", "--flow", str(flow))
    _, listed = run("list", "--flow", str(flow))
    flows = {s["session_id"]: s["flow"] for s in listed["sessions"]}
    assert f"team@{old}" == flows[first["session_id"]]
    assert flows[second["session_id"]].endswith("(current)")
    _, only_old = run("list", "--flow", str(flow), "--on-flow", old)
    assert [first["session_id"]] == [s["session_id"] for s in only_old["sessions"]]


def test_migrate_moves_what_replays_the_same_and_reports_what_diverges(cwd: Path) -> None:
    """C10: bulk migration replays each session on the current flow; a diverging one stays on
    its own flow (and still runs there) unless --force."""
    flow = release(cwd, FLOW_V1)
    _, same = run("start", "Improve the feedback form", "--flow", str(flow))
    _, diverging = run("start", "Improve the feedback form", "--flow", str(flow))
    run("answer", diverging["session_id"], "change_category=Database", "--flow", str(flow))
    release(cwd, FLOW_V3_FEWER)
    code, report = run("migrate", "--flow", str(flow))
    assert (0, 1, 1) == (code, report["migrated"], report["stayed"])
    by_id = {s["session_id"]: s for s in report["sessions"]}
    assert by_id[same["session_id"]]["migrated"]
    stayed = by_id[diverging["session_id"]]
    assert (False, 1, "state") == (
        stayed["migrated"],
        stayed["divergence"]["step"],
        stayed["divergence"]["field"],
    )
    code, done = run("answer", diverging["session_id"], "db_type=MySQL", "--flow", str(flow))
    assert (0, "Done") == (code, done["turn"]["state"])


def test_migrate_force_moves_diverging_sessions_too(cwd: Path) -> None:
    """C10: --force migrates a session whose outcome differs, saying so."""
    flow = release(cwd, FLOW_V1)
    _, diverging = run("start", "Improve the feedback form", "--flow", str(flow))
    run("answer", diverging["session_id"], "change_category=Database", "--flow", str(flow))
    release(cwd, FLOW_V3_FEWER)
    code, report = run("migrate", "--flow", str(flow), "--force")
    assert (0, 1) == (code, report["migrated"])
    code, shown = run("show", diverging["session_id"], "--flow", str(flow))
    assert (0, "Done") == (code, shown["turn"]["state"])  # Database is a custom category now


def test_a_sealed_store_refuses_snapshots_without_its_key(cwd: Path, tmp_path: Path) -> None:
    """C11: sessions written under a key are read under it; under another key they are refused."""
    _, started = run("start", "Add OAuth login", env={"PREFLIGHT_FSM_SEAL_KEYS": KEY})
    sid = started["session_id"]
    code, _ = run("show", sid, env={"PREFLIGHT_FSM_SEAL_KEYS": KEY})
    assert 0 == code
    other = tmp_path / "other.key"
    other.write_text("o" * 40 + "\n")
    code, refused = run("show", sid, "--seal-key-file", str(other))
    assert 0 != code
    assert "seal" in refused["message"]


def test_rotation_reads_old_sessions_and_seals_new_steps_with_the_new_key(cwd: Path) -> None:
    """C11: new key first, old key kept: a session sealed with the old key answers on."""
    _, started = run("start", "Add OAuth login", env={"PREFLIGHT_FSM_SEAL_KEYS": KEY})
    rotated = {"PREFLIGHT_FSM_SEAL_KEYS": "n" * 40 + "," + KEY}
    code, done = run("answer", started["session_id"], "auth_strategy=1", env=rotated)
    assert (0, "Done") == (code, done["turn"]["state"])
    code, _ = run("show", started["session_id"], env={"PREFLIGHT_FSM_SEAL_KEYS": "n" * 40})
    assert 0 == code


def test_a_short_seal_key_is_a_usage_error(cwd: Path) -> None:
    """C11: a key under 32 bytes is refused before anything is written."""
    code, error = run("start", "Add OAuth login", env={"PREFLIGHT_FSM_SEAL_KEYS": "short"})
    assert 2 == code
    assert "shorter than 32 bytes" in error["message"]


def test_help_lists_the_migrate_command(cwd: Path) -> None:
    """C10: `preflight-fsm --help` names migrate among the session commands."""
    result = CliRunner().invoke(app, ["--help"])
    assert "migrate" in result.stdout


def test_flow_show_prints_the_default_flow_as_a_file_to_start_from(tmp_path: Path) -> None:
    """`flow show > mine.toml` gives a file that loads as the default flow itself."""
    from preflight_fsm.flow import default_flow

    result = CliRunner().invoke(app, ["flow", "show"])
    mine = tmp_path / "mine.toml"
    mine.write_text(result.stdout, encoding="utf-8")
    assert (0, default_flow().fingerprint) == (result.exit_code, load_flow(mine).fingerprint)


def test_a_reworded_question_keeps_the_session_running_in_its_new_words(cwd: Path) -> None:
    """D261: the fingerprint leaves wording out, so a session started before a question was
    reworded in place (no earlier version kept) is shown in the new words and finishes."""
    flow = cwd / "team.toml"
    flow.write_text(FLOW_V1)
    _, started = run("start", "Improve the feedback form", "--flow", str(flow))
    flow.write_text(FLOW_V2_REWORDED)
    code, shown = run("show", started["session_id"], "--flow", str(flow))
    assert (0, "What kind of change is it?") == (code, shown["turn"]["questions"][0]["question"])
    code, done = run(
        "answer", started["session_id"], "change_category=Billing", "--flow", str(flow)
    )
    assert (0, "Done") == (code, done["turn"]["state"])


def test_a_changed_keyword_strands_the_session_with_an_error_naming_flow(cwd: Path) -> None:
    """D261: a keyword routes intentions, so changing one makes another flow; a session on the
    old one is refused (exit 2) with what to pass: --flow FILE, or the file kept in .versions/."""
    default = (Path(__file__).parents[1] / "src/preflight_fsm/flows/default.toml").read_text()
    flow = cwd / "team.toml"
    flow.write_text(default.replace('name = "default"', 'name = "team"', 1))
    _, started = run("start", "Improve the feedback form", "--flow", str(flow))
    flow.write_text(flow.read_text().replace('"component"]', '"component", "widget"]'))
    result = CliRunner().invoke(
        app, ["answer", started["session_id"], "change_category=Billing", "--flow", str(flow)]
    )
    assert 2 == result.exit_code
    assert "flow 'team'" in result.output
    assert "--flow FILE" in result.output
    assert "FLOW.versions/" in result.output


def test_a_session_started_with_flow_answered_without_it_names_flow(cwd: Path) -> None:
    """A session started on --flow FILE and answered without it is refused naming the option."""
    flow = cwd / "team.toml"
    flow.write_text(FLOW_V2_SHORTER)
    _, started = run("start", "Improve the feedback form", "--flow", str(flow))
    result = CliRunner().invoke(app, ["answer", started["session_id"], "change_category=Billing"])
    assert 2 == result.exit_code
    assert "--flow FILE" in result.output
