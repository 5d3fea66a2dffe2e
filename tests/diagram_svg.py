"""Reading rendered SVGs as a browser sizes them, for the diagram tests."""

from __future__ import annotations

import re
from dataclasses import dataclass

PX_PER_PT = 4 / 3  # a browser draws Graphviz's `pt` units at 96 px per 72 pt


@dataclass(frozen=True)
class SvgSize:
    """An SVG's natural size and its smallest text, in CSS pixels."""

    width_px: float
    height_px: float
    smallest_font_px: float
    texts: tuple[str, ...]
    ids: tuple[str, ...]


def svg_size(svg: bytes) -> SvgSize:
    """Width, height and smallest font size of a Graphviz SVG, as drawn at its natural size."""
    text = svg.decode()
    match = re.search(r'<svg width="([\d.]+)(pt|px)" height="([\d.]+)(pt|px)"', text)
    assert match is not None, "no width/height on the <svg> element"
    unit = PX_PER_PT if match.group(2) == "pt" else 1.0
    view = re.search(r'viewBox="[\d.-]+ [\d.-]+ ([\d.]+) ([\d.]+)"', text)
    assert view is not None
    scale = float(match.group(1)) * unit / float(view.group(1))  # px per user unit
    transform = re.search(r'transform="scale\(([\d.]+)', text)
    inner = float(transform.group(1)) if transform else 1.0
    fonts = [float(size) for size in re.findall(r'font-size="([\d.]+)"', text)]
    texts = tuple(
        re.sub(r"&#45;", "-", t).replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
        for t in re.findall(r"<text[^>]*>(.*?)</text>", text)
    )
    return SvgSize(
        width_px=float(match.group(1)) * unit,
        height_px=float(match.group(3)) * unit,
        smallest_font_px=min(fonts) * scale * inner,
        texts=texts,
        ids=tuple(re.findall(r'<g id="([^"]+)" class="edge"', text)),
    )
