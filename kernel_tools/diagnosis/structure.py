"""Timing evidence from the table's structure and from names (sources of the column timeline).

Values alone miss what the shape of a table says. An event during follow-up is often recorded
as a pair — its time and its indicator (``ptime``/``pstat``, ``ta``/``da``, ``rec``/``rec.s``,
``dayslink``/``linkstatus``)
— and the two go together: once one is known to come after the index, so is the other. The two
bounds of one quantity (``lower``/``upper``) go together too. A series of times (``etime1`` ...
``etime7``, each no earlier than the one before) keeps its order: what follows a time after the
index is after it as well. Another endpoint's (time, indicator) beside the chosen follow-up
(overall survival beside a time to progression) is during follow-up (:mod:`.endpoints`). These are
*structure* evidence, as decisive as a test on the data.

Names say more, but only as proposals (weak evidence, confirmed by an expert): a column named
with a time later than the target's own (``depress2`` next to the target ``work1`` and its
``depress1``; ``pain_24h`` next to ``pain_2h``), a step of the process that produced the target
(collected, received, verified, turnaround), or the outcome event itself (at discharge, at
death, post-operative). A series named by its time that the target is not in (``re74``, ``re75``,
``re78`` beside the target ``treat``; ``wt_1m``, ``wt_6m``; ``day1`` ... ``day7``) has a latest
member measured after the others, and so perhaps after the index: its timing is *unknown*, asked
(when the target is in the series, its later members are follow-up: with high confidence where the
data shows one measure, :func:`.waves.later_waves`, else as a name's proposal).
"""

from __future__ import annotations

import re

import numpy as np
from scipy.stats import spearmanr

from kernel_tools.diagnosis import event_times
from kernel_tools.diagnosis.columns import numeric_values, unit_interval
from kernel_tools.diagnosis.endpoints import other_endpoints
from kernel_tools.diagnosis.filled_by_outcome import filled_by_outcome
from kernel_tools.diagnosis.outcome_halves import name_words
from kernel_tools.diagnosis.pair_names import pair_roles
from kernel_tools.diagnosis.stays import end_of_stay
from kernel_tools.diagnosis.timeline import (
    ORDER,
    Placement,
    TimelineContext,
    timeline_source,
)
from kernel_tools.diagnosis.trial_arms import one_arm_measures
from kernel_tools.diagnosis.waves import (
    SAME_MEASURE,
    Wave,
    named_series,
    one_hot_levels,
    parse_wave,
    same_measurement,
)
from kernel_tools.vocabulary import EvidenceSource, TaskKind, TimelineGroup

AFTER = (TimelineGroup.DURING_FOLLOW_UP, TimelineGroup.AT_OR_AFTER_OUTCOME)
ORDERED = 0.99  # a series' next member is no earlier on this share of rows where both are present

SERIES = re.compile(r"^(?P<stem>[A-Za-z][A-Za-z_.]*?)[_.]?(?P<k>\d{1,2})$")


def _is_flag(ctx: TimelineContext, c: str) -> bool:
    return ctx.profiles[c].nunique == 2


def _is_number(ctx: TimelineContext, c: str) -> bool:
    p = ctx.profiles[c]
    return p.holds_numbers and p.nunique > 2


def partners(ctx: TimelineContext) -> list[tuple[str, str, str]]:
    """Pairs of features that record one thing together: (a, b, what) — a time and its
    indicator, or the two bounds of one quantity."""
    readings: dict[tuple[str, str], list[str]] = {}
    for c in ctx.features:
        for stem, role in pair_roles(c):
            readings.setdefault((stem, role), []).append(c)
    pairs = []
    for (stem, role), cols in readings.items():
        if role == "time":
            for t in cols:
                for f in readings.get((stem, "flag"), []):
                    if t != f and _is_number(ctx, t) and _is_flag(ctx, f):
                        pairs.append((t, f, "a (time, indicator) pair of one event"))
        elif role == "bound" and len(cols) == 2 and all(_is_number(ctx, c) for c in cols):
            pairs.append((cols[0], cols[1], "the two bounds of one quantity"))
    return list(dict.fromkeys(pairs))


