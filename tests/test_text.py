"""C5's text rules (text.py): NFC, refused code points, match keys and look-alikes.

Deceptive and invisible characters are written as escapes, so this file shows what it tests.
"""

from __future__ import annotations

import ast
import bisect
import doctest
import importlib.util
import subprocess
import sys
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from preflight_fsm import _text_data, text
from preflight_fsm.text import (
    UNICODE_VERSION,
    Lookalike,
    confusable_keys,
    describe_refused,
    lookalike,
    match_key,
    normalise,
    refused,
    skeleton,
)

ZWJ = "\u200d"
VS16 = "\ufe0f"
WOMAN, MAN, GIRL, LAPTOP = "\U0001f469", "\U0001f468", "\U0001f467", "\U0001f4bb"
WHITE_FLAG, RAINBOW, MEDIUM_SKIN = "\U0001f3f3", "\U0001f308", "\U0001f3fd"
PERSON, RUNNER, MALE_SIGN = "\U0001f9d1", "\U0001f3c3", "\u2642"
HEART, FIRE = "\u2764", "\U0001f525"
CYRILLIC_O, CYRILLIC_A, CYRILLIC_ER, CYRILLIC_I = "\u041e", "\u0410", "\u0420", "\u0406"
GREEK_OMICRON = "\u03bf"
FULLWIDTH_OAUTH = "\uff2f\uff21\uff55\uff54\uff48"
FULLWIDTH_TBD = "\uff54\uff42\uff44"
OPTIONS = ("OAuth", "JWT", "Session", "API key", "Other (specify)")


def _generator() -> ModuleType:
    path = Path(__file__).resolve().parent.parent / "tools" / "generate_text_data.py"
    spec = importlib.util.spec_from_file_location("generate_text_data", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- normalise -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Add OAuth login", "Add OAuth login"),
        ("one\r\ntwo", "one\ntwo"),
        ("one\rtwo\r\n", "one\ntwo\n"),
        ("Cafe\u0301", "Caf\u00e9"),
        ("\u212b", "\u00c5"),
        ("\u1100\u1161", "\uac00"),
        ("\uff54\uff42\uff44", "\uff54\uff42\uff44"),
    ],
    ids=["ascii-unchanged", "crlf", "lone-cr", "nfd-accent", "angstrom-sign", "hangul-jamo",
         "fullwidth-kept"],
)  # fmt: skip
def test_normalise_unifies_newlines_then_composes_to_nfc(raw: str, expected: str) -> None:
    """C5: \\r\\n and \\r become \\n, then NFC; compatibility forms are kept (only NFC)."""
    assert expected == normalise(raw)


