"""`preflight-fsm chat`: rendering and input parsing, the loop, the command end to end (piped, in
this process), and the installed command under a real pseudo-terminal and real pipes."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

import warm_processes
from preflight_fsm import ClarificationMachine, InvalidAnswers, Turn
from preflight_fsm.cli import app
from preflight_fsm.cli.chat import (
    DECLINE_PROMPT,
    PROMPT,
    ChoiceOutOfRange,
    Reply,
    parse_reply,
    render_feedback,
    render_outcome,
    render_turn,
    run_chat,
)
from preflight_fsm.cli.replies import RefusedReply
from terminal import Terminal

TIMEOUT = 10.0  # seconds; a run takes well under one, the margin only absorbs a loaded machine


def _turn(intention: str, *steps: dict[str, str]) -> Turn:
    machine = ClarificationMachine(intention)
    for answers in steps:
        machine.step(answers)
    return machine.turn


CATEGORY = _turn("Improve the feedback form")  # no keyword: NeedCategory (C4)
AUTH = _turn("Add OAuth login")  # shortcut: NeedPrimaryField for Authentication (C4)
AUTH_OTHER = _turn("Add OAuth login", {"auth_strategy": "Other (specify)"})  # NeedOther (C5)


# -- rendering -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("turn", "expected"),
    [
        (
            CATEGORY,
            "What type of change is this?\n  1. Frontend\n  2. Backend\n  3. Database\n"
            "  4. Authentication\n  5. Infra\n  6. Other (specify)",
        ),
        (
            AUTH,
            "Which authentication approach?\n  1. OAuth\n  2. Email/Password\n  3. Magic Link\n"
            "  4. Other (specify)",
        ),
        (AUTH_OTHER, "Please specify (Which authentication approach?):"),
    ],
    ids=["category-question", "field-question", "need-other-free-text"],
)
def test_render_turn_shows_the_visible_question_and_numbered_options(
    turn: Turn, expected: str
) -> None:
    """A turn renders its one visible question (C3) with options 1..n, Other last (C2)."""
    assert expected == render_turn(turn)


def test_render_turn_refuses_a_finished_turn() -> None:
    """A finished session has no question to render."""
    with pytest.raises(ValueError, match="asks no question"):
        render_turn(_turn("Add OAuth login", {"auth_strategy": "OAuth"}))


@pytest.mark.parametrize(
    ("turn", "expected"),
    [
        (
            _turn("Add OAuth login", {"auth_strategy": "OAuth", "auth_library": "Authlib"}),
            "Category: Authentication\nStrategy: OAuth\nLibrary: Authlib\nDecision hint: adr",
        ),
        (
            _turn("Improve things", {"change_category": "Mobile apps"}),
            "Category: Other\nDescription: Improve things\nDecision hint: unsure",
        ),
        (
            _turn("Add OAuth login", {"auth_strategy": ""}),
            'No patch: "Which authentication approach?" was left unanswered.\nDecision hint: adr',
        ),
        (
            _turn("Improve things", {"change_category": ""}),
            'No patch: "What type of change is this?" was left unanswered.\nDecision hint: unsure',
        ),
    ],
    ids=["patch-with-secondary", "patch-other-category", "no-patch-field", "no-patch-category"],
)
def test_render_outcome_shows_the_patch_or_the_unresolved_key_and_the_hint(
    turn: Turn, expected: str
) -> None:
    """Done prints the category and one line per field (C6); NoPatch names its key (C7)."""
    assert expected == render_outcome(turn)


def test_render_outcome_refuses_an_unfinished_turn() -> None:
    """Only a finished session has an outcome to print."""
    with pytest.raises(ValueError, match="no outcome yet"):
        render_outcome(AUTH)


@pytest.mark.parametrize(
    ("answers", "expected"),
    [
        (
            {"auth_strategy": "\x07"},
            "Not accepted: auth_strategy holds invisible, control or unassigned characters "
            "(U+0007 control): send the text without them (tabs, newlines and emoji are fine). "
            "Expected one of: OAuth, Email/Password, Magic Link, Other (specify) "
            "(or your own text, as for Other (specify)).",
        ),
        (
            {"auth_strategy": "x" * 501},
            "Not accepted: auth_strategy is 501 characters long; the limit is 500. Expected one "
            "of: OAuth, Email/Password, Magic Link, Other (specify) "
            "(or your own text, as for Other (specify)).",
        ),
        (
            {},
            "Not accepted: auth_strategy is missing. Expected one of: OAuth, Email/Password, "
            "Magic Link, Other (specify) (or your own text, as for Other (specify)).",
        ),
        (
            {"auth_strategy": "OAuth", "colour": "blue"},
            "Not accepted: unknown question ids: colour.",
        ),
    ],
    ids=["control-character", "too-long", "missing", "unknown-id"],
)
def test_render_feedback_says_what_was_refused_and_what_is_expected(
    answers: dict[str, str], expected: str
) -> None:
    """InvalidAnswers' structured feedback (C5) reads as one sentence per issue."""
    machine = ClarificationMachine("Add OAuth login")
    with pytest.raises(InvalidAnswers) as refused:
        machine.step(answers)
    assert expected == render_feedback(refused.value.feedback)


