"""Word-based keyword matching (C4): words, never substrings.

The text is NFKC-casefolded (C5) and split on every non-alphanumeric character. A keyword
matches a word equal to it or to it plus "s"; a keyword of several words matches those words in
a row, the last one optionally plus "s". So "author" matches nothing, "components" matches
"component" and "front-end" matches "front end".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from preflight_fsm.text import match_key

__all__ = ["KeywordIndex", "words"]

_NON_ALNUM = re.compile(r"[^\W_]+")


def words(text: str) -> tuple[str, ...]:
    """The alphanumeric words of ``text``'s match key (NFKC-casefolded, C5), in order."""
    key = match_key(text)
    if key.replace(" ", "").isalnum():
        # Only spaces between the words (most intentions): splitting finds the same words as
        # the pattern (``[^\W_]`` is str.isalnum), in half the time.
        return tuple(key.split())
    return tuple(_NON_ALNUM.findall(key))


class KeywordIndex:
    """Keyword lists compiled once per flow; :meth:`categories` answers in flow order."""

    __slots__ = ("_order", "_phrases", "_single", "_starts")

    def __init__(self, keywords: Mapping[str, Iterable[str]]) -> None:
        self._order = tuple(keywords)
        self._single: dict[str, set[str]] = {}
        self._phrases: list[tuple[tuple[str, ...], str]] = []
        for category, listed in keywords.items():
            for keyword in listed:
                parts = words(keyword)
                if len(parts) == 1:
                    for form in (parts[0], parts[0] + "s"):
                        self._single.setdefault(form, set()).add(category)
                elif parts:
                    self._phrases.append((parts, category))
        # Every word that is a keyword or begins one: a text with none of them names nothing.
        self._starts = frozenset(self._single).union(parts[0] for parts, _ in self._phrases)

    def categories(self, text: str) -> tuple[str, ...]:
        """Every category whose keywords occur in ``text`` as words, in flow order."""
        text_words = words(text)
        if self._starts.isdisjoint(text_words):  # most texts: one lookup a word, in C
            return ()
        found: set[str] = set()
        single = self._single
        for word in text_words:
            named = single.get(word)
            if named is not None:
                found |= named
        for phrase, category in self._phrases:
            if category not in found and phrase[0] in text_words and _contains(text_words, phrase):
                found.add(category)
        if not found:
            return ()
        return tuple(c for c in self._order if c in found)

    def only_category(self, text: str) -> str | None:
        """The one category ``text`` names, or None when it names none or several."""
        matched = self.categories(text)
        return matched[0] if len(matched) == 1 else None


def _contains(text_words: tuple[str, ...], phrase: tuple[str, ...]) -> bool:
    """The phrase's words in a row in ``text_words``, the last optionally plus "s"."""
    size = len(phrase)
    first, head, last = phrase[0], phrase[:-1], phrase[-1]
    ends = (last, last + "s")
    for start in range(len(text_words) - size + 1):
        if (
            text_words[start] == first  # most places: one comparison, no slice
            and text_words[start : start + size - 1] == head
            and text_words[start + size - 1] in ends
        ):
            return True
    return False
