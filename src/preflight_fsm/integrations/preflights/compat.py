"""The Preflights internals this integration relies on, checked: what changed, by name.

``preflight-fsm pf`` and the Preflights MCP tools run Preflights' own application and command
line with the engine in place of its mock. Preflights has no engine hook, so they rely on a few
internals of the pinned release (``preflights==1.1.4``), each listed in :data:`RELIED_ON`.
:func:`compat_problems` checks them (the commands refuse to run, naming the problem, rather than
misbehave), and ``tests/test_preflights_compat.py`` also pins the source files' digests, so a new
release fails loudly, naming the file and the internal that changed.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
import inspect
from typing import Final

__all__ = ["PINNED_VERSION", "RELIED_ON", "SOURCE_DIGESTS", "compat_problems"]

PINNED_VERSION: Final = "1.1.4"
"""The Preflights release this integration is written and tested against."""

RELIED_ON: Final[tuple[tuple[str, str], ...]] = (
    ("preflights.application._default_app", "pf's app, built once; set beforehand to ours"),
    ("preflights.application._get_default_app", "builds pf's app only while _default_app is None"),
    ("preflights.application.preflights_app.PreflightsApp", "subclassed: continue_preflight"),
    (
        "preflights.application.preflights_app.PreflightsApp._get_unanswered_required_questions",
        "which asked questions still wait for an answer",
    ),
    ("preflights.application.types.Session", "fields prefilled_answers, answers, asked_questions"),
    (
        "preflights.adapters.file_session.FileSessionAdapter._serialize_session",
        "extended to keep pre-filled answers",
    ),
    (
        "preflights.adapters.file_session.FileSessionAdapter._deserialize_session",
        "extended to read them back",
    ),
    ("preflights.application.question_filter.merge_answers", "Preflights' own answer merge"),
    ("preflights.cli.main.app", "pf's click command group, run as it is"),
    ("preflights.cli.state.delete_session", "closes pf's session after a stop without decision"),
    ("preflights.adapters.llm_debug.write_llm_debug", "where --debug-llm writes"),
)
"""Each internal relied on, and what for."""

SOURCE_DIGESTS: Final[dict[str, str]] = {
    "application/preflights_app.py": (
        "fdb81c37b10790557c6e962e9b44952602016a85f4e70228462800d78107982b"
    ),
    "application/__init__.py": "7b5da94fee27d2a120676cadfec84755db830de34a700df3121c46e5ecfc135c",
    "application/types.py": "84560b482d67759a51f7d69c6ef0434ddb5896d591324bb5c914e10124444cab",
    "application/question_filter.py": (
        "a0e59e678f641d42b423e1ce365589b2c345109aef31b04fdf287afcdff01a07"
    ),
    "adapters/file_session.py": "529a4cef94c4ad7698011b494b3d047bfcffe7aa11918cb0433c3d392cb5498a",
    "adapters/llm_debug.py": "7d185f932c46436cd1d7b14c69d4c2a0ebbce432a5cc6692a7a748e21191ed05",
    "cli/main.py": "8723c9b86d96ba935b09c61c251d54ac18f3eec75d4bc9d4fbfda679db79a9a1",
    "cli/state.py": "9d2dfe44d60d61fde00cbb84272f5c072bdb18cfcb182d587af5b48d8601c653",
    "cli/prompts.py": "6d35c5e279b15799dcc07889266ea76c4e9099d565f47ec934288cdf002ea72c",
    "mcp/tools.py": "94092caa316d7bdc35fc5743948271eb6cd23c3c29cd071c7bfb7d30a74bc75c",
}
"""SHA-256 of the pinned release's source files whose behaviour the integration depends on."""

_SESSION_FIELDS: Final = frozenset(
    {
        "prefilled_answers",
        "detected_from_intent",
        "answers",
        "all_answers",
        "asked_questions",
        "core_questions_asked",
        "missing_info",
        "decision_hint",
        "repo_path",
        "intention",
    }
)


def compat_problems() -> list[str]:
    """What differs from the internals relied on (empty when nothing does), one line each."""
    problems: list[str] = []
    try:
        version = importlib.metadata.version("preflights")
    except importlib.metadata.PackageNotFoundError:
        from preflight_fsm.extras import install_hint

        return [f"preflights is not installed; install it with: {install_hint('preflights')}"]
    if version != PINNED_VERSION:
        problems.append(f"preflights {version} is installed; this needs {PINNED_VERSION}")
    for dotted, purpose in RELIED_ON:
        if not _resolves(dotted):
            problems.append(f"{dotted} is gone ({purpose})")
    if problems:
        return problems
    from preflights import application
    from preflights.application.types import Session

    if "if _default_app is None" not in inspect.getsource(application._get_default_app):
        problems.append(
            "preflights.application._get_default_app no longer keeps a preset _default_app"
        )
    missing = _SESSION_FIELDS - {f.name for f in dataclasses.fields(Session)}
    if missing:
        problems.append(f"preflights.application.types.Session lost {sorted(missing)}")
    commands = set(getattr(importlib.import_module("preflights.cli.main").app, "commands", {}))
    if not {"start", "answer", "status"} <= commands:
        problems.append(f"preflights.cli.main.app has commands {sorted(commands)}")
    return problems


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            if not hasattr(target, name):
                return False
            target = getattr(target, name)
        return True
    return False
