"""Signature counters the answer page keeps, so that a cloned authenticator cannot sign (D277).

An authenticator that counts its signatures reports the count in every assertion, one higher (at
least) each time. A copy of its key signs with a copy of its count, so sooner or later one of
them reports a count that does not exceed the last one seen: the page refuses that assertion and
records nothing (``counter_not_increased``). An authenticator that keeps no counter reports 0
every time (synced passkeys do): there is nothing to compare, and it is accepted.

The last counts are kept beside the people file, in ``<its stem>.sign-counts.json`` (in the
default ``.preflight-fsm/`` folder, which git ignores but for the people file itself): not in
the people file, which is reviewed and must not change with every signature; not in the session
store, since a count belongs to a credential and outlives every session. Processes sharing the
file take turns (an advisory lock); people made in memory keep their counts in memory. The file
is checked like everything read: bounded, a bad one refused by name, and then nothing is signed.

Offline ``verify`` keeps no counts: it cannot tell a clone's signature (docs/contract.md).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from preflight_fsm.bounded import Unreadable, read_bounded
from preflight_fsm.errors import PasskeyRefused
from preflight_fsm.people import People

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Windows: one process per file there
    fcntl = None  # type: ignore[assignment]

__all__ = ["COUNTS_SUFFIX", "MAX_COUNTS_FILE_BYTES", "SignCounts"]

COUNTS_SUFFIX: Final = ".sign-counts.json"
"""The counts of ``people.toml`` are in ``people.sign-counts.json`` beside it."""

MAX_COUNTS_FILE_BYTES: Final = 1024 * 1024
"""A larger counts file is refused (a thousand credentials take about a twentieth of it)."""

_VERSION: Final = 1


class SignCounts:
    """The last signature count seen for each credential: in the file ``path``, or in memory
    when ``path`` is None."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._memory: dict[str, int] = {}
        self._lock = threading.Lock()

    @classmethod
    def beside(cls, people: People) -> SignCounts:
        """The counts of ``people``' passkeys, beside the file they were read from."""
        if people.path is None:
            return cls()
        return cls(people.path.with_name(people.path.stem + COUNTS_SUFFIX))

    def last(self, credential_id: str) -> int:
        """The last count seen for ``credential_id`` (0: none yet)."""
        with self._lock, self._turn():
            return self._read().get(credential_id, 0)

    def advance(self, credential_id: str, count: int) -> None:
        """Take ``count`` as ``credential_id``'s newest signature, or refuse it:
        PasskeyRefused ``counter_not_increased`` when it does not exceed the last count seen
        (nothing kept), ``counts_unusable`` when the file cannot be read or written."""
        with self._lock, self._turn():
            counts = self._read()
            last = counts.get(credential_id, 0)
            if count == 0 and last == 0:
                return  # an authenticator that keeps no counter
            if count <= last:
                raise PasskeyRefused(
                    "counter_not_increased",
                    f"the passkey's signature counter ({count}) does not exceed the last one "
                    f"seen for it ({last}): its key may have been copied to another "
                    "authenticator, so it cannot sign here until that is looked into",
                )
            counts[credential_id] = count
            self._write(counts)

    @contextlib.contextmanager
    def _turn(self) -> Iterator[None]:
        """The file to this process alone (an advisory lock on ``<file>.lock``) for the block."""
        if self.path is None or fcntl is None:
            yield
            return
        lock = self.path.with_name(self.path.name + ".lock")
        try:
            handle = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise self._unusable(f"cannot open {lock}: {exc.strerror or exc}") from None
        try:
            fcntl.flock(handle, fcntl.LOCK_EX)
            yield
        finally:
            os.close(handle)  # closing releases the lock

    def _read(self) -> dict[str, int]:
        if self.path is None:
            return dict(self._memory)
        try:
            data = json.loads(read_bounded(self.path, MAX_COUNTS_FILE_BYTES).decode("utf-8"))
        except FileNotFoundError:
            return {}
        except Unreadable as exc:
            raise self._unusable(f"{self.path} {exc.problem}") from None
        except (OSError, ValueError) as exc:
            raise self._unusable(f"cannot read {self.path}: {exc}") from None
        counts = data.get("counts") if isinstance(data, dict) else None
        if (
            not isinstance(counts, dict)
            or data.get("version") != _VERSION
            or not all(type(n) is int and 0 <= n < 2**32 for n in counts.values())
        ):
            raise self._unusable(
                f'{self.path} is not a counts file ({{"version": 1, "counts": {{ID: N}}}})'
            )
        return counts

    def _write(self, counts: dict[str, int]) -> None:
        if self.path is None:
            self._memory = counts
            return
        text = json.dumps({"version": _VERSION, "counts": counts}, indent=1, sort_keys=True)
        # Written whole to a temporary file, then renamed: a reader never sees half the counts.
        try:
            handle, temporary = tempfile.mkstemp(
                dir=self.path.parent, prefix=".sign-counts-", suffix=".json"
            )
        except OSError as exc:
            problem = f"cannot write beside {self.path}: {exc.strerror or exc}"
            raise self._unusable(problem) from None
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                stream.write(text + "\n")
            os.replace(temporary, self.path)
        except OSError as exc:
            Path(temporary).unlink(missing_ok=True)
            raise self._unusable(f"cannot write {self.path}: {exc.strerror or exc}") from None

    def _unusable(self, problem: str) -> PasskeyRefused:
        return PasskeyRefused(
            "counts_unusable",
            f"the signature counters cannot be kept: {problem}; nothing is signed until they "
            "can (let the server write that folder; a broken file can be removed, forgetting "
            "the counts)",
        )
