"""``setup --portable``: a command that runs preflight-fsm from a Git URL, in any clone.

The printed configurations otherwise name absolute paths into one clone's virtual environment,
which a teammate's machine does not have. preflight-fsm is not on PyPI, so the portable form
asks ``uvx`` to install it (with the ``mcp`` extra) from its Git repository.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

__all__ = ["NoSourceUrl", "git_requirement", "origin_url", "portable_command"]

# git@host:owner/repo.git, the scp-like form git accepts and pip/uv do not.
_SCP_LIKE = re.compile(r"^(?P<user>[\w.-]+)@(?P<host>[\w.-]+):(?P<path>(?!/).+)$")


class NoSourceUrl(Exception):
    """No Git URL to install preflight-fsm from: pass ``--from URL``."""


def origin_url(clone: Path | None) -> str:
    """The ``origin`` remote of the clone this installation runs from."""
    if clone is None:
        raise NoSourceUrl("this installation is not a clone: pass --from GIT_URL")
    try:
        found = subprocess.run(
            ["git", "-C", str(clone), "remote", "get-url", "origin"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise NoSourceUrl(
            f"cannot ask git for {clone}'s origin ({error}): pass --from GIT_URL"
        ) from error
    url = found.stdout.strip()
    if found.returncode != 0 or not url:
        raise NoSourceUrl(f"the clone {clone} has no remote 'origin': pass --from GIT_URL")
    return url


def git_requirement(url: str) -> str:
    """``preflight-fsm[mcp] @ git+URL``: what ``uvx --from`` installs."""
    if url.startswith("git+"):
        url = url[len("git+") :]
    scp = _SCP_LIKE.match(url)
    if scp is not None:
        url = f"ssh://{scp['user']}@{scp['host']}/{scp['path']}"
    elif Path(url).is_absolute():
        url = Path(url).as_uri()
    return f"preflight-fsm[mcp] @ git+{url}"


def portable_command(url: str) -> list[str]:
    """The command that runs preflight-fsm from ``url`` on any machine with ``uv``."""
    return ["uvx", "--from", git_requirement(url), "preflight-fsm"]
