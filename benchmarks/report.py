"""Figures, the printed table, the JSON record and the figures block of docs/performance.md."""

from __future__ import annotations

import json
import os
import platform
import re
import sys
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["Figure", "machine_info", "table", "write_docs", "write_json"]


@dataclass
class Figure:
    """One measured figure; ``ok`` is None for figures without a target, or when skipped."""

    name: str
    value: float | None
    unit: str
    target: str = ""
    ok: bool | None = None
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def shown(self) -> str:
        if self.value is None:
            return "skipped"
        if self.unit in ("x", "bool"):
            return f"{self.value:.2f}" if self.unit == "x" else str(bool(self.value))
        if abs(self.value) >= 1000:
            return f"{self.value:,.0f} {self.unit}"
        return (
            f"{self.value:.3g} {self.unit}" if self.value < 10 else f"{self.value:.1f} {self.unit}"
        )

    @property
    def status(self) -> str:
        if self.value is None:
            return "SKIP"
        return {True: "met", False: "MISSED", None: ""}[self.ok]


def table(figures: list[Figure]) -> str:
    """A fixed-width text table: name, value, ratio or target, status, note."""
    rows = [("figure", "value", "ratio / target", "status", "note")]
    rows += [(f.name, f.shown, f.target, f.status, f.note) for f in figures]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = []
    for i, row in enumerate(rows):
        cells = [row[c].ljust(widths[c]) for c in range(4)]
        lines.append("  ".join(cells) + ("  " + row[4] if row[4] else ""))
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(line.rstrip() for line in lines)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def machine_info() -> dict[str, Any]:
    """What the figures ran on: cores, CPU, OS, Python and library versions."""
    return {
        "nproc": os.cpu_count(),
        "cpu": _cpu_model(),
        "os": f"{platform.system()} {platform.release()}",
        "python": f"{platform.python_implementation()} {sys.version.split()[0]}",
        "libraries": {
            name: _version(name)
            for name in ("preflight-fsm", "transitions", "pydantic", "preflights", "redis")
        },
    }


def write_json(
    path: Path, figures: list[Figure], info: dict[str, Any], args: dict[str, Any]
) -> None:
    record = {"machine": info, "settings": args, "figures": [asdict(f) for f in figures]}
    path.write_text(json.dumps(record, indent=2, sort_keys=False) + "\n")


_BLOCK = re.compile(r"(<!-- bench:begin -->\n).*?(<!-- bench:end -->)", re.DOTALL)


def write_docs(path: Path, figures: list[Figure], info: dict[str, Any], when: str) -> bool:
    """Replace the figures block of ``path``; False when the file has no such block."""
    text = path.read_text()
    libs = ", ".join(f"{k} {v}" for k, v in info["libraries"].items())
    body = [
        f"Last run: {when} on {info['nproc']} cores of {info['cpu']}, {info['os']}, "
        f"{info['python']}; {libs}.",
        "",
        "| figure | value | ratio / target | status | note |",
        "|---|---|---|---|---|",
    ]
    body += [f"| `{f.name}` | {f.shown} | {f.target} | {f.status} | {f.note} |" for f in figures]
    new, count = _BLOCK.subn(lambda m: m.group(1) + "\n".join(body) + "\n" + m.group(2), text)
    if count:
        path.write_text(new)
    return bool(count)
