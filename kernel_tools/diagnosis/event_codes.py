"""Which code of a status column means 'censored' when it has several (competing events).

Registries and trials export a status of three to eight codes next to the follow-up time:
alive / died of the disease / died of other causes, coded 0/1/2 with 0 not the most common, or
1/2/3 with the censoring code in the middle. The codes do not say which one is censoring; the
follow-up does. A subject still event-free is followed until the study ends, one with an event
only until the event: the censoring code's rows are followed longest. That evidence is stated
and tested (a rank test against the other rows), and a choice made without it is asked.

0 is every reader's censoring code, so the data need only agree with it: 0 followed longest, by a
clear margin, is taken whatever the rank test says (a cohort where nearly everyone had an event
has a handful of censored rows, too few for any test), and by a small margin when the test is
strong. Another code is taken only on strong
evidence; short of it, the choice is *uncertain* (0 when it is a code, else the longest-followed)
and is asked as such, even where survival was given.

A status of two codes (0/1, 1/2) is read as every reader does, the higher the event, unless its name
says censoring ('cens', 'alive') or its 'event' rows hold the end of the follow-up as censored rows
do (:func:`two_code_reading`): then which code is the event is asked too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.stats import mannwhitneyu

# censored and at most seven competing events: registries group causes of death or of a graft's
# failure in up to seven (a transplant registry's 0-6), more codes are a score or a measurement
MIN_CODES, MAX_CODES = 3, 8
STANDOUT_P = 0.05  # the longest-followed code's rows against all others (one-sided rank test; a
# censoring code of a handful of rows still shows, a chance difference between classes seldom)
STANDOUT_RATIO = 1.25  # its median follow-up at least this much above every other code's
STRONG_P, STRONG_RATIO = 0.01, 1.5  # a code other than 0 is taken as censored only on this evidence
# two codes: the last tenth of follow-up held by the 'event' code, as by the censored at a study's end
END_SHARE, HOLDS_END, MIN_END_ROWS = 0.1, 0.8, 10
MIN_SHARE = 0.1  # of the rows on the lower code: a censored few say nothing about the coding

# the words of a status stored as text: which labels are events, which the censored
EVENT_WORDS = re.compile(r"dead|died|death|deceased|relapse|recur|progress|fail|event|muert|fallec|decede|décédé|"
                         r"deces|décès|verstorben|gestorben|obito|óbito", re.IGNORECASE)
CENSOR_WORDS = re.compile(r"alive|living|censor|surviv|no.?event|event.?free|vivo|viva|vivant|lebend|censur|zensiert",
                          re.IGNORECASE)
# a label that pools the causes no one chose to study ('other', 'other causes', 'otras', 'autres', 'sonstige'):
# beside named causes of an event, the competing risk a cause-specific reading censors
OTHER_CAUSES = re.compile(r"^\s*(other|others|other.?caus\w*|otr[oa]s?|otras.?causas|autres?|autres.?causes|"
                          r"andere|sonstige\w*|altr[io])\s*$", re.IGNORECASE)

# a status column named as censoring ('cens', 'censor1', 'alive'): which code is censored is left to
# the follow-up (a name with EVENT_WORDS, 'death', says 1 = it happened)
CENSOR_NAME = re.compile(r"cens|alive|living", re.IGNORECASE)

Code = float | str  # a status code: a number, or a label of a status stored as text (R's factors)


@dataclass
class Coding:
    """A reading of a status column: the code taken as censored, the others as events."""

    censored: Code
    events: list[Code]
    medians: dict[Code, float]  # code -> median follow-up of its rows
    counts: dict[Code, int]
    standout_p: float | None = None  # the rank test's p when the censoring code stands out
    evidence: list[str] = field(default_factory=list)
    uncertain: bool = False  # the follow-up does not support the choice: asked even when survival is given

    @property
    def stands_out(self) -> bool:
        return self.standout_p is not None

    def ranked(self) -> list[Code]:
        """The codes as candidates for censoring, the longest-followed first."""
        return sorted(self.medians, key=lambda c: -self.medians[c])


def status_codes(values: np.ndarray | None) -> np.ndarray | None:
    """The distinct codes of a numeric target that can be a status with competing events
    (3-8 non-negative whole numbers), or None."""
    if values is None:
        return None
    v = values[~np.isnan(values)]
    codes = np.unique(v)
    if not MIN_CODES <= len(codes) <= MAX_CODES or codes[0] < 0 or not np.all(codes == np.round(codes)):
        return None
    return codes


def censoring_code(values: np.ndarray, duration: np.ndarray, named_follow_up: bool) -> Coding | None:
    """The code to read as censored, with its evidence (see the module docstring); None when
    nothing says the column is a status (no code is followed clearly longest, and the time is not
    named as a follow-up or there is no conventional 0): then the codes are classes, not events."""
    codes = status_codes(values)
    if codes is None:
        return None
    ok = ~np.isnan(values) & ~np.isnan(duration)
    v, d = values[ok], duration[ok]
    medians: dict[Code, float] = {float(c): float(np.median(d[v == c])) for c in codes if (v == c).any()}
    counts: dict[Code, int] = {float(c): int((v == c).sum()) for c in codes}
    if len(medians) < MIN_CODES:
        return None
    order = sorted(medians, key=lambda c: -medians[c])
    top = order[0]
    p = _standout(d[v == top], d[v != top])
    ratio = medians[top] / medians[order[1]] if medians[order[1]] > 0 else np.inf
    censored: Code
    if top == 0.0 and (ratio >= STANDOUT_RATIO or p < STRONG_P):
        censored, sure = 0.0, True  # the convention, and the data agree (by a margin, or beyond chance)
    elif top != 0.0 and p < STRONG_P and ratio >= STRONG_RATIO:
        censored, sure = top, True
    elif (p < STANDOUT_P and ratio >= STANDOUT_RATIO) or (named_follow_up and 0.0 in counts):
        censored, sure = (0.0 if 0.0 in counts else top), False
    else:
        return None
    events: list[Code] = [float(c) for c in codes if c != censored]
    return Coding(censored, events, medians, counts, p if sure else None,
                  [_evidence(order, medians, p, censored, sure)], uncertain=not sure)


def two_code_reading(values: np.ndarray, duration: np.ndarray, name: str) -> Coding | None:
    """A status of two numeric codes (0/1, 1/2) the readers take as higher = event, as a
    :class:`Coding` when that reading is uncertain; None when it stands.

    Censored rows are followed until the study ends, events only until the event. A name that says
    the event ('death') settles it. The data overrule the convention only when the higher code's rows
    are followed clearly longer (the strong bar of :func:`censoring_code`) and hold the end of the
    follow-up, as the censored at the study's end do (a censored few lost early, or events late in a
    long study, do not); the uncertain reading then recommends the code the data support. A name that
    says censoring ('cens', 'alive') asks unless the lower code's rows are the ones followed clearly
    longer."""
    ok = ~np.isnan(values) & ~np.isnan(duration)
    v, d = values[ok], duration[ok]
    codes = np.unique(v)
    if len(codes) != 2 or (EVENT_WORDS.search(name) and not CENSOR_NAME.search(name)):
        return None
    low, high = float(codes[0]), float(codes[1])
    medians: dict[Code, float] = {c: float(np.median(d[v == c])) for c in (low, high)}
    counts: dict[Code, int] = {c: int((v == c).sum()) for c in (low, high)}
    end = d >= np.quantile(d, 1 - END_SHARE)
    holds_end = end.sum() >= MIN_END_ROWS and np.mean(v[end] == high) >= HOLDS_END
    argues = (_clearly_longer(d[v == high], d[v == low], medians[high], medians[low], STRONG_P, STRONG_RATIO)
              and counts[low] >= MIN_SHARE * len(v) and holds_end)
    agrees = _clearly_longer(d[v == low], d[v == high], medians[low], medians[high], STANDOUT_P, STANDOUT_RATIO)
    if not argues and (agrees or not CENSOR_NAME.search(name)):
        return None
    censored = high if argues else low
    shares = ", ".join(f"{code_text(c)} on {counts[c] / len(v):.0%} of rows (median time {_length(medians[c])})"
                       for c in (low, high))
    why = (f"the rows coded {code_text(high)}, events by convention, were followed longest and hold "
           f"{np.mean(v[end] == high):.0%} of the last tenth of follow-up, as censored rows do: "
           f"{code_text(high)} is likely censored" if argues else
           "its name may count censoring, and the follow-up does not say which code is censored")
    return Coding(censored, [low if argues else high], medians, counts, None,
                  [f"'{name}' holds two codes and no name or label says which is the event: {shares}; {why}"],
                  uncertain=True)


def _clearly_longer(longer: np.ndarray, shorter: np.ndarray, median_longer: float, median_shorter: float,
                    p: float, ratio: float) -> bool:
    """One code's rows followed longer beyond chance (rank test below ``p``) and by a margin."""
    margin = median_longer / median_shorter if median_shorter > 0 else np.inf
    return margin >= ratio and _standout(longer, shorter) < p


