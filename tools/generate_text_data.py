"""Generate ``src/preflight_fsm/_text_data.py``, the Unicode data of C5's text rules (D140-D143).

Run under Python 3.11, whose ``unicodedata`` is the Unicode 14.0.0 database that decides which
code points are assigned and refused (D140)::

    python tools/generate_text_data.py PropertyValueAliases.txt confusables.txt \
        StandardizedVariants.txt emoji-variation-sequences.txt

``PropertyValueAliases.txt`` (any version from 14.0 on; Debian's ``unicode-data`` package ships
it under ``/usr/share/unicode/``, the emoji file under ``emoji/``) names the scripts;
``confusables.txt`` is Unicode TS #39's
(``https://www.unicode.org/Public/security/17.0.0/confusables.txt``), whose prototypes build the
look-alike skeletons (D143); the two variation-sequence files list where a variation selector is
sanctioned (C5), kept for bases assigned in 14.0. ``tests/test_text.py`` re-derives the refused
code points from the running ``unicodedata`` and ``regex`` and fails when the file drifts.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Callable
from pathlib import Path

import regex

UNICODE_VERSION = "14.0.0"
OUT = Path(__file__).resolve().parent.parent / "src" / "preflight_fsm" / "_text_data.py"
ZWJ = 0x200D
BRAILLE_BLANK = 0x2800
_IGNORABLE = regex.compile(r"\p{Default_Ignorable_Code_Point}")
_VARIATION_SELECTOR = regex.compile(r"\p{Variation_Selector}")


def is_variation_selector(cp: int) -> bool:
    """Unicode's Variation_Selector property (PropList): sanctioned only in listed sequences."""
    return _VARIATION_SELECTOR.match(chr(cp)) is not None


def is_refused(cp: int) -> bool:
    """C5: controls but tab and newline, surrogates, private use, unassigned, noncharacters, Cf,
    Default_Ignorable_Code_Point, and the braille blank.

    U+200D and the variation selectors are left out: whether they are refused depends on their
    neighbours (emoji, D141; a listed variation sequence).
    """
    char = chr(cp)
    category = unicodedata.category(char)
    if category == "Cc":
        return cp not in (0x09, 0x0A)
    if category in ("Cs", "Co", "Cn"):
        return True
    if cp == ZWJ or is_variation_selector(cp):
        return False
    if category == "Cf" or _IGNORABLE.match(char) is not None:
        return True
    # The braille blank renders as a space without being white space, nor default-ignorable.
    return cp == BRAILLE_BLANK or 0xFDD0 <= cp <= 0xFDEF or (cp & 0xFFFE) == 0xFFFE


def ranges(predicate: Callable[[int], bool], stop: int = 0x110000) -> list[tuple[int, int]]:
    """The maximal runs of code points below ``stop`` for which ``predicate`` holds."""
    found: list[tuple[int, int]] = []
    start: int | None = None
    for cp in range(stop):
        if predicate(cp):
            if start is None:
                start = cp
        elif start is not None:
            found.append((start, cp - 1))
            start = None
    if start is not None:
        found.append((start, stop - 1))
    return found


def script_names(aliases: str) -> dict[str, str]:
    """ISO 15924 code -> Unicode long name ("Cyrl" -> "Cyrillic") from PropertyValueAliases."""
    names = {}
    for line in aliases.splitlines():
        fields = [f.strip() for f in line.split("#", 1)[0].split(";")]
        if len(fields) >= 3 and fields[0] == "sc":
            names[fields[1]] = fields[2].replace("_", " ")
    return names


def confusables(text: str) -> tuple[str, list[str]]:
    """(version, ["SRC PROTO PROTO...", ...]) for sources assigned and not refused in 14.0."""
    version = re.search(r"^# Version: (\S+)", text, re.MULTILINE)
    if version is None:
        raise SystemExit("confusables.txt has no '# Version:' line")
    rows = []
    for line in text.splitlines():
        fields = [f.strip() for f in line.split("#", 1)[0].split(";")]
        if len(fields) < 3 or not fields[0]:
            continue
        source = int(fields[0], 16)
        if is_refused(source) or source == ZWJ:
            continue
        rows.append(f"{source:04X} {fields[1]}")
    return version.group(1), rows


