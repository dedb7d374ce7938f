"""Columns that identify a group of subjects rather than the subject: a matched set, a batch, a
site, a family.

Such a column is not the entity (its rows are different subjects) and not a measurement: as a
number it means nothing to a model, and it can leak the study's design (the cases and controls of
one matched set share their outcome's odds, a batch its lab's bias). What it is for — grouping the
split so that a group stays on one side, or nothing — only an expert can say, so it is asked,
never kept silently. A column is taken for one only on both kinds of evidence: its name says it
identifies something (``case.id``, ``batch``, ``centre``) and its data say so too (whole numbers
or codes, several rows per value, not a time or a score). Either alone is not enough: a 1-5 score,
a clinic's size or a year repeats like a group id, and a column named ``..._no`` may be a count.

A grouping of subjects is a code shared by a few rows each (the sets of a matched study, the
litters of an experiment, the centres of a trial), not a handful of levels one of which holds a
large share of the rows: a quarter of all rows under one value is a level of a scale or a
category (a 1-5 rating, years of schooling, a number of hospitals), and a split grouped by it
would leave too few groups to cross-validate. A name can say the same: a group word that another
word qualifies names a measurement *of* that unit (``economic.cond.household``: the household's
economic condition, ``hospital_type``, ``school.size``), and a bare plural counts units
(``Hospitals``: how many). A name that adds an id suffix (``centre_id``, ``set_no``) declares a
code whatever its levels hold.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from kernel_tools.diagnosis.columns import ColumnProfile
from kernel_tools.diagnosis.entity_evidence import not_an_entity, subject_ids
from kernel_tools.diagnosis.id_names import ENTITY_NAME, STRONG_ID_NAME
from kernel_tools.diagnosis.options import drop, keep
from kernel_tools.diagnosis.registry import KindData, declare
from kernel_tools.findings import Finding, Option
from kernel_tools.inferences import Alternative, Inference
from kernel_tools.vocabulary import Basis, Confidence, FindingKind, Gate, InferenceKind

# a unit of a study's design that holds several subjects
GROUP_NAME = re.compile(
    r"(^|[_\W])(set|matchset|matched|match|pair|batch|lot|plate|site|centre|center|clinic|hospital|practice|"
    r"ward|school|village|household|family|litter|herd|farm|cluster|stratum|strata)"
    r"s?([_\W]?(id|ids|no|nr|num|number|code|key))?$",
    re.IGNORECASE,
)
# a count or a size is not an id, whatever its name ends with ("n_children", "clinic_size")
COUNT_NAME = re.compile(r"(^|[_\W])(n|count|size|total|nb|number[_\W]?of|num[_\W]?of)([_\W]|$)|size$", re.IGNORECASE)
# a word that, before the group word, makes the name a measurement of that unit
MEASURE_WORD = re.compile(
    r"^(cond|condition|conditions|score|rating|rate|income|wealth|size|type|kind|status|level|rank|grade|"
    r"quality|satisfaction|index|class|category|composition|structure|expenditure|spending|density|"
    r"distance|economic|financial|social|health|mean|avg|average|median|pct|percent|prop|share|ratio)$",
    re.IGNORECASE,
)
# an id suffix after the group word: the name declares a code (``centre_id``, ``set_no``)
ID_SUFFIX = re.compile(r"[_\W]?(id|ids|no|nr|num|number|code|key)$", re.IGNORECASE)
MIN_GROUPS = 3  # two values are a yes/no, not groups
LEVEL_SHARE = 0.25  # one value holding this share of the rows is a level of a scale or category, not a group
SHARED_ROWS = 0.2  # share of rows whose value another row shares: it groups rows

declare(FindingKind.GROUPING_COLUMN, KindData(chart=None, basis=Basis.WHOLE_DATA))


def named_as_group(name: str) -> bool:
    """Whether the name says the column identifies something (an id, a unit, a group)."""
    name = name.strip()
    if COUNT_NAME.search(name):
        return False
    # a bare plural of a unit counts units ("PUPILS", "patients": how many), as for group words
    if name.lower().endswith("s") and ENTITY_NAME.fullmatch(name[:-1]) and not ID_SUFFIX.search(name):
        return False
    if STRONG_ID_NAME.search(name) or ENTITY_NAME.search(name):
        return True
    return bool(GROUP_NAME.search(name)) and not measures_a_group(name)


def measures_a_group(name: str) -> bool:
    """Whether a name ending in a group word names a measurement of that unit, not the unit: a
    word before it qualifies it (``economic.cond.household``, ``income_family``) or the word is a
    bare plural, a count of units (``Hospitals``)."""
    words = [w for w in re.split(r"[_\W]+|(?<=[a-z])(?=[A-Z])", name.strip()) if w]
    if not words:
        return False
    if ID_SUFFIX.fullmatch(words[-1]) and len(words) > 1:
        words = words[:-1]
    head = words[-1]
    plural = head.lower().endswith("s") and not ID_SUFFIX.search(name) and GROUP_NAME.search(head[:-1]) is not None
    return plural or any(MEASURE_WORD.match(w) for w in words[:-1])


def group_evidence(df: pd.DataFrame, prof: ColumnProfile) -> dict | None:
    """The data's evidence that a column groups rows (whole numbers or short codes, a few rows
    per value, at least three values), or None."""
    if prof.n_present < 10 or prof.nunique < MIN_GROUPS:
        return None
    if prof.kind == "numeric":
        if not prof.is_integer:
            return None
    elif not (prof.kind == "categorical" and prof.parsed_as in (None, "numeric") and prof.mean_length < 40
              and _codes(df[prof.name])):
        return None
    sizes = df[prof.name].value_counts(dropna=True)
    shared = float(sizes[sizes > 1].sum() / max(prof.n_present, 1))
    if shared < SHARED_ROWS:
        return None
    if float(sizes.iloc[0]) / max(prof.n_present, 1) >= LEVEL_SHARE and not ID_SUFFIX.search(prof.name.strip()):
        return None  # a level of a scale or a category (see the module docstring)
    return {"groups": int(sizes.size), "rows": int(prof.n_present), "rows_per_group_mean": round(float(sizes.mean()), 2),
            "rows_per_group_max": int(sizes.max()), "share_rows_in_shared_groups": round(shared, 3),
            "missing": int(prof.n_missing)}


def _codes(values: pd.Series) -> bool:
    """Whether text labels are codes (most hold a digit: S-003, 17B), not words: a tumour's 'site'
    or a 'centre' named by its town is a category an expert may well want as a feature."""
    levels = pd.Series(values.dropna().astype(str).unique()[:500])
    return bool(levels.size) and float(levels.str.contains(r"\d").mean()) >= 0.8


def find_groupings(df: pd.DataFrame, profiles: dict[str, ColumnProfile], target: str | None,
                   exclude: set[str]) -> tuple[list[Finding], list[Inference]]:
    """A finding and a structural question (an :class:`Inference` of low confidence) for each
    column that identifies a group of subjects and is not in ``exclude`` (the entity, its visit,
    the target, the columns already flagged as identifiers)."""
    subjects = subject_ids(df, profiles, {target} if target else set())
    findings, asked = [], []
    for name, prof in profiles.items():
        if name in exclude or name == target or not named_as_group(name):
            continue
        evidence = group_evidence(df, prof)
        if evidence is None or not_an_entity(df, profiles, name, target) is not None:
            continue
        if subjects and subjects[0] != name:
            evidence["subject_id"] = subjects[0]
        findings.append(_finding(name, evidence))
        asked.append(_question(name, evidence))
    return findings, asked


def _words(name: str, ev: dict) -> list[str]:
    words = [f"'{name}' is named as an identifier", f"{ev['groups']} values for {ev['rows']} rows "
             f"({ev['rows_per_group_mean']:g} each on average, up to {ev['rows_per_group_max']}): it groups rows"]
    if ev.get("subject_id"):
        words.append(f"each row has its own '{ev['subject_id']}': the rows of one group are different subjects")
    if ev["missing"]:
        words.append(f"{ev['missing']} rows have none (rows outside any group)")
    return words


def _finding(name: str, ev: dict) -> Finding:
    words = _words(name, ev)
    summary = (f"'{name}' identifies a group of rows, not a measurement ({'; '.join(words[1:])}): a matched set, a "
               "batch, a site or a family. As a number it means nothing to a model and can leak the study's design; "
               "drop it, or keep it aside to group the split, unless it truly measures something.")
    group = Option("group", "Group the split by it",
                   f"Keep '{name}' out of the features and keep each of its groups on one side of the split and of "
                   "every cross-validation fold (rows without a value are each a group of their own).",
                   "fewer independent groups than rows: the estimate's interval is wider", False, None)
    return Finding(FindingKind.GROUPING_COLUMN, [name], "warning", summary, ev, [
        drop([name], "identifies a group of rows, not a measurement",
             "none if it only labels groups; if rows of one group are alike, group the split by it instead"),
        group,
        keep("Keep it as a feature: it measures something known at prediction time.",
             "an identifier as a number is meaningless and may carry the study's design into the model",
             label="Keep as a feature")], Gate.IDENTIFIERS)


def _question(name: str, ev: dict) -> Inference:
    """What becomes of the column: asked (low confidence) until a person answers."""
    return Inference(InferenceKind.GROUPING, "drop", Confidence.LOW, _words(name, ev), [
        Alternative("group", ["keep it aside and keep each group on one side of the split"], 0.5),
        Alternative("keep", ["a feature: only if it measures something"], 0.0)], subject=name,
        details={k: (int(v) if isinstance(v, (int, np.integer)) else v) for k, v in ev.items()})
