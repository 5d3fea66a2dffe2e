"""``preflight-fsm setup``: the MCP configuration of each agent, ready to paste (docs/mcp.md).

An agent starts the server itself, from its own working directory and its own ``PATH``: a bare
``preflight-fsm`` is not found when it lives in a virtual environment, and the default store
(``.preflight-fsm/sessions.sqlite3`` under the working directory) lands wherever the agent
happens to run. So every configuration printed here names the absolute path of this very
executable and an absolute store; ``--portable`` names ``uvx`` and a Git URL instead
(:mod:`preflight_fsm.cli.portable`), and ``--write`` merges the entry into each client's file
(:mod:`preflight_fsm.cli.client_files`).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Annotated, Any, Final

import typer

from preflight_fsm.cli import app, serving
from preflight_fsm.cli.report import usage_error
from preflight_fsm.extras import server_command

__all__ = ["CLIENTS", "TOKEN_ENV", "client_config", "client_entry"]

CLIENTS: Final = ("claude-code", "cursor", "vscode")
"""The agents a configuration is printed for, by the name ``--client`` takes."""

_TITLES: Final = {
    "claude-code": "Claude Code: run once in your project",
    "cursor": "Cursor: .cursor/mcp.json in your project (or ~/.cursor/mcp.json)",
    "vscode": "VS Code: .vscode/mcp.json in your project",
}


TOKEN_ENV: Final = "PREFLIGHT_FSM_TOKEN"
"""The environment variable each teammate keeps their bearer token in (``tokens add``)."""

# How each client reads an environment variable in its configuration, at connect time.
_ENV_REFERENCE: Final = {
    "claude-code": "${%s}",
    "cursor": "${env:%s}",
    "vscode": "${env:%s}",
}


def client_entry(
    client: str,
    command: list[str],
    args: list[str],
    url: str | None,
    token_env: str | None = None,
) -> dict[str, Any]:
    """This server's entry in ``client``'s configuration file (Claude Code: ``.mcp.json``).

    ``url`` set: the client reaches a running HTTP server there; else it starts ``command``
    with ``args`` over stdio. ``token_env`` set: the client sends ``Authorization: Bearer``
    with the token it reads from that environment variable (never the token itself).
    """
    headers: dict[str, Any] = {}
    if url is not None and token_env is not None:
        headers = {"headers": {"Authorization": "Bearer " + _ENV_REFERENCE[client] % token_env}}
    started: dict[str, Any] = {"command": command[0], "args": command[1:] + args}
    if client == "cursor":
        return {"url": url, **headers} if url is not None else started
    if url is not None:
        return {"type": "http", "url": url, **headers}
    return {"type": "stdio", **started}


def client_config(
    client: str,
    name: str,
    command: list[str],
    args: list[str],
    url: str | None,
    token_env: str | None = None,
) -> str:
    """What to paste into ``client``: a command line (Claude Code) or a JSON file's content."""
    entry = client_entry(client, command, args, url, token_env)
    if client == "claude-code":
        if url is not None:
            added = ["claude", "mcp", "add", "--transport", "http", name, url]
            for header, value in entry.get("headers", {}).items():
                added += ["--header", f"{header}: {value}"]
            return shlex.join(added)
        return shlex.join(["claude", "mcp", "add", name, "--", *command, *args])
    key = "mcpServers" if client == "cursor" else "servers"
    return json.dumps({key: {name: entry}}, indent=2)


def _write(
    clients: tuple[str, ...], scope: str, name: str, entries: dict[str, dict[str, Any]]
) -> list[str]:
    """Merge each client's entry into its file (all read before any is written); the changes."""
    from preflight_fsm.cli import client_files

    planned = []
    for chosen in clients:
        target = client_files.client_file(chosen, scope, Path.cwd(), Path.home())
        if target is None:
            if len(clients) == 1:
                raise usage_error(f"--client {chosen} has no --scope {scope} file: drop --scope")
            continue
        try:
            planned.append((target, *client_files.merged(target, name, entries[chosen])))
        except client_files.UnreadableConfig as error:
            raise usage_error(str(error)) from None
    for target, content, _ in planned:
        client_files.write(target.path, content)
    return [change for _, _, change in planned]


