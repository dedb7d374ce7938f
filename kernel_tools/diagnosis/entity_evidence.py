"""Whether a repeating column can be the entity, and how sure the choice of entity is.

The entity decides what a row is (one of a subject's records) and so how rows may be grouped or
aggregated: aggregating by a wrong column merges different subjects into one row. So a column
is an entity id only when it looks like one by its data (whole numbers or codes, no missing
ids, not a measurement, not derived from the target) and the choice is confident only when its
name says so too and no other column comes close. Otherwise the choice is asked.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from kernel_tools.diagnosis.columns import ColumnProfile, numeric_values
from kernel_tools.diagnosis.id_names import ENTITY_NAME, STRONG_ID_NAME, looks_like_id_name
from kernel_tools.diagnosis.task import DURATION_NAME
from kernel_tools.inferences import Alternative, Inference
from kernel_tools.vocabulary import Confidence, InferenceKind

TIME_WORDS = re.compile(r"time|date|day|week|month|year|period|wave|quarter|duration|age$|^age", re.IGNORECASE)
# a subject's own id, named as such: when it is unique per row, each row is its own subject
SUBJECT_ID = re.compile(r"^(id|pid|ptid|patid|subjid|subject|patient|participant|person|individual|respondent|"
                        r"woman|man|child|mother|infant|pupil|student|worker|employee|member|client|customer)"
                        r"([_\W]?(id|no|nr|num|number))?$", re.IGNORECASE)
COARSE_LEVELS = 20  # fewer levels than this, or a typical level holding COARSE_SHARE of the rows: a category
COARSE_SHARE = 0.05
NESTING_SAMPLE = 50_000
# who rates in a crossed design: named so, one side of a pair that meets once is the rater
RATER_NAME = re.compile(r"^(rater|judge|taster|assessor|panelist|reader|observer|examiner|annotator|coder|"
                        r"evaluator)s?([_\W]?(id|no|nr|code))?$", re.IGNORECASE)
CROSSED_COVER = 0.8  # share of all rater × item pairs present, each about once: a crossed design
DERIVED = 0.6  # |Spearman| with the target: the column moves with the outcome
CLOSE = 1.0  # two candidates' scores closer than this are a question, not a choice
# a value of a coding system (an injury description, a diagnosis, a type): many subjects share each value
CODE_NAME = re.compile(r"(code|codes|cd|desc|des|descr|description|type|diag|diagnosis|dx|icd\d*|cpt|drg)$|"
                       r"(^|[_\W])(code|desc|description|type|diagnosis|dx|icd\d*)([_\W]|$)", re.IGNORECASE)
# ...unless the name says whose code it is: a site's or a hospital's code groups rows of one unit
UNIT_WORD = re.compile(r"hosp|site|cent(er|re)|clinic|school|firm|famil|household|ward|provider|doctor|store|"
                       r"county|state|region|country|village|farm|plot", re.IGNORECASE)
CODE_DIGITS = (100, 99_999)  # 3-5 digit codes
# a level that pools what is left (a recoding of names into a few levels and 'Other'): no id has one
CATCH_ALL = re.compile(
    r"^(other|others|unknown|unk|misc|miscellaneous|rest|remainder|various|mixed|several|multiple|all others?|"
    r"otro|otros|otra|otras|autre|autres|andere|sonstige|altro|altri|outro|outros|overig|overige|övrig[ae]?)$",
    re.IGNORECASE,
)


def not_an_entity(df: pd.DataFrame, profiles: dict[str, ColumnProfile], name: str,
                  target: str | None) -> str | None:

    """Why the repeating column ``name`` cannot be the entity (a time, a measurement, derived
    from the target), or None."""
    prof = profiles[name]
    named = bool(looks_like_id_name(name) or ENTITY_NAME.search(name) or RATER_NAME.search(name))
    if TIME_WORDS.search(name) or DURATION_NAME.search(name):
        return "named as a time or an age: a measurement, not a subject"
    if (why := coding_system(df, prof, name)) is not None:
        return why
    if (why := catch_all_level(df, prof, name)) is not None:
        return why
    if prof.kind == "categorical" and prof.parsed_as == "numeric":
        v = numeric_values(df[name], prof)
        present = v[np.isfinite(v)]
        if present.size and not np.array_equal(present, np.round(present)):
            return "numbers with decimals written as text: a measurement, not a code"
        if prof.na_tokens:
            return f"numbers written as text with {prof.na_tokens[:2]} for missing: a measurement stored as text"
    # a code named as an id, a unit (Dog 1..10) or a rater (judge 1..9) may rank their levels by chance
    if named or target is None or target not in profiles:
        return None
    if profiles[target].holds_numbers and prof.holds_numbers:
        x = numeric_values(df[name], prof)
        y = numeric_values(df[target], profiles[target])
        ok = np.isfinite(x) & np.isfinite(y)
        if ok.sum() >= 20 and np.ptp(x[ok]) > 0 and np.ptp(y[ok]) > 0:
            rho = float(spearmanr(x[ok], y[ok]).statistic)
            if abs(rho) >= DERIVED:
                return f"moves with the target '{target}' (Spearman {rho:.2f}): a score derived from the outcome"
    return None


def coding_system(df: pd.DataFrame, prof: ColumnProfile, name: str) -> str | None:
    """Why ``name`` holds the values of a coding system (a 3-5 digit injury or diagnosis code, named as a
    code, a description or a type), not one subject's id: every subject with that injury shares it."""
    if not CODE_NAME.search(name) or UNIT_WORD.search(name) or unit_named(name):
        return None
    if prof.holds_numbers:
        v = numeric_values(df[name], prof)
        present = v[np.isfinite(v)]
        if not present.size or not np.array_equal(present, np.round(present)) or not (
                CODE_DIGITS[0] <= present.min() and present.max() <= CODE_DIGITS[1]):
            return None
        kind = "whole numbers of 3-5 digits"
    elif prof.kind == "categorical" and prof.mean_length <= 8:
        kind = "short codes"
    else:
        return None
    return (f"named as a code, a description or a type and holding {kind}: the values of a coding system, "
            "shared by every subject they describe, not one subject's id")


