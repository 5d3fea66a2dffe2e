"""C5's text rules: Unicode that cannot deceive, for answers and the intention alike.

Patch values end up in ADRs and in AI agents' prompts, so nothing invisible or deceptive may reach
them. Each rule is one function, applied in this order by ``answers.py``:

- :func:`normalise` — ``\\r\\n`` and ``\\r`` become ``\\n``, then NFC (a value keeps its NFC form).
- :func:`refused` — the code points refused, named ``U+XXXX``; :func:`describe_refused` words the
  problem.
- :func:`match_key` — the NFKC-casefolded form every comparison uses (options, "other",
  placeholders, category names, keywords).
- :func:`lookalike` — a word mixing scripts beyond Unicode TS #39's "highly restrictive" level,
  or a value that looks like an option without being it, and the option it resembles.

Which code points are assigned is decided by Unicode 14.0.0 on every Python (D140): the
generated ``_text_data`` module holds that data, so a session replays identically whatever the
interpreter's own Unicode version. Scripts (Script_Extensions) and emoji properties come from
the ``regex`` module (D142); look-alike skeletons from TS #39's confusables.txt (D143).

ASCII text takes fast paths that need neither ``regex`` nor the patterns built from the data: they
are imported and compiled on the first non-ASCII text (:func:`_patterns`, D161), so a command
that meets only ASCII, like most ``preflight-fsm start``, does not pay their ~10 ms.

>>> normalise("Cafe\\u0301\\r\\n")
'Café\\n'
>>> refused("OAuth\\u202e")
('U+202E',)
>>> match_key("\\uff2f\\uff21\\uff55\\uff54\\uff48")  # full-width OAuth
'oauth'
>>> lookalike("\\u041eAuth", ["OAuth", "JWT"])  # a Cyrillic O
Lookalike(text='\\u041eAuth', scripts=('Cyrillic', 'Latin'), mixed=True, resembles='OAuth')
"""

from __future__ import annotations

import bisect
import re
import sys
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from preflight_fsm import _text_data

if TYPE_CHECKING:
    import regex

__all__ = [
    "UNICODE_VERSION",
    "Lookalike",
    "confusable_keys",
    "confusable_with",
    "describe_refused",
    "lookalike",
    "match_key",
    "normalise",
    "refused",
    "skeleton",
]

UNICODE_VERSION = _text_data.UNICODE_VERSION
"""The Unicode version that decides which code points are assigned (D140)."""

_ZWJ = "\u200d"

# -- normalise -----------------------------------------------------------------------------------


