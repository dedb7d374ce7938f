"""Identifier columns and entities with several rows (repeated measurements).

An identifier is unique per row and carries no signal: a model that sees it memorises rows.
An entity id repeats: rows that share it also share baseline attributes (age, sex, treatment)
while a visit column (date, visit number, start time) orders them. Treating such rows as
independent inflates every validation score, so the split must be grouped or the rows
aggregated — a decision only the domain expert can make (which visit counts?).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from kernel_tools.diagnosis.blocks import find_blocks
from kernel_tools.diagnosis.columns import ColumnProfile, numeric_values, zero_padded
from kernel_tools.diagnosis.entity_evidence import (
    TIME_WORDS,
    coarse_category,
    copies_of,
    crossed_pair,
    entity_inference,
    events_not_measures,
    measured_with_gaps,
    not_an_entity,
    numbered_within,
    subject_ids,
)
from kernel_tools.diagnosis.id_names import ENTITY_NAME, STRONG_ID_NAME, counts_units, looks_like_id_name
from kernel_tools.diagnosis.options import call, drop, keep
from kernel_tools.diagnosis.registry import KindData, declare
from kernel_tools.findings import Finding, Option
from kernel_tools.inferences import Alternative, Inference
from kernel_tools.plurals import counted
from kernel_tools.vocabulary import Basis, Chart, Confidence, FindingKind, Gate, InferenceKind, TaskKind

# level labels that are codes for units: R1..R5, X01, S-003
CODE_VALUE = re.compile(r"^\s*([A-Za-z]{1,4})[-_ ]?\d+\s*$")
VISIT_NAME = re.compile(
    r"visit|time|date|day|week|month|year|start|stop|seq|order|wave|round|period|step|"
    r"(^|[_\W])(t|t0|t1|no|num|number|index)([_\W]|$)",
    re.IGNORECASE,
)
MAX_ENTITY_SAMPLE = 3000
VARYING_SHARE = 0.1  # a column that changes within this share of multi-record entities varies
CLOCK_WITHIN = 0.95  # share of records inside the follow-up, and of entities starting near 0
CLOCK_START_SHARE = 0.1  # a first visit within the first tenth of the follow-up is its start


@dataclass
class Entity:
    id: str | None = None
    visit: str | None = None
    evidence: dict = field(default_factory=dict)
    varying: list[str] = field(default_factory=list)  # columns that change between its records
    inference: Inference | None = None  # the choice, its confidence and the other candidates


def no_entity() -> Entity:
    """No entity, as the user said: each row is its own subject."""
    return Entity(inference=Inference(InferenceKind.ENTITY, None, Confidence.GIVEN,
                                      ["given: no entity, each row is its own subject"]))


def _is_id_like_kind(prof: ColumnProfile) -> bool:
    if prof.kind == "numeric":
        return prof.is_integer
    return prof.kind == "categorical" and prof.parsed_as in (None, "numeric") and prof.mean_length < 40


COMPOUND_BLOCKS = 0.95  # blocks of one whole part whose decimals count 1, 2, 3... in order


def _entity_dot_record(v: np.ndarray) -> str | None:
    """Numbers written 'entity.record' (R's row names of a long table: 1.1, 1.2, ..., 2.1, ...):
    the whole part runs in blocks, the decimals count the block's rows from 1 as R writes them
    (rows left out of a subset leave gaps). Read as numbers they look like a measurement with
    decimals, so the row label was kept as a feature; past nine records they are not even
    distinct ('1978.10' reads as 1978.1). The first :data:`DOT_RECORD_ROWS` rows are read."""
    v = v[:DOT_RECORD_ROWS]
    if len(v) < 20:
        return None
    whole = np.floor(v)
    starts = np.flatnonzero(np.r_[True, whole[1:] != whole[:-1]])
    if len(starts) != len(np.unique(whole)) or len(v) / len(starts) < 2:
        return None
    counted = [_records_counted(block) for block in np.split(v, starts[1:])[:-1] or [v]]
    return "row label 'entity.record'" if np.mean(counted) >= COMPOUND_BLOCKS else None


DOT_RECORD_ROWS = 20_000


def _records_counted(block: np.ndarray) -> bool:
    """Whether a block's decimals, as written, count its rows: 1, 2, ... (a trailing zero lost
    in reading: '.10' read as '.1' is record 10 when record 9 came before), rising with gaps of
    rows a subset left out (up to three in four of them), often one by one."""
    previous, steps = 0, 0
    for value in block:
        written = repr(float(value))
        decimals = written.partition(".")[2]
        if not decimals.isdigit() or decimals == "0":
            return False
        record = int(decimals)
        while record <= previous:
            record *= 10
        if record > 4 * len(block) + 9:
            return False
        steps += record == previous + 1
        previous = record
    return steps >= 0.25 * len(block)


def _unique_integer_reason(name: str, v: np.ndarray, nunique: int, hint: bool) -> str | None:
    """Why a column of distinct integers is an identifier, or None when it is a measurement.

    Labels that rise with the rows from near the start of their range are row numbers, even
    with gaps (the rows kept of a longer table); 1..n in another order is a row number of a
    re-sorted table (unless it relates to the other columns: then it is a ranking, see
    :func:`_ranks_something`). A sequence named as a time (year, period) is a trend; sparse
    values far apart are a measurement unless they are large codes or named as an id.
    """
    present = v[~np.isnan(v)]
    span = present.max() - present.min() + 1
    rising = present.size >= 3 and float((np.diff(present) > 0).mean()) >= 0.95
    dense = span <= 1.5 * nunique
    if hint or INDEX_NAME.search(name) or ROW_NUMBER_NAME.search(name.strip()):
        return "row number" if dense or rising else "unique integer code"
    if TIME_NAME.search(name):
        return None
    if rising and present.min() <= max(10, 0.05 * span):
        return "row number"
    if dense and not RANK_NAME.search(name):  # 1..n re-sorted, unless it says it is a ranking
        return "row number (rows re-sorted)"
    if np.nanmin(np.abs(present)) >= 10_000:
        return "unique integer code"
    return None


def _ranks_something(df: pd.DataFrame, profiles: dict[str, ColumnProfile], name: str) -> bool:
    """A permutation of 1..n that moves with another column (|Spearman| >= 0.3) ranks
    something measured; the row numbers of a re-sorted table move with nothing."""
    sample = df.iloc[: min(len(df), 5000)]
    own = numeric_values(sample[name], profiles[name])
    for other, prof in profiles.items():
        if other == name or prof.kind != "numeric" or prof.nunique < 3 or looks_like_id_name(other):
            continue  # another identifier moving with it (rownames ~ 2 x id) is no measurement
        values = numeric_values(sample[other], prof)
        ok = np.isfinite(own) & np.isfinite(values)
        if ok.sum() >= 10 and abs(spearmanr(own[ok], values[ok]).statistic) >= 0.3:
            return True
    return False


RANK_NAME = re.compile(r"rank|order|position|place|score|grade|level|rating", re.IGNORECASE)
TIME_NAME = re.compile(r"time|date|day|week|month|year|period|wave|quarter", re.IGNORECASE)
# a saved DataFrame index, or the row names of an R export
INDEX_NAME = re.compile(r"^(unnamed.*|index|level_0|row\.?_?names?|rownum|)$", re.IGNORECASE)
# a per-row running number as tables name it ("no.", "Nr", "#", "obs", "case"): a row label when
# unique, whatever its order or what it moves with (a table sorted by a measurement, then numbered)
ROW_NUMBER_NAME = re.compile(r"^(no|nr|#|obs|case|row|rec|record|line|serial|s\.?no)\.?$", re.IGNORECASE)


# the first column of an R export (write.csv's 'X', readr's '...1', read.table's 'V1'): a row label
# only when it holds exactly 1..n in row order, as those writers put it
EXPORT_ROW_NAME = re.compile(r"^(x|\.\.\.1|v1)$", re.IGNORECASE)


def _tiny_row_label(name: str, s: pd.Series) -> bool:
    """On a table of under 20 rows, values alone cannot tell a code from a measurement: a row
    label is known by its name (a running number, a saved index, an export's first column)."""
    name = name.strip()
    if looks_like_id_name(name) or INDEX_NAME.search(name) or ROW_NUMBER_NAME.search(name):
        return True
    values = pd.to_numeric(s, errors="coerce").to_numpy()
    return bool(EXPORT_ROW_NAME.search(name)) and np.array_equal(values, np.arange(1, len(s) + 1))


# both found by the runner's structural checks, before the registered detectors run
declare(FindingKind.ID_COLUMN, KindData(chart=None, basis=Basis.WHOLE_DATA))
declare(FindingKind.REPEATED_MEASUREMENTS, KindData(chart=Chart.ROWS_PER_ENTITY, basis=Basis.WHOLE_DATA))


def find_id_columns(
    df: pd.DataFrame, profiles: dict[str, ColumnProfile], exclude: set[str], score_fn
) -> list[Finding]:
    """Columns unique per row (or near-unique names/codes) that predict nothing."""
    findings = []
    n = len(df)
    for name, prof in profiles.items():
        # numbers with decimals only as 'entity.record' labels (see _entity_dot_record)
        if name in exclude or not (_is_id_like_kind(prof) or prof.kind == "numeric"):
            continue
        if n < 20 and not _tiny_row_label(name, df[name]):
            continue  # too few rows to tell a code from a measurement by its values
        # near-unique: an identifier survives a few duplicated rows
        unique = prof.nunique >= 0.95 * prof.n_present and prof.n_present >= 0.95 * n
        hint = looks_like_id_name(name)
        reason = None
        numbers = unique and (prof.kind == "numeric" or (prof.parsed_as == "numeric" and not zero_padded(prof)))
        if numbers:  # numbers, or numbers written as text ("$52,341", "75.3 kg"): codes only if whole
            v = numeric_values(df[name], prof)
            present = v[~np.isnan(v)]
            whole = bool(np.all(present == np.round(present)))
            reason = _unique_integer_reason(name, v, prof.nunique, hint) if whole else _entity_dot_record(present)
            if (reason == "row number (rows re-sorted)" and not ROW_NUMBER_NAME.search(name.strip())
                    and _ranks_something(df, profiles, name)):
                reason = None
        elif unique:
            reason = "unique text code"
        elif prof.kind == "numeric" and prof.n_missing == 0 and prof.nunique >= 0.5 * n:
            # 'entity.record' labels past nine records per entity collide as numbers (x.1 = x.10)
            v = numeric_values(df[name], prof)
            reason = None if np.all(v == np.round(v)) else _entity_dot_record(v)
        elif (prof.kind == "categorical" and prof.parsed_as is None and hint
              and prof.nunique >= max(100, 0.2 * prof.n_present)):
            reason = "high-cardinality name or code"
        if reason is None:
            continue
        score = score_fn(name)
        if score is not None and score > 0.6 and reason.startswith("high"):
            continue
        evidence = {"distinct": prof.nunique, "rows": n, "unique_share": prof.nunique / max(n, 1),
                    "looks_like": reason}
        if score is not None:
            evidence["single_feature_score"] = round(score, 4)
        findings.append(Finding(
            "id_column", [name], "warning",
            f"'{name}' is an identifier ({reason}): it names rows rather than describing them, "
            "so a model can only memorise it.",
            evidence,
            [drop([name], "identifier", "none if it is only a label; keep it aside if you need it "
                  "to join or to group rows"),
             keep("Keep it as a feature: it measures something known at prediction time.",
                  "an identifier as a feature makes the model memorise rows; the result is not valid")],
            "identifiers",
        ))
    return findings


def numbered_ids(entity: Entity, n: int) -> list[Finding]:
    """An id numbered again within each group (see :func:`.entity_evidence.numbered_within`) whose
    pairs are one row each: no subject's id, a label of rows within the group. Found as a column
    of the group's kind (asked at the same gate, before the group itself): dropped once its
    group has gone, it would repeat like a subject's id and be taken for one."""
    nested = entity.evidence.get("numbered_within")
    if not nested:
        return []
    name, group = nested["column"], nested["group"]
    reason = f"numbered within '{group}'"
    return [Finding(
        FindingKind.GROUPING_COLUMN, [name], "warning",
        f"'{name}' is an identifier ({reason}): {nested['words']}. As a number it means nothing to a model.",
        {"distinct": nested["distinct"], "rows": n, "unique_share": round(nested["distinct"] / max(n, 1), 4),
         "looks_like": reason, "group": group},
        [drop([name], "identifier numbered within a group", "none: with its group it only names a row"),
         keep("Keep it as a feature: it measures something known at prediction time.",
              "an identifier as a feature makes the model memorise rows; the result is not valid",
              label="Keep as a feature")],
        Gate.IDENTIFIERS,
    )]


def _unit_codes(prof: ColumnProfile) -> bool:
    """Whether a text column's levels are unit codes: one letter prefix and a number (R1..R5,
    X01, S-003). Plain integers are not enough: counts, scores and ages are integers too."""
    if prof.kind != "categorical":
        return False
    keys = [str(k) for k in (prof.counts.index[:200] if prof.counts is not None else [])]
    matches = [CODE_VALUE.match(k) for k in keys]
    if not keys or not all(matches):
        return False
    return len({m.group(1).lower() for m in matches if m}) == 1


def _crossed_design(df: pd.DataFrame, key: str, columns: list[str], profiles: dict[str, ColumnProfile],
                    nun: pd.DataFrame) -> list[str]:
    """The columns of a within-unit design, or [] when there is none.

    Every unit measured under the same conditions (each animal at six doses under two
    treatments; each child at two ages, five loudness levels and two noises) is the shape of
    repeated measurements even when no column is a date: the rows of one unit are told apart by
    a few low-cardinality columns, and most units share the same combinations.
    """
    varying = [c for c in columns if 2 <= profiles[c].nunique <= 30 and float((nun[c] > 1).mean()) >= 0.5]
    rows = df[df[key].isin(nun.index)]
    if len(rows) < 6:
        return []
    design: list[str] = []
    repeated = float(rows.duplicated([key]).mean())
    for _ in range(4):  # add the column that best tells a unit's rows apart, fewest levels first
        if repeated <= 0.05 or not varying:
            break
        gains = {c: float(rows.duplicated([key, *design, c]).mean()) for c in varying}
        best = min(gains, key=lambda c: (gains[c], profiles[c].nunique))
        if gains[best] >= repeated:
            break
        design.append(best)
        varying.remove(best)
        repeated = gains[best]
    if not design or repeated > 0.05 or len(design) == len(columns):
        return []  # nothing measured beyond the conditions: a cross-tabulation, one row per cell
    combos = rows[design].astype(str).agg("\x1f".join, axis=1) if len(design) > 1 else rows[design[0]].astype(str)
    reach = rows.groupby(combos.to_numpy(), sort=False)[key].nunique() / nun.shape[0]
    shared = combos.map(reach) >= 0.5
    return design if float(shared.mean()) >= 0.8 else []


def _group_stats(df: pd.DataFrame, key: str, columns: list[str]) -> tuple[pd.DataFrame, pd.Series]:
    """nunique per (multi-row) entity for each column, on at most MAX_ENTITY_SAMPLE entities."""
    sizes = df.groupby(key, sort=False, dropna=True).size()
    multi = sizes[sizes > 1]
    if len(multi) > MAX_ENTITY_SAMPLE:
        multi = multi.sample(MAX_ENTITY_SAMPLE, random_state=0)
    rows = df[key].isin(multi.index).to_numpy()
    sub = df.loc[rows, [key, *columns]]
    nun = sub.groupby(key, sort=False).nunique(dropna=True)
    return nun, multi.reindex(nun.index)


def _diversity(s: pd.Series) -> float:
    """Chance that two random rows share a value (low = diverse)."""
    p = s.value_counts(normalize=True, dropna=True).to_numpy()
    return float((p ** 2).sum())


def find_entity(
    df: pd.DataFrame,
    profiles: dict[str, ColumnProfile],
    target: str | None,
    given_id: str | None,
    given_time: str | None,
    exclude: set[str],
) -> Entity:
    """Find the entity id (or study the given one) and the visit column that orders its rows;
    ``entity.inference`` says how sure the choice is, with the other candidates ranked."""
    n = len(df)
    others = [c for c in profiles if c not in exclude and c != target and profiles[c].kind != "empty"]
    candidates = [given_id] if given_id is not None else _candidates(profiles, n, exclude, target)
    rejected = {} if given_id is not None else {
        c: why for c in candidates
        if (why := not_an_entity(df, profiles, c, target) or measured_with_gaps(profiles, c)) is not None}
    coarse = {} if given_id is not None else {
        c: found for c in candidates if c not in rejected and (found := coarse_category(df, profiles, c, target))}
    rejected |= {c: why for c, (why, finer) in coarse.items() if finer is not None}  # the finer one is the unit
    judged: dict[str, float] = {}
    best: Entity | None = None
    best_score, best_shared = 0.0, False
    sample = df.iloc[: min(n, 200_000)] if n > 200_000 else df
    for key in [c for c in candidates if c not in rejected]:
        cols = [c for c in others if c != key]
        if not cols:
            continue
        nun, sizes = _group_stats(sample, key, cols)
        if len(nun) < 3:
            continue
        judged_key = _judge(df, sample, profiles, key, cols, nun, sizes, target, given_id)
        if judged_key is None:
            continue
        judged[key] = judged_key[0]
        if judged_key[0] <= best_score:
            continue
        best_score, visits, crossed, best_shared = judged_key
        best = _entity(df, sample, profiles, key, cols, nun, sizes, target, given_time, visits, crossed)
    subjects = subject_ids(df, profiles, {target} if target else set())  # ids are excluded from the search, not here
    if best is not None and best.id is not None and given_id is None and subjects:
        # each row has its own subject id: rows sharing this column are different subjects
        rejected[best.id] = (f"rows sharing it have different '{subjects[0]}' (unique on every row): a group of "
                             "subjects (a matched set, a family, a centre), not one subject's records")
        judged.pop(best.id)
        best = None
    nested = None
    if best is not None and best.id is not None and given_id is None and not best.evidence.get("baseline_columns"):
        # rows sharing it share nothing: an id numbered again in each group (pupils in each school)?
        nested = numbered_within(sample, profiles, best.id, [c for c in others if c != best.id])
        if nested is not None and nested["unique_pairs"]:
            rejected[best.id] = nested["words"]
            judged.pop(best.id)
            nested["column"], best = best.id, None
    pair = None if given_id is not None else crossed_pair(sample, profiles, [c for c in candidates if c not in rejected])
    if pair is not None and (best is None or best.id in pair):
        best, best_shared = _crossed_entity(df, sample, profiles, pair, others, target, given_time), False
        judged[pair[0]] = max(judged.get(pair[0], 1.0), judged.get(pair[1], 0.0))
        judged[pair[1]] = judged.get(pair[1], judged[pair[0]] - 0.5)
    if best is None:
        out = Entity()
        out.inference = entity_inference(None, judged, rejected, [], True, False)
        blocks = find_blocks(df, profiles, exclude | ({target} if target else set())) if given_id is None else None
        if blocks is not None:  # no id, but the rows come in blocks of one entity's records: asked
            out.inference = replace(out.inference, confidence=Confidence.LOW,
                                    # after the guess's own reason: what makes it uncertain
                                    evidence=[*out.inference.evidence[:1], blocks.words(n), *out.inference.evidence[1:]],
                                    details={**out.inference.details, "blocks": blocks.to_dict()})
        if nested is not None:  # each row its own subject, read from the pairs: asked, the evidence in words
            out.evidence["numbered_within"] = {k: nested[k] for k in ("column", "group", "words", "distinct")}
            out.inference = replace(out.inference, confidence=Confidence.LOW,
                                    evidence=[nested["words"], *out.inference.evidence[1:]])
        return out
    doubts = [] if given_id is not None else _doubts(df, profiles, best, target, coarse, pair)
    if nested is not None:  # the pairs repeat: one subject's records are the pair's, not the id's
        doubts.append(nested["words"])
    best.inference = entity_inference(best.id, judged, rejected, _entity_words(best, profiles, best_shared) + doubts,
                                      _clear(df, best, profiles, best_shared) and not doubts, given_id is not None,
                                      profiles[best.id].n_missing if best.id is not None else 0)
    return _held(df, profiles, target, given_id, given_time, exclude, best)


def _crossed_entity(df: pd.DataFrame, sample: pd.DataFrame, profiles: dict[str, ColumnProfile], pair: tuple[str, str],
                    others: list[str], target: str | None, given_time: str | None) -> Entity:
    """The first of a crossed pair (see :func:`crossed_pair`) as the entity, measured under each
    level of the other."""
    key, other = pair
    cols = [c for c in others if c != key]
    nun, sizes = _group_stats(sample, key, cols)
    return _entity(df, sample, profiles, key, cols, nun, sizes, target, given_time, [], [other])


def _doubts(df: pd.DataFrame, profiles: dict[str, ColumnProfile], entity: Entity, target: str | None,
            coarse: dict[str, tuple[str, str | None]], pair: tuple[str, str] | None) -> list[str]:
    """Why the chosen entity must be asked about even when its name and data say so: a category of
    few levels, rows that are events involving it, or one side of a crossed design."""
    key = entity.id
    assert key is not None
    if pair is None and _panel(df, entity):
        return []  # one record per shared time point (a firm each year): the unit is plain
    doubts = [coarse[key][0]] if key in coarse else []
    if not entity.evidence.get("baseline_columns") and entity.visit is None and not entity.evidence.get("design_columns"):
        # one subject's records share something (a sex, a birth date, an arm) or follow a time
        doubts.append(f"rows sharing '{key}' share no other column and no time orders them: they may be different "
                      f"subjects in {entity.evidence['entities']} groups (a family, a site), not one subject's records")
    if pair is not None and key in pair:
        a, b = pair
        doubts.append(f"every '{a}' × '{b}' pair appears about once (a crossed design: the rows are ratings): "
                      f"grouping by '{a}' keeps the rows of one '{a}' together, by '{b}' those of one '{b}'")
    elif (events := events_not_measures(df, key, target)) is not None:
        doubts.append(events)
    return doubts


def _panel(df: pd.DataFrame, entity: Entity) -> bool:
    """One record per time point of a column named as a time, the time points shared by the
    entities (a firm each year, a subject each day)."""
    key, visit = entity.id, entity.visit
    if key is None or visit is None or not TIME_WORDS.search(visit) or df.duplicated([key, visit]).any():
        return False
    return _shared_time_grid(df, key, visit, pd.Index(df[key].dropna().unique()))


def _held(df: pd.DataFrame, profiles: dict[str, ColumnProfile], target: str | None, given_id: str | None,
          given_time: str | None, exclude: set[str], best: Entity) -> Entity:
    """The entity, or the coarser one that holds it (a patient over their stays)."""
    coarser = _holder(df, profiles, best, exclude | {target} if target else exclude)
    if coarser is None:
        return best
    assert best.id is not None
    per = round(float(df.groupby(coarser, sort=False)[best.id].nunique().mean()), 3)
    if given_id is not None:  # the user's entity stands; the finding says what holds it
        best.evidence["held_by"] = {"column": coarser, "per_entity_mean": per}
        return best
    # stays of one patient share the patient: grouping by the stay would put one patient's
    # stays on both sides of a split, so the entity is the patient (the stay is its record)
    held = find_entity(df, profiles, target, coarser, given_time, exclude)
    held.evidence["holds"] = {"column": best.id, "per_entity_mean": per}
    if held.inference is not None:
        words = [f"'{coarser}' is named as an id and holds {per:g} '{best.id}' each, never splitting one"]
        # two levels of ids (a patient's admissions or ICU stays): which one a prediction is for is
        # the study's question, so it is asked; the finer one keeps its rows, the coarser groups the split
        nested = bool(STRONG_ID_NAME.search(best.id.strip()))
        if nested:
            words.append(f"'{best.id}' is an id too, nested in '{coarser}': which level is predicted for?")
        held.inference = entity_inference(coarser, {}, {}, words, not nested, False, profiles[coarser].n_missing)
        if nested:
            finer = Alternative(best.id, [f"a prediction per '{best.id}', its rows kept, '{coarser}' keeping one "
                                          f"'{coarser}''s rows on one side of the split"], 0.5)
            held.inference = replace(held.inference, alternatives=[finer, *held.inference.alternatives])
    return held


def _design_words(design: list[str], visit: str | None) -> str:
    """The within-unit design in words; said once when it is the order already named."""
    if not design:
        return ""
    if design == [visit]:
        return ", at the same values for every entity"
    return ", each measured under the same conditions (" + " × ".join(f"'{c}'" for c in design) + ")"


def _entity_words(entity: Entity, profiles: dict[str, ColumnProfile], shared_only: bool) -> list[str]:
    ev = entity.evidence
    key = entity.id
    assert key is not None
    words = [f"'{key}' repeats: {ev['rows']} rows for {ev['entities']} values "
             f"({ev['rows_per_entity_mean']:.1f} each on average)"]
    if looks_like_id_name(key) or ENTITY_NAME.search(key):
        words.append(f"'{key}' is named as an id or a unit")
    if ev.get("baseline_columns"):
        words.append(f"rows sharing it share {counted(len(ev['baseline_columns']), 'attribute')} "
                     f"({', '.join(ev['baseline_columns'][:4])})")
    if entity.visit:
        words.append(f"'{entity.visit}' orders its rows")
    if shared_only:
        words.append("found only by the attributes its rows share, not by its name or an order")
    return words


def _clear(df: pd.DataFrame, entity: Entity, profiles: dict[str, ColumnProfile], shared_only: bool) -> bool:
    """Clear evidence of an entity: no missing ids, more than shared attributes, and named as an
    id or a unit, or holding one record per time of a column named as a time (a panel: a firm or
    a state each year)."""
    key = entity.id
    assert key is not None
    if profiles[key].n_missing or shared_only:
        return False
    if looks_like_id_name(key) or ENTITY_NAME.search(key):
        return True
    visit = entity.visit
    return bool(visit and TIME_WORDS.search(visit) and not df.duplicated([key, visit]).any())


def _candidates(profiles: dict[str, ColumnProfile], n: int, exclude: set[str], target: str | None) -> list[str]:
    """Columns that could be an entity id: codes that repeat, but not a handful of levels."""
    candidates = []
    for name, prof in profiles.items():
        if name in exclude or name == target or not _is_id_like_kind(prof):
            continue
        if ROW_NUMBER_NAME.search(name.strip()) and prof.nunique >= 0.8 * prof.n_present:
            continue  # a running number with a few repeats (typing slips) still numbers rows
        if prof.nunique < max(5, 0.002 * n) or prof.nunique > 0.9 * prof.n_present:
            continue
        if prof.n_present / prof.nunique > 100:
            continue
        candidates.append(name)
    candidates.sort(key=lambda c: (not looks_like_id_name(c), -profiles[c].nunique))
    return candidates[:6]


SHARED_ATTRIBUTES = 5  # columns constant within groups: an unnamed code's rows are one unit's (a matched
# set shares the few it was matched on)


def _judge(df: pd.DataFrame, sample: pd.DataFrame, profiles: dict[str, ColumnProfile], key: str, cols: list[str],
           nun: pd.DataFrame, sizes: pd.Series, target: str | None,
           given_id: str | None) -> tuple[float, list[str], list[str], bool] | None:
    """Whether ``key`` is an entity: (its score, its visit columns, its design columns, whether
    only the attributes its rows share say so), or None."""
    constant = (nun <= 1).mean()
    within_unique = nun.eq(sizes, axis=0).mean()
    # a mostly empty column is "constant" within any group: no evidence either way
    filled = [c for c in cols if profiles[c].missing_rate <= 0.5]
    baseline = [c for c in filled if constant[c] >= 0.95 and profiles[c].nunique >= 2]
    baseline = [c for c in baseline if c not in copies_of(sample, key, baseline)]
    # only a diverse attribute (not a yes/no) shared within groups is evidence of an entity
    diverse = [c for c in baseline if profiles[c].nunique >= 3 and _diversity(df[c]) <= 0.3]
    # a visit orders rows: a date, a visit number, or a time named as such (any continuous
    # measurement is also unique within an entity, so it does not count on its own; nor does
    # a row label such as R's row names, unique within any group)
    # (nor does a yes/no column not named as a time: a treatment arm differs between a patient's two eyes)
    visits = [c for c in cols if within_unique[c] >= 0.9 and c != target and not _row_label(c, profiles[c], len(df))
              and (profiles[c].nunique > 2 or VISIT_NAME.search(c))
              and (profiles[c].kind == "datetime" or profiles[c].parsed_as == "datetime"
                   or (profiles[c].kind == "numeric" and (profiles[c].is_integer or VISIT_NAME.search(c))))]
    named = bool(ENTITY_NAME.search(key)) and not counts_units(key)
    hint = named or looks_like_id_name(key)
    # an ordered column alone is weak evidence (integers are often unique within small
    # groups by chance, e.g. rows sharing a surname): rows of one entity also share
    # something — or they are a panel: the same time points (years, days) for every entity
    panel = not TIME_NAME.search(key) and any(
        _shared_time_grid(sample, key, v, sizes.index) for v in visits if TIME_NAME.search(v))
    # a column named as the unit itself ("patient", "id") that repeats in most of its values
    named_units = bool(named or STRONG_ID_NAME.search(key)) and float(
        sample.groupby(key, sort=False).size().gt(1).mean()) >= 0.5
    crossed = [] if TIME_NAME.search(key) or not (hint or _unit_codes(profiles[key])) else (
        _crossed_design(sample, key, cols, profiles, nun))
    accept = key == given_id or (hint and (diverse or (visits and baseline))) or (
        diverse and visits and float(sizes.mean()) <= 30) or panel or (STRONG_ID_NAME.search(key) and visits) or (
        named_units) or bool(crossed)
    # an unnamed whole-number code whose rows share several attributes, at least one diverse
    # (a respondent's age group, sex and answers to a questionnaire on each of their ratings)
    shared = (not accept and len(baseline) >= SHARED_ATTRIBUTES and bool(diverse) and profiles[key].n_missing == 0
              and (profiles[key].is_integer or _unit_codes(profiles[key])))
    if not (accept or shared):
        return None
    # an id is never missing: a column with missing values ranks below one without
    score = (2 * hint + len(diverse) / len(cols) + bool(visits or crossed) + (key == given_id) * 10
             - 0.5 * bool(profiles[key].n_missing))
    return score, visits, crossed, shared


def _row_label(name: str, prof: ColumnProfile, n: int) -> bool:
    """A row label (R's row names, a saved index, a per-row id): unique on every row."""
    return bool(INDEX_NAME.search(name.strip()) or ROW_NUMBER_NAME.search(name.strip()) or (
        prof.nunique >= 0.99 * n and prof.n_missing == 0 and looks_like_id_name(name)))


def _entity(df: pd.DataFrame, sample: pd.DataFrame, profiles: dict[str, ColumnProfile], key: str, cols: list[str],
            nun: pd.DataFrame, sizes: pd.Series, target: str | None, given_time: str | None,
            visits: list[str], crossed: list[str]) -> Entity:
    """The entity ``key``, its visit column and the evidence the finding shows."""
    constant = (nun <= 1).mean()
    visit = given_time if given_time in profiles else _pick_visit(visits, profiles)
    all_sizes = df.groupby(key, sort=False).size()
    evidence = {
        "entity_id": key,
        "visit_column": visit,
        "entities": int(len(all_sizes)),
        "rows": len(df),
        "rows_per_entity_mean": round(float(all_sizes.mean()), 3),
        "rows_per_entity_max": int(all_sizes.max()),
        "share_entities_with_several_rows": round(float((all_sizes > 1).mean()), 4),
        "baseline_columns": [c for c in cols if constant[c] >= 0.95 and profiles[c].nunique >= 2][:15],
        "varying_columns": [c for c in cols if constant[c] < 0.5][:15],
    }
    if crossed:
        evidence["design_columns"] = crossed
    if target is not None:
        t_nun = sample.groupby(key, sort=False)[target].nunique(dropna=True)
        t_multi = t_nun[sizes.index.intersection(t_nun.index)]
        evidence["target_constant_within_entity"] = round(float((t_multi <= 1).mean()), 4) if len(t_multi) else None
    changing = (nun > 1).mean()
    varying = [c for c in cols if changing[c] >= VARYING_SHARE and c not in (target, visit)]
    return Entity(key, visit, evidence, varying)


HOLDS_AT_MOST = 5.0  # finer entities per coarser one: a patient's stays, not a hospital's patients


def _holder(df: pd.DataFrame, profiles: dict[str, ColumnProfile], entity: Entity, exclude: set) -> str | None:
    """An identifier named as such that holds several of ``entity``'s ids (a subject_id over
    its hadm_id or icustay_id), a few each, and never splits one: the coarser entity, or None."""
    key = entity.id
    assert key is not None
    names = [c for c in entity.evidence.get("baseline_columns", [])
             if c not in exclude and _is_id_like_kind(profiles[c]) and STRONG_ID_NAME.search(c)
             and profiles[c].nunique < profiles[key].nunique]
    best = None
    for c in names:
        per = df.groupby(c, sort=False)[key].nunique()
        if per.mean() <= HOLDS_AT_MOST and (per > 1).mean() >= 0.05 and (
                best is None or profiles[c].nunique < profiles[best].nunique):
            best = c
    return best


def _shared_time_grid(df: pd.DataFrame, key: str, visit: str, entities: pd.Index) -> bool:
    """Whether most rows sit at time points that at least half of the entities share (a
    panel: firm × year, subject × day), rather than times that differ by chance."""
    rows = df[df[key].isin(entities)]
    if entities.size < 3:
        return False
    reach = rows.groupby(visit, sort=False)[key].nunique() / entities.size
    shared = rows[visit].map(reach) >= 0.5
    return bool(shared.mean() >= 0.8)


def _pick_visit(visits: list[str], profiles: dict[str, ColumnProfile]) -> str | None:
    if not visits:
        return None

    def rank(c: str):
        prof = profiles[c]
        is_date = prof.kind == "datetime" or prof.parsed_as == "datetime"
        return (not is_date, not VISIT_NAME.search(c), not re.search(r"start|0$|visit|date", c, re.I),
                -prof.nunique)

    return sorted(visits, key=rank)[0]


def landmark_time(df: pd.DataFrame, entity: Entity) -> float | None:
    """A landmark worth proposing: the median time of the entities' second records (most
    entities have been seen again by then), or None when visits are not numbers."""
    if entity.visit is None or entity.id is None:
        return None
    visit = pd.to_numeric(df[entity.visit], errors="coerce")
    if visit.isna().mean() > 0.2:
        return None
    order = pd.DataFrame({"id": df[entity.id], "t": visit}).dropna().sort_values(["id", "t"])
    second = order.groupby("id", sort=False)["t"].nth(1)
    if second.empty:
        return None
    value = float(second.median())
    return float(np.round(value)) if value >= 10 else value


def visits_on_duration_clock(df: pd.DataFrame, entity: Entity, duration: str | None) -> bool:
    """Whether the visit times count on the duration's clock from each entity's start (days
    since enrolment for both): visits lie within the follow-up and the first one near its
    start. Then every record can become a (start, stop] interval of that follow-up."""
    if entity.visit is None or entity.id is None or duration is None:
        return False
    visit = pd.to_numeric(df[entity.visit], errors="coerce")
    follow_up = pd.to_numeric(df[duration], errors="coerce")
    if visit.isna().mean() > 0.2 or follow_up.isna().mean() > 0.2:
        return False
    known = visit.notna() & follow_up.notna()
    within = ((visit[known] >= 0) & (visit[known] <= follow_up[known])).mean()
    first = pd.DataFrame({"id": df[entity.id], "t": visit, "end": follow_up})[known].groupby("id", sort=False).agg(
        t=("t", "min"), end=("end", "max"))
    near_start = (first["t"] <= CLOCK_START_SHARE * first["end"]).mean()
    return bool(within >= CLOCK_WITHIN and near_start >= CLOCK_WITHIN)


def repeated_measurements_finding(entity: Entity, task_kind: str, index=None, duration: str | None = None,
                                  event: str | None = None, landmark: float | None = None,
                                  intervals: bool = False, target: str | None = None) -> Finding | None:
    """Several records per entity: the options follow the prediction time (``index``).

    Predicting from each entity's first record (enrolment), the valid default is that record;
    a landmark keeps what is known by a later time and counts survival from it; the latest
    record or a mean over records uses measurements taken after the prediction time. When each
    record is its own prediction (its own outcome or duration), the records stay, grouped.
    ``intervals`` (visit times on the duration's clock, see :func:`visits_on_duration_clock`)
    adds, for survival, every record as a (start, stop] interval for a time-varying Cox model:
    each interval carries only what was measured by its start. ``target`` (not survival): when it
    changes within some entities, the first record keeps it from the entity's last (the outcome as
    it ended; the first record's would be the state at enrolment, not an outcome).
    """
    if entity.id is None or entity.evidence.get("share_entities_with_several_rows", 0) == 0:
        return None
    ev = dict(entity.evidence)
    key, visit = entity.id, entity.visit
    per = ev["rows_per_entity_mean"]
    at_start = index is None or index.kind == "entity_start"
    if index is not None:
        ev["index"] = index.to_dict()
    if entity.varying:
        ev["time_varying_columns"] = entity.varying[:15]
    summary = (f"The {ev['rows']:,} rows describe {ev['entities']:,} entities ('{key}', "
               f"{per:.1f} rows each on average"
               + (f", ordered by '{visit}'" if visit else "")
               + _design_words(ev.get("design_columns") or [], visit)
               + (f", each holding {ev['holds']['per_entity_mean']:.1f} '{ev['holds']['column']}' on average"
                  if ev.get("holds") else "")
               + "): rows of one entity are not independent, so validation must keep them together."
               + (f" Each '{ev['held_by']['column']}' holds {ev['held_by']['per_entity_mean']:.1f} '{key}' on "
                  f"average: grouped by '{key}', the rows of one '{ev['held_by']['column']}' can fall on both "
                  f"sides of the split; grouping by '{ev['held_by']['column']}' keeps them together."
                  if ev.get("held_by") else "")
               + (f" Predictions are made at {index.label}: {index.reason}." if index is not None else ""))
    per_row = index is not None and index.kind == "row"
    changes = target if (ev.get("target_constant_within_entity") or 1.0) < 1 else None
    options = _baseline_options(key, visit, task_kind, duration, event, landmark, at_start, changes) if visit else []
    if visit and intervals and at_start and task_kind == TaskKind.SURVIVAL and duration and event:
        options.append(Option(
            "time_varying", "Keep every record as (start, stop] intervals: time-varying Cox",
            f"Each '{key}' record holds from its '{visit}' until the next record (or the end of "
            f"'{duration}'); a time-varying Cox model compares, at each event, the values in force "
            "then, each measured before it. Scored by a time-dependent C-index.",
            "a different question from prediction at enrolment: the risk is updated at every "
            "record, so predictions need the latest record of an entity",
            False,
            call("to_intervals", id=key, time=visit, duration=duration, event=event),
        ))
    options += _collapse_options(key, visit, at_start, per_row)
    keep_risk = ("every later record already knows the entity was event-free until then: not valid "
                 "for a time counted from the first record" if at_start and task_kind == TaskKind.SURVIVAL
                 else "entities with many rows weigh more in the model; needs a grouped split everywhere")
    options.append(keep(
        f"Keep every row and validate with groups='{key}' (grouped split and cross-validation)."
        + (" Each record is a prediction at its own time." if per_row else "")
        + (f" The records are ('{index.start}', '{duration}'] intervals: a time-varying Cox model "
           "is fitted on them." if per_row and index.start and duration else ""),
        keep_risk, recommended=per_row, label="Keep rows, group by entity",
    ))
    return Finding("repeated_measurements", [c for c in (key, visit) if c], "critical",
                   summary, ev, options, "aggregation")


def _baseline_options(key: str, visit: str, task_kind: str, duration: str | None, event: str | None,
                      landmark: float | None, at_start: bool, changing_target: str | None = None) -> list[Option]:
    """One row per entity as known at a fixed time: its first record (with ``changing_target``
    from its last), or (survival) a landmark."""
    later = (f", with '{changing_target}' from its last record (the outcome as it ended)"
             if changing_target and task_kind != TaskKind.SURVIVAL else "")
    outcome = {"outcome": [changing_target]} if later else {}
    options = [Option(
        "aggregate_first", "One row per entity (first record)",
        f"Keep each '{key}' as it was at its first '{visit}' (the baseline record){later}, as a "
        "prediction at enrolment would see it.",
        "ignores everything measured after the first record", at_start,
        call("aggregate_per_entity", id=key, time=visit, how="baseline", **outcome),
    )]
    if landmark is not None and task_kind == TaskKind.SURVIVAL and duration:
        options.append(Option(
            "aggregate_landmark", f"One row per entity at a landmark ({visit} = {landmark:g})",
            f"Use what is known by {visit} = {landmark:g} (each column's latest value by then); "
            f"entities whose follow-up ended by then are left out, and '{duration}' is counted "
            "from the landmark.",
            "fewer entities; predictions are for those still at risk at the landmark", False,
            call("aggregate_per_entity", id=key, time=visit, how="last", landmark=landmark,
                 outcome=[c for c in (event, duration) if c], duration=duration),
        ))
    return options


def _collapse_options(key: str, visit: str | None, at_start: bool, per_row: bool) -> list[Option]:
    """One row per entity summarising all its records (the latest, or a mean): with predictions
    at the first record, these use the entity's future."""
    after_index = ("uses measurements taken after the prediction time (the first record): the "
                   "model learns from the entity's future")
    how_last = "last" if visit else "mean"
    options = [Option(
        f"aggregate_{how_last}",
        "One row per entity (" + ("latest record" if visit else "mean of numbers") + ")",
        f"Collapse each '{key}' to one row"
        + (f" using its latest '{visit}'" if visit else " (numbers averaged, first value otherwise)")
        + ", then model one row per entity.",
        after_index if at_start and visit else
        "loses the history of earlier records; time-varying information is summarised",
        not visit and not per_row,
        call("aggregate_per_entity", id=key, time=visit, how=how_last),
    )]
    if visit:
        options.append(Option(
            "aggregate_mean", "One row per entity (mean over records)",
            f"Average numeric columns over the records of each '{key}'.",
            after_index if at_start else "averages mix measurements taken at different times",
            False,
            call("aggregate_per_entity", id=key, time=visit, how="mean"),
        ))
    return options