# -- input parsing ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("turn", "text", "expected"),
    [
        (AUTH, "1", Reply({"auth_strategy": "OAuth"})),
        (AUTH, " 2 ", Reply({"auth_strategy": "Email/Password"})),
        (CATEGORY, "4", Reply({"change_category": "Authentication"})),
        (AUTH, "oauth", Reply({"auth_strategy": "oauth"})),
        (AUTH, "Passkeys", Reply({"auth_strategy": "Passkeys"})),
        (AUTH, "Auth0", Reply({"auth_strategy": "Auth0"}, suggestion="OAuth")),
        (AUTH, "OAthAth", Reply({"auth_strategy": "OAthAth"}, suggestion="OAuth")),
        (CATEGORY, "Databse", Reply({"change_category": "Databse"}, suggestion="Database")),
        (AUTH, "", Reply({"auth_strategy": ""}, confirm_decline=True)),
        (AUTH, "   ", Reply({"auth_strategy": ""}, confirm_decline=True)),
        (AUTH, "skip", Reply({"auth_strategy": ""})),
        (AUTH, " SKIP ", Reply({"auth_strategy": ""})),
        (AUTH, "4", Reply({"auth_strategy": "Other (specify)"}, AUTH.questions[1])),
        (AUTH, "other", Reply({"auth_strategy": "Other (specify)"}, AUTH.questions[1])),
        (AUTH, "OTHER (specify)", Reply({"auth_strategy": "Other (specify)"}, AUTH.questions[1])),
        (CATEGORY, "6", Reply({"change_category": "Other (specify)"}, CATEGORY.questions[1])),
        (AUTH_OTHER, "Auth0", Reply({"auth_strategy__other": "Auth0"})),
        (AUTH_OTHER, "3", Reply({"auth_strategy__other": "3"})),
        (AUTH_OTHER, "", Reply({"auth_strategy__other": ""}, confirm_decline=True)),
        (AUTH_OTHER, "skip", Reply({"auth_strategy__other": ""})),
    ],
    ids=[
        "number-picks-option",
        "number-with-spaces",
        "number-picks-category",
        "option-text-sent-as-typed",
        "custom-text-sent-as-typed",
        "near-miss-sent-as-typed-with-a-suggestion",
        "typo-suggests-the-option",
        "category-typo-suggests-the-category",
        "blank-asks-to-confirm",
        "spaces-ask-to-confirm",
        "skip-declines",
        "skip-any-case-declines",
        "last-number-asks-other-text",
        "word-other-asks-other-text",
        "other-option-by-name",
        "category-other-asks-its-text",
        "need-other-takes-text",
        "need-other-number-is-text",
        "need-other-blank-asks-to-confirm",
        "need-other-skip-declines",
    ],
)
def test_parse_reply_turns_one_line_into_the_answers_of_the_turn(
    turn: Turn, text: str, expected: Reply
) -> None:
    """A number picks an option, text goes as typed, skip declines (C5) and a blank line asks
    to confirm the decline; Other asks its companion in the same turn (C2)."""
    assert expected == parse_reply(turn, text)


@pytest.mark.parametrize(
    "text",
    ["0", "5", "99", "007", "-1", "+9"],
    ids=["zero", "one-past", "far", "padded", "negative", "signed"],
)
def test_parse_reply_refuses_a_number_that_is_no_option(text: str) -> None:
    """A number outside 1..n is refused with the range to choose from, never sent as text."""
    with pytest.raises(ChoiceOutOfRange, match=r"^There is no option [+-]?\d+: choose .* 1 to 4"):
        parse_reply(AUTH, text)