def normalise(text: str) -> str:
    """``text`` with ``\\r\\n`` and ``\\r`` as ``\\n``, then in NFC (C5)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if text.isascii():  # ASCII is always NFC
        return text
    return unicodedata.normalize("NFC", text)


# -- refused code points -------------------------------------------------------------------------


def _class_range(first: int, last: int) -> str:
    return f"\\u{first:04x}" if first == last else f"\\u{first:04x}-\\u{last:04x}"


# ASCII can hold only control characters among the refused ones.
_ASCII_REFUSED = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_ASTRAL_RUNS = tuple((max(a, 0x10000), b) for a, b in _text_data.REFUSED_RUNS if b > 0xFFFF)
_ASTRAL_FIRSTS = tuple(a for a, _ in _ASTRAL_RUNS)


def _astral_refused(cp: int) -> bool:
    i = bisect.bisect_right(_ASTRAL_FIRSTS, cp) - 1
    return i >= 0 and cp <= _ASTRAL_RUNS[i][1]


def refused(text: str) -> tuple[str, ...]:
    """The refused code points of NFC ``text`` (C5), sorted, as ``U+XXXX`` names; () when none.

    Refused: control characters but tab and newline; lone surrogates (what undecodable bytes
    become); private-use, unassigned (Unicode 14.0, D140) and noncharacter code points; format
    characters (Cf: bidi controls and marks, zero-width spaces and joiners, U+FEFF, U+00AD, tag
    characters), except U+200D joining emoji (D141); every Default_Ignorable_Code_Point (U+034F,
    the Hangul fillers U+115F, U+1160, U+3164, U+FFA0); the braille blank U+2800; and a
    Variation_Selector that does not end a sequence of StandardizedVariants.txt or
    emoji-variation-sequences.txt, nor follows an emoji as its style (U+FE0E, U+FE0F): a
    payload of selectors after ``Solid`` is refused.
    """
    if text.isascii():
        # Printable ASCII (most text) holds none; else only the controls of _ASCII_REFUSED count.
        if text.isprintable() or _ASCII_REFUSED.search(text) is None:
            return ()
        found = set(_ASCII_REFUSED.findall(text))
    else:
        patterns = _patterns()
        found = set(patterns.bmp_refused.findall(text))
        if patterns.astral.search(text) is not None:
            found.update(c for c in set(patterns.astral.findall(text)) if _astral_refused(ord(c)))
        if _ZWJ in text and patterns.stray_zwj.search(text) is not None:
            found.add(_ZWJ)
        if patterns.variation.search(text) is not None:
            found.update(_stray_selectors(text, patterns.variation))
    return tuple(f"U+{ord(c):04X}" for c in sorted(found))


@lru_cache(maxsize=1)
def _variation_sequences() -> frozenset[str]:
    """The sanctioned variation sequences (base + selector), parsed on first use."""
    return frozenset(
        "".join(chr(int(code, 16)) for code in line.split(" "))
        for line in _text_data.VARIATION_SEQUENCES.split("\n")
        if line
    )


def _stray_selectors(text: str, variation: re.Pattern[str]) -> set[str]:
    """The variation selectors of ``text`` that end no sanctioned sequence (C5).

    A selector only picks a glyph for the character before it, and only in the sequences Unicode
    lists, or as the text or emoji style (U+FE0E, U+FE0F) of an emoji; anywhere else it renders
    as nothing and can carry a hidden payload, one byte each.
    """
    sequences = _variation_sequences()
    found = set()
    for m in variation.finditer(text):
        pair = text[max(m.start() - 1, 0) : m.end()]
        if pair in sequences:
            continue
        if m.group() in _STYLES and len(pair) == 2 and _patterns().emoji.match(pair[0]):
            continue
        found.add(m.group())
    return found


_STYLES = frozenset("\ufe0e\ufe0f")  # VS15, VS16: text and emoji presentation


_SHOWN = 6  # a problem names at most this many code points, then counts the rest


def _describe_code_point(name: str) -> str:
    cp = int(name[2:], 16)
    char = chr(cp)
    if 0xD800 <= cp <= 0xDFFF:
        return f"{name} lone surrogate from undecodable input"
    if 0xFDD0 <= cp <= 0xFDEF or (cp & 0xFFFE) == 0xFFFE:
        return f"{name} noncharacter"
    category = unicodedata.category(char)
    label = unicodedata.name(char, "") or {"Co": "private use", "Cc": "control"}.get(
        category, "unassigned"
    )
    if _patterns().variation.match(char) is not None:
        label += " outside a listed variation sequence"
    elif category not in ("Cc", "Cf", "Co", "Cn") and not _renders_blank(char):
        # Assigned by this interpreter's Unicode, after the 14.0 that decides (D140).
        label += f" (unassigned in Unicode {UNICODE_VERSION})"
    return f"{name} {label}"


def _renders_blank(char: str) -> bool:
    """True for the refused characters that are assigned yet render as nothing or a blank."""
    import regex  # only non-ASCII text gets here (D161)

    return char == "\u2800" or regex.match(r"\p{Default_Ignorable_Code_Point}", char) is not None


def describe_refused(names: Iterable[str]) -> str:
    """The ``problem`` for refused code points (:func:`refused`), saying what to send instead.

    >>> describe_refused(("U+200B", "U+202E"))
    'holds invisible, control or unassigned characters (U+200B ZERO WIDTH SPACE, U+202E RIGHT-TO-LEFT OVERRIDE): send the text without them (tabs, newlines and emoji are fine)'
    """  # noqa: E501 -- the doctest's expected line is one string
    listed = list(names)
    shown = ", ".join(_describe_code_point(n) for n in listed[:_SHOWN])
    if len(listed) > _SHOWN:
        shown += f" and {len(listed) - _SHOWN} more"
    return (
        f"holds invisible, control or unassigned characters ({shown}): "
        "send the text without them (tabs, newlines and emoji are fine)"
    )


# -- matching ------------------------------------------------------------------------------------


def match_key(text: str) -> str:
    """The NFKC-casefolded form of ``text`` that every comparison uses (C5).

    NFKC, casefold, NFKC again: Unicode's NFKC_Casefold (DerivedNormalizationProps) without its
    removal of default-ignorable code points, which :func:`refused` refuses before any match.
    The second NFKC recomposes what casefolding decomposes (``İ`` -> ``i̇``) or leaves outside
    NFKC; the result is a fixed point (checked for every code point in the tests). ASCII needs
    only casefolding.
    """
    if text.isascii():
        return text.casefold()
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())


# -- look-alikes -----------------------------------------------------------------------------------

# Characters whose Script_Extensions is Common or Inherited (digits, punctuation, combining
# accents) belong to every script (TS #39 section 5.1); characters of Common with an explicit
# extension list (U+3001 "、": Bopomofo, Han, Hangul...) count as those scripts.
_NEUTRAL = r"\p{scx=Zyyy}\p{scx=Zinh}"
# TS #39 "highly restrictive" (D142): one script, or one of these sets.
_COVERS = (("Latn", "Hani", "Hira", "Kana"), ("Latn", "Hani", "Bopo"), ("Latn", "Hani", "Hang"))
_SCRIPT_CODES = tuple(c for c in _text_data.SCRIPT_NAMES if c not in ("Zyyy", "Zinh", "Zzzz"))


@dataclass(frozen=True, slots=True)
class _Patterns:
    """The patterns of the non-ASCII rules, compiled once by :func:`_patterns`."""

    bmp_refused: re.Pattern[str]
    """Any refused BMP code point."""
    astral: re.Pattern[str]
    """Any code point above the BMP."""
    stray_zwj: regex.Pattern[str]
    """A U+200D that joins no emoji (D141)."""
    variation: re.Pattern[str]
    """A Variation_Selector (sanctioned only in listed sequences)."""
    emoji: regex.Pattern[str]
    """A character with Unicode's Emoji property (it may take U+FE0E or U+FE0F)."""
    scripted: regex.Pattern[str]
    """A character of some script (not Common nor Inherited)."""
    not_latin: regex.Pattern[str]
    """A character of a script other than Latin."""
    word: regex.Pattern[str]
    """A word: a run of letters, marks and digits."""


