"""Flow versions (C10): the current flow and the earlier ones sessions may still run on.

A registry holds each flow as plain data (``flow_data.py``), so the default one, which a command
restores through, builds no model (issue 32); the models it answers with for the API are built on
first ask, or are the ones it was given.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Final

from preflight_fsm.flow_data import DEFAULT_FLOW, DEFAULT_FLOW_FILE, FlowData

if TYPE_CHECKING:
    from preflight_fsm.flow import Flow

__all__ = ["VERSIONS_SUFFIX", "FlowRegistry", "default_registry", "load_registry"]


class FlowRegistry:
    """The current flow and the earlier ones sessions may still run on, by fingerprint (C10).

    New sessions start on ``current``; a restored session steps on the flow it started on.
    Flows are given as models (``Flow``) or as their plain form (``FlowData``).
    """

    __slots__ = ("_by_fingerprint", "_flows", "_models", "current_data")

    def __init__(self, current: Flow | FlowData, earlier: Iterable[Flow | FlowData] = ()) -> None:
        given = (*earlier, current)
        flows = [_plain(flow) for flow in given]
        self.current_data: FlowData = flows[-1]
        """The current flow's plain form: what new sessions' engine runs on."""
        # The legacy content fingerprints first: a flow's own fingerprint wins, the current
        # flow's over an earlier version's that only words its questions otherwise (D261).
        self._by_fingerprint = {flow.content_fingerprint: flow for flow in flows}
        self._by_fingerprint.update((flow.fingerprint, flow) for flow in flows)
        self._flows = {flow.content_fingerprint: flow for flow in flows}
        # The models given, by content; the others are built when asked (flow_model).
        self._models: dict[str, Flow] = {
            flow.content_fingerprint: flow for flow in given if not isinstance(flow, FlowData)
        }

    @property
    def current(self) -> Flow:
        """The flow new sessions start on."""
        return self._model(self.current_data)

    def get(self, fingerprint: str) -> Flow | None:
        """The registered flow with this fingerprint (or legacy content fingerprint), or
        None. Versions that differ only in their questions' wording share a fingerprint: the
        current one, else the last kept, answers to it."""
        data = self._by_fingerprint.get(fingerprint)
        return None if data is None else self._model(data)

    def get_data(self, fingerprint: str) -> FlowData | None:
        """:meth:`get`'s flow as plain data (what its engine runs on), without building a model."""
        return self._by_fingerprint.get(fingerprint)

    def aliases(self, fingerprint: str) -> tuple[str, ...]:
        """Every fingerprint that names the same replay as ``fingerprint``: the flow's own and
        the legacy content fingerprints of each registered version that words it otherwise
        (a passkey signed any of them for the same steps, D261). Empty when not registered."""
        flow = self.get_data(fingerprint)
        if flow is None:
            return ()
        same = [f.content_fingerprint for f in self._data() if f.fingerprint == flow.fingerprint]
        return tuple(dict.fromkeys((flow.fingerprint, *same)))

    def unregistered(self, fingerprint: str, name: str | None = None) -> str:
        """Why a session on ``fingerprint`` (of the flow called ``name``, when known) cannot run
        here, and what to do: the one wording of it, wherever a session is refused (C10)."""
        named = f"flow {name!r}" if name else "flow"
        return (
            f"the session runs on the {named} with fingerprint {fingerprint}, which is not "
            f"registered (registered: {self.describe()}); pass the file of the {named} it "
            "started on with --flow FILE, or keep that file in the current flow's FLOW.versions/ "
            "folder, to finish it"
        )

    def __iter__(self) -> Iterator[Flow]:
        """The registered flows: the current one first, then the earlier ones."""
        return (self._model(data) for data in self._data())

    def __len__(self) -> int:
        return len(self._flows)

    def describe(self) -> str:
        """``name@fingerprint`` of each registered flow, the current one marked."""
        shown: dict[str, str] = {}  # versions that only word their questions otherwise: once
        for f in self._data():
            shown.setdefault(f.fingerprint, f"{f.name}@{f.fingerprint}")
        shown[self.current_data.fingerprint] += " (current)"
        return ", ".join(shown.values())

    def _data(self) -> Iterator[FlowData]:
        """The registered flows' plain forms, the current one first."""
        yield self.current_data
        yield from (f for f in self._flows.values() if f is not self.current_data)

    def _model(self, data: FlowData) -> Flow:
        model = self._models.get(data.content_fingerprint)
        if model is None:
            from preflight_fsm.flow import flow_model  # a model only when the API asks for one

            model = self._models.setdefault(data.content_fingerprint, flow_model(data))
        return model


def _plain(flow: Flow | FlowData) -> FlowData:
    return flow if isinstance(flow, FlowData) else flow.plain


VERSIONS_SUFFIX: Final = ".versions"
"""Earlier versions of ``team.toml`` are kept as ``team.versions/*.toml`` beside it (C10)."""


def load_registry(path: str | Path) -> FlowRegistry:
    """The flow file at ``path`` as the current flow, with every earlier version kept beside it
    in ``<name>.versions/*.toml`` (a missing directory means none)."""
    from preflight_fsm.flow import load_flow

    source = Path(path)
    return FlowRegistry(load_flow(source), _earlier_versions(source))


def _earlier_versions(source: Path) -> list[Flow]:
    """The flows kept in ``<name>.versions/*.toml`` beside ``source``, by file name."""
    versions = source.with_name(source.stem + VERSIONS_SUFFIX)
    if not versions.is_dir():
        return []
    from preflight_fsm.flow import load_flow  # flow files are validated by their models

    return [load_flow(p) for p in sorted(versions.glob("*.toml"))]


@cache
def default_registry() -> FlowRegistry:
    """The default flow, with its earlier versions from ``flows/default.versions/`` beside it
    (C10; none has shipped yet, and a missing folder means none). Holds the default flow as
    plain data: no model is built until one is asked for."""
    return FlowRegistry(DEFAULT_FLOW, _earlier_versions(DEFAULT_FLOW_FILE))
