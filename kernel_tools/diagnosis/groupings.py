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

from kernel_tools.diagnosis import cluster_codes
from kernel_tools.diagnosis.columns import ColumnProfile
from kernel_tools.diagnosis.entity_evidence import not_an_entity, subject_ids
from kernel_tools.diagnosis.id_names import ENTITY_NAME, STRONG_ID_NAME
from kernel_tools.diagnosis.options import drop, keep
from kernel_tools.diagnosis.registry import KindData, declare
from kernel_tools.findings import Finding, Option
from kernel_tools.inferences import Alternative, Inference
from kernel_tools.vocabulary import Basis, Confidence, FindingKind, Gate, InferenceKind

# a unit of a study's design that holds several subjects: the matched sets, batches and litters of
# an experiment, the institutions subjects come through, and the areas a survey samples by (in the
# several languages and abbreviations tables are named in)
GROUP_WORDS = frozenset((
    "set matchset matched match pair batch lot plate site centre center centro clinic hospital hopital "
    "krankenhaus ospedale practice ward school escuela ecole schule scuola classroom teacher interviewer "
    "enumerator institution firm company employer workplace establishment department household hogar menage family familia "
    "famille litter herd farm block cluster stratum strata psu "
    # areas a survey samples by
    "village aldea dorf district distrito bezirk kreis region regione province provincia county commune comuna "
    "kommune gemeinde gemeente municipality municipio parish tract neighbourhood neighborhood barrio canton "
    "prefecture township town city locality localidad community").split())
# abbreviations that read as a group only with an id word after them (``dist`` alone is a distance,
# ``distno``, ``vill_num``, ``hhid`` are codes)
GROUP_ABBREVIATIONS = frozenset(
    "dist distr vil vill hh hhold sch hosp inst prov reg mun muni clust fam comm dept area ea loc".split())
# a word that declares a code, after the group word (``centre_id``, ``villnum``) or before it (``id_district``)
ID_WORD = re.compile(r"id|ids|no|nr|nro|num|numb|number|nbr|numero|nummer|code|codigo|cd|key", re.IGNORECASE)
RUN_ON_ID = re.compile(r"(?P<word>[a-z]+?)(?P<id>id|ids|no|nr|num|number|code|cd)", re.IGNORECASE)
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
    return group_word(name) is not None and not measures_a_group(name)


def _name_words(name: str) -> list[str]:
    """A name's words in any style: ``district_code``, ``DistrictCode``, ``district.code``."""
    return [w for w in re.split(r"[_\W]+|(?<=[a-z])(?=[A-Z])", name.strip()) if w]


def _group_parts(name: str) -> tuple[str, bool, list[str]] | None:
    """The name's head word with an id word taken off (``villnum`` -> ``vill``, ``id_district`` ->
    ``district``), whether there was one, and the words before the head."""
    words = _name_words(name)
    if not words:
        return None
    coded = False
    if len(words) > 1 and ID_WORD.fullmatch(words[-1]):
        words, coded = words[:-1], True
    elif len(words) > 1 and ID_WORD.fullmatch(words[0]):
        words, coded = words[1:], True
    head = words[-1].lower()
    if not coded and (m := RUN_ON_ID.fullmatch(head)) and (m["word"] in GROUP_WORDS or m["word"] in GROUP_ABBREVIATIONS):
        head, coded = m["word"], True
    return head, coded, words[:-1]


def group_word(name: str) -> str | None:
    """The word that names a unit holding several subjects (``district`` in ``DistrictCode``,
    ``vill`` in ``villnum``), a bare plural of one included (see :func:`measures_a_group`), or None.
    An abbreviation counts only with an id word (``dist`` alone is a distance, ``distno`` a code)."""
    parts = _group_parts(name)
    if parts is None:
        return None
    head, coded, _ = parts
    singular = head[:-1] if head.endswith("s") and head[:-1] in GROUP_WORDS else head
    if singular in GROUP_WORDS or (coded and head in GROUP_ABBREVIATIONS):
        return singular
    return None


def measures_a_group(name: str) -> bool:
    """Whether a name ending in a group word names a measurement of that unit, not the unit: a
    word before it qualifies it (``economic.cond.household``, ``income_family``) or the word is a
    bare plural, a count of units (``Hospitals``)."""
    parts = _group_parts(name)
    if parts is None:
        return False
    head, _, before = parts
    # a plural with an id word after it names codes (``centres_id``); before it, a count (``num_villages``)
    last = _name_words(name)[-1]
    plural = head.endswith("s") and head[:-1] in GROUP_WORDS and not (ID_WORD.fullmatch(last) and last.lower() != head)
    return plural or any(MEASURE_WORD.match(w) for w in before)


