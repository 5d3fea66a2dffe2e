"""``--web --passkey [--people FILE]`` on the command line (``chat``, ``pf``): every turn on the
answer page confirmed with a passkey the people file lists, recorded ``user_passkey``
(docs/web.md). The options' rules and their messages live here, so every command says the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from preflight_fsm.people import DEFAULT_PEOPLE_FILE, People

__all__ = ["PASSKEY_HELP", "PASSKEY_NEEDS_WEB", "PEOPLE_HELP", "signers"]

PASSKEY_NEEDS_WEB: Final = "--passkey confirms answers on the page: add --web"
"""The usage error of ``--passkey`` without ``--web``."""
PASSKEY_HELP: Final = (
    "With --web: confirm every turn with your enrolled passkey, recorded user_passkey (the "
    "--answers-from person level; docs/web.md)."
)
PEOPLE_HELP: Final = "With --passkey: the people file. Default: .preflight-fsm/people.toml."


def signers(people_file: Path | None) -> People:
    """The people whose passkeys sign, from ``people_file`` (default
    ``.preflight-fsm/people.toml``). InvalidPeopleFile, saying how to enroll, when the file is
    missing or nobody in it enrolled on localhost, where the command serves the page."""
    from preflight_fsm.cli.web import enrolled_port  # the page's parts: the mcp extra

    people = People.load(people_file or DEFAULT_PEOPLE_FILE)
    enrolled_port(people)
    return people
