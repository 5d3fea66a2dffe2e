"""A provider's exchanges recorded to JSONL, and replayed with no network.

:class:`RecordingLLMAdapter` wraps one of Preflights' real adapters (an ``BaseLLMAdapter``:
Anthropic, OpenAI, OpenRouter) and appends each exchange as one JSON object a line::

    {"prompt_hash": "<sha256>", "completion": "<the tool call's input, as JSON text>",
     "meta": {"model": "...", "provider": "...", "tool": "submit_clarification",
              "prompt_preview": "<the prompt's first 120 characters>"}}

The prompt is what the adapter sends (:func:`prompt_text`: system prompt, user message, tool),
and its hash is SHA-256 of that text with newlines normalised (``\\r\\n`` and ``\\r`` become
``\\n``), so a recording made on one system replays on another. :class:`ReplayLLMAdapter` is
a Preflights adapter whose provider is such a file: each prompt is answered with its recorded
completion, run through Preflights' own parsing and repair exactly as a live reply is.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from preflights.adapters.llm_base import BaseLLMAdapter
from preflights.adapters.llm_errors import LLMProviderError
from preflights.application.llm_config import LLMConfig

from preflight_fsm.bounded import TooLarge, Unreadable, read_bounded

__all__ = [
    "PREVIEW_CHARS",
    "PromptNotRecorded",
    "RecordingError",
    "RecordingLLMAdapter",
    "RecordingMissing",
    "RecordingUnreadable",
    "ReplayLLMAdapter",
    "prompt_hash",
    "prompt_text",
]

PREVIEW_CHARS: Final = 120
"""How much of a prompt a recording keeps for people to read."""


class RecordingError(ValueError):
    """A recording cannot be used; the message says what to do."""


class RecordingMissing(RecordingError):
    """The recording file does not exist."""


class RecordingUnreadable(RecordingError):
    """A line of the recording is not a recorded exchange; ``line`` is its number."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


class PromptNotRecorded(RecordingError, LLMProviderError):
    """A prompt the recording holds no completion for (a provider error to a guard)."""


def prompt_text(system_prompt: str, user_message: str, tools: Sequence[dict[str, Any]]) -> str:
    """The prompt an adapter sends, as one text: what a recording is keyed by."""
    names = ", ".join(str(tool.get("name", "")) for tool in tools)
    return f"SYSTEM:\n{system_prompt}\n\nUSER:\n{user_message}\n\nTOOLS: {names}"


def prompt_hash(prompt: str) -> str:
    """SHA-256 (hex) of ``prompt`` with its newlines normalised.

    >>> prompt_hash("a\\r\\nb") == prompt_hash("a\\nb") == prompt_hash("a\\rb")
    True
    """
    canonical = prompt.replace("\r\n", "\n").replace("\r", "\n")
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class RecordingLLMAdapter(BaseLLMAdapter):
    """Preflights' adapter ``llm``, each exchange appended to the JSONL file ``path``.

    Only replies are recorded: an exchange that fails (timeout, rate limit, ...) leaves no line.
    Raises RecordingError when ``path`` cannot be written.
    """

    def __init__(self, llm: BaseLLMAdapter, path: str | Path) -> None:
        super().__init__(llm._config)
        self._llm = llm
        self._model = llm._model
        self._path = Path(path)
        self._lock = threading.Lock()
        try:  # refused now, not at the first exchange
            self._path.open("a", encoding="utf-8").close()
        except OSError as exc:
            raise RecordingError(
                f"cannot write the recording {path}: {exc.strerror or exc}; send a writable path"
            ) from None

    def _call_api(
        self, system_prompt: str, user_message: str, tools: list[dict[str, Any]]
    ) -> dict[str, Any]:
        result = self._llm._call_api(system_prompt, user_message, tools)
        prompt = prompt_text(system_prompt, user_message, tools)
        record = {
            "prompt_hash": prompt_hash(prompt),
            "completion": json.dumps(result, ensure_ascii=False),
            "meta": {
                "model": self._model,
                "provider": self.provider,
                "tool": ", ".join(str(t.get("name", "")) for t in tools),
                "prompt_preview": " ".join(user_message.split())[:PREVIEW_CHARS],
            },
        }
        with self._lock, self._path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
        return result


class ReplayLLMAdapter(BaseLLMAdapter):
    """A Preflights adapter answering from a recording; raises RecordingError subclasses.

    >>> ReplayLLMAdapter("no/such/file.jsonl")
    Traceback (most recent call last):
    ...
    preflight_fsm.llm.recording.RecordingMissing: no recording at no/such/file.jsonl: ...
    """

    def __init__(self, path: str | Path, *, provider: str = "replay") -> None:
        self._path = Path(path)
        self._completions, model = _load(self._path)
        config = LLMConfig(provider=provider, model=model or "replay", max_retries=0)  # type: ignore[arg-type]
        super().__init__(config)

    def _call_api(
        self, system_prompt: str, user_message: str, tools: list[dict[str, Any]]
    ) -> dict[str, Any]:
        key = prompt_hash(prompt_text(system_prompt, user_message, tools))
        completion = self._completions.get(key)
        if completion is None:
            preview = " ".join(user_message.split())[:PREVIEW_CHARS]
            raise PromptNotRecorded(
                f"{self._path} holds no completion for prompt {key[:12]}… ({preview!r}): record "
                "it with the provider (preflight-fsm pf --llm-record, or conformance --record)"
            )
        try:
            value = json.loads(completion)
        except ValueError:
            value = None
        if not isinstance(value, dict):
            return {"completion": completion}  # Preflights' parsing reports it as invalid
        return value


MAX_RECORDING_BYTES: Final = 64 * 1024 * 1024
"""A larger recording is refused unread: thousands of sessions fit well below it."""


def _load(path: Path) -> tuple[dict[str, str], str | None]:
    try:
        text = read_bounded(path, MAX_RECORDING_BYTES).decode("utf-8")
    except TooLarge as exc:
        raise RecordingMissing(
            f"cannot read the recording {path}: it {exc}; record only the sessions you replay"
        ) from None
    except Unreadable as exc:
        raise RecordingMissing(f"the recording {path} {exc.problem}") from None
    except FileNotFoundError:
        raise RecordingMissing(
            f"no recording at {path}: record one first (preflight-fsm pf --llm-provider NAME "
            "--llm-record FILE, or preflight-fsm conformance NAME --record FILE)"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordingMissing(f"cannot read the recording {path}: {exc}") from None
    completions: dict[str, str] = {}
    model: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise RecordingUnreadable(
                f"{path}:{number}: bad line {number}, not JSON ({exc}): each line is one object "
                "with prompt_hash, completion and meta",
                number,
            ) from None
        if (
            not isinstance(record, dict)
            or not isinstance(record.get("prompt_hash"), str)
            or not isinstance(record.get("completion"), str)
        ):
            raise RecordingUnreadable(
                f"{path}:{number}: bad line {number}: an object with a text prompt_hash and a "
                "text completion is needed",
                number,
            )
        completions[record["prompt_hash"]] = record["completion"]
        meta = record.get("meta")
        if model is None and isinstance(meta, dict) and isinstance(meta.get("model"), str):
            model = meta["model"]
    return completions, model
