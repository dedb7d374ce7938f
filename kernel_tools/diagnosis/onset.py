"""An age (or a time) at onset beside a 0/1 indicator: a time to event, not a baseline covariate.

A family study records, for each relative, whether she had breast cancer and her age at onset, or
her current age if she had none; a registry records the age at diagnosis or at the last contact.
Read as a classification, the age of the censored rows is their age *now*, and the model learns
that whoever was seen young had no event yet. The same layout is the commonest of all tables,
though: an age at enrolment beside a 0/1 outcome. Told apart by evidence, never by the word
``age`` alone:

- the name says the age is the event's or the end's (``age_onset``, ``ageatdx``, ``edad_diagnostico``,
  ``alter_tod``, ``age_exit``);
- or another age of the row is at most this one on every row and below it on many (an age at
  entry beside an age at exit: the entry is the delayed entry);
- or the name is a bare age, the target's name names an illness or an event, and the rows without
  the event are older than those with it beyond chance (the censored are followed to their current
  age; for a baseline age beside a disease the healthy are usually the younger, and an age unrelated
  to the outcome is older on either side by chance).

Found, survival is asked (low confidence), the classification the alternative.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import mannwhitneyu

from kernel_tools.diagnosis.columns import ColumnProfile, numeric_values

MIN_ROWS = 20
MIN_DISTINCT = 10
MAX_MISSING = 0.2
MIN_EVENTS = 5
OLDER_P = 0.001  # a bare age: the rows without the event older than those with it beyond this chance
ENTRY_BELOW = 0.99  # rows on which the entry age is at most the exit age
ENTRY_STRICT = 0.3  # rows on which it is below it (the rest entered and left the same year)

# an age, in several languages: age, edad, alter, âge, idade, età/eta, leeftijd, alder/ålder, wiek, yas
AGE_WORD = r"age|ages|edad|alter|âge|idade|età|eta|leeftijd|alder|ålder|wiek|yas"
# the event's or the end's moment: onset, diagnosis, death, event, exit, censoring, end, last contact
ONSET_WORD = (
    r"onset|on|dx|diag\w*|event|ev|death|dead|died|die|exit|end|censor\w*|cens|last|fail\w*|incid\w*|"
    r"inicio|debut|diagnostico|muerte|deces|décès|tod|sterbe\w*|ereignis|evento|fin|final|ende|salida|sortie"
)
# entry words: the age at which follow-up began (delayed entry)
ENTRY_WORD = r"entry|enter|entrada|entree|entrée|eintritt|start|begin|baseline|base|bl|enrol\w*|enroll\w*|recruit\w*|in"
# the target names an illness or an event (its 1 = it happened)
EVENT_TARGET = re.compile(
    r"c[aá]ncer|canc|krebs|tumou?r|tumeur|onset|diag|event|death|dead|died|deces|muerte|tod|relapse|recur|incid|case|"
    r"disease|illness|krank|enfermedad|maladie|dementia|alzheim|stroke|infarct|fracture|diabet|hiv|"
    r"carcinom|lymphom|leuk|sarcom|melanom|fail",
    re.IGNORECASE,
)


def _words(name: str) -> list[str]:
    """A name's words: snake, dots, spaces, camelCase and digits split (``ageAtOnset`` -> age at onset)."""
    spaced = re.sub(r"(?<=[a-zà-ÿ])(?=[A-Z])", " ", name)
    return [w for w in re.split(r"[^0-9A-Za-zÀ-ÿ]+|\d+", spaced.lower()) if w]


def _glued(word: str, first: str, second: str) -> bool:
    """``word`` is two words run together (``ageonset``, ``onsetage``, ``ageatdx``)."""
    return bool(re.fullmatch(rf"(?:{first})(?:at|a|de|al|bei)?(?:{second})", word))


def age_reading(name: str) -> str | None:
    """``"onset"``: an age named as the event's or the end's; ``"entry"``: named as the start's;
    ``"age"``: a bare age; None: no age."""
    words = _words(name)
    ages = [w for w in words if re.fullmatch(AGE_WORD, w)]
    glued_onset = any(_glued(w, AGE_WORD, ONSET_WORD) or _glued(w, ONSET_WORD, AGE_WORD) for w in words)
    glued_entry = any(_glued(w, AGE_WORD, ENTRY_WORD) or _glued(w, ENTRY_WORD, AGE_WORD) for w in words)
    if not ages and not glued_onset and not glued_entry:
        return None
    others = [
        w
        for w in words
        if w not in ages
        and w not in ("at", "a", "de", "al", "bei", "of", "the", "yrs", "years", "y", "yr", "anos", "jahre", "ans")
    ]
    if glued_onset or any(re.fullmatch(ONSET_WORD, w) for w in others):
        return "onset"
    if glued_entry or any(re.fullmatch(ENTRY_WORD, w) for w in others):
        return "entry"
    if others:  # age_group, age_mother, agecat: another quantity
        return None
    return "age"


