"""Class labels that read as ordered levels: an answer scale in words (no < perhaps < yes), a
severity (none < mild < moderate < severe), a frequency, an agreement scale, or R's ordered factor.

A classifier treats such levels as unrelated, which throws their order away; a regression on them
needs numbers an expert chose. Neither is the co-pilot's to decide silently: the task is asked.
"""

from __future__ import annotations

import re

import pandas as pd

# each scale's words in order; a target's labels read as ordered when 3 or more of them are all
# words of one scale (spelled in any case, with '_' or '-' for a space)
SCALES: tuple[tuple[str, ...], ...] = (
    ("no", "perhaps", "maybe", "unsure", "yes"),
    ("never", "rarely", "seldom", "sometimes", "occasionally", "often", "frequently", "usually", "always"),
    ("none", "minimal", "slight", "mild", "moderate", "severe", "very severe", "extreme"),
    ("very low", "low", "medium", "moderate", "intermediate", "high", "very high"),
    ("very poor", "poor", "fair", "average", "good", "very good", "excellent"),
    ("strongly disagree", "disagree", "neutral", "neither", "agree", "strongly agree"),
    ("much worse", "worse", "same", "unchanged", "no change", "better", "much better"),
    ("very small", "small", "medium", "large", "very large"),
)
MIN_LEVELS = 3
# degrees of one word (not too happy < pretty happy < very happy; a little tired < very tired): the
# modifiers' ranks, the bare word in the middle
DEGREES: dict[str, int] = {
    "not at all": 0, "not": 1, "not too": 1, "not very": 1, "hardly": 1, "barely": 1,
    "a little": 2, "a bit": 2, "slightly": 2, "somewhat": 3, "fairly": 3, "rather": 3, "moderately": 3,
    "": 4, "quite": 5, "pretty": 5, "very": 6, "really": 6, "highly": 6, "extremely": 7, "completely": 7,
    "totally": 7, "entirely": 7,
}


def _word(label: object) -> str:
    return re.sub(r"[\s_\-]+", " ", str(label).strip().lower())


def level_order(s: pd.Series, classes: list) -> list[str] | None:
    """The class labels in their order when they read as ordered levels (see the module), else None."""
    if isinstance(s.dtype, pd.CategoricalDtype) and s.dtype.ordered and len(s.dtype.categories) >= MIN_LEVELS:
        return [str(c) for c in s.dtype.categories]
    if len(classes) < MIN_LEVELS:
        return None
    words = {_word(c): str(c) for c in classes}
    if len(words) != len(classes):
        return None
    for scale in SCALES:
        if set(words) <= set(scale):
            return [words[w] for w in scale if w in words]
    return _degrees(words)


def _degrees(words: dict[str, str]) -> list[str] | None:
    """Labels that are one word at several degrees, in the degrees' order, else None."""
    heads, ranks = set(), {}
    for w, label in words.items():
        modifier, _, head = w.rpartition(" ")
        if modifier not in DEGREES:
            return None
        heads.add(head)
        ranks[label] = DEGREES[modifier]
    if len(heads) != 1 or len(set(ranks.values())) != len(ranks):
        return None
    return sorted(ranks, key=ranks.__getitem__)