@pytest.mark.parametrize("text", ["n", " y ", "?"], ids=["n", "y-with-spaces", "punctuation"])
def test_parse_reply_refuses_one_character_that_is_no_option(text: str) -> None:
    """A stray key at a choice question (the n of a yes/no just answered) is refused saying
    why, never recorded as a custom value."""
    with pytest.raises(RefusedReply, match=r"^There is no option \".\", and one character is"):
        parse_reply(AUTH, text)


def test_parse_reply_takes_one_character_as_the_other_text() -> None:
    """The text of "Other (specify)" may be one character: it is asked for, not stray."""
    assert Reply({"auth_strategy__other": "n"}) == parse_reply(AUTH_OTHER, "n")


def test_parse_reply_companion_is_the_other_text_question() -> None:
    """The follow-up of "Other (specify)" is its `<qid>__other` companion (C2)."""
    reply = parse_reply(AUTH, "4")
    assert reply.follow_up is not None
    assert ("auth_strategy__other", "Please specify (Which authentication approach?):") == (
        reply.follow_up.id,
        reply.follow_up.question,
    )


# -- the loop, in process --------------------------------------------------------------------------


OTHER_TEXT_PROMPT = "Please specify (Which authentication approach?): "


class _Script:
    """A read_line that replays lines and records prompts; EOFError when the lines run out."""

    def __init__(self, *lines: str) -> None:
        self.lines = list(lines)
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if not self.lines:
            raise EOFError
        return self.lines.pop(0)


def test_run_chat_asks_other_text_inline_and_again_when_blank() -> None:
    """A blank Other text is sent; the engine asks it alone next turn (NeedOther, C5), at a
    prompt under the question just asked, not written a second time."""
    out: list[str] = []
    script = _Script("4", "", "Auth0")
    turn = run_chat(ClarificationMachine("Add OAuth login"), script, out.append)
    assert (("Strategy", "Auth0"),) == (turn.patch.fields if turn.patch else None)
    assert [PROMPT, "Please specify (Which authentication approach?): ", PROMPT] == script.prompts
    assert "Please specify (Which authentication approach?):" not in out


def test_run_chat_answers_refused_input_and_asks_again() -> None:
    """An out-of-range number and InvalidAnswers are answered, then the same question returns."""
    out: list[str] = []
    turn = run_chat(ClarificationMachine("Add OAuth login"), _Script("7", "\x07", "1"), out.append)
    assert "Done" == turn.state
    assert 3 == out.count(render_turn(AUTH))
    assert any(line.startswith("There is no option 7") for line in out)
    assert any(
        line.startswith('Not accepted: "Which authentication approach?" holds invisible, control')
        for line in out
    )


def test_run_chat_stops_at_the_turn_budget() -> None:
    """A blank Other text on the third turn owes a fourth turn, past the budget: once confirmed,
    NoPatch (C3)."""
    out: list[str] = []
    script = _Script("6", "", "login", "4", "", "y")
    turn = run_chat(ClarificationMachine("Improve things"), script, out.append)
    assert ("NoPatch", 3, []) == (turn.state, turn.number, script.lines)
    assert 'No patch: "Which authentication approach?" was left unanswered.' in out[-1]


def test_run_chat_asks_before_a_blank_other_text_ends_the_session() -> None:
    """A blank Other text on the last turn asks to confirm; no asks for the text again, and the
    text then typed completes the session."""
    script = _Script("6", "", "login", "4", "", "n", "Passkeys")
    turn = run_chat(ClarificationMachine("Improve things"), script, lambda _: None)
    assert (("Strategy", "Passkeys"),) == (turn.patch.fields if turn.patch else None)
    assert DECLINE_PROMPT == script.prompts[-2]


@pytest.mark.parametrize(
    ("lines", "fields"),
    [
        (("Databse", "", "2"), (("Type", "MySQL"),)),
        (("Databse", "y", "2"), (("Type", "MySQL"),)),
        (("Databse", "n"), (("Description", "Databse"),)),
    ],
    ids=["enter-takes-it", "yes-takes-it", "no-keeps-the-typed-text"],
)
def test_run_chat_asks_did_you_mean_for_a_near_miss(
    lines: tuple[str, ...], fields: tuple[tuple[str, str], ...]
) -> None:
    """A near miss of an option asks "did you mean"; no keeps the text, and the decision
    shows it."""
    script = _Script(*lines)
    turn = run_chat(ClarificationMachine("Improve the checkout flow"), script, lambda _: None)
    assert fields == (turn.patch.fields if turn.patch else None)
    assert 'Did you mean "Database"? [Y/n] ' == script.prompts[1]