def label_coding(labels: pd.Series, duration: np.ndarray) -> Coding | None:
    """A status stored as text ('alive'/'dead', 'A'/'D', 'censored'/'death'/'ltx'/'withdraw'): the
    label read as censored, with its evidence; None when nothing says the labels are a status.

    A label whose words say censored ('alive', 'censored') is taken when it is the only one; it is
    certain when the follow-up agrees (its rows followed longest) and another label names an event.
    Without such a word the longest-followed label is taken only when it stands out (the rank test
    and the margin of :func:`censoring_code`), and is asked: short labels do not say which is which."""
    present = labels.notna().to_numpy() & ~np.isnan(duration)
    text, d = labels[present].astype(str).to_numpy(), duration[present]
    names = sorted(set(text))
    if not 2 <= len(names) <= MAX_CODES:
        return None
    medians: dict[Code, float] = {n: float(np.median(d[text == n])) for n in names}
    counts: dict[Code, int] = {n: int((text == n).sum()) for n in names}
    order = sorted(names, key=lambda n: -medians[n])
    top = order[0]
    p = _standout(d[text == top], d[text != top])
    ratio = medians[top] / medians[order[1]] if medians[order[1]] > 0 else np.inf
    worded = [n for n in names if CENSOR_WORDS.search(n) and not EVENT_WORDS.search(n)]
    if len(worded) == 1:
        censored = worded[0]
        sure = censored == top and any(EVENT_WORDS.search(n) for n in names if n != censored)
    elif p < STANDOUT_P and ratio >= STANDOUT_RATIO:
        censored, sure = top, False
    elif len(names) >= 3 and len(pooled := [n for n in names if OTHER_CAUSES.match(n)]) == 1:
        # competing causes, every row an event of one: the named causes studied, the pooled others censoring
        censored = pooled[0]
        causes = ", ".join(f"'{n}'" for n in names if n != censored)
        return Coding(censored, [n for n in names if n != censored], medians, counts, None,
                      [f"competing causes stored as text: {causes} and '{censored}', which pools the others; no "
                       f"label says censored: the named causes read as the event, '{censored}' as censoring (a "
                       "cause-specific reading; all causes as one event, or one cause alone, the alternatives)"],
                      uncertain=True)
    else:
        return None
    return Coding(censored, [n for n in names if n != censored], medians, counts, p if censored == top else None,
                  [_label_evidence(order, medians, p, censored, bool(worded))], uncertain=not sure)


