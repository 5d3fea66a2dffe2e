"""``mcp --transport http``'s options for a team server: the URL clients use, the origins and
hosts it answers, authentication, the bounds (docs/deploy.md says what each guards against).
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from preflight_fsm.cli.report import reported, usage_error

if TYPE_CHECKING:
    from mcp.server.auth.provider import TokenVerifier

    from preflight_fsm.mcp.auth import ServerAuth
    from preflight_fsm.mcp.http import HttpLimits
    from preflight_fsm.mcp.page_rounds import PageRounds
    from preflight_fsm.people import People
    from preflight_fsm.store import Sessions, SessionStore
    from preflight_fsm.web import PageListener

__all__ = [
    "AcceptEvictingStoreOption",
    "AllowedHostOption",
    "AllowedOriginOption",
    "HeaderTimeoutOption",
    "InsecureNoAuthOption",
    "MaxRequestBytesOption",
    "MaxSessionsOption",
    "MaxSessionsPerClientOption",
    "OidcAudienceOption",
    "OidcIssuerOption",
    "PublicUrlOption",
    "ReclaimIntervalOption",
    "RepoRootOption",
    "SessionIdleTimeoutOption",
    "TokensOption",
    "answer_page",
    "check_store",
    "checked_port",
    "enrolled_rp_id",
    "http_rp_id",
    "is_loopback",
    "limits_of",
    "people_for",
    "public_url_of",
    "server_auth",
]


def checked_port(value: int) -> int:
    """``--port``'s check, said in words (click's range shows ``1<=x<=65535`` in the help)."""
    if not 1 <= value <= 65535:
        raise typer.BadParameter(f"{value} is no TCP port: use one from 1 to 65535")
    return value


PublicUrlOption = Annotated[
    str | None,
    typer.Option(
        "--public-url",
        metavar="URL",
        help="The URL clients use to reach /mcp (behind a proxy: the proxy's). Its origin and "
        "host are allowed; setup, links and messages print it. Default: the bound address.",
        show_default=False,
    ),
]
AllowedOriginOption = Annotated[
    list[str] | None,
    typer.Option(
        "--allowed-origin",
        metavar="ORIGIN",
        help="Another browser origin allowed to call (scheme://host[:port]); repeatable. "
        "Others get 403.",
        show_default=False,
    ),
]
AllowedHostOption = Annotated[
    list[str] | None,
    typer.Option(
        "--allowed-host",
        metavar="HOST[:PORT]",
        help="Another Host header served (e.g. what a proxy forwards); repeatable. Others get 421.",
        show_default=False,
    ),
]
TokensOption = Annotated[
    Path | None,
    typer.Option(
        "--tokens",
        metavar="FILE",
        help="Require a bearer token from this file (preflight-fsm tokens add NAME --tokens "
        "FILE); each names the principal its steps are recorded under.",
        show_default=False,
    ),
]
OidcIssuerOption = Annotated[
    str | None,
    typer.Option(
        "--oidc-issuer",
        metavar="URL",
        help="Accept access tokens (JWT) this OpenID Connect issuer signed; the principal is "
        "their sub.",
        show_default=False,
    ),
]
OidcAudienceOption = Annotated[
    str | None,
    typer.Option(
        "--oidc-audience",
        metavar="AUD",
        help="The audience (aud) tokens must name. Default: the public URL.",
        show_default=False,
    ),
]
InsecureNoAuthOption = Annotated[
    bool,
    typer.Option(
        "--insecure-no-auth",
        help="Serve a non-loopback address without authentication: anyone who reaches the "
        "port can start, read and answer sessions.",
    ),
]

# The defaults are HttpLimits' (mcp/http.py, docs/deploy.md), not repeated here.
MaxRequestBytesOption = Annotated[
    int | None,
    typer.Option(
        "--max-request-bytes",
        min=1024,
        help="HTTP: the largest request body, in bytes (413).",
        show_default=False,
    ),
]
MaxSessionsOption = Annotated[
    int | None,
    typer.Option(
        "--max-sessions",
        min=1,
        help="HTTP: transport sessions open at once (503).",
        show_default=False,
    ),
]
MaxSessionsPerClientOption = Annotated[
    int | None,
    typer.Option(
        "--max-sessions-per-client",
        min=1,
        help="HTTP: transport sessions one principal (or address) keeps open (429).",
        show_default=False,
    ),
]
SessionIdleTimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--session-idle-timeout",
        min=1.0,
        metavar="SECONDS",
        help="HTTP: seconds a transport session lives without a request.",
        show_default=False,
    ),
]

RepoRootOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--repo-root",
        metavar="DIR",
        help="--preflights over HTTP: a folder whose repositories clients may name as "
        "repo_path (records are written there); repeatable. Default: the working directory.",
        show_default=False,
    ),
]

AcceptEvictingStoreOption = Annotated[
    bool,
    typer.Option(
        "--accept-evicting-store",
        help="Serve on a Redis whose maxmemory-policy evicts keys: under memory pressure it "
        "deletes live sessions.",
    ),
]

HeaderTimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--header-timeout",
        min=0.1,
        metavar="SECONDS",
        help="HTTP: seconds a client has to send a request's head (a slow sender is cut off).",
        show_default=False,
    ),
]

ReclaimIntervalOption = Annotated[
    float | None,
    typer.Option(
        "--reclaim-interval",
        min=0.1,
        metavar="SECONDS",
        help="HTTP: seconds between two removals of expired sessions from the store (a bounded "
        "batch each), so a server that only reads still reclaims them.",
        show_default=False,
    ),
]


def check_store(opened: SessionStore, accept_evicting: bool) -> None:
    """Before the server listens: exit 8 when the store cannot be reached; name a store that
    would lose sessions on restart; refuse one that evicts them unless the operator accepts it."""
    from preflight_fsm.errors import StoreUnavailable

    problem = opened.check()
    if problem is not None:
        opened.close()
        with reported():
            raise StoreUnavailable(problem)
    durability = opened.durability_warning()
    if durability:
        typer.echo(f"preflight-fsm: warning: {durability}", err=True)
    policy = opened.eviction_policy()
    if policy is None:
        return
    if not accept_evicting:
        opened.close()
        raise usage_error(
            f"the store evicts keys under memory pressure (maxmemory-policy {policy}): live "
            "sessions would be lost and read as never started. Set maxmemory-policy noeviction, "
            "or pass --accept-evicting-store"
        )
    typer.echo(
        f"preflight-fsm: warning: the store evicts keys (maxmemory-policy {policy}): sessions "
        "may be lost under memory pressure",
        err=True,
    )


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a bind address) is reachable from this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def public_url_of(public_url: str | None, host: str, port: int, path: str) -> str | None:
    """The URL clients use: ``--public-url``, else the bound address's (None for a wildcard
    bind such as 0.0.0.0, which names no host a client can use)."""
    from preflight_fsm.mcp.origins import public_url_problem

    if public_url is not None:
        problem = public_url_problem(public_url)
        if problem is not None:
            raise typer.BadParameter(f"{public_url!r} {problem}", param_hint="--public-url")
        return public_url
    shown = f"[{host}]" if ":" in host else host
    derived = f"http://{shown}:{port}{path}"
    return None if public_url_problem(derived) else derived


def server_auth(
    tokens: Path | None,
    issuer: str | None,
    audience: str | None,
    public_url: str | None,
) -> ServerAuth | None:
    """The authentication the options ask for (None: none), read and checked now."""
    from preflight_fsm.mcp.auth import ServerAuth
    from preflight_fsm.mcp.tokens import InvalidTokensFile, TokensVerifier, read_tokens

    verifiers: list[TokenVerifier] = []
    teams: dict[str, str] = {}
    if tokens is not None:
        try:
            read = read_tokens(tokens)
        except InvalidTokensFile as exc:
            raise usage_error(str(exc)) from None
        verifiers.append(TokensVerifier(read))
        teams = read.teams()
    if issuer is None and audience is not None:
        raise typer.BadParameter("needs --oidc-issuer", param_hint="--oidc-audience")
    if issuer is not None:
        from preflight_fsm.mcp.oidc import IssuerUnavailable, OidcSettings, OidcVerifier

        if public_url is None:
            raise typer.BadParameter(
                "needs --public-url: the URL clients use is the resource tokens are for",
                param_hint="--oidc-issuer",
            )
        try:
            verifiers.append(OidcVerifier(OidcSettings(issuer, audience or public_url)))
        except IssuerUnavailable as exc:
            raise usage_error(f"--oidc-issuer: {exc}") from None
    if not verifiers:
        return None
    return ServerAuth.of(verifiers, public_url or "http://127.0.0.1/mcp", issuer, teams)


def limits_of(
    max_request_bytes: int | None,
    max_sessions: int | None,
    max_sessions_per_client: int | None,
    session_idle_timeout: float | None,
    header_timeout: float | None = None,
    reclaim_interval: float | None = None,
) -> HttpLimits:
    """HttpLimits with the options given; the others keep their defaults."""
    from preflight_fsm.mcp.http import HttpLimits

    limits = HttpLimits()
    return HttpLimits(
        max_request_bytes=max_request_bytes or limits.max_request_bytes,
        max_sessions=max_sessions or limits.max_sessions,
        max_sessions_per_client=max_sessions_per_client or limits.max_sessions_per_client,
        session_idle_timeout=session_idle_timeout or limits.session_idle_timeout,
        header_timeout=header_timeout or limits.header_timeout,
        reclaim_interval=reclaim_interval or limits.reclaim_interval,
    )


def answer_page(
    sessions: Sessions,
    transport: str,
    public_url: str | None,
    people: People | None = None,
    *,
    enrolling: bool = False,
) -> tuple[PageRounds, PageListener | None]:
    """The answer page for a server over ``sessions``: over HTTP served beside ``/mcp`` at the
    public URL's origin; over stdio by a loopback listener that starts with the first link and
    that the caller stops (docs/web.md). With ``people`` (``--answers-from person``) every turn
    is signed with a passkey they list, so the page is served on the origin they enrolled on
    (over stdio the loopback port of their enrollment); InvalidPeopleFile when nobody did,
    unless the server is ``enrolling`` people there (``mcp --enroll``)."""
    from preflight_fsm.cli.web import enrolled_port
    from preflight_fsm.mcp.origins import origin_of
    from preflight_fsm.mcp.page_rounds import PageRounds
    from preflight_fsm.web import AnswerPage, PageListener
    from preflight_fsm.web.signing import SignedAnswerPage

    page = AnswerPage(sessions) if people is None else SignedAnswerPage(sessions, people)
    if transport == "http":
        page.base_url = origin_of(public_url) if public_url else None
        if isinstance(page, SignedAnswerPage):
            page.rp_id = http_rp_id(page.people, public_url, enrolling)
        return PageRounds(page), None
    listener = PageListener(page, port=0 if people is None else enrolled_port(people))
    return PageRounds(page, listener), listener


def http_rp_id(people: People, public_url: str | None, enrolling: bool) -> str:
    """The relying party the HTTP server's answer page signs with: the public URL's host when
    the server enrolls people itself (``--enroll``), else that of the passkeys enrolled on its
    origin (InvalidPeopleFile when nobody did)."""
    from preflight_fsm.cli.server_enroll import enrolling_rp_id
    from preflight_fsm.mcp.origins import origin_of

    if enrolling:
        return enrolling_rp_id(public_url)
    return enrolled_rp_id(people, origin_of(public_url) if public_url else "")


def enrolled_rp_id(people: People, origin: str) -> str:
    """The relying party of the passkeys the people file lists for the page's ``origin``;
    InvalidPeopleFile when nobody enrolled there (a passkey counts only on its origin)."""
    from preflight_fsm.errors import InvalidPeopleFile

    for person in people:
        if origin in person.origins:
            return person.rp_id
    raise InvalidPeopleFile(
        f"{people.source}: nobody enrolled a passkey on {origin or 'this server'!r}, where the "
        "answer page is served (--public-url): start this server with --enroll NAME, run "
        "preflight-fsm people enroll NAME on that origin, or name the people file that lists "
        "one with --people FILE"
    )


def people_for(policy: str, people_file: Path | None, enrolling: bool = False) -> People | None:
    """The people whose passkeys sign under ``--answers-from person`` (None under the other
    levels), read from ``people_file`` (default ``.preflight-fsm/people.toml``);
    InvalidPeopleFile for a missing or empty file, naming ``people enroll``, unless the server
    is ``enrolling`` people itself (``mcp --enroll``: nobody signs until someone has)."""
    from preflight_fsm.errors import InvalidPeopleFile
    from preflight_fsm.people import DEFAULT_PEOPLE_FILE, People

    if policy != "person":
        return None
    path = people_file or DEFAULT_PEOPLE_FILE
    if enrolling and not path.exists():
        return People((), str(path), path)
    people = People.load(path)
    if len(people) == 0 and not enrolling:
        raise InvalidPeopleFile(
            f"{people.source} lists nobody, and --answers-from person takes only answers signed "
            "with a passkey it lists: enroll a person first (preflight-fsm people enroll NAME)"
        )
    return people