@lru_cache(maxsize=1)
def _patterns() -> _Patterns:
    """The non-ASCII rules' patterns, compiled on the first non-ASCII text (D161).

    ``regex`` and these compilations cost a process about 10 ms; ASCII text never needs them.
    """
    import regex  # deferred on purpose: see the docstring

    return _Patterns(
        # The BMP part as one stdlib character class: ``re`` compiles a BMP-only class into a
        # bitmap, so a search costs the same whatever the number of runs (a class reaching above
        # the BMP is scanned run by run, 100x slower; so is ``regex``'s). The astral runs are
        # looked up by bisection (_ASTRAL_RUNS).
        bmp_refused=re.compile(
            "["
            + "".join(
                _class_range(a, min(b, 0xFFFF)) for a, b in _text_data.REFUSED_RUNS if a <= 0xFFFF
            )
            + "]"
        ),
        astral=re.compile("[\U00010000-\U0010ffff]"),
        # D141: U+200D joins emoji (UTS #51 ZWJ sequences: woman + ZWJ + laptop, rainbow flag =
        # white flag + VS16 + ZWJ + rainbow, a skin-toned person + ZWJ + laptop) when an emoji,
        # optionally skin-toned or followed by VS16 (U+FE0F), stands before it and an emoji after
        # it. Anywhere else it is an invisible joiner like any other, and refused.
        stray_zwj=regex.compile(
            r"(?<![\p{Extended_Pictographic}\p{Emoji_Modifier}]\ufe0f?)\u200d"
            r"|\u200d(?!\p{Extended_Pictographic})"
        ),
        # Unicode's Variation_Selector property; three runs, so the stdlib class stays cheap.
        variation=re.compile("[\u180b-\u180d\u180f\ufe00-\ufe0f\U000e0100-\U000e01ef]"),
        emoji=regex.compile(r"\p{Emoji}"),
        scripted=regex.compile(rf"[^{_NEUTRAL}]"),
        not_latin=regex.compile(rf"[^{_NEUTRAL}\p{{scx=Latn}}]"),
        word=regex.compile(r"[\p{L}\p{M}\p{N}]+"),
    )