def series(ctx: TimelineContext) -> list[list[str]]:
    """Numbered times in order (``etime1`` ... ``etime7``): each member no earlier than the one
    before on the rows where both are present."""
    groups: dict[str, list[tuple[int, str]]] = {}
    for c in ctx.features:
        if (m := SERIES.match(c)) and ctx.profiles[c].holds_numbers:
            groups.setdefault(m["stem"].lower(), []).append((int(m["k"]), c))
    out = []
    for members in groups.values():
        if len(members) < 2:
            continue
        cols = [c for _, c in sorted(members)]
        x = [numeric_values(ctx.df[c], ctx.profiles[c]) for c in cols]
        # later members are ever rarer (a seventh infection): pairs too thin to test do not count
        tested = [(a, b) for a, b in zip(x, x[1:]) if (np.isfinite(a) & np.isfinite(b)).sum() >= 5]
        if tested and all(np.mean(b[ok] >= a[ok]) >= ORDERED
                          for a, b in tested for ok in [np.isfinite(a) & np.isfinite(b)]):
            out.append(cols)
    return out


@timeline_source(EvidenceSource.STRUCTURE)
def structure_evidence(ctx: TimelineContext) -> dict[str, list[Placement]]:
    """Partners and later members of a series of a column the data places after the index."""
    after = {c: "outcome_derived" for c in ctx.leaks}
    after.update({c: tm.timing for c, tm in ctx.timings.items() if tm.timing in ("follow_up", "outcome_derived")})
    out: dict[str, list[Placement]] = {}
    for a, b, what in partners(ctx):
        for known, other in ((a, b), (b, a)):
            if known in after and other not in after:
                group = TimelineGroup.DURING_FOLLOW_UP if after[known] == "follow_up" else TimelineGroup.AT_OR_AFTER_OUTCOME
                out.setdefault(other, []).append(Placement(
                    group, EvidenceSource.STRUCTURE, "partner",
                    f"goes with '{known}' ({what}), which is recorded after the index", True, {"partner": known}))
    for c, placement in _other_endpoints(ctx, strong=True).items():
        if c not in after:
            out.setdefault(c, []).append(placement)
    for c, placement in filled_by_outcome(ctx).items():
        out.setdefault(c, []).append(placement)
    for members in series(ctx):
        first = next((i for i, c in enumerate(members) if c in after), None)
        if first is None:
            continue
        for c in members[first + 1:]:
            if c not in after:
                out.setdefault(c, []).append(Placement(
                    TimelineGroup.DURING_FOLLOW_UP, EvidenceSource.STRUCTURE, "later_in_series",
                    f"a later time of the series {members[0]}...{members[-1]}, after '{members[first]}', which "
                    "is recorded after the index", True, {"series": members}))
    return out


def _target_series(ctx: TimelineContext) -> tuple[list[list[Wave]], Wave | None]:
    """The features' series named by time (:func:`.waves.named_series`, the target among them when
    its name is one of theirs), and the target's own wave (None: it is in none)."""
    target = ctx.outcome.target if ctx.outcome is not None else None
    found = named_series([*ctx.features, *([target] if target else [])])
    own = next((w for members in found for w in members if w.column == target), None)
    return found, own


def _latest_of_a_series(ctx: TimelineContext) -> dict[str, list[Placement]]:
    """The latest member of each series named by time that the target is not in: measured after
    the others, it may be measured after the index or the outcome too; whether it is, the names do
    not say. The table's latest time (``re78`` beside ``re74``, ``re75``, predicting ``treat``) is
    proposed as follow-up; a series ending earlier than another (``u74``, ``u75``) is unknown;
    both asked. A series ending before the target's own named time (``u75`` beside the target
    ``re78``) was measured before the outcome, and a series of probabilities is of horizons: not placed."""
    found, own = _target_series(ctx)
    latest = {unit: max(w.at for members in found for w in members if w.unit == unit)
              for unit in {w.unit for members in found for w in members}}
    out: dict[str, list[Placement]] = {}
    for members in found:
        if (own is not None and own in members or not _tracks_over_time(ctx, members) or _horizons(ctx, members)
                or _period_flags(ctx, members)):
            continue
        last, earlier = members[-1], members[:-1]
        if own is not None and own.comparable(last) and last.at < own.at:
            continue  # named before the target's own time (u75 beside the target re78): before the outcome
        if last.column in ctx.features and last.at > earlier[-1].at:
            at_end = last.at >= latest[last.unit]
            group = TimelineGroup.DURING_FOLLOW_UP if at_end else TimelineGroup.UNKNOWN
            end = ("the latest time any column is named by" if at_end
                   else "earlier than the latest time other columns are named by")
            out[last.column] = [Placement(
                group, EvidenceSource.NAMES, "latest_in_named_series",
                f"the latest of a series named by its time ({', '.join(w.column for w in members)}): "
                f"'{last.token}' is later than {', '.join(repr(w.token) for w in earlier)} and {end}; whether "
                f"it was measured before '{ctx.outcome.target}' the names do not say", False,
                {"series": [w.column for w in members]})]
    return out