def catch_all_level(df: pd.DataFrame, prof: ColumnProfile, name: str) -> str | None:
    """Why a column with a level that pools the rest ('Other', 'Unknown', 'Misc') shared by several
    rows is a grouping of units, not a unit's id: no subject is called 'Other'."""
    if prof.kind != "categorical" or prof.counts is None:
        return None
    shared = prof.counts[prof.counts >= 2]
    pooled = shared[shared.index.astype(str).str.strip().str.fullmatch(CATCH_ALL)]
    if pooled.empty:
        return None
    level, count = pooled.index[0], int(pooled.iloc[0])
    return (f"'{name}' has a catch-all level '{level}' ({count} rows): a grouping of several units with the "
            "rest pooled, not one subject's id")


def measured_with_gaps(profiles: dict[str, ColumnProfile], name: str) -> str | None:
    """Why a number with missing values, not named as an id, a unit or a rater, cannot be the
    entity: an id is never missing, a measurement often is (a lab value joined in for some
    subjects repeats by chance, and the rows sharing it share its copy in the other file)."""
    prof = profiles[name]
    if not prof.n_missing or not prof.holds_numbers:
        return None
    if looks_like_id_name(name) or ENTITY_NAME.search(name) or RATER_NAME.search(name):
        return None
    return f"a number missing on {prof.n_missing} rows and not named as an id: a measurement (an id is never missing)"


def copies_of(df: pd.DataFrame, key: str, columns: list[str]) -> list[str]:
    """The columns equal to ``key`` wherever both are filled (the same value stored twice, as a
    join of a summary leaves it), or ``key`` rewritten (its logarithm, in other units: one value
    for each of its values, in the same order): rows sharing ``key`` share them by construction,
    no evidence."""
    x = pd.to_numeric(df[key], errors="coerce")
    out = []
    for c in columns:
        y = pd.to_numeric(df[c], errors="coerce")
        both = x.notna() & y.notna()
        if both.sum() >= 10 and (float(np.isclose(x[both], y[both]).mean()) >= 0.95 or _rewritten(x[both], y[both])):
            out.append(c)
    return out


def _rewritten(x: pd.Series, y: pd.Series) -> bool:
    """Whether ``y`` is a one-to-one function of ``x`` that keeps or reverses its order."""
    pairs = pd.DataFrame({"x": x.to_numpy(), "y": y.to_numpy()}).drop_duplicates()
    if len(pairs) < 3 or pairs["x"].nunique() != len(pairs) or pairs["y"].nunique() != len(pairs):
        return False
    order = pairs.sort_values("x")["y"].to_numpy()
    steps = np.diff(order)
    return bool((steps > 0).all() or (steps < 0).all())


def subject_ids(df: pd.DataFrame, profiles: dict[str, ColumnProfile], exclude: set[str]) -> list[str]:
    """Columns named as a subject's id that are unique on every row, with no missing value:
    then each row is its own subject, and a column that repeats groups different subjects (a
    matched set, a family, a centre), it does not hold one subject's records."""
    return [c for c, p in profiles.items() if c not in exclude and SUBJECT_ID.search(c.strip())
            and p.n_missing == 0 and p.nunique == len(df) and len(df) >= 20]