def test_run_chat_keeps_a_custom_category_text_in_the_decision() -> None:
    """The text typed for a custom category describes the Other decision (not the intention)."""
    script = _Script("6", "Caching layer with Redis")
    turn = run_chat(ClarificationMachine("Improve the checkout flow"), script, lambda _: None)
    assert ("Other", (("Description", "Caching layer with Redis"),)) == (
        (turn.patch.category, turn.patch.fields) if turn.patch else None
    )


def test_run_chat_reasks_only_a_refused_other_text() -> None:
    """A 600-character Other text is refused and its text asked again, not the whole choice."""
    out: list[str] = []
    script = _Script("4", "x" * 600, "Passkeys")
    turn = run_chat(ClarificationMachine("Add OAuth login"), script, out.append)
    assert (("Strategy", "Passkeys"),) == (turn.patch.fields if turn.patch else None)
    assert [PROMPT, OTHER_TEXT_PROMPT, OTHER_TEXT_PROMPT] == script.prompts
    assert 1 == out.count(render_turn(AUTH))


@pytest.mark.parametrize(
    ("lines", "state"),
    [(("", "y"), "NoPatch"), (("", "n", "1"), "Done"), (("", "", "2"), "Done")],
    ids=["confirmed", "refused", "enter-again-is-no"],
)
def test_run_chat_declines_an_empty_answer_only_once_confirmed(
    lines: tuple[str, ...], state: str
) -> None:
    """An empty line asks to confirm the decline; anything but y asks the question again."""
    script = _Script(*lines)
    turn = run_chat(ClarificationMachine("Add OAuth login"), script, lambda _: None)
    assert (state, []) == (turn.state, script.lines)
    assert DECLINE_PROMPT == script.prompts[1]


def test_run_chat_leaves_the_machine_where_input_ended() -> None:
    """EOFError propagates and the machine keeps the turn it reached, ready to be stored."""
    machine = ClarificationMachine("Improve the feedback form")
    with pytest.raises(EOFError):
        run_chat(machine, _Script("3"), lambda _: None)
    assert ("NeedPrimaryField", ("db_type",)) == (machine.state, machine.turn.missing_info)


def test_run_chat_resumes_a_restored_session() -> None:
    """The loop takes any machine: one restored from a snapshot (C9) goes on where it was."""
    machine = ClarificationMachine("Improve the feedback form")
    with pytest.raises(EOFError):
        run_chat(machine, _Script("3"), lambda _: None)
    restored = ClarificationMachine.from_snapshot(machine.snapshot().model_dump_json())
    out: list[str] = []
    run_chat(restored, _Script("1"), out.append)
    assert "Category: Database\nType: PostgreSQL\nDecision hint: adr" == out[-1]


# -- the command, piped (in this process) ----------------------------------------------------------


@pytest.fixture(scope="module")
def command() -> str:
    """The command (forked from a warm interpreter, ``warm_processes``; a terminal runs the
    installed console script itself)."""
    return warm_processes.program()