@dataclass
class AgeAtEvent:
    """An age at the event or at censoring beside the target's 0/1 indicator, with its evidence."""

    age: str
    evidence: list[str]
    entry: str | None = None  # the age at entry (delayed entry), when one is there


def find_age_at_event(
    df: pd.DataFrame, profiles: dict[str, ColumnProfile], target: str, event: np.ndarray
) -> AgeAtEvent | None:
    """The age of each row at its event or censoring, or None (see the module)."""
    e = np.asarray(event, dtype=float)
    if len(df) < MIN_ROWS or np.nansum(e == 1) < MIN_EVENTS or np.nansum(e == 0) < MIN_EVENTS:
        return None
    ages: dict[str, tuple[str, np.ndarray]] = {}
    for name, prof in profiles.items():
        if name == target or prof.kind != "numeric" or prof.nunique < MIN_DISTINCT or prof.missing_rate > MAX_MISSING:
            continue
        reading = age_reading(str(name))
        if reading is None:
            continue
        v = numeric_values(df[name], prof)
        if np.nanmin(v) < 0:
            continue
        ages[name] = (reading, v)
    if not ages:
        return None
    found: list[tuple[int, AgeAtEvent]] = []
    for name, (reading, v) in ages.items():
        if reading == "entry":
            continue
        older = _censored_older(v, e)
        entry = _entry_of(name, v, ages)
        evidence = []
        rank = 0
        if reading == "onset":
            evidence.append(f"'{name}' is named as the age at the event or at the end of follow-up")
            rank = 3
        if entry is not None:
            evidence.append(
                f"'{entry}' is at most '{name}' on every row and below it on many: the age at entry "
                f"(the delayed entry), '{name}' the age at the event or at censoring"
            )
            rank = max(rank, 2)
        if rank == 0 and reading == "age" and EVENT_TARGET.search(target) and older is not None and older[1]:
            evidence.append(
                f"'{target}' names an illness or an event and the rows without it are older than those with it, "
                "beyond chance: their age may be the age they were last seen, not at enrolment"
            )
            rank = 1
        if rank == 0:
            continue
        if older is not None:
            evidence.append(older[0])
        found.append((rank, AgeAtEvent(name, evidence, entry)))
    return max(found, key=lambda f: f[0], default=(0, None))[1]


def _censored_older(v: np.ndarray, e: np.ndarray) -> tuple[str, bool] | None:
    """In words, that the rows without the event are at least as old (median) as those with it, and
    whether beyond chance (a one-sided rank test below :data:`OLDER_P`: an age unrelated to the
    outcome is as often older as younger on the rows without it)."""
    ok = np.isfinite(v) & np.isfinite(e)
    without, with_ = v[ok & (e == 0)], v[ok & (e == 1)]
    if len(without) < MIN_EVENTS or len(with_) < MIN_EVENTS:
        return None
    a, b = float(np.median(without)), float(np.median(with_))
    if a < b:
        return None
    p = float(mannwhitneyu(without, with_, alternative="greater").pvalue)
    return (
        f"the rows without the event are as old or older (median {a:.3g} against {b:.3g} with it; rank test "
        f"p = {p:.2g}): censored at the age they were last seen",
        p < OLDER_P,
    )


def _entry_of(name: str, v: np.ndarray, ages: dict[str, tuple[str, np.ndarray]]) -> str | None:
    """Another age at most ``name`` on every row and below it on many: the age at entry."""
    for other, (reading, w) in ages.items():
        if other == name or reading == "onset":
            continue
        ok = np.isfinite(v) & np.isfinite(w)
        if ok.sum() < MIN_ROWS:
            continue
        if (w[ok] <= v[ok]).mean() >= ENTRY_BELOW and (w[ok] < v[ok]).mean() >= ENTRY_STRICT:
            return other
    return None