PERIOD_FLAGS = 0.99  # rows on which at most one flag of a series is 1


def _period_flags(ctx: TimelineContext, members: list[Wave]) -> bool:
    """Whether a series named by time is the dummies of a calendar period (``y94`` ... ``y06``: 0/1,
    at most one of them 1 on a row): which survey year a row belongs to, known when it was collected,
    not one measure taken again later."""
    if len(members) < 2 or not all(w.column in ctx.profiles and ctx.profiles[w.column].holds_numbers for w in members):
        return False
    flags = []
    for w in members:
        v = numeric_values(ctx.df[w.column], ctx.profiles[w.column])
        if not set(np.unique(v[np.isfinite(v)]).tolist()) <= {0.0, 1.0}:
            return False
        flags.append(np.nan_to_num(v))
    return bool((np.sum(flags, axis=0) <= 1).mean() >= PERIOD_FLAGS)


def _horizons(ctx: TimelineContext, members: list[Wave]) -> bool:
    """Whether a series named by time holds probabilities (values in [0, 1]): estimates for horizons
    made at baseline (survival at 2 and at 6 months), not one measure taken again later."""
    return all(w.column in ctx.profiles and ctx.profiles[w.column].holds_numbers
               and unit_interval(numeric_values(ctx.df[w.column], ctx.profiles[w.column])) for w in members)


LONG_SERIES = 5  # members from which names alone no longer make one measure taken again
SERIES_ROWS = 5000


def _tracks_over_time(ctx: TimelineContext, members: list[Wave]) -> bool:
    """Whether a series named by time is one measure taken again. Names are enough for a few members
    (re74, re75, re78); a long run of numbered columns (lab_00 ... lab_26, which read as the years
    2000-2026) must also show it in the data: some member moves with the one before it (|Spearman| of
    ``waves.SAME_MEASURE`` or more), as yearly earnings or daily weights do and 27 different tests need not."""
    if len(members) < LONG_SERIES:
        return True
    rows = ctx.df.iloc[:SERIES_ROWS]
    values = [numeric_values(rows[w.column], ctx.profiles[w.column]) if w.column in ctx.profiles else None
              for w in members]
    for a, b in zip(values, values[1:]):
        if a is None or b is None:
            continue
        ok = np.isfinite(a) & np.isfinite(b)
        if ok.sum() >= 20 and np.ptp(a[ok]) > 0 and np.ptp(b[ok]) > 0 and abs(
                float(spearmanr(a[ok], b[ok]).statistic)) >= SAME_MEASURE:
            return True
    return False


PROCESS_NAME = re.compile(
    r"collect|receiv|verif|turn.?around|(^|[_\W])tat([_\W]|$)|resulted|report(ed)?[_\W]?(time|date|at)|"
    r"sign(ed)?[_\W]?off|analy[sz]ed|process(ed|ing)[_\W]?(time|date)", re.IGNORECASE)
OUTCOME_EVENT_NAME = re.compile(
    r"at[_\W]?(death|discharge|delivery|birth|event|outcome|exit|end)|(^|[_\W])post[_\W]?(op|operative|surgery|"
    r"treatment|discharge)|post.?op|(^|[_\W])pod[_\W]?\d|follow[_\W]?up|(^|[_\W])fu[_\W]?\d|discharg",
    re.IGNORECASE)
