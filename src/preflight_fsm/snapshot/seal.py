"""Seals (C11): an HMAC-SHA256 over a snapshot's inputs proves this service issued it."""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from preflight_fsm.bounded import Unreadable, read_bounded

__all__ = ["MIN_KEY_BYTES", "SEAL_KEYS_ENV", "SEAL_KEY_FILE_ENV", "SealKeys"]

SEAL_KEYS_ENV: Final = "PREFLIGHT_FSM_SEAL_KEYS"
"""Environment variable holding seal keys, comma-separated; the first seals."""
SEAL_KEY_FILE_ENV: Final = "PREFLIGHT_FSM_SEAL_KEY_FILE"
"""Environment variable naming a key file: one key per line, the first seals."""
MAX_KEY_FILE_BYTES: Final = 64 * 1024
"""A seal key file is read up to this size (hundreds of keys); a larger one is refused."""

MIN_KEY_BYTES: Final = 32


@dataclass(frozen=True, slots=True)
class SealKeys:
    """HMAC-SHA256 keys (C11): snapshots are sealed with the first and accepted under any.

    Give several to rotate: put the new key first, keep the old ones until every snapshot sealed
    with them has been rewritten or has expired.
    """

    keys: tuple[bytes, ...]

    def __post_init__(self) -> None:
        if not self.keys:
            raise ValueError("no seal key given; generate one with: preflight-fsm seal-key")
        short = [i + 1 for i, key in enumerate(self.keys) if len(key) < MIN_KEY_BYTES]
        if short:
            raise ValueError(
                f"seal key {', '.join(map(str, short))} is shorter than {MIN_KEY_BYTES} bytes; "
                "generate one with: preflight-fsm seal-key"
            )

    def __repr__(self) -> str:  # never print key material
        return f"SealKeys(<{len(self.keys)} key(s)>)"

    @classmethod
    def from_text(cls, text: str) -> SealKeys:
        """Keys separated by commas or lines (blank lines and ``#`` comments skipped)."""
        keys = [
            part.strip()
            for line in text.splitlines()
            if not line.strip().startswith("#")
            for part in line.split(",")
        ]
        return cls(tuple(key.encode() for key in keys if key))

    @classmethod
    def from_file(cls, path: str | Path) -> SealKeys:
        """Keys from a key file (one per line, the first seals)."""
        try:
            return cls.from_text(read_bounded(Path(path), MAX_KEY_FILE_BYTES).decode("utf-8"))
        except Unreadable as exc:
            raise ValueError(f"the seal key file {path} {exc.problem}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"cannot read the seal key file {path}: {exc}") from None

    @classmethod
    def from_environment(
        cls, key_file: str | Path | None = None, env: Mapping[str, str] = os.environ
    ) -> SealKeys | None:
        """Keys from ``key_file``, else from the environment (file variable, then keys), or None."""
        path = key_file or env.get(SEAL_KEY_FILE_ENV)
        if path:
            return cls.from_file(path)
        text = env.get(SEAL_KEYS_ENV)
        return cls.from_text(text) if text else None

    def seal(self, content: bytes) -> str:
        """The seal of ``content`` under the first key."""
        return hmac.new(self.keys[0], content, hashlib.sha256).hexdigest()

    def verify(self, content: bytes, seal: str) -> bool:
        """True when ``seal`` is the seal of ``content`` under any of the keys."""
        return any(
            hmac.compare_digest(hmac.new(key, content, hashlib.sha256).hexdigest(), seal)
            for key in self.keys
        )
