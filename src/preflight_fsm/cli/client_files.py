"""``setup --write``: merge this server's entry into each agent's configuration file.

Each client keeps its MCP servers in a JSON file under one key. Writing replaces only the entry
of the same name and keeps every other server and key; a file that is not JSON (or holds
something else than an object there) is refused before anything is written. Files are replaced
atomically (a temporary file in the same folder, then a rename) with 2-space indentation and a
trailing newline.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

__all__ = ["SCOPES", "ClientFile", "UnreadableConfig", "client_file", "merged", "write"]

SCOPES: Final = ("project", "user")
"""Where a configuration is written: the project (this directory) or the user's home."""

# (client, scope) -> (the file, relative to the project or the home folder, and its key).
_FILES: Final = {
    ("claude-code", "project"): (".mcp.json", "mcpServers"),
    ("claude-code", "user"): (".claude.json", "mcpServers"),
    ("cursor", "project"): (".cursor/mcp.json", "mcpServers"),
    ("cursor", "user"): (".cursor/mcp.json", "mcpServers"),
    ("vscode", "project"): (".vscode/mcp.json", "servers"),
}


class UnreadableConfig(Exception):
    """A client's configuration file that cannot be merged into: nothing is written."""


@dataclass(frozen=True)
class ClientFile:
    """One client's configuration file, and the key its servers live under."""

    path: Path
    key: str


def client_file(client: str, scope: str, project: Path, home: Path) -> ClientFile | None:
    """Where ``client`` keeps its servers in ``scope``; None when it has no such file."""
    found = _FILES.get((client, scope))
    if found is None:
        return None
    return ClientFile((home if scope == "user" else project) / found[0], found[1])


def merged(target: ClientFile, name: str, entry: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The file's content with ``entry`` under ``name``, and what changed (a short line).

    Raises :class:`UnreadableConfig` when the file is not a JSON object holding an object
    under its key.
    """
    content: Any = {}
    if target.path.exists():
        try:
            content = json.loads(target.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise UnreadableConfig(
                f"cannot read {target.path}: {error}; fix or move it, nothing was written"
            ) from error
    servers = content.get(target.key, {}) if isinstance(content, dict) else None
    if not isinstance(servers, dict):
        raise UnreadableConfig(
            f"{target.path} holds no JSON object under {target.key!r}; fix or move it, "
            "nothing was written"
        )
    before = servers.get(name)
    verb = "added" if before is None else "unchanged" if before == entry else "replaced"
    others = len(servers) - (before is not None)
    content = {**content, target.key: {**servers, name: entry}}
    kept = f" (kept {others} other server{'s' * (others != 1)})" if others else ""
    return content, f"{target.path}: {verb} {target.key}[{name!r}]{kept}"


def write(path: Path, content: dict[str, Any]) -> None:
    """Replace ``path`` atomically with ``content``, creating its folder when missing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(json.dumps(content, indent=2, ensure_ascii=False) + "\n")
        if path.exists():
            shutil.copymode(path, temporary)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