TRAILING_NUMBER = re.compile(r"^(?P<stem>[A-Za-z][A-Za-z_.]*?)[_.]?(?P<k>\d)$")
MAX_WAVES = 4  # more numbered members are items of one questionnaire (q1 ... q10), not waves
# stems that number generic features or items, not one measure taken again
GENERIC_STEM = re.compile(r"^(x|v|q|f|var|item|col|column|feat|feature|attr|field|pc|comp|dim|factor|"
                          r"cat|num|code|dummy|level|group|type|class|opt|option|choice|answer)$", re.IGNORECASE)


# words that mark a measure as taken before (a baseline value of the outcome's measure is a feature)
BEFORE_WORD = re.compile(r"^(pre|prior|baseline|base|bl|initial|init|start|entry|admission|admit|screening|"
                         r"enrol+ment|previous|prev|last|lag|lagged)$")


def _named_like_target(target: str, c: str) -> str | None:
    """Why ``c`` may be another measure of the outcome: its name is the target's with one word
    swapped ('dep_delay' beside 'arr_delay', 'onset_motor' beside 'onset_sensory') or one word
    added ('Min.Price' beside 'Price'), the word not one of time before; or None."""
    # the letters' words: a number apart is a wave or a numbered series, read elsewhere
    t, w = ([x for x in name_words(n) if not x.isdigit()] for n in (target, c))
    if not t or w == t or any(len(x) < 2 for x in t):
        return None
    if len(w) == len(t) >= 2:
        diff = [(a, b) for a, b in zip(t, w) if a != b]
        if len(diff) != 1 or BEFORE_WORD.match(diff[0][1]):
            return None
        said = f"the target's name with '{diff[0][1]}' for '{diff[0][0]}'"
    elif len(w) == len(t) + 1:
        extra = [x for x in w if x not in t]
        if len(extra) != 1 or [x for x in w if x in t] != t or BEFORE_WORD.match(extra[0]):
            return None
        said = f"the target's name with '{extra[0]}' added"
    else:
        return None
    return f"named like '{target}' ({said}): perhaps another measure of the same outcome, taken with it or after"


def _at_target_time(target: str, c: str) -> str | None:
    """Why the name of ``c`` places it at the target's own time after the start (``postOp4hour_cough``
    beside the target ``postOp4hour_throatPain``): measured with the outcome, not before it; or None."""
    own, wave = parse_wave(target), parse_wave(c)
    if own is None or wave is None or wave.stem == own.stem or not wave.comparable(own) or wave.at != own.at:
        return None
    if own.unit == "days" and own.at == 0.0:
        return None  # both at baseline
    return f"named at '{wave.token}', the target's own time: measured with the outcome, not before it"


OCCASION = re.compile(r"^(?P<stem>[A-Za-z][A-Za-z0-9]*?)[._](?P<occ>[A-Za-z]{1,3})$")


def _at_target_occasion(ctx: TimelineContext, c: str) -> str | None:
    """Why ``c`` is measured at the target's occasion when names form a grid of measures by occasions
    with a short suffix (``ALT.B``, ``AST.B``, ``ALT.M``, ``AST.M``: each lab test at baseline and at a later
    visit): ``c`` has the target's suffix, and both measures are also named at another occasion, so the
    suffix is a time, not part of the measure. Measured with the outcome, not before it; or None. A target
    whose suffix reads as a time before (``.pre``, ``.bl``) has no such columns."""
    t, m = OCCASION.match(ctx.outcome.target), OCCASION.match(c)
    if t is None or m is None or t["occ"] != m["occ"] or t["stem"] == m["stem"] or BEFORE_WORD.match(t["occ"].lower()):
        return None
    sep = ctx.outcome.target[len(t["stem"])]
    names = set(ctx.features) | {ctx.outcome.target}
    others = [o for o in names if (g := OCCASION.match(o)) and g["stem"] == t["stem"] and g["occ"] != t["occ"]
              and f"{m['stem']}{sep}{g['occ']}" in names]
    if not others:
        return None
    return (f"named at occasion '{t['occ']}' like the target, in a grid of measures by occasion ('{others[0]}' "
            f"beside '{ctx.outcome.target}'): measured with the outcome, not before it")