def entity_inference(chosen: str | None, judged: dict[str, float], rejected: dict[str, str],
                     evidence: list[str], settled: bool, given: bool, missing: int = 0) -> Inference:
    """The entity, its confidence and its alternatives.

    ``judged``: the score of every candidate accepted as an entity; ``rejected``: why each other
    candidate is not one; ``evidence``: the chosen one's in words; ``settled``: its evidence is
    clear (named as an id, no missing ids, more than shared attributes); ``missing``: its rows
    without an id (``details["missing_ids"]``: what becomes of them is asked)."""
    details = {"missing_ids": missing} if chosen is not None and missing else {}
    if given:  # rows without the given id are a question the user did not answer by naming it
        words = [f"'{chosen}' given as the entity"]
        if details:
            return Inference(InferenceKind.ENTITY, chosen, Confidence.LOW, [missing_words(chosen, missing), *words],
                             [Alternative(None, ["no entity: each row is its own subject"], 0.0)], details=details)
        return Inference(InferenceKind.ENTITY, chosen, Confidence.GIVEN, words)
    ranked = sorted(((k, s) for k, s in judged.items() if k != chosen), key=lambda kv: -kv[1])
    alternatives = [Alternative(k, [f"also repeats like an entity id (score {s:.2f})"], s) for k, s in ranked]
    alternatives += [Alternative(k, [f"not an entity: {why}"], 0.0) for k, why in rejected.items()]
    if chosen is None:
        close = [a for a in alternatives if a.score > 0]
        confidence = Confidence.LOW if close else Confidence.HIGH
        words = evidence or ["no column repeats like a subject's id: each row is its own subject"]
        return Inference(InferenceKind.ENTITY, None, confidence, words, alternatives)
    if details:  # first, so the verdict's short form says it
        evidence = [missing_words(chosen, missing), *evidence]
        settled = False
    rival = ranked[0][1] if ranked else None
    best = judged.get(chosen, 0.0)
    if rival is not None and best - rival < CLOSE:
        evidence = [*evidence, f"'{ranked[0][0]}' comes close (score {rival:.2f} against {best:.2f})"]
        settled = False
    alternatives.append(Alternative(None, ["no entity: each row is its own subject"], 0.0))
    return Inference(InferenceKind.ENTITY, chosen, Confidence.HIGH if settled else Confidence.LOW, evidence,
                     alternatives, details=details)


def missing_words(entity: str | None, missing: int) -> str:
    """The entity's rows without an id, in words."""
    return f"{missing} row{'s have' if missing != 1 else ' has'} no '{entity}': an id is never missing"


def unit_named(name: str) -> bool:
    """Named as the subject or unit a study measures again ('patient', 'Subject', 'id', 'Chick')."""
    return bool(ENTITY_NAME.search(name) or SUBJECT_ID.search(name.strip()) or STRONG_ID_NAME.search(name))


def coarse_category(df: pd.DataFrame, profiles: dict[str, ColumnProfile], name: str,
                    target: str | None) -> tuple[str, str | None] | None:
    """Why ``name`` is a category rather than a unit (few levels, each shared by a large share of
    the rows), with the finer id-like column nested in it (each of its values in one level of
    ``name``: countries in a region), or None. A column named as the unit is not asked about."""
    prof = profiles[name]
    share = float(prof.counts.median()) / max(prof.n_present, 1) if prof.counts is not None else 0.0
    if unit_named(name) or (prof.nunique >= COARSE_LEVELS and share < COARSE_SHARE):
        return None
    why = (f"'{name}' has {prof.nunique} levels, a typical one shared by {share:.0%} of the rows: "
           "a category, unless it names the unit whose rows must stay together")
    sample = df.iloc[:NESTING_SAMPLE]  # nesting in the whole table holds in any part of it
    for other, p in profiles.items():
        if other in (name, target) or p.nunique < 2 * prof.nunique or p.kind not in ("numeric", "categorical"):
            continue
        repeats = p.nunique <= 0.9 * p.n_present
        if not (repeats or looks_like_id_name(other)) or (p.kind == "numeric" and not p.is_integer):
            continue  # a row number or a measurement is nested in anything
        pairs = sample[[other, name]].dropna()
        if len(pairs) and float((pairs.groupby(other, sort=False)[name].nunique() <= 1).mean()) >= 0.99:
            return (f"a category of {prof.nunique} levels holding the finer '{other}' (each '{other}' lies in "
                    f"one '{name}'): a grouping of units, not the unit"), other
    return why, None


