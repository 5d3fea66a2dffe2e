"""``python -m benchmarks.text_rules``: the per-call cost of C5's text rules (text.py).

Each rule on ASCII and non-ASCII inputs, and the four in the order answers.py applies them, in
microseconds per call (median of the rounds). Not part of ``make bench``'s figures yet.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from benchmarks.timing import median_per_call
from preflight_fsm.text import lookalike, match_key, normalise, refused

OPTIONS = ("OAuth", "JWT", "Session", "API key", "Other (specify)")
INPUTS = {
    "ASCII option": "OAuth",
    "ASCII sentence": "Use OAuth with Google for the admin dashboard",
    "accented Latin": "Connexion OAuth \u00e0 l'\u00e9cran, tr\u00e8s s\u00e9curis\u00e9e",
    "Cyrillic": "\u0414\u043e\u0431\u0430\u0432\u0438\u0442\u044c \u0432\u0445\u043e\u0434 "
    "\u0447\u0435\u0440\u0435\u0437 \u043f\u0430\u043d\u0435\u043b\u044c",
    "Cyrillic + Latin words": "\u0414\u043e\u0431\u0430\u0432\u0438\u0442\u044c "
    "\u0432\u0445\u043e\u0434 \u0447\u0435\u0440\u0435\u0437 OAuth",
    "Japanese + Latin": "\u7ba1\u7406\u753b\u9762\u306bOAuth\u3067\u30ed\u30b0\u30a4\u30f3",
    "emoji ZWJ sequences": "Team \U0001f469\u200d\U0001f4bb and "
    "\U0001f468\u200d\U0001f469\u200d\U0001f467",
    "mixed-script word (refused)": "\u041eAuth",
}


def _all_four(raw: str) -> object:
    value = normalise(raw)
    return refused(value), match_key(value), lookalike(value, OPTIONS)


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--inner", type=int, default=20_000, help="calls per round")
    parser.add_argument("--rounds", type=int, default=7, help="rounds (the median is shown)")
    args = parser.parse_args()
    print(f"{'input':28}" + "".join(f"{h:>11}" for h in RULES) + "   (µs per call, median)")
    for label, raw in INPUTS.items():
        value = normalise(raw)
        cells = []
        for make in RULES.values():
            seconds = median_per_call(make(raw, value), inner=args.inner, rounds=args.rounds)
            cells.append(f"{seconds * 1e6:11.2f}")
        print(f"{label:28}" + "".join(cells))


RULES: dict[str, Callable[[str, str], Callable[[], object]]] = {
    "normalise": lambda raw, value: lambda: normalise(raw),
    "refused": lambda raw, value: lambda: refused(value),
    "match_key": lambda raw, value: lambda: match_key(value),
    "lookalike": lambda raw, value: lambda: lookalike(value, OPTIONS),
    "all four": lambda raw, value: lambda: _all_four(raw),
}

if __name__ == "__main__":
    main()