@lru_cache(maxsize=512)
def _outside(scripts: tuple[str, ...]) -> regex.Pattern[str]:
    """A pattern finding a character belonging to none of ``scripts`` (nor to every script)."""
    import regex  # only non-ASCII text gets here (D161)

    return regex.compile("[^" + _NEUTRAL + "".join(rf"\p{{scx={s}}}" for s in scripts) + "]")


if TYPE_CHECKING:
    _ScriptGroup = tuple[regex.Pattern[str], tuple[tuple[str, regex.Pattern[str]], ...]]


@lru_cache(maxsize=1)
def _script_groups() -> tuple[_ScriptGroup, ...]:
    """The scripts in groups of 12, each with a pattern matching any of them.

    Compiled on first use (a few ms that a session of plain ASCII text never pays). Finding a
    character's scripts tests the 14 groups, then the scripts of the groups that match.
    """
    import regex  # only non-ASCII text gets here (D161)

    return tuple(
        (
            regex.compile("[" + "".join(rf"\p{{scx={s}}}" for s in group) + "]"),
            tuple((s, regex.compile(rf"\p{{scx={s}}}")) for s in group),
        )
        for group in (_SCRIPT_CODES[i : i + 12] for i in range(0, len(_SCRIPT_CODES), 12))
    )


@lru_cache(maxsize=4096)
def _scripts_of(char: str) -> tuple[str, ...]:
    """The Script_Extensions of ``char``, as ISO 15924 codes; () for Common and Inherited."""
    # It runs for the first scripted character of a non-Latin text or word, and for the
    # characters of a look-alike word; about 10 µs uncached.
    return tuple(
        script
        for any_of_group, scripts in _script_groups()
        if any_of_group.match(char)
        for script, pattern in scripts
        if pattern.match(char)
    )


def _highly_restrictive(text: str) -> bool:
    """True when ``text``'s scripts are one, or within a TS #39 highly restrictive set."""
    first = _patterns().scripted.search(text)
    if first is None:
        return True
    for script in _scripts_of(first.group()):
        if _outside((script,)).search(text) is None:
            return True
    return any(_outside(cover).search(text) is None for cover in _COVERS)


def skeleton(text: str) -> str:
    """The TS #39 skeleton of ``text``: NFD, each character to its prototype, NFD again."""
    nfd = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFD", nfd.translate(_text_data.PROTOTYPES))


def _resemblance_keys(text: str, longest: int = sys.maxsize) -> list[str]:
    """Skeletons of ``text`` as typed and of its match key: look-alikes share one of them.

    Both, because skeletons are case-sensitive (TS #39): Cyrillic ``JWT`` capitals look like the
    option as typed, their lower case only like its lower case. A skeleton is never shorter than
    its text (NFD and prototypes only expand), so none is computed for text longer than
    ``longest``, the longest skeleton it is compared with: most free text costs nothing here.
    """
    keys = [skeleton(text)] if len(text) <= longest else []
    key = match_key(text)
    if len(key) <= longest:
        keys.append(skeleton(key))
    return keys


def confusable_keys(text: str) -> frozenset[str]:
    """The match keys of ``text``'s skeletons, as typed and folded (C5): text sharing one with a
    placeholder looks like it (Greek "NA", Cyrillic "TBA") and counts as that placeholder.

    >>> "tba" in confusable_keys("\u0422\u0412\u0410")  # Cyrillic TBA
    True
    """
    return frozenset(match_key(key) for key in _resemblance_keys(text))