# -- refused -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("NUL\x00", ("U+0000",)),
        ("escape\x1b[31m", ("U+001B",)),
        ("delete\x7f", ("U+007F",)),
        ("next line\x85", ("U+0085",)),
        ("OAuth\ud800", ("U+D800",)),
        ("Add \udcff login", ("U+DCFF",)),
        ("private\ue000", ("U+E000",)),
        ("private plane\U000f0000", ("U+F0000",)),
        ("unassigned\u0378", ("U+0378",)),
        ("pink heart\U0001fa77", ("U+1FA77",)),
        ("non\ufdd0character", ("U+FDD0",)),
        ("non\ufffe", ("U+FFFE",)),
        ("plane one\U0001ffff", ("U+1FFFF",)),
        ("last\U0010ffff", ("U+10FFFF",)),
        ("admin\u202egnp.exe", ("U+202E",)),
        ("\u202aembedding\u202c", ("U+202A", "U+202C")),
        ("\u2066isolate\u2069", ("U+2066", "U+2069")),
        ("mark\u200e\u200f\u061c", ("U+061C", "U+200E", "U+200F")),
        ("tbd\u200b", ("U+200B",)),
        ("zero\u200cwidth", ("U+200C",)),
        ("word\u2060joiner", ("U+2060",)),
        ("\ufeffbom", ("U+FEFF",)),
        ("soft\u00adhyphen", ("U+00AD",)),
        ("tag\U000e0001\U000e0041\U000e007f", ("U+E0001", "U+E0041", "U+E007F")),
        ("a" + ZWJ + "b", ("U+200D",)),
        (ZWJ + WOMAN, ("U+200D",)),
        (WOMAN + ZWJ, ("U+200D",)),
        (WOMAN + ZWJ + "x", ("U+200D",)),
        ("\u202e\u200b\u202e", ("U+200B", "U+202E")),
        ("Solid" + "".join(chr(0xE0100 + b) for b in b"hi"), ("U+E0168", "U+E0169")),
        ("a" + VS16, ("U+FE0F",)),
        (HEART + VS16 + VS16, ("U+FE0F",)),
        ("\u845b\U000e0100", ("U+E0100",)),
        ("\u3164", ("U+3164",)),
        ("x\u034fy", ("U+034F",)),
        ("\u115f\u1160", ("U+115F", "U+1160")),
        ("\uffa0", ("U+FFA0",)),
        ("\u2800", ("U+2800",)),
        ("\u17b4", ("U+17B4",)),
    ],
    ids=["nul", "escape", "delete", "c1-next-line", "lone-surrogate", "surrogateescape-byte",
         "private-use", "private-use-plane-15", "unassigned", "assigned-after-14.0",
         "noncharacter-fdd0", "noncharacter-fffe", "noncharacter-plane-1", "noncharacter-last",
         "bidi-override", "bidi-embedding", "bidi-isolates", "bidi-marks", "zero-width-space",
         "zero-width-non-joiner", "word-joiner", "byte-order-mark", "soft-hyphen",
         "tag-characters", "zwj-between-letters", "zwj-leading", "zwj-trailing",
         "zwj-emoji-then-letter", "sorted-unique", "variation-selector-payload",
         "vs16-after-a-letter", "second-selector", "ideographic-variation-sequence",
         "hangul-filler", "grapheme-joiner", "hangul-jamo-fillers", "halfwidth-hangul-filler",
         "braille-blank", "khmer-inherent-vowel"],
)  # fmt: skip
def test_refused_names_each_refused_code_point(raw: str, expected: tuple[str, ...]) -> None:
    """C5: control, surrogate, private-use, unassigned, noncharacter and Cf code points, named."""
    assert expected == refused(normalise(raw))


@pytest.mark.parametrize(
    "raw",
    [
        "tab\tand\nnewline",
        "Connexion OAuth \u00e0 l'\u00e9cran d'administration",
        "\u0414\u043e\u0431\u0430\u0432\u0438\u0442\u044c \u0432\u0445\u043e\u0434",
        "\u7ba1\u7406\u753b\u9762\u306bOAuth\u3067\u30ed\u30b0\u30a4\u30f3",
        "\u0645\u0631\u062d\u0628\u0627",
        "plain emoji \U0001f680 and \u2764" + VS16,
        WOMAN + ZWJ + LAPTOP,
        MAN + ZWJ + WOMAN + ZWJ + GIRL,
        WHITE_FLAG + VS16 + ZWJ + RAINBOW,
        PERSON + MEDIUM_SKIN + ZWJ + LAPTOP,
        HEART + VS16 + ZWJ + FIRE,
        RUNNER + ZWJ + MALE_SIGN + VS16,
        "#" + VS16 + "\u20e3",
        HEART + "\ufe0e",
        "\u2229\ufe00",
        "\u8c48\ufe00",
        "\u1820\u180b",
        "\U0001f680" + VS16,
    ],
    ids=["tab-newline", "accented-latin", "cyrillic", "japanese", "arabic", "emoji-vs16",
         "zwj-technologist", "zwj-family", "zwj-rainbow-flag", "zwj-skin-tone",
         "zwj-heart-on-fire", "zwj-man-running", "keycap", "emoji-text-style",
         "standardized-math-variant", "cjk-compatibility-variant", "mongolian-free-variant",
         "emoji-style-on-any-emoji"],
)  # fmt: skip
def test_refused_accepts_text_and_emoji_sequences(raw: str) -> None:
    """C5: ordinary text in any script, emoji and ZWJ inside emoji sequences are not refused."""
    assert () == refused(normalise(raw))