def group_evidence(df: pd.DataFrame, prof: ColumnProfile) -> dict | None:
    """The data's evidence that a column groups rows (whole numbers or short codes, a few rows
    per value, at least three values), or None."""
    if prof.n_present < 10 or prof.nunique < MIN_GROUPS:
        return None
    if prof.kind == "numeric":
        if not prof.is_integer:
            return None
    elif not (prof.kind == "categorical" and prof.parsed_as in (None, "numeric") and prof.mean_length < 40
              and _codes(prof.counts.index.to_series() if prof.counts is not None else df[prof.name])):
        return None
    # a text column's counts are in its profile
    sizes = prof.counts if prof.counts is not None else df[prof.name].value_counts(dropna=True)
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
                   exclude: set[str], entity: str | None = None) -> tuple[list[Finding], list[Inference]]:
    """A finding and a structural question (an :class:`Inference` of low confidence) for each
    column that identifies a group of subjects and is not in ``exclude`` (the entity, its visit,
    the target, the columns already flagged as identifiers): named as one and grouping rows, or
    found from the data alone (:mod:`.cluster_codes`: its levels fix other columns, or rows
    sharing a level are alike in a way its values' order does not explain)."""
    subjects = subject_ids(df, profiles, {target} if target else set())
    others = [c for c, p in profiles.items() if c not in exclude and c != target and p.kind != "empty"]
    units: pd.DataFrame | None = None  # one row per entity, made once when a column is tried from its data
    found: dict[str, dict] = {}
    for name, prof in profiles.items():
        if name in exclude or name == target:
            continue
        named = named_as_group(name)
        if not named and (named_as_value(name) or not cluster_codes.candidate(prof)):
            continue
        evidence = group_evidence(df, prof)
        if evidence is None or not_an_entity(df, profiles, name, target) is not None:
            continue
        if not named:
            units = cluster_codes.units(df, entity) if units is None else units
            data = cluster_codes.cluster_evidence(units, profiles, name, target, [c for c in others if c != name])
            if data is None:
                continue
            evidence.update(data)
        if subjects and subjects[0] != name:
            evidence["subject_id"] = subjects[0]
        found[name] = evidence
    if units is not None:
        for name, evidence in list(found.items()):
            # a column that fixes a named grouping and has no more levels than it is that grouping's
            # label or one of its covariates (a district's population beside the district's code)
            if any(c in found and not _from_data(found[c]) and units[name].nunique() <= units[c].nunique()
                   for c in evidence.get("determines", [])):
                del found[name]
    return [_finding(n, ev) for n, ev in found.items()], [_question(n, ev) for n, ev in found.items()]


# a name that says the column holds a value, not a code: tried as a code only when its name says so
VALUE_NAME = re.compile(r"(^|[_\W])(dist|distance|pop|population|income|area|size|length|height|weight|price|cost|"
                        r"amount|wage|salary|score|rate|age|count)([_\W]|$)", re.IGNORECASE)


def named_as_value(name: str) -> bool:
    """Whether the name says a count, a size, a measure of a unit or another value (not tried as a
    code from its data: a unit's covariate is as alike within the unit as its code)."""
    name = name.strip()
    return bool(COUNT_NAME.search(name) or VALUE_NAME.search(name)) or (
        group_word(name) is not None and measures_a_group(name))


def _from_data(ev: dict) -> bool:
    """Whether the grouping was found from its data alone (no name says it)."""
    return "determines" in ev or "alike" in ev


def _data_words(name: str, ev: dict) -> str:
    """What the data say of a code no name declares."""
    if ev.get("determines"):
        fixed = ", ".join(f"'{c}'" for c in ev["determines"][:3])
        return (f"each value of '{name}' fixes {fixed} (the same within each of its {ev['groups']} values, in no "
                "order of its values): the covariates of a unit its rows belong to (a class, a school, an area)")
    alike = ev["alike"]
    return (f"rows sharing a value of '{name}' are alike in '{alike['column']}' (intraclass correlation "
            f"{alike['icc']:.2f}), in no order of its values: the rows of one unit (a class, a school, an area)")


def _words(name: str, ev: dict) -> list[str]:
    said = _data_words(name, ev) if _from_data(ev) else f"'{name}' is named as an identifier"
    words = [said, f"{ev['groups']} values for {ev['rows']} rows "
             f"({ev['rows_per_group_mean']:g} each on average, up to {ev['rows_per_group_max']}): it groups rows"]
    if ev.get("subject_id"):
        words.append(f"each row has its own '{ev['subject_id']}': the rows of one group are different subjects")
    if ev["missing"]:
        words.append(f"{ev['missing']} rows have none (rows outside any group)")
    return words


def _finding(name: str, ev: dict) -> Finding:
    words = _words(name, ev)
    said = words if _from_data(ev) else words[1:]  # what no name says, the data do
    summary = (f"'{name}' identifies a group of rows, not a measurement ({'; '.join(said)}): a matched set, a "
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