def _between_start_and_target(target: str, c: str) -> str | None:
    """Why the name of ``c`` places it after the start and before the target's own time
    (``opioid_mg_48h`` beside the target ``pain_day3``): taken during follow-up, known at the
    prediction time only when the prediction is made after it; or None. Times counted from a start
    only (days, hours, months): a calendar year (``re75`` beside ``re78``) says nothing of the index."""
    own, wave = parse_wave(target), parse_wave(c)
    if (own is None or wave is None or own.unit != "days" or wave.unit != "days" or wave.stem == own.stem
            or not 0.0 < wave.at < own.at < float("inf")):
        return None
    return (f"named at '{wave.token}', after the start and before the target's '{own.token}': known at the "
            "prediction time only when the prediction is made after it")


def _later_than_target(ctx: TimelineContext, c: str) -> str | None:
    """Why the name of ``c`` carries a time later than the target's own, or None."""
    target = ctx.outcome.target
    own, wave = parse_wave(target), parse_wave(c)
    if own is not None and wave is not None and wave.comparable(own) and wave.at > own.at:
        return f"named at '{wave.token}', later than the target's '{own.token}'"
    t, m = TRAILING_NUMBER.match(target), TRAILING_NUMBER.match(c)
    if t is None or m is None or m["stem"].lower() == t["stem"].lower() or int(m["k"]) <= int(t["k"]):
        return None
    earlier = [o for o in ctx.features if (e := TRAILING_NUMBER.match(o)) and e["stem"].lower() == m["stem"].lower()
               and int(e["k"]) <= int(t["k"])]
    if not earlier:
        return None  # numbered, but not a measure taken again at the target's time and later
    return (f"'{c}' is a later measurement than '{earlier[0]}' (number {m['k']}), after the target's own "
            f"number {t['k']}")


def _numbered_waves(ctx: TimelineContext) -> dict[str, Placement]:
    """Later waves of a measure numbered 1, 2, ... (``depress1``, ``depress2``): a few members of
    a named (not generic) stem, numbered one after another, each moving with the one before on
    one scale (:func:`.waves.same_measurement`); the later ones were measured after the first, so
    perhaps after the index: proposed as follow-up, asked."""
    stems: dict[str, list[tuple[int, str]]] = {}
    for c in ctx.features:
        if (m := TRAILING_NUMBER.match(c)) and ctx.profiles[c].holds_numbers:
            stems.setdefault(m["stem"].lower().rstrip("_."), []).append((int(m["k"]), c))
    out = {}
    alternatives = _numbered_alternatives(ctx, stems)
    for stem, members in stems.items():
        ks = sorted(k for k, _ in members)
        if (len(members) < 2 or len(members) > MAX_WAVES or len(stem) < 3 or GENERIC_STEM.match(stem) or alternatives
                or ks != list(range(ks[0], ks[0] + len(ks)))):
            continue
        cols = [c for _, c in sorted(members)]
        x = [numeric_values(ctx.df[c], ctx.profiles[c]) for c in cols]
        if one_hot_levels(x) or not all(_moves_with(a, b) for a, b in zip(x, x[1:])):
            continue
        for c in cols[1:]:
            out[c] = Placement(TimelineGroup.DURING_FOLLOW_UP, EvidenceSource.NAMES, "later_numbered_wave",
                               f"a later wave of '{cols[0]}' (numbered {', '.join(cols)}, each moving with the one "
                               "before on one scale): measured after it, perhaps after the index", False,
                               {"waves": cols})
    return out


MIN_FLAG_ROWS = 20  # rows where two numbered flags are both present, to tell agreement from chance