def confusable_with(text: str, keys: frozenset[str]) -> bool:
    """True when non-ASCII ``text`` shares a :func:`confusable_keys` key with ``keys`` (ASCII
    text has no look-alike of ASCII text worth a skeleton: D161's fast path)."""
    return not text.isascii() and not keys.isdisjoint(confusable_keys(text))


@dataclass(frozen=True, slots=True)
class _Options:
    """One question's options, prepared once for look-alike checks."""

    keys: frozenset[str]  # match keys: text with one of these *is* an option
    by_skeleton: dict[str, str]  # each option's skeletons -> the option
    longest: int  # the longest skeleton: longer text resembles none (see _resemblance_keys)


@lru_cache(maxsize=256)
def _prepared(options: tuple[str, ...]) -> _Options:
    by_skeleton: dict[str, str] = {}
    for option in options:
        for key in _resemblance_keys(option):
            by_skeleton.setdefault(key, option)
    return _Options(
        frozenset(match_key(o) for o in options),
        by_skeleton,
        max(map(len, by_skeleton), default=0),
    )


@dataclass(frozen=True, slots=True)
class Lookalike:
    """A deceptive text (C5): where, in which scripts, and the option it imitates if one."""

    text: str
    """The word mixing scripts, or the whole value imitating an option."""
    scripts: tuple[str, ...]
    """The scripts of ``text``, by Unicode name ("Cyrillic", "Latin")."""
    mixed: bool
    """True for a word mixing scripts; False for a value imitating an option."""
    resembles: str | None
    """The option ``text`` looks like, if one."""

    @property
    def problem(self) -> str:
        """The ``problem`` text of the ``invalid`` issue, saying what to send instead."""
        scripts = " and ".join(self.scripts)
        found = (
            f"mixes {scripts} letters in one word ({self.text!r})"
            if self.mixed
            else f"is written in {scripts} letters"
        )
        if self.resembles is None:
            return f"{found}, a look-alike; send each word in the letters of one script"
        return (
            f"{found}, so it only looks like the option {self.resembles!r}; "
            f"send {self.resembles!r} typed in plain letters"
        )


def _resembled(texts: Iterable[str], options: _Options) -> str | None:
    for text in texts:
        for key in _resemblance_keys(text, options.longest):
            if key in options.by_skeleton:
                return options.by_skeleton[key]
    return None


def _script_names(word: str) -> tuple[str, ...]:
    codes = {s for c in set(_patterns().scripted.findall(word)) for s in _scripts_of(c)}
    return tuple(sorted(_text_data.SCRIPT_NAMES[c] for c in codes))


def lookalike(text: str, options: Iterable[str] = ()) -> Lookalike | None:
    """The first deceptive word of NFC ``text`` (C5), or None when it has none.

    Deceptive: a word (a run of letters, marks and digits) whose scripts are not TS #39 "highly
    restrictive" (``OAuth`` with a Cyrillic O); or, when ``text`` is not an option (by
    :func:`match_key`), text that has the same confusable skeleton as one of ``options`` (D144:
    ``API`` typed in Cyrillic letters). ``resembles`` names the option it imitates, if any.
    """
    if text.isascii():
        return None
    choices = _prepared(options if isinstance(options, tuple) else tuple(options))
    if _patterns().not_latin.search(text) is not None and not _highly_restrictive(text):
        # Words lie within white-space-separated tokens: a token that passes has no word that
        # fails, so only failing tokens are split into words (most pass, in mixed-language text).
        for token in text.split():
            if token.isascii() or _highly_restrictive(token):
                continue
            for word in _patterns().word.findall(token):
                if not word.isascii() and not _highly_restrictive(word):
                    resembled = _resembled((text, word), choices)
                    return Lookalike(word, _script_names(word), True, resembled)
    if not choices.by_skeleton:
        return None
    key = match_key(text)
    if key in choices.keys or min(len(text), len(key)) > choices.longest:
        return None  # the option itself, or too long to look like one (see _resemblance_keys)
    option = _resembled((text,), choices)
    if option is None:
        return None
    return Lookalike(text, _script_names(text), False, option)