def _label_evidence(order: list[str], medians: dict[Code, float], p: float, censored: str, worded: bool) -> str:
    """The reading of a text status in words: what its labels and the follow-up say."""
    others = ", ".join(f"'{n}': {_length(medians[n])}" for n in order[1:])
    followed = f"'{order[0]}' followed longest (median {_length(medians[order[0]])} against {others}; rank test p = {p:.2g})"
    said = f"the label '{censored}' says censored" if worded else "no label says which is censored"
    return f"a status stored as text: {said}; {followed}"


def _evidence(order: list[Code], medians: dict[Code, float], p: float, censored: Code, sure: bool) -> str:
    """The choice in words: what the follow-up says, and why it is uncertain when it is."""
    top = order[0]
    others = ", ".join(f"{code_text(c)}: {_length(medians[c])}" for c in order[1:])
    followed = f"median {_length(medians[top])} against {others}; rank test p = {p:.2g}"
    if sure:
        return (f"the rows coded {code_text(top)} were followed longest ({followed}): the subjects still event-free "
                "when follow-up ended")
    bar = f"p < {STRONG_P:g} and {STRONG_RATIO:g}x the runner-up's median"
    if censored != top:
        return (f"the rows coded {code_text(top)} were followed longest ({followed}), not clearly enough to overrule "
                f"the convention ({bar}); 0 taken as censored by convention only: uncertain")
    if top == 0.0:
        return (f"the rows coded 0 were followed longest but not clearly ({followed}; under "
                f"{STANDOUT_RATIO:g}x the runner-up's median and p >= {STRONG_P:g}); 0 taken as censored by "
                "convention only: uncertain")
    return (f"the rows coded {code_text(top)} were followed longest but not clearly ({followed}; a code other than 0 "
            f"needs {bar}), and no code is 0: uncertain")


def _standout(longest: np.ndarray, rest: np.ndarray) -> float:
    if len(longest) == 0 or len(rest) == 0:
        return 1.0
    return float(mannwhitneyu(longest, rest, alternative="greater").pvalue)


def _length(value: float) -> str:
    """A median follow-up as people write it: 2,997 days, not 3e+03; 1.2 years."""
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def code_text(value: Code) -> str:
    """A status code as people write it: 2, not 2.0; a label as it is."""
    return value if isinstance(value, str) else f"{value:g}"


__all__ = ["CENSOR_WORDS", "Code", "Coding", "EVENT_WORDS", "MAX_CODES", "MIN_CODES", "censoring_code", "code_text",
           "label_coding", "status_codes", "two_code_reading"]