@app.command("setup")
def setup(
    client: Annotated[
        str | None,
        typer.Option(
            "--client",
            metavar="claude-code|cursor|vscode",
            help="Print only this agent's configuration, without a title (to redirect into "
            "its file). Default: all three, each under a title.",
            show_default=False,
        ),
    ] = None,
    transport: Annotated[
        str,
        typer.Option(
            "--transport",
            metavar="stdio|http",
            help="stdio: the agent starts the server. http: you start it (the command is "
            "printed first) and the agent connects to its URL.",
        ),
    ] = "stdio",
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            metavar="URL_OR_PATH",
            help="The server's session store. Default: $PREFLIGHT_FSM_STORE, else "
            ".preflight-fsm/sessions.sqlite3 in this directory; a path is printed absolute.",
            show_default=False,
        ),
    ] = None,
    preflights: Annotated[
        bool,
        typer.Option("--preflights", help="Serve Preflights' own tools (mcp --preflights)."),
    ] = False,
    host: Annotated[str, typer.Option("--host", help="HTTP: the address to serve on.")] = (
        "127.0.0.1"
    ),
    port: Annotated[
        int,
        typer.Option(
            "--port",
            metavar="PORT",
            callback=serving.checked_port,
            help="HTTP: the port to serve on (1 to 65535).",
        ),
    ] = 8000,
    public_url: Annotated[
        str | None,
        typer.Option(
            "--public-url",
            metavar="URL",
            help="HTTP: the URL teammates reach the server at (a team server, docs/deploy.md): "
            "each client sends the bearer token it reads from $" + TOKEN_ENV + ".",
            show_default=False,
        ),
    ] = None,
    tokens: Annotated[
        Path | None,
        typer.Option(
            "--tokens",
            metavar="FILE",
            help="HTTP: the tokens file the printed server command authenticates with.",
            show_default=False,
        ),
    ] = None,
    write: Annotated[
        bool,
        typer.Option(
            "--write",
            help="Merge the configuration into each client's file (.mcp.json, "
            ".cursor/mcp.json, .vscode/mcp.json in this directory), keeping its other servers.",
        ),
    ] = False,
    scope: Annotated[
        str,
        typer.Option(
            "--scope",
            metavar="project|user",
            help="--write: user writes Claude Code's ~/.claude.json and Cursor's "
            "~/.cursor/mcp.json instead of this directory's files.",
        ),
    ] = "project",
    portable: Annotated[
        bool,
        typer.Option(
            "--portable",
            help="Start the server with uvx from a Git URL (--from, else this clone's origin) "
            "instead of this installation's absolute path: the same file works in any clone.",
        ),
    ] = False,
    source: Annotated[
        str | None,
        typer.Option(
            "--from",
            metavar="GIT_URL",
            help="--portable: the Git URL to install preflight-fsm from.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Print the MCP configuration of Claude Code, Cursor and VS Code for this installation."""
    from preflight_fsm.store.location import resolve_location, shown_location

    if client is not None and client not in CLIENTS:
        raise usage_error(f"--client {client!r} is none of {', '.join(CLIENTS)}")
    if transport not in ("stdio", "http"):
        raise usage_error(f"--transport {transport!r}: use stdio or http")
    from preflight_fsm.cli import mcp

    missing = mcp.absent_sdk()
    if missing is not None:  # else a configuration whose server exits 2: the agent says "failed"
        raise usage_error(f"the configuration would start a server that cannot run: {missing}")
    from preflight_fsm.cli import client_files

    if scope not in client_files.SCOPES:
        raise usage_error(f"--scope {scope!r}: use project or user")
    if scope != "project" and not write:
        raise usage_error("--scope is for --write")
    if source is not None and not portable:
        raise usage_error("--from is for --portable")
    command = _portable_command(source) if portable else server_command()
    stored: list[str] = []
    if store is not None or not portable:  # portable: the store under the agent's directory
        stored = ["--store", shown_location(resolve_location(store))]
    args = ["mcp", *stored, *(["--preflights"] if preflights else [])]
    name = "preflights" if preflights else "preflight-fsm"
    url = None
    blocks: list[str] = []
    token_env = None
    if public_url is not None and transport != "http":
        raise usage_error("--public-url is for --transport http")
    if transport == "http":
        url = public_url or f"http://{host}:{port}/mcp"
        args += ["--transport", "http", "--host", host, "--port", str(port)]
        if public_url is not None:
            from preflight_fsm.mcp.origins import public_url_problem

            problem = public_url_problem(public_url)
            if problem is not None:
                raise usage_error(f"--public-url {public_url!r} {problem}")
            args += ["--public-url", public_url]
            if tokens is not None:
                args += ["--tokens", str(tokens.resolve())]
            token_env = TOKEN_ENV
        if client is None:
            started = shlex.join(command + args)
            how = "# Start the server (and keep it running)"
            if public_url is not None and tokens is None:
                how += ", with --tokens FILE or --oidc-issuer URL (docs/deploy.md)"
            blocks.append(f"{how}:\n{started}")
    chosen_clients = (client,) if client is not None else CLIENTS
    if write:
        entries = {c: client_entry(c, command, args, url, token_env) for c in chosen_clients}
        blocks += _write(chosen_clients, scope, name, entries)
        typer.echo("\n\n".join(blocks))
        return
    for chosen in chosen_clients:
        config = client_config(chosen, name, command, args, url, token_env)
        blocks.append(config if client is not None else f"# {_TITLES[chosen]}\n{config}")
    typer.echo("\n\n".join(blocks))


def _portable_command(source: str | None) -> list[str]:
    """``uvx`` running preflight-fsm from ``source``, else from this clone's origin."""
    from preflight_fsm.cli.portable import NoSourceUrl, origin_url, portable_command
    from preflight_fsm.extras import installed_clone

    try:
        return portable_command(source if source is not None else origin_url(installed_clone()))
    except NoSourceUrl as error:
        raise usage_error(str(error)) from None