def _chat(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """``preflight-fsm chat ARGS`` with ``stdin`` piped, run in this process (the command line's
    own entry, through click's test runner): what the process would print and exit with. The
    process boundary (a terminal, signals, a pipe that never ends) is tested below on real ones.
    """
    result = CliRunner().invoke(app, ["chat", *args], input=stdin, catch_exceptions=False)
    return subprocess.CompletedProcess(
        ["chat", *args], result.exit_code, result.stdout, result.stderr
    )


def test_piped_oauth_one_liner_prints_the_patch() -> None:
    """`printf 'OAuth\\n' | preflight-fsm chat "Add OAuth login"` prints a clean transcript and
    the patch, exit 0 (C4 shortcut, C6)."""
    result = _chat("Add OAuth login", stdin="OAuth\n")
    assert (0, "") == (result.returncode, result.stderr)
    assert (
        "Which authentication approach?\n"
        "  1. OAuth\n  2. Email/Password\n  3. Magic Link\n  4. Other (specify)\n"
        "> OAuth\n"
        "\n"
        "Category: Authentication\n"
        "Strategy: OAuth\n"
        "Decision hint: adr\n"
    ) == result.stdout


def test_piped_two_phase_session_asks_category_then_field() -> None:
    """No keyword matches (C4: "feedback" is not "db"), so the category comes first, then its
    field (C1)."""
    result = _chat("Improve the feedback form", stdin="3\n1\n")
    assert 0 == result.returncode
    lines = result.stdout.splitlines()
    assert lines.index("What type of change is this?") < lines.index("Which database type?")
    assert ["Category: Database", "Type: PostgreSQL", "Decision hint: adr"] == lines[-3:]


def test_piped_other_with_text_fills_the_field() -> None:
    """ "Other (specify)" by number, then the next line is its text, sent in the same step (C2)."""
    result = _chat("Add OAuth login", stdin="4\nAuth0\n")
    assert 0 == result.returncode
    assert "Please specify (Which authentication approach?): Auth0" in result.stdout.splitlines()
    assert ["Category: Authentication", "Strategy: Auth0"] == result.stdout.splitlines()[-3:-1]


def test_piped_other_with_blank_text_asks_it_next_turn() -> None:
    """A blank Other text leads to NeedOther, which asks the text alone (C1, C5)."""
    result = _chat("Add OAuth login", stdin="other\n\nMagic link by SMS\n")
    assert 0 == result.returncode
    assert "Strategy: Magic link by SMS" in result.stdout.splitlines()


@pytest.mark.parametrize("stdin", ["skip\n", "\ny\n"], ids=["skip", "blank-confirmed"])
def test_piped_decline_ends_without_a_patch(stdin: str) -> None:
    """skip, or a blank answer confirmed, declines (C5): no patch, the question left unanswered
    and the hint (C7), exit 0."""
    result = _chat("Add OAuth login", stdin=stdin)
    assert (0, "") == (result.returncode, result.stderr)
    assert [
        'No patch: "Which authentication approach?" was left unanswered.',
        "Decision hint: adr",
    ] == result.stdout.splitlines()[-2:]


def test_piped_invalid_number_is_answered_and_asked_again() -> None:
    """An out-of-range number is explained and the next line answers the same question."""
    result = _chat("Add OAuth login", stdin="9\n1\n")
    assert 0 == result.returncode
    lines = result.stdout.splitlines()
    assert "There is no option 9: choose a number from 1 to 4, or type your answer." in lines
    assert 2 == lines.count("Which authentication approach?")
    assert "Strategy: OAuth" in lines


def test_piped_refused_answer_prints_the_feedback_and_asks_again() -> None:
    """InvalidAnswers (a control character, C5) is answered with its feedback, then re-asked."""
    result = _chat("Add OAuth login", stdin="\x1b[A\n2\n")
    assert 0 == result.returncode
    assert (
        'Not accepted: "Which authentication approach?" holds invisible, control or unassigned '
        "characters (U+001B control)" in result.stdout
    )
    assert "Strategy: Email/Password" in result.stdout.splitlines()


@pytest.mark.parametrize(
    "stdin",
    ["", "4\n", "6\n\n", "\n"],
    ids=["nothing", "before-other-text", "in-need-other", "confirming"],
)
def test_piped_end_of_input_mid_session_exits_1_cleanly(stdin: str) -> None:
    """End of input before the session ends: a short line on stderr, exit 1, no traceback."""
    result = _chat("Improve the feedback form", stdin=stdin)
    assert (1, "preflight-fsm: end of input: the session ended without an outcome\n") == (
        result.returncode,
        result.stderr,
    )
    assert "Decision hint" not in result.stdout


@pytest.mark.parametrize(
    ("intention", "message"),
    [("   ", "says nothing"), ("tbd", "says nothing"), ("x" * 2001, "the limit is 2000")],
    ids=["blank", "placeholder", "too-long"],
)
def test_invalid_intention_exits_2_with_the_message(intention: str, message: str) -> None:
    """InvalidIntention (C5) is a usage error: its message on stderr, exit 2, nothing asked."""
    result = _chat(intention, stdin="1\n")
    assert (2, "") == (result.returncode, result.stdout)
    assert message in result.stderr
    assert "Traceback" not in result.stderr


_MOBILE_FLOW = """\
name = "mobile"

[[categories]]
name = "Mobile"
hint = "task"
keywords = ["mobile", "ios", "android"]
question = { id = "mobile_platform", text = "Which platform?", options = ["iOS", "Android"], \
field = "Platform" }

[[categories]]
name = "Web"
hint = "task"
keywords = ["web"]
question = { id = "web_stack", text = "Which stack?", options = ["SSR", "SPA"], field = "Stack" }
"""


def test_flow_option_runs_the_session_on_that_flow(tmp_path: Path) -> None:
    """--flow loads a TOML flow: its keywords, questions and fields drive the session."""
    flow = tmp_path / "mobile.toml"
    flow.write_text(_MOBILE_FLOW, encoding="utf-8")
    result = _chat("--flow", str(flow), "Ship the android app", stdin="2\n")
    assert (0, "") == (result.returncode, result.stderr)
    assert "  3. Other (specify)" in result.stdout.splitlines()
    assert ["Category: Mobile", "Platform: Android", "Decision hint: task"] == (
        result.stdout.splitlines()[-3:]
    )


def test_broken_flow_file_exits_2_naming_the_unknown_key(tmp_path: Path) -> None:
    """An InvalidFlow (unknown key refused by name) is a usage error: stderr, exit 2."""
    flow = tmp_path / "broken.toml"
    flow.write_text('name = "x"\ncolour = "blue"\n', encoding="utf-8")
    result = _chat("--flow", str(flow), "Add OAuth login")
    assert (2, "") == (result.returncode, result.stdout)
    assert "unknown keys: colour" in result.stderr


# -- the installed command, in a real terminal -----------------------------------------------------


@pytest.fixture
def terminal(command: str) -> Iterator[Callable[..., Terminal]]:
    """Starts the command on a terminal; every one started is killed if still running."""
    started: list[Terminal] = []

    def start(*args: str) -> Terminal:
        term = Terminal([command, "chat", *args])
        started.append(term)
        return term

    yield start
    for term in started:
        term.close()


def test_terminal_session_answered_by_number(terminal: Callable[..., Terminal]) -> None:
    """In a terminal each question waits at a prompt; numbers pick the category then the field."""
    term = terminal("Improve the feedback form")
    term.expect("6. Other (specify)\n> ")
    term.send("4\r")
    term.expect("4. Other (specify)\n> ")
    term.send("1\r")
    assert 0 == term.wait()
    assert "Category: Authentication\nStrategy: OAuth\nDecision hint: adr\n" in term.output
    assert "Traceback" not in term.output


def test_terminal_other_text_is_asked_inline(terminal: Callable[..., Terminal]) -> None:
    """Picking "Other (specify)" prompts for its text on the spot, in the same turn (C2)."""
    term = terminal("Add OAuth login")
    term.expect("> ")
    term.send("4\r")
    term.expect("Please specify (Which authentication approach?): ")
    term.send("Passkeys\r")
    assert 0 == term.wait()
    assert "Strategy: Passkeys\n" in term.output


def test_terminal_other_text_left_empty_is_asked_once(terminal: Callable[..., Terminal]) -> None:
    """An empty "Other (specify)" text is asked again without printing the question twice."""
    term = terminal("Add OAuth login")
    term.expect("> ")
    term.send("4\r")
    term.expect("Please specify (Which authentication approach?): ")
    term.send("\r")
    term.expect("> ")
    term.send("Passkeys\r")
    assert 0 == term.wait()
    assert 1 == term.output.count("Please specify"), term.output
    assert "Strategy: Passkeys\n" in term.output


def test_terminal_invalid_number_is_asked_again(terminal: Callable[..., Terminal]) -> None:
    """An out-of-range number is explained and the prompt returns, in a terminal too."""
    term = terminal("Add OAuth login")
    term.expect("> ")
    term.send("5\r")
    term.expect("There is no option 5: choose a number from 1 to 4, or type your answer.")
    term.expect("4. Other (specify)\n> ")
    term.send("3\r")
    assert 0 == term.wait()
    assert "Strategy: Magic Link\n" in term.output


def test_terminal_stray_key_is_explained_and_asked_again(terminal: Callable[..., Terminal]) -> None:
    """A stray n at a field prompt says what was wrong and asks again; nothing is recorded."""
    term = terminal("Improve the checkout flow")
    term.expect("6. Other (specify)\n> ")
    term.send("3\r")
    term.expect("4. Other (specify)\n> ")
    term.send("n\r")
    term.expect('There is no option "n", and one character is taken for a stray key')
    term.expect("4. Other (specify)\n> ")
    term.send("2\r")
    assert 0 == term.wait()
    assert "Category: Database\nType: MySQL\n" in term.output


def test_terminal_ctrl_c_exits_130_without_traceback(terminal: Callable[..., Terminal]) -> None:
    """Ctrl-C at a prompt ends the session with a short line and exit 130, no traceback."""
    term = terminal("Add OAuth login")
    term.expect("4. Other (specify)\n> ")
    term.wait_for_input()
    term.send("\x03")
    assert 130 == term.wait()
    assert "preflight-fsm: interrupted: the session ended without an outcome" in term.output
    assert "Traceback" not in term.output


def test_terminal_ctrl_d_exits_1_without_traceback(terminal: Callable[..., Terminal]) -> None:
    """Ctrl-D (end of input) at an empty prompt exits 1 with a short line, no traceback."""
    term = terminal("Add OAuth login")
    term.expect("> ")
    term.send("\x04")
    assert 1 == term.wait()
    assert "preflight-fsm: end of input: the session ended without an outcome" in term.output
    assert "Traceback" not in term.output


def test_terminal_line_editing_fixes_a_typo_before_it_is_sent(
    terminal: Callable[..., Terminal],
) -> None:
    """readline edits the line in a terminal: Left arrow moves the cursor and a letter typed there
    is inserted, so "Magic Lnk", Left, Left, "i" sends "Magic Link" (no escape codes sent)."""
    term = terminal("Add OAuth login")
    term.expect("4. Other (specify)\n> ")
    term.send("Magic Lnk\x1b[D\x1b[Di\r")
    assert 0 == term.wait()
    assert "Strategy: Magic Link\n" in term.output
    assert "control characters" not in term.output


def test_terminal_up_arrow_recalls_an_earlier_answer(terminal: Callable[..., Terminal]) -> None:
    """readline keeps this chat's history: Up at a later prompt recalls the earlier line."""
    term = terminal("Add OAuth login")
    term.expect("4. Other (specify)\n> ")
    term.send("9\r")
    term.expect("or type your answer.\n\nWhich authentication approach?\n")
    term.expect("or type your answer.\n\n" + render_turn(AUTH) + "\n> ")
    term.send("\x1b[A\x7f3\r")  # Up recalls "9"; Backspace; 3
    assert 0 == term.wait()
    assert "Strategy: Magic Link\n" in term.output


def test_terminal_shows_colour_and_a_pipe_none(
    terminal: Callable[..., Terminal], command: str
) -> None:
    """On a terminal the question is bold and the decision green; piped, the same words bare."""
    term = terminal("Add OAuth login")
    term.expect("4. Other (specify)\n> ")
    term.send("1\r")
    assert 0 == term.wait()
    piped = subprocess.run(
        [command, "chat", "Add OAuth login"], input="1\n", capture_output=True, text=True
    )
    assert "\x1b[1mWhich authentication approach?\x1b[0m" in term.raw
    assert "\x1b[32mCategory: Authentication\x1b[0m" in term.raw
    assert ("\x1b" not in piped.stdout, "Which authentication approach?") == (
        True,
        piped.stdout.splitlines()[0],
    )


def test_terminal_near_miss_asks_did_you_mean(terminal: Callable[..., Terminal]) -> None:
    """In a terminal a typo of an option asks "did you mean"; n keeps the typed text, shown in
    the decision."""
    term = terminal("Add OAuth login")
    term.expect("4. Other (specify)\n> ")
    term.send("OAthAth\r")
    term.expect('Did you mean "OAuth"? [Y/n] ')
    term.send("n\r")
    assert 0 == term.wait()
    assert 'Kept as typed: "OAthAth".' in term.output
    assert "Strategy: OAthAth\n" in term.output


def test_terminal_custom_category_text_is_in_the_decision(
    terminal: Callable[..., Terminal],
) -> None:
    """In a terminal the text typed for a custom category is the Other decision's description."""
    term = terminal("Improve the checkout flow")
    term.expect("6. Other (specify)\n> ")
    term.send("6\r")
    term.expect("Please specify (What type of change is this?): ")
    term.send("Caching layer with Redis\r")
    assert 0 == term.wait()
    assert "Category: Other\nDescription: Caching layer with Redis\n" in term.output


def test_terminal_too_long_other_text_reasks_the_text(
    terminal: Callable[..., Terminal],
) -> None:
    """In a terminal a refused Other text asks for the text again, not the choice."""
    term = terminal("Add OAuth login")
    term.expect("4. Other (specify)\n> ")
    term.send("4\r")
    term.expect(OTHER_TEXT_PROMPT)
    term.send("x" * 600 + "\r")
    term.expect("Expected the text for Other (specify), at most 500 characters.\n")
    term.expect(OTHER_TEXT_PROMPT)
    term.send("Passkeys\r")
    assert 0 == term.wait()
    assert "Strategy: Passkeys\n" in term.output
    assert 1 == term.output.count("Which authentication approach?\n")


def test_terminal_blank_other_text_on_the_last_turn_asks_first(
    terminal: Callable[..., Terminal],
) -> None:
    """In a terminal an empty "Please specify" that would end the session asks [y/N] first."""
    term = terminal("Improve things")
    for prompt, typed in [
        ("6. Other (specify)\n> ", "6"),
        ("Please specify (What type of change is this?): ", ""),
        ("> ", "login"),  # the question just asked is not printed again
        ("4. Other (specify)\n> ", "4"),
        (OTHER_TEXT_PROMPT, ""),
    ]:
        term.expect(prompt)
        term.output = ""
        term.send(f"{typed}\r")
    term.expect(DECLINE_PROMPT)
    term.send("y\r")
    assert 0 == term.wait()
    assert "No patch:" in term.output


def test_terminal_empty_answer_asks_before_declining(terminal: Callable[..., Terminal]) -> None:
    """A stray Enter does not end the session: it asks to confirm, and n asks the question again;
    Enter then y declines."""
    term = terminal("Add OAuth login")
    term.expect("4. Other (specify)\n> ")
    term.send("\r")
    term.expect("[y/N] ")
    term.send("n\r")
    term.expect("4. Other (specify)\n> ")
    term.send("\r")
    term.expect("[y/N] ")
    term.send("y\r")
    assert 0 == term.wait()
    assert 'No patch: "Which authentication approach?" was left unanswered.' in term.output


def test_terminal_ctrl_c_in_a_stored_session_says_it_is_saved(
    command: str, tmp_path: Path, terminal: Callable[..., Terminal]
) -> None:
    """Ctrl-C in `chat --session` says the session is saved and how to resume it (exit 130)."""
    store = str(tmp_path / "sessions.sqlite3")
    started = subprocess.run(
        [command, "start", "Improve the feedback form", "--store", store, "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    session_id = json.loads(started.stdout)["session_id"]
    term = terminal("--session", session_id, "--store", store)
    term.expect("6. Other (specify)\n> ")
    term.send("3\r")
    term.expect("4. Other (specify)\n> ")
    term.wait_for_input()
    term.send("\x03")
    assert 130 == term.wait()
    assert f"session {session_id} is saved at its last answered question" in term.output
    assert f"preflight-fsm chat --session {session_id}" in term.output


def test_a_stored_chat_refuses_to_save_into_a_removed_store(command: str, tmp_path: Path) -> None:
    """When the store's directory is removed while `chat --session` runs, the next answer is not
    acknowledged: the chat ends with exit 8 saying nothing was written, instead of losing the
    step without a word."""
    directory = tmp_path / ".preflight-fsm"
    store = str(directory / "sessions.sqlite3")
    started = subprocess.run(
        [command, "start", "Improve the feedback form", "--store", store, "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    session_id = json.loads(started.stdout)["session_id"]
    chat = subprocess.Popen(
        [command, "chat", "--session", session_id, "--store", store],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert chat.stdout is not None
    while "6. Other (specify)" not in chat.stdout.readline():
        pass
    shutil.rmtree(directory)
    out, err = chat.communicate("3\n", timeout=TIMEOUT)
    assert 8 == chat.returncode
    assert "was removed or replaced" in err
    assert "nothing was written" in err
    assert "Which database type?" not in out


def test_chat_session_by_prefix_names_the_whole_id_to_resume(tmp_path: Path) -> None:
    """`chat --session` takes a unique prefix of the id; ending early names the whole id to
    resume with (a prefix that is unique today may not be tomorrow)."""
    store = str(tmp_path / "sessions.sqlite3")
    started = CliRunner().invoke(app, ["start", "Improve the feedback form", "--store", store])
    session_id = started.stdout.split()[1]
    result = _chat("--session", session_id[:6], "--store", store, stdin="3\n")
    assert 1 == result.returncode
    assert f"resume it with `preflight-fsm chat --session {session_id}`" in result.stderr


def test_piped_endless_input_is_refused_not_read_to_its_end(command: str) -> None:
    """`chat ... < /dev/zero`: a line longer than MAX_LINE is a usage error (exit 2) saying so,
    read no further (issue 23 item 8)."""
    with open("/dev/zero") as zero:
        result = subprocess.run(
            [command, "chat", "Add OAuth login"],
            stdin=zero,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
    assert 2 == result.returncode
    assert "a line of input is longer than 1,048,576 characters" in result.stderr
