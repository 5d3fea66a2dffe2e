"""The examples each help page ends with, as ``gh``'s and ``uv``'s do.

One home: :func:`~preflight_fsm.cli.help_pages.plain_help` prints them under "Examples" on the
page of the command they start with, and a test runs each through the command line's own
parser (``tests/test_cli_help.py``), so an example never names an option that is gone.
"""

from __future__ import annotations

from typing import Final

__all__ = ["EXAMPLES", "examples_of"]

EXAMPLES: Final[tuple[str, ...]] = (
    'preflight-fsm chat "Add OAuth login"',
    "preflight-fsm chat --session 5b0f",
    'preflight-fsm chat --web "Add OAuth login"',
    'preflight-fsm chat --flow my-flow.toml "Ship the android app"',
    'preflight-fsm start "Improve the checkout flow"',
    'preflight-fsm start "Add a cache" --json | jq -r .session_id',
    'preflight-fsm start --store redis://127.0.0.1:6379/0 --json "Add a cache"',
    "preflight-fsm answer 5b0f change_category=3",
    "preflight-fsm answer 5b0f db_type=2 --json",
    'preflight-fsm answer 5b0f --answers \'{"auth_strategy": "OAuth"}\'',
    "preflight-fsm show 5b0f",
    "preflight-fsm show 5b0f --decision > docs/adr/0001-cache.md",
    "preflight-fsm list",
    "preflight-fsm list --json",
    "preflight-fsm delete 5b0f",
    "preflight-fsm migrate --flow my-flow.toml",
    "preflight-fsm diagram --out flow.svg",
    "preflight-fsm diagram --session 5b0f --out path.png --scale 2",
    "preflight-fsm diagram --format mmd",
    "preflight-fsm check responses.jsonl",
    "preflight-fsm conformance engine",
    "preflight-fsm conformance recorded.jsonl --markdown",
    "preflight-fsm mcp",
    "preflight-fsm mcp --transport http --port 8000",
    "preflight-fsm mcp --preflights",
    "preflight-fsm setup --client claude-code --write",
    "preflight-fsm setup --client cursor --write --scope user",
    "preflight-fsm setup --portable",
    "preflight-fsm tokens add alice --tokens tokens.txt",
    "preflight-fsm people enroll alice",
    "preflight-fsm flow show > my-flow.toml",
    "preflight-fsm verify docs/adr/*.md --require person",
)
"""Every example, each starting with the command whose page shows it."""

_ON_THE_MAIN_PAGE: Final = ("chat", "start", "answer", "setup")
"""The commands whose first example the main page shows too."""


def examples_of(command: str | None) -> tuple[str, ...]:
    """The examples of ``command`` (a subcommand's name), or the main page's for None."""
    if command is None:
        return tuple(examples_of(name)[0] for name in _ON_THE_MAIN_PAGE)
    return tuple(e for e in EXAMPLES if e.split(maxsplit=2)[1] == command)