def test_describe_refused_names_the_characters_and_what_to_send() -> None:
    """The problem names each code point with its Unicode name and says what to send instead."""
    problem = describe_refused(("U+200B", "U+202E"))
    assert problem == (
        "holds invisible, control or unassigned characters (U+200B ZERO WIDTH SPACE, "
        "U+202E RIGHT-TO-LEFT OVERRIDE): send the text without them "
        "(tabs, newlines and emoji are fine)"
    )


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("U+0000", "U+0000 control"),
        ("U+D800", "U+D800 lone surrogate from undecodable input"),
        ("U+E000", "U+E000 private use"),
        ("U+FDD0", "U+FDD0 noncharacter"),
        ("U+0378", "U+0378 unassigned"),
    ],
    ids=["control", "surrogate", "private-use", "noncharacter", "unassigned"],
)
def test_describe_refused_labels_unnamed_code_points(name: str, shown: str) -> None:
    """Code points without a Unicode name are labelled by what they are."""
    assert shown in describe_refused((name,))


def test_describe_refused_counts_what_it_does_not_list() -> None:
    """A long list is cut after six code points and counts the rest."""
    names = tuple(f"U+{cp:04X}" for cp in range(0xE000, 0xE00A))
    problem = describe_refused(names)
    assert "U+E005 private use and 4 more" in problem
    assert "U+E006" not in problem


# -- match_key -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("OAuth", "oauth"),
        (FULLWIDTH_TBD, "tbd"),
        (FULLWIDTH_OAUTH, "oauth"),
        ("Stra\u00dfe", "strasse"),
        ("\ufb01le", "file"),
        ("\u210c", "h"),
        ("\u2460", "1"),
        ("\u2026", "..."),
        ("\u0130", "i\u0307"),
        ("Cafe\u0301", "caf\u00e9"),
    ],
    ids=["ascii", "fullwidth-tbd", "fullwidth-oauth", "sharp-s", "fi-ligature",
         "black-letter-h", "circled-one", "ellipsis", "dotted-capital-i", "decomposed"],
)  # fmt: skip
def test_match_key_is_nfkc_casefolded(raw: str, expected: str) -> None:
    """C5: comparisons use NFKC-casefolded text, so full-width tbd is tbd."""
    assert expected == match_key(raw)


# The scans over code points: `make test` takes the whole BMP (where nearly every character that
# normalisation or casefolding changes lives) and every 61st code point beyond it; `make
# bench-check` takes all 1,114,112 (seconds of CPU each, the same result on every run).
EVERY_CODE_POINT = range(0x110000)
SAMPLED_CODE_POINTS = (*range(0x10000), *range(0x10000, 0x110000, 61))
CODE_POINTS = [
    pytest.param(SAMPLED_CODE_POINTS, id="bmp-and-sampled"),
    pytest.param(EVERY_CODE_POINT, id="every", marks=pytest.mark.bench_check),
]


@pytest.mark.parametrize("code_points", CODE_POINTS)
def test_match_key_is_a_fixed_point_for_every_code_point(code_points: Sequence[int]) -> None:
    """match_key(match_key(c)) == match_key(c) for every code point but surrogates."""
    broken = [
        f"U+{cp:04X}"
        for cp in code_points
        if not 0xD800 <= cp <= 0xDFFF and match_key(match_key(chr(cp))) != match_key(chr(cp))
    ]
    assert [] == broken