def prototype_entry(row: str) -> str:
    """One confusables row ("SRC PROTO PROTO..." in hex) as an entry of the PROTOTYPES literal;
    a prototype too long for one line is split into adjacent string literals."""
    source, *targets = row.split(" ")
    escaped = [
        f"\\u{int(t, 16):04x}" if int(t, 16) < 0x10000 else f"\\U{int(t, 16):08x}" for t in targets
    ]
    key = f"    0x{int(source, 16):04X}: "
    if len(key) + sum(map(len, escaped)) + 3 <= 100:
        return f'{key}"{"".join(escaped)}",'
    parts = ["".join(escaped[i : i + 12]) for i in range(0, len(escaped), 12)]
    return "\n".join([f"{key}(", *(f'        "{part}"' for part in parts), "    ),"])


def variation_sequences(*texts: str) -> list[str]:
    """["BASE VS", ...] of the sequences listed in StandardizedVariants.txt and
    emoji-variation-sequences.txt whose base is assigned (and not refused) in 14.0."""
    pairs = set()
    for text in texts:
        for line in text.splitlines():
            codes = line.split("#", 1)[0].split(";", 1)[0].split()
            if len(codes) != 2:
                continue
            base, selector = (int(c, 16) for c in codes)
            if not is_refused(base) and is_variation_selector(selector):
                pairs.add((base, selector))
    return [f"{base:04X} {selector:04X}" for base, selector in sorted(pairs)]


def render(aliases: str, confusables_text: str, *variation_texts: str) -> str:
    """The whole generated module."""
    runs = ranges(is_refused)
    sequence_lines = "\n".join(variation_sequences(*variation_texts))
    names = script_names(aliases)
    version, rows = confusables(confusables_text)
    cells = [f"(0x{a:04X}, 0x{b:04X})," for a, b in runs]
    run_lines = "\n".join("    " + " ".join(cells[i : i + 4]) for i in range(0, len(cells), 4))
    name_lines = "\n".join(f'    "{code}": "{name}",' for code, name in sorted(names.items()))
    proto_lines = "\n".join(prototype_entry(row) for row in rows)
    return f'''"""Unicode data of C5's text rules (``text.py``): generated, do not edit.

Regenerate with tools/generate_text_data.py (see its docstring). Refused code points follow
Python 3.11's ``unicodedata`` (Unicode {UNICODE_VERSION}); the prototypes are Unicode TS #39's
confusables.txt {version}. Unicode data files: Copyright (c) Unicode, Inc.; Unicode License v3
(https://www.unicode.org/license.txt).
"""

# fmt: off
UNICODE_VERSION = "{UNICODE_VERSION}"
CONFUSABLES_VERSION = "{version}"

# The refused code points (C5, D140) as sorted, inclusive (first, last) runs. U+200D and the
# variation selectors are not among them: U+200D is refused unless it joins emoji (D141), a
# variation selector unless it ends one of VARIATION_SEQUENCES.
REFUSED_RUNS = (
{run_lines}
)

# ISO 15924 script codes and their Unicode names, for messages (D142).
SCRIPT_NAMES = {{
{name_lines}
}}

# The sanctioned variation sequences (C5): "BASE SELECTOR" in hex, one a line, from
# StandardizedVariants.txt and emoji-variation-sequences.txt.
VARIATION_SEQUENCES = """
{sequence_lines}
"""

# TS #39 prototypes (D143): each source code point to its prototype, every character escaped
# (no look-alike reaches a file, C5). A literal, not text parsed at run time: the table is
# ready when the module is imported (docs/performance.md).
PROTOTYPES = {{
{proto_lines}
}}
# fmt: on
'''


def main(argv: list[str]) -> None:
    """Write the module from the two data files named on the command line."""
    if unicodedata.unidata_version != UNICODE_VERSION:
        raise SystemExit(
            f"run this under Python 3.11 (Unicode {UNICODE_VERSION}); "
            f"this one has Unicode {unicodedata.unidata_version}"
        )
    if len(argv) != 4:
        raise SystemExit(
            "usage: generate_text_data.py PropertyValueAliases.txt confusables.txt "
            "StandardizedVariants.txt emoji-variation-sequences.txt"
        )
    aliases = Path(argv[0]).read_text(encoding="utf-8")
    confusables_text = Path(argv[1]).read_text(encoding="utf-8-sig")
    variations = [Path(a).read_text(encoding="utf-8-sig") for a in argv[2:]]
    OUT.write_text(render(aliases, confusables_text, *variations), encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main(sys.argv[1:])