def crossed_pair(df: pd.DataFrame, profiles: dict[str, ColumnProfile], columns: list[str]) -> tuple[str, str] | None:
    """Two id-like columns, both text codes or one named as a unit or an id, whose every pair of values
    appears about once (each judge rates each wine): the rows are ratings, and rows of one
    rater or rows of one item must stay together — a choice the expert makes. The first of the
    pair returned is the one recommended."""
    for i, a in enumerate(columns):
        for b in columns[i + 1:]:
            na, nb = profiles[a].nunique, profiles[b].nunique
            codes = all(profiles[c].kind == "categorical" and profiles[c].parsed_as is None for c in (a, b))
            named = [unit_named(c) or bool(RATER_NAME.search(c)) or looks_like_id_name(c) for c in (a, b)]
            if min(na, nb) < 3 or not (codes or any(named)):
                continue
            pairs = df[[a, b]].dropna()
            cells = pairs.drop_duplicates().shape[0]
            if len(pairs) and cells >= CROSSED_COVER * na * nb and cells >= 0.95 * len(pairs):
                # the one named as a unit first, else the one with more levels: the few levels
                # of the other are more often the conditions compared (samples on each plate)
                ranks = [(unit_named(c) or bool(RATER_NAME.search(c)), n) for c, n in ((a, na), (b, nb))]
                return (a, b) if ranks[0] >= ranks[1] else (b, a)
    return None


def events_not_measures(df: pd.DataFrame, key: str, target: str | None) -> str | None:
    """Words when rows sharing ``key`` have outcomes no more alike than any two rows: events
    involving a thing (flights of one aircraft, orders of one product), perhaps not its repeated
    measures. Asked only for a column not named as a subject or unit (see :func:`unit_named`)."""
    if target is None or unit_named(key):
        return None
    pairs = df[[key, target]].dropna()
    y = pd.to_numeric(pairs[target], errors="coerce")
    if y.isna().mean() > 0.05:
        y = (pairs[target] == pairs[target].mode().iloc[0]).astype(float)  # classes: the commonest one
    groups = y.groupby(pairs[key].to_numpy(), sort=False)
    total = float(((y - y.mean()) ** 2).sum())
    k = groups.ngroups
    if total == 0 or len(y) <= k + 1:
        return None
    between = float((groups.size() * (groups.mean() - y.mean()) ** 2).sum()) / total
    chance = (k - 1) / (len(y) - 1)
    if between > chance + 0.05:
        return None
    return (f"rows sharing '{key}' have outcomes ('{target}') no more alike than any two rows (between-'{key}' "
            f"share of variance {between:.2f}, {chance:.2f} by chance): they may be events involving one "
            f"'{key}', not its repeated measures")


NUMBERED_SPAN = 1.5  # groups a value of the id lies in, on average: numbered again in each group
NUMBERED_COVER = 0.5  # ...but in at most this share of the groups: in most of them, a panel's time points
PAIR_UNIQUE = 0.95  # share of rows whose (group, id) pair is their own: each row a subject


def numbered_within(df: pd.DataFrame, profiles: dict[str, ColumnProfile], key: str,
                    columns: list[str]) -> dict | None:
    """The column ``key`` is numbered within (pupils numbered again in every school: 'student' 12
    in 31 schools), or None. Its rows share no attribute, its values recur across the levels of a
    grouping column, and within one level each value is (nearly always) one row, or the same
    rows again: the subject is the pair (group, id), not the id. The evidence in words, the
    group, and whether each pair is a single row (``unique_pairs``)."""
    sample = df.iloc[:NESTING_SAMPLE]
    best: dict | None = None
    for group in columns:
        prof = profiles[group]
        if (group == key or prof.nunique < 3 or prof.nunique >= profiles[key].nunique or prof.n_missing
                or TIME_WORDS.search(group)):
            continue
        if not (prof.kind == "numeric" and prof.is_integer) and not (
                prof.kind == "categorical" and prof.parsed_as in (None, "numeric") and prof.mean_length < 40):
            continue
        pairs = sample[[group, key]].dropna()
        if len(pairs) < 20:
            continue
        span = pairs.groupby(key, sort=False)[group].nunique()
        if float(span.mean()) < NUMBERED_SPAN or float(span.mean()) > NUMBERED_COVER * prof.nunique:
            continue  # in one group each, or in most of them (a subject at each time point of a panel)
        own = float((~pairs.duplicated(keep=False)).mean())
        if best is None or float(span.mean()) > best["span_mean"]:
            value, count = span.idxmax(), int(span.max())
            value = value.item() if hasattr(value, "item") else value
            best = {"group": group, "span_mean": round(float(span.mean()), 2), "unique_pairs": own >= PAIR_UNIQUE,
                    "distinct": int(profiles[key].nunique),
                    "words": (f"'{key}' {value} appears in {count} '{group}' levels ({float(span.mean()):.1f} on "
                              f"average): '{key}' is numbered again within each '{group}', so the subject is the "
                              f"pair ('{group}', '{key}')"
                              + (", and each pair is one row: each row its own subject" if own >= PAIR_UNIQUE
                                 else ""))}
    return best