# -- look-alikes -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (CYRILLIC_O + "Auth", Lookalike(CYRILLIC_O + "Auth", ("Cyrillic", "Latin"), True, "OAuth")),
        ("use " + CYRILLIC_O + "Auth now",
         Lookalike(CYRILLIC_O + "Auth", ("Cyrillic", "Latin"), True, "OAuth")),
        ("Sessi" + GREEK_OMICRON + "n", Lookalike("Sessi" + GREEK_OMICRON + "n",
                                                  ("Greek", "Latin"), True, "Session")),
        ("\u0417dravo", Lookalike("\u0417dravo", ("Cyrillic", "Latin"), True, None)),
        (CYRILLIC_A + CYRILLIC_ER + CYRILLIC_I + " key",
         Lookalike(CYRILLIC_A + CYRILLIC_ER + CYRILLIC_I + " key", ("Cyrillic", "Latin"), False,
                   "API key")),
        ("\u0408\u051c\u0422", Lookalike("\u0408\u051c\u0422", ("Cyrillic",), False, "JWT")),
        ("\u043eauth", Lookalike("\u043eauth", ("Cyrillic", "Latin"), True, "OAuth")),
    ],
    ids=["cyrillic-o-in-oauth", "mixed-word-in-a-sentence", "greek-omicron", "no-option-alike",
         "cyrillic-words-imitating-an-option", "all-cyrillic-jwt", "lower-case-cyrillic-o"],
)  # fmt: skip
def test_lookalike_refuses_deceptive_words(raw: str, expected: Lookalike) -> None:
    """C5: a mixed-script word, or text imitating an option, names its scripts and the option."""
    assert expected == lookalike(normalise(raw), OPTIONS)


@pytest.mark.parametrize(
    "raw",
    [
        "Add OAuth login",
        "Connexion OAuth tr\u00e8s s\u00e9curis\u00e9e",
        "\u0412\u0445\u043e\u0434 \u0447\u0435\u0440\u0435\u0437 OAuth",
        "OAuth-\u0432\u0445\u043e\u0434",
        "\u0412\u0445\u043e\u04342",
        "\u7ba1\u7406\u753b\u9762\u306bOAuth\u3067\u30ed\u30b0\u30a4\u30f3",
        "OAuth\u767b\u5f55",
        "OAuth\ub85c\uadf8\uc778",
        "\u3105\u3106OAuth\u4e2d",
        "\u03b1\u03b2\u03b3 \u03b4\u03b5",
        FULLWIDTH_OAUTH,
        "\u0441\u0435\u0441\u0441\u0438\u044f",
        WOMAN + ZWJ + LAPTOP + " OAuth",
    ],
    ids=["ascii", "accented-latin", "cyrillic-and-latin-words", "hyphen-separates-words",
         "cyrillic-with-digit", "latin-han-hiragana-katakana", "latin-han", "latin-hangul",
         "latin-han-bopomofo", "greek", "fullwidth-is-the-option", "cyrillic-not-alike",
         "emoji"],
)  # fmt: skip
def test_lookalike_accepts_highly_restrictive_text(raw: str) -> None:
    """C5: one script per word, or TS #39's Latin+Han+Japanese/Bopomofo/Hangul sets, pass."""
    assert None is lookalike(normalise(raw), OPTIONS)


@pytest.mark.parametrize(
    ("found", "problem"),
    [
        (Lookalike("\u041eAuth", ("Cyrillic", "Latin"), True, "OAuth"),
         "mixes Cyrillic and Latin letters in one word ('\u041eAuth'), so it only looks like the "
         "option 'OAuth'; send 'OAuth' typed in plain letters"),
        (Lookalike("\u0417dravo", ("Cyrillic", "Latin"), True, None),
         "mixes Cyrillic and Latin letters in one word ('\u0417dravo'), a look-alike; send each "
         "word in the letters of one script"),
        (Lookalike("\u0408\u051c\u0422", ("Cyrillic",), False, "JWT"),
         "is written in Cyrillic letters, so it only looks like the option 'JWT'; send 'JWT' "
         "typed in plain letters"),
    ],
    ids=["mixed-resembling", "mixed", "imitating"],
)  # fmt: skip
def test_lookalike_problem_says_what_to_send(found: Lookalike, problem: str) -> None:
    """The problem names the scripts, the word, the option resembled and what to send."""
    assert problem == found.problem