def _moves_with(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two numbered members are one measure taken again: numbers on one scale moving together
    (:func:`.waves.same_measurement`), or two yes/no flags that agree beyond chance (a survey's
    'searching for work' at each wave; their medians say nothing of a scale)."""
    if same_measurement(a, b) is not None:
        return True
    ok = np.isfinite(a) & np.isfinite(b)
    flags = ok.sum() >= MIN_FLAG_ROWS and all(set(np.unique(v[ok])) == {0.0, 1.0} for v in (a, b))
    return bool(flags and spearmanr(a[ok], b[ok]).statistic >= SAME_MEASURE)



def _numbered_alternatives(ctx: TimelineContext, stems: dict[str, list[tuple[int, str]]]) -> bool:
    """Whether the numbers are the alternatives of a choice, not waves: the target's classes end in
    them ('choice1', 'choice2'; 1, 2) and two stems or more are numbered alike (price1, price2, time1,
    time2: each alternative's attributes, known together when the choice is made)."""
    outcome = ctx.outcome
    if outcome is None or outcome.kind != TaskKind.CLASSIFICATION or not outcome.classes:
        return False
    labels = {m.group(0) for c in outcome.classes if (m := re.search(r"\d+$", str(c).strip()))}
    numbered = [{str(k) for k, _ in members} for members in stems.values() if len(members) >= 2]
    return len(labels) == len(outcome.classes) and sum(ks == labels for ks in numbered) >= 2


def _time_within_follow_up(ctx: TimelineContext) -> dict[str, Placement]:
    """Times named as such that never exceed the follow-up where chance pairing makes that only
    moderately unlikely (:func:`.event_times.time_within_follow_up`; the decisive ones are the
    value tests'): proposed as during follow-up, asked."""
    outcome = ctx.outcome
    if outcome.kind != TaskKind.SURVIVAL or outcome.duration is None:
        return {}
    out = {}
    # the start of each (start, stop] interval, found from the data whatever its name ('t0', 'time1'):
    # below its stop by construction, known when the interval begins
    start = getattr(ctx.index, "start", None)
    for c in ctx.features:
        p = ctx.profiles[c]
        tm = ctx.timings.get(c)
        if not p.holds_numbers or p.nunique < 5 or (tm is not None and tm.timing in ("follow_up", "outcome_derived")):
            continue
        if c == start:
            continue
        within = event_times.time_within_follow_up(c, numeric_values(ctx.df[c], p), outcome.duration)
        if within is not None:
            out[c] = Placement(TimelineGroup.DURING_FOLLOW_UP, EvidenceSource.NAMES, "time_within_follow_up",
                               event_times.within_words(c, within, outcome.time or "the duration")
                               + " (moderate evidence)", False, within)
    return out


def _other_endpoints(ctx: TimelineContext, strong: bool) -> dict[str, Placement]:
    """The time and indicator of each other endpoint (:mod:`.endpoints`) whose evidence is ``strong``
    (one follow-up with the target's: structure) or not (asked: a name's proposal)."""
    if ctx.outcome is None:
        return {}
    named = {(a, b) for a, b, what in partners(ctx) if what.startswith("a (time, indicator)")}
    out = {}
    for e in other_endpoints(ctx.df, ctx.profiles, ctx.outcome, ctx.features, named):
        if e.strong != strong:
            continue
        placed = {c for c in (e.time, e.flag) if (tm := ctx.timings.get(c)) is not None
                  and tm.timing in ("follow_up", "outcome_derived")}
        words = e.words(ctx.outcome.time, ctx.outcome.target)
        numbers = {"endpoint_time": e.time, "endpoint_flag": e.flag, "share_ending_with_follow_up": e.same_end}
        source = EvidenceSource.STRUCTURE if strong else EvidenceSource.NAMES
        for c in (e.time, e.flag):
            if c not in placed:
                out[c] = Placement(TimelineGroup.DURING_FOLLOW_UP, source, "other_endpoint", words, strong, numbers)
    return out


SERIES_AFTER = 2  # members of a numbered series the data places after the index before the rest are asked


def _series_mates(ctx: TimelineContext) -> dict[str, Placement]:
    """The other members of a numbered series (``emp1`` ... ``emp52``) of which the data places
    several after the index: the same measure at other times, perhaps also after it (``re74``
    may be baseline next to a follow-up ``re78``): proposed as follow-up, asked. Members numbered
    before a target of the series (``y1`` beside the target ``y2``) were measured before it: not proposed."""
    after = {c for c, tm in ctx.timings.items() if tm.timing in ("follow_up", "outcome_derived")}
    own = SERIES.match(ctx.outcome.target) if ctx.outcome is not None and ctx.outcome.target else None
    stems: dict[str, list[str]] = {}
    for c in ctx.features:
        if m := SERIES.match(c):
            if own is not None and m["stem"].lower() == own["stem"].lower() and int(m["k"]) < int(own["k"]):
                continue
            stems.setdefault(m["stem"].lower(), []).append(c)
    out = {}
    for members in stems.values():
        placed = [c for c in members if c in after]
        if len(placed) < SERIES_AFTER:
            continue
        for c in members:
            if c not in after:
                out[c] = Placement(TimelineGroup.DURING_FOLLOW_UP, EvidenceSource.NAMES, "series_mate",
                                   f"numbered like {', '.join(repr(p) for p in placed[:3])}"
                                   f"{' ...' if len(placed) > 3 else ''} ({len(placed)} of the series), which the "
                                   "data places after the index: the same measure at another time, perhaps after "
                                   "the index too", False, {"placed": placed})
    return out


def _received_in_one_arm(ctx: TimelineContext) -> dict[str, Placement]:
    """What a trial records in the treated arm only (:func:`.trial_arms.one_arm_measures`):
    proposed as during follow-up, asked."""
    out = {}
    for c, e in one_arm_measures(ctx.df, ctx.profiles, ctx.features).items():
        there = "missing" if e["value_there"] is None else f"always {e['value_there']!s}"
        out[c] = Placement(TimelineGroup.DURING_FOLLOW_UP, EvidenceSource.NAMES, "received_in_one_arm",
                           f"named as what a participant received, {there} where '{e['arm']}' is "
                           f"{e['arm_value']!s} and varying in the other arm: measured after randomisation",
                           False, e)
    return out


@timeline_source(EvidenceSource.NAMES)
def name_evidence(ctx: TimelineContext) -> dict[str, list[Placement]]:
    """What names propose (weak: an expert confirms)."""
    out: dict[str, list[Placement]] = {}
    if ctx.outcome is None or ctx.outcome.target is None:
        return out
    target = ctx.outcome.target
    out = _latest_of_a_series(ctx)
    for c, placement in {**_series_mates(ctx), **_numbered_waves(ctx), **_time_within_follow_up(ctx),
                         **_received_in_one_arm(ctx), **_other_endpoints(ctx, strong=False)}.items():
        if _later_than_target(ctx, c) is None:  # the target's own later wave is said below
            out.setdefault(c, []).append(placement)
    for c, (group, reason, numbers) in end_of_stay(ctx.outcome, ctx.features, ctx.profiles).items():
        out.setdefault(c, []).append(Placement(group, EvidenceSource.NAMES, "end_of_stay", reason, False, numbers))
    for c in ctx.features:
        later = _later_than_target(ctx, c)
        if later is not None:
            out.setdefault(c, []).append(Placement(TimelineGroup.DURING_FOLLOW_UP, EvidenceSource.NAMES,
                                                   "named_later", later, False))
        elif (same := _at_target_time(target, c) or _at_target_occasion(ctx, c)
              or _named_like_target(target, c)) is not None:
            out.setdefault(c, []).append(Placement(TimelineGroup.AT_OR_AFTER_OUTCOME, EvidenceSource.NAMES,
                                                   "named_at_outcome", same, False))
        elif (between := _between_start_and_target(target, c)) is not None:
            out.setdefault(c, []).append(Placement(TimelineGroup.DURING_FOLLOW_UP, EvidenceSource.NAMES,
                                                   "named_between", between, False))
        if PROCESS_NAME.search(c) and not PROCESS_NAME.search(target):
            out.setdefault(c, []).append(Placement(
                TimelineGroup.AT_OR_AFTER_OUTCOME, EvidenceSource.NAMES, "named_process",
                "named as a step of the process that produced a result (collected, received, verified, "
                "turnaround): not known before that result", False))
        if OUTCOME_EVENT_NAME.search(c) and not OUTCOME_EVENT_NAME.search(target):
            out.setdefault(c, []).append(Placement(
                TimelineGroup.DURING_FOLLOW_UP, EvidenceSource.NAMES, "named_after_index",
                "named as taken after the index or at the outcome (post-operative, follow-up, at discharge, at "
                "death)", False))
    return out


def strong_after(placements: list[Placement]) -> Placement | None:
    """The latest strong placement after the index among a column's (None: there is none)."""
    strong = [p for p in placements if p.strong and p.group in AFTER]
    return max(strong, key=lambda p: ORDER[TimelineGroup(p.group)]) if strong else None