def test_lookalike_without_options_names_no_option() -> None:
    """Free text has no options: a mixed word is still refused, resembling nothing."""
    found = lookalike(CYRILLIC_O + "Auth")
    assert found is not None
    assert None is found.resembles


@pytest.mark.parametrize(
    ("raw", "placeholder"),
    [("\u039d\u0391", "na"), ("\u03a4\u0392\u0391", "tba"), ("\u0422\u0412\u0410", "tba"),
     ("TBD", "tbd")],
    ids=["greek-na", "greek-tba", "cyrillic-tba", "latin-tbd"],
)  # fmt: skip
def test_confusable_keys_of_a_look_alike_hold_the_placeholders_key(
    raw: str, placeholder: str
) -> None:
    """C5: a placeholder typed in another script's look-alike letters shares its skeleton key."""
    assert placeholder in confusable_keys(raw)


def test_a_confusables_row_becomes_a_prototype_entry_with_every_character_escaped() -> None:
    """The generator writes each TS #39 row as a PROTOTYPES entry holding only ASCII (C5)."""
    entry = _generator().prototype_entry("0422 0054 1D400")
    assert '    0x0422: "\\u0054\\U0001d400",' == entry
    assert {0x0422: "T\U0001d400"} == ast.literal_eval("{" + entry + "}")


def test_a_prototype_too_long_for_a_line_is_split_into_adjacent_literals() -> None:
    """A long TS #39 prototype is written as several literals on lines of at most 100 characters."""
    entry = _generator().prototype_entry("FDFA " + " ".join(["0635"] * 20))
    assert all(len(line) <= 100 for line in entry.splitlines())
    assert {0xFDFA: "\u0635" * 20} == ast.literal_eval("{" + entry + "}")


def test_the_prototypes_table_is_ascii_source() -> None:
    """No look-alike character reaches _text_data.py itself: every prototype is escaped (C5)."""
    assert Path(_text_data.__file__).read_text(encoding="utf-8").isascii()


def test_the_prototypes_table_maps_cyrillic_te_to_latin_t() -> None:
    """The shipped table holds TS #39's prototypes: Cyrillic Te looks like Latin T."""
    assert "T" == _text_data.PROTOTYPES[0x0422]


def test_skeleton_maps_confusables_to_their_prototype() -> None:
    """TS #39: the skeleton of a Cyrillic-O OAuth is the Latin one's."""
    assert skeleton("OAuth") == skeleton(CYRILLIC_O + "Auth")


# -- the data and the libraries --------------------------------------------------------------------


def test_unicode_version_is_14() -> None:
    """D140: Unicode 14.0.0 (Python 3.11's) decides what is assigned, on every Python."""
    assert "14.0.0" == UNICODE_VERSION


@pytest.mark.skipif(
    unicodedata.unidata_version != "14.0.0", reason="the table is derived from Unicode 14.0.0"
)
@pytest.mark.parametrize("code_points", CODE_POINTS)
def test_generated_refused_runs_match_unicodedata(code_points: Sequence[int]) -> None:
    """_text_data.py is what tools/generate_text_data.py derives from Unicode 14.0.0 (no drift)."""
    generator = _generator()
    starts = [start for start, _ in _text_data.REFUSED_RUNS]

    def in_runs(cp: int) -> bool:
        run = bisect.bisect_right(starts, cp) - 1
        return run >= 0 and cp <= _text_data.REFUSED_RUNS[run][1]

    drift = [f"U+{cp:04X}" for cp in code_points if generator.is_refused(cp) != in_runs(cp)]
    assert [] == drift


@pytest.mark.parametrize("code_points", CODE_POINTS)
def test_regex_knows_every_code_point_assigned_in_unicode_14(code_points: Sequence[int]) -> None:
    """regex's Unicode is at least 14.0: no accepted code point is unknown to its properties."""
    accepted = "".join(chr(cp) for cp in code_points if not refused(chr(cp)) and chr(cp) != ZWJ)
    assert [] == regex.findall(r"\p{Cn}", accepted)


def test_regex_knows_every_script() -> None:
    """Every script code of the generated table is a Script_Extensions value to regex."""
    for code in _text_data.SCRIPT_NAMES:
        regex.compile(rf"\p{{scx={code}}}")


def test_ascii_text_is_checked_without_the_regex_module() -> None:
    """D161: every rule runs on ASCII text without importing regex; non-ASCII text imports it."""
    code = (
        "import sys\n"
        "from preflight_fsm.text import lookalike, match_key, normalise, refused\n"
        "normalise('OAuth'); refused('OAuth\\x07'); match_key('OAuth'); lookalike('JWT', ['JWT'])\n"
        "before = 'regex' in sys.modules\n"
        "refused('\\u041eAuth')\n"
        "print(before, 'regex' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert "False True" == done.stdout.strip()


def test_module_examples_run() -> None:
    """The examples in text.py's docstrings hold."""
    assert 0 == doctest.testmod(text).failed


# -- properties ------------------------------------------------------------------------------------

SPECIAL = [ZWJ, VS16, WOMAN, LAPTOP, MEDIUM_SKIN, "\u202e", "\u200b", "\ud800", "\ue000",
           "\ufdd0", "\U000e0041", "\u00ad", CYRILLIC_O, "\r", "\n", "\u0301",
           "\uff54", "\ufe0e", "\U000e0100", "\u3164", "\u2800", "\u2229", "\ufe00",
           "\u034f"]  # fmt: skip
# Any code point at all; assigned ones without Cc/Cf/Cs/Co/Cn, so that much generated text is
# accepted; and the characters the rules single out (ZWJ beside emoji, surrogates, bidi...);
# or emoji, ZWJ and VS16 strung together, and emoji joined by ZWJ, so that accepted ZWJs are
# common.
ANY_TEXT = (
    st.text(
        st.one_of(
            st.characters(exclude_categories=()),
            st.characters(exclude_categories=["C"]),
            st.sampled_from(SPECIAL),
        ),
        max_size=40,
    )
    | st.lists(
        st.sampled_from([ZWJ, ZWJ, VS16, WOMAN, LAPTOP, MEDIUM_SKIN, HEART, "a", " ", "\u0301"]),
        max_size=12,
    ).map("".join)
    | st.lists(
        st.sampled_from([WOMAN, LAPTOP, HEART + VS16, PERSON + MEDIUM_SKIN, "a", ""]),
        min_size=1,
        max_size=5,
    ).map(ZWJ.join)
)
_EMOJI_BEFORE = regex.compile(r"[\p{Extended_Pictographic}\p{Emoji_Modifier}]")
_EMOJI_AFTER = regex.compile(r"\p{Extended_Pictographic}")


def _joins_emoji(value: str, i: int) -> bool:
    before = value[i - 1] if i >= 1 else ""
    if before == VS16:
        before = value[i - 2] if i >= 2 else ""
    after = value[i + 1] if i + 1 < len(value) else ""
    return bool(before and after and _EMOJI_BEFORE.match(before) and _EMOJI_AFTER.match(after))


_IGNORABLE = regex.compile(r"\p{Default_Ignorable_Code_Point}")
_SELECTOR = regex.compile(r"\p{Variation_Selector}")


def _is_refusable(c: str) -> bool:
    """The oracle of the context-free rules; selectors and ZWJ are judged in context."""
    cp = ord(c)
    return (
        unicodedata.category(c) in ("Cs", "Co", "Cn", "Cf")
        or (unicodedata.category(c) == "Cc" and c not in "\t\n")
        or (_IGNORABLE.match(c) is not None and _SELECTOR.match(c) is None)
        or c == "\u2800"
        or 0xFDD0 <= cp <= 0xFDEF
        or (cp & 0xFFFE) == 0xFFFE
    )


_SEQUENCES = {
    "".join(chr(int(code, 16)) for code in line.split())
    for line in _text_data.VARIATION_SEQUENCES.split("\n")
    if line
}


_EMOJI = regex.compile(r"\p{Emoji}")


def _ends_a_sequence(value: str, i: int) -> bool:
    """A listed variation sequence, or an emoji's text or emoji style."""
    if i < 1:
        return False
    if value[i] in "\ufe0e\ufe0f" and _EMOJI.match(value[i - 1]):
        return True
    return value[i - 1 : i + 1] in _SEQUENCES


@given(ANY_TEXT)
def test_normalise_is_idempotent(raw: str) -> None:
    """normalise(normalise(x)) == normalise(x), surrogates included."""
    once = normalise(raw)
    assert once == normalise(once)


@given(ANY_TEXT)
def test_collapsing_white_space_keeps_nfc(raw: str) -> None:
    """answers.py strips and collapses white space after normalise: the value stays NFC."""
    collapsed = " ".join(normalise(raw).split())
    assert unicodedata.is_normalized("NFC", collapsed)


@given(ANY_TEXT)
def test_accepted_text_holds_nothing_refusable(raw: str) -> None:
    """Nothing refused() lets through holds a surrogate, Co, Cn, Cf (bar ZWJ in emoji) or U+FDD0."""
    value = normalise(raw)
    if refused(value):
        return
    value.encode("utf-8")  # what every snapshot and store write does
    for i, c in enumerate(value):
        if c == ZWJ:
            assert _joins_emoji(value, i), value
        elif _SELECTOR.match(c) is not None:
            assert _ends_a_sequence(value, i), f"U+{ord(c):04X}"
        else:
            assert not _is_refusable(c), f"U+{ord(c):04X}"


@pytest.mark.skipif(
    unicodedata.unidata_version != "14.0.0", reason="the oracle is Unicode 14.0.0's unicodedata"
)
@given(ANY_TEXT)
def test_refused_is_exactly_unicode_14s_refusable_code_points(raw: str) -> None:
    """refused() names exactly the refusable code points (by Python 3.11's unicodedata)."""
    value = normalise(raw)
    expected = {
        f"U+{ord(c):04X}"
        for i, c in enumerate(value)
        if (c == ZWJ and not _joins_emoji(value, i))
        or (_SELECTOR.match(c) is not None and not _ends_a_sequence(value, i))
        or (c != ZWJ and _SELECTOR.match(c) is None and _is_refusable(c))
    }
    assert sorted(expected, key=lambda n: int(n[2:], 16)) == list(refused(value))


@given(ANY_TEXT)
def test_match_key_is_idempotent(raw: str) -> None:
    """match_key(match_key(x)) == match_key(x)."""
    key = match_key(raw)
    assert key == match_key(key)


@given(ANY_TEXT, st.lists(st.sampled_from([*OPTIONS, CYRILLIC_O + "Auth"]), max_size=4))
def test_text_rules_never_raise(raw: str, options: list[str]) -> None:
    """Every rule takes any str, lone surrogates included, without an exception."""
    value = normalise(raw)
    describe_refused(refused(value))
    match_key(value)
    found = lookalike(value, options)
    if found is not None:
        assert found.problem


@given(st.text(st.characters(codec="ascii"), max_size=40))
def test_ascii_fast_paths_agree_with_the_general_rules(raw: str) -> None:
    """ASCII text: only controls are refused, the match key is casefold, no look-alike."""
    assert raw.casefold() == match_key(raw)
    assert None is lookalike(raw, OPTIONS)
    assert tuple(sorted({f"U+{ord(c):04X}" for c in raw if _is_refusable(c)})) == refused(raw)
