"""The episode library, as data: what a step of data work is, when it applies, what it calls.

An episode is one entry in :data:`EPISODES`; planners, the coordinator and the worker read
these fields and never branch on episode ids for behaviour they could read here. Adding an
episode means adding one entry (and, for a new kind of finding, listing that kind in its ``when``).

Stages order the work: ``setup`` → ``pre_split`` (changes ``df``: applied before splitting,
replayed on new data through each step's report) → ``split`` → ``post_split`` (learned on
``train`` only, replayed on ``test`` with ``report.apply``) → ``model`` → ``final``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kernel_tools.findings import Finding

STAGES = ("setup", "pre_split", "split", "post_split", "model", "final")


@dataclass(frozen=True)
class Episode:
    """One kind of data work.

    ``when`` is a declarative predicate: ``finding_kinds`` (a finding of one of these kinds
    needs this episode), ``functions`` (or: its recommended kernel_tools call is one of these),
    ``gates`` (restricts ``functions`` matches to findings with one of these gates),
    ``always`` (once per session), ``min_frames`` (needs that many input frames), ``task`` (the
    task's attribute of that name holds the step's parameters: an answer on the task card).
    ``per_finding`` makes one step (and one decision) per finding instead of one step for all.
    ``runs`` says how a step of it is carried out: ``"cell"`` (the worker writes and runs its
    cell), ``"task"`` (no code: the answer to its decision sets the session's task) or
    ``"report"`` (a markdown cell with the report). ``source`` is the cell of an episode that
    calls no kernel_tools function. ``only_expert_drops``: a planner's revision never drops a
    pending step of it; only the expert does. ``valid_model_needs``: a planner may not leave it
    out of the plan (the Claude planner keeps it whatever it proposes).

    What the expert may do to its steps in a plan edit: ``required`` (a valid model needs it:
    never skipped), ``not_addable`` (why a step of it is never added by hand; empty: it can be),
    ``edit_params`` (the parameters an edit may set: name → spec, see :mod:`.plan_edits`).
    ``budget``: the seconds a step of it should take (None: the default of every step).
    ``entity_param``: the keyword of its call that takes the entity id, which the worker passes
    whenever splits and folds are grouped by the entity (:meth:`.worker.Worker.grouping`), so an
    entity's rows are judged together. ``budget_param``: the keyword of its call that takes the
    step's time budget in seconds, which the worker passes so that the call keeps to it itself
    (degrading and saying so) rather than being stopped far past it. ``titles``: a step's title
    by its findings' kind where the episode's name would say something else (a drop of redundant
    copies is no drop of identifiers; see :func:`step_title`).
    """

    id: str
    name: str
    stage: str
    order: float
    when: dict[str, Any]
    gate: str | None = None
    function: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    fallback_params: tuple[dict[str, Any], ...] = ()
    changes: tuple[str, ...] = ("df",)
    expect: dict[str, Any] = field(default_factory=dict)
    per_finding: bool = True
    report_var: str = "report"
    coordinator: str = ""
    worker: str = ""
    runs: str = "cell"
    source: str = ""
    only_expert_drops: bool = False
    valid_model_needs: bool = False
    required: bool = False
    not_addable: str = ""
    edit_params: dict[str, dict[str, Any]] = field(default_factory=dict)
    budget: float | None = None
    entity_param: str | None = None
    budget_param: str | None = None
    titles: dict[str, str] = field(default_factory=dict)

    @property
    def combines_frames(self) -> bool:
        """Whether it needs several input frames: it makes one of them (a join)."""
        return self.when.get("min_frames", 1) > 1

    @property
    def free_code(self) -> bool:
        """Whether its cell is code written for the session (no library call, no cell of its
        own): nothing but reading it tells what it touched."""
        return self.runs == "cell" and self.function is None and not self.source

    def with_entity(self, function: str | None, params: dict[str, Any], entity: str | None) -> dict[str, Any]:
        """``params`` of a call with the entity id under :attr:`entity_param` when the call is the
        episode's own function and there is an entity (a value already given is kept): the cell
        and the what-if estimate of its options judge an entity's rows together alike."""
        if not self.entity_param or function != self.function or not entity:
            return params
        return {**params, self.entity_param: params.get(self.entity_param, entity)}

    def matches_kind(self, finding: Finding) -> bool:
        return finding.kind in self.when.get("finding_kinds", ())

    def matches_action(self, finding: Finding) -> bool:
        action = recommended_action(finding)
        if not action or action.get("function") not in self.when.get("functions", ()):
            return False
        gates = self.when.get("gates")
        return gates is None or finding.gate in gates


def recommended_action(finding: Finding) -> dict[str, Any] | None:
    option = finding.recommended
    return option.action if option else None


# the choices of kernel_tools' transforms (kernel_tools.transforms.outliers.METHODS, ...; kept
# here so the server need not import the transforms; tests/test_plan_edits.py compares them)
OUTLIER_METHODS = ("iqr", "mad", "isolation_forest")
IMPUTE_METHODS = ("auto", "median", "mean", "most_frequent", "iterative", "knn", "hyperimpute", "missforest", "ice")
AGGREGATIONS = ("last", "first", "baseline", "final", "mean", "median", "min", "max", "sum", "count", "any")

# the specs of ``edit_params``: "kind" is columns, choice, number or names; "param" names the
# call's keyword when it differs; "doc" says what it sets
_COLUMNS = {"kind": "columns", "doc": "the columns the step works on"}
_DROPPED = {"columns": {**_COLUMNS, "doc": "the columns to drop"}}

EPISODES: tuple[Episode, ...] = (
    Episode(
        id="confirm_task", name="Confirm task and target", stage="setup", order=0,
        when={"always": True}, gate="task", changes=(), runs="task",
        required=True, not_addable="the task is confirmed once, at the start",
        coordinator="First make sure the task kind, the target (and for survival the duration "
        "column) and the entity id are right: every later step depends on them.",
        worker="No code: the answer updates the session's task.",
    ),
    Episode(
        id="number_blocks", name="Number the blocks of one entity's records", stage="pre_split", order=0.5,
        when={"task": "blocks"}, function="number_blocks", report_var="blocks", expect={"rows": "same"},
        per_finding=False, valid_model_needs=True,
        not_addable="it follows the task card's answer that the rows are blocks of one entity's records",
        coordinator="Rows that are consecutive blocks of one entity's records with no id get the block number "
        "as their entity id, so a split keeps each block together. A panel written out person by person looks "
        "so; the task card's answer says it is one, and how the blocks are cut.",
        worker="df, blocks = kt.number_blocks(df, column='block', size=k) (or counter='<column>').",
    ),
    Episode(
        id="first_transition", name="One row per subject from its multi-state rows", stage="pre_split", order=0.6,
        when={"task": "multistate"}, function="first_transition", report_var="transitions",
        expect={"rows": "fewer", "target_changes": True, "min_row_retention": 0.05}, per_finding=False,
        valid_model_needs=True,
        not_addable="it follows the task card's reading of multi-state rows",
        coordinator="Multi-state rows (a row per possible transition of each subject) become one row per subject: "
        "the time in the starting state until the transition the task card chose (any, or one), counted from "
        "its start, so each subject counts once and no row counts from 0 by mistake.",
        worker="df, transitions = kt.first_transition(df, id=..., start=..., stop=..., state_from=..., "
        "state_to=..., event=target, initial=..., into=None).",
    ),
    Episode(
        id="join_files", name="Join files", stage="pre_split", order=1,
        when={"min_frames": 2, "finding_kinds": ("join_keys", "join", "join_key")},
        function="join_frames", params={"how": "left"}, report_var="joined",
        expect={"rows": "same"}, per_finding=False,
        not_addable="joining files needs them at the start (jupyter dcpilot run A.csv B.csv)",
        coordinator="Several files: join them on the key diagnose_join found before anything "
        "else; a join that multiplies rows means the other file needs aggregating first.",
        worker="df, joined = kt.join_frames(df, other, on=key, how='left').",
    ),
    Episode(
        id="drop_stray_rows", name="Remove rows that are not data", stage="pre_split", order=1.5,
        when={"finding_kinds": ("stray_rows",), "functions": ("drop_rows",)},
        gate="row_removal", function="drop_rows", report_var="stray_rows",
        expect={"rows": "fewer"}, per_finding=False,
        coordinator="A header repeated inside the table or a 'Total' row describes no case: it goes "
        "first, before dtypes are fixed and before it can become a class of the target.",
        worker="df, stray_rows = kt.drop_rows(df, where=[{column: value}], index=[labels]).",
    ),
    Episode(
        id="fix_dtypes", name="Fix dtypes and N/A tokens", stage="pre_split", order=2,
        when={"finding_kinds": ("dtype", "wrong_dtype", "dtypes", "na_tokens", "na_token",
                                "mixed_types", "numeric_as_text", "boolean_as_text",
                                "dates_as_text", "disguised_missing"),
              "functions": ("fix_dtypes",)},
        function="fix_dtypes", report_var="dtypes", per_finding=False,
        expect={"rows": "same", "new_missing": True}, edit_params={"columns": _COLUMNS},
        coordinator="Cheap and safe: parse numbers/booleans/dates stored as text and turn N/A "
        "tokens into missing values before other checks read the columns.",
        worker="df, dtypes = kt.fix_dtypes(df).",
    ),
    Episode(
        id="recode_status", name="Recode the status to 0/1", stage="pre_split", order=2.5,
        when={"functions": ("recode_status",)}, function="recode_status", report_var="status_coding",
        expect={"rows": "same", "target_changes": True}, per_finding=False,
        not_addable="it follows the task card's reading of a status of several codes",
        coordinator="A status of several codes (alive / died of the disease / of other causes) is recoded to "
        "0 = censored, 1 = any event, the code read as censored being the task card's: every survival "
        "model reads 0 as censored.",
        worker="df, status_coding = kt.recode_status(df, column=target, censored=code).",
    ),
    Episode(
        id="rank_levels", name="Rank the target's ordered levels", stage="pre_split", order=2.6,
        when={"task": "ranks"}, function="rank_levels", report_var="target_ranks",
        expect={"rows": "same", "target_changes": True}, per_finding=False, valid_model_needs=True,
        not_addable="it follows the task card's reading of the target as an ordered score",
        coordinator="An ordered target (no < perhaps < yes, none < mild < severe) read as a score is recoded as "
        "its ranks 1, 2, ... in the order the task card confirmed, so a regression uses the order a "
        "classifier would throw away.",
        worker="df, target_ranks = kt.rank_levels(df, column=target, levels=[lowest, ..., highest]).",
    ),
    Episode(
        id="dose_history", name="Turn dose rows into features of each measurement", stage="pre_split", order=2.7,
        when={"finding_kinds": ("dose_rows",), "functions": ("dose_history",)},
        gate="row_removal", function="dose_history", report_var="doses",
        # the rows that go hold no target: doses can outnumber a cohort's samples several times over
        expect={"rows": "fewer", "min_row_retention": 0.05}, per_finding=False,
        not_addable="it answers dose rows of a long cohort, which the diagnosis finds",
        coordinator="A long cohort's dose rows have no measured target: before rows with a missing target "
        "go, each measurement gets its dose history from the rows at or before its time, then they go.",
        worker="df, doses = kt.dose_history(df, id=entity, time=time_column, dose=dose_column).",
    ),
    Episode(
        id="remove_leakage", name="Remove leakage", stage="pre_split", order=3,
        when={"finding_kinds": ("leakage", "target_leakage", "target_proxy", "post_outcome",
                                "leak", "suspected_leakage"),
              "functions": ("drop_columns",), "gates": ("leakage",)},
        gate="leakage", function="drop_columns", params={"reason": "target proxy (leakage)"},
        report_var="leakage_drop", expect={"rows": "same"}, edit_params=_DROPPED,
        coordinator="A column that is known only after the outcome (or copies it) makes any "
        "metric meaningless: the expert confirms, then it goes before any split.",
        worker="df, leakage_drop = kt.drop_columns(df, [cols], reason=...).",
    ),
    Episode(
        id="redcap_baseline", name="One row per record at baseline", stage="pre_split", order=3.5,
        when={"finding_kinds": ("redcap_events",), "functions": ("redcap_baseline",)},
        gate="aggregation", function="redcap_baseline", report_var="baseline",
        expect={"rows": "one_per_entity"}, per_finding=False,
        not_addable="it answers a REDCap export's events, which the diagnosis finds",
        coordinator="A REDCap export has a row per record and event: a prediction at enrolment takes each "
        "record's baseline row (what that event holds) and the outcome from the event that records it.",
        worker="df, baseline = kt.redcap_baseline(df, outcome=[target], events=[...], outcome_event=...).",
    ),
    Episode(
        id="aggregate", name="Aggregate repeated measurements", stage="pre_split", order=4,
        when={"finding_kinds": ("repeated_measurements", "repeated_rows", "repeated_entities",
                                "multiple_rows_per_entity", "entity_repeats", "longitudinal"),
              "functions": ("aggregate_per_entity",)},
        gate="aggregation", function="aggregate_per_entity", params={"how": "last"},
        report_var="aggregation", expect={"rows": "one_per_entity"},
        fallback_params=({"how": "last"},), budget=120.0,
        edit_params={"how": {"kind": "choice", "choices": list(AGGREGATIONS),
                             "doc": "which value of each entity's records (baseline: the first record as is)"},
                     "landmark": {"kind": "number", "min": 0, "optional": True,
                                  "doc": "only records up to this time feed the features"}},
        coordinator="Several rows per entity: either one row per entity (which visit?) or keep "
        "the rows and split/cross-validate grouped by the entity id. The expert decides.",
        worker="df, aggregation = kt.aggregate_per_entity(df, id=..., time=..., how=...).",
    ),
    Episode(
        id="grouping_columns", name="Columns that group subjects", stage="pre_split", order=4.5,
        when={"finding_kinds": ("grouping_column",)},
        gate="identifiers", function="drop_columns", params={"reason": "identifies a group of rows"},
        report_var="grouping_drop", expect={"rows": "same"}, valid_model_needs=True, only_expert_drops=True,
        edit_params=_DROPPED,
        coordinator="A matched set, a batch, a site or a family id is not a measurement: the expert says "
        "whether it goes, groups the split, or (rarely) is a feature. Each is its own question.",
        worker="df, grouping_drop = kt.drop_columns(df, [col], reason='identifies a group of rows').",
    ),
    Episode(
        id="drop_identifiers", name="Drop identifiers", stage="pre_split", order=5,
        when={"finding_kinds": ("identifier", "identifiers", "id_column", "row_index",
                                "free_text_identifier"),
              "functions": ("drop_columns",)},
        gate="identifiers", function="drop_columns", params={"reason": "identifier (no signal)"},
        report_var="identifier_drop", expect={"rows": "same"}, per_finding=False, valid_model_needs=True,
        edit_params=_DROPPED, titles={"redundant_features": "Drop redundant copies"},
        coordinator="Row numbers, record keys and names carry no signal but let a model memorise "
        "rows; the expert confirms, then they go (the entity id is kept for grouping).",
        worker="df, identifier_drop = kt.drop_columns(df, [cols], reason='identifier').",
    ),
    Episode(
        id="drop_uninformative", name="Drop constant and free-text columns", stage="pre_split",
        order=6,
        when={"finding_kinds": ("constant_column", "constant", "near_constant", "empty_column",
                                "free_text")},
        function="drop_columns", params={"reason": "constant (no information)"},
        report_var="uninformative_drop", expect={"rows": "same"}, per_finding=False, edit_params=_DROPPED,
        titles={"constant_column": "Drop constant columns", "constant": "Drop constant columns",
                "near_constant": "Drop nearly constant columns", "empty_column": "Drop empty columns",
                "free_text": "Drop free-text columns"},  # a constant column is not called free text
        coordinator="Columns with a single value tell a model nothing; free text needs features "
        "extracted first.",
        worker="df, uninformative_drop = kt.drop_columns(df, [cols], reason=...).",
    ),
    Episode(
        id="deduplicate", name="Deduplicate", stage="pre_split", order=7,
        when={"finding_kinds": ("duplicates", "duplicate_rows", "near_duplicates"),
              "functions": ("deduplicate",)},
        gate="row_removal", function="deduplicate", report_var="dedup",
        expect={"rows": "fewer"},
        edit_params={"columns": {**_COLUMNS, "param": "subset",
                                 "doc": "rows equal on these columns are duplicates"}},
        coordinator="Exact duplicates inflate scores when copies land on both sides of a split.",
        worker="df, dedup = kt.deduplicate(df).",
    ),
    Episode(
        id="split", name="Split train/test", stage="split", order=10, when={"always": True},
        function="split", params={"test_size": 0.2, "random_state": 0}, report_var="split_report",
        changes=("df", "train", "test"),
        fallback_params=({"test_size": 0.25, "random_state": 0},), required=True,
        edit_params={"test_size": {"kind": "number", "min": 0.05, "max": 0.5,
                                   "doc": "share of rows (or entities) held out"},
                     "random_state": {"kind": "number", "min": 0, "max": 2**31 - 1, "integer": True,
                                      "doc": "seed of the split: another seed holds out other rows"}},
        coordinator="Split before learning anything from the data; grouped by the entity id "
        "when one exists, stratified for classification.",
        worker="train, test, split_report = kt.split(df, target=..., groups=id, ...).",
    ),
    Episode(
        id="normalize_categories", name="Normalise categories", stage="post_split", order=11,
        when={"finding_kinds": ("inconsistent_categories", "category_variants", "categories",
                                "rare_categories", "typos"),
              "functions": ("normalize_categories",)},
        function="normalize_categories", report_var="categories", changes=("train", "test"),
        expect={"rows": "same"}, per_finding=False, edit_params={"columns": _COLUMNS},
        coordinator="Spelling/case variants of one category split its signal.",
        worker="train, categories = kt.normalize_categories(train, ...); test = categories.apply(test).",
    ),
    Episode(
        id="convert_units", name="Normalise units", stage="post_split", order=12,
        when={"finding_kinds": ("units", "mixed_units", "unit_inconsistency", "unit_mismatch"),
              "functions": ("convert_units",)},
        function="convert_units", report_var="units", changes=("train", "test"),
        expect={"rows": "same"},
        coordinator="One column in two units (kg and lb) is a silent distortion.",
        worker="train, units = kt.convert_units(train, ...); test = units.apply(test).",
    ),
    Episode(
        id="impute", name="Impute missing values", stage="post_split", order=13,
        when={"finding_kinds": ("missing_values", "missing", "missingness"),
              "functions": ("impute",)},
        gate="imputation", function="impute", params={"method": "auto"}, report_var="imputation",
        changes=("train", "test"), expect={"rows": "same", "new_missing": False},
        fallback_params=({"method": "median"}, {"method": "mean"}), budget=180.0, budget_param="budget",
        edit_params={"columns": _COLUMNS,
                     "method": {"kind": "choice", "choices": list(IMPUTE_METHODS),
                                "doc": "how missing values are filled"}},
        coordinator="Impute on train only and replay on test; dropping rows is the expert's call.",
        worker="train, imputation = kt.impute(train, ...); test = imputation.apply(test).",
    ),
    Episode(
        id="outliers", name="Handle outliers", stage="post_split", order=14,
        when={"finding_kinds": ("outliers", "outlier", "impossible_values", "extreme_values"),
              "functions": ("handle_outliers",)},
        gate="outliers", function="handle_outliers", params={"action": "clip"},
        report_var="outliers", changes=("train", "test"),
        fallback_params=({"action": "clip"},),
        edit_params={"columns": _COLUMNS,
                     "method": {"kind": "choice", "choices": list(OUTLIER_METHODS),
                                "doc": "how outliers are found"},
                     "threshold": {"kind": "number", "min": 0, "exclusive_min": True, "max": 100,
                                   "doc": "IQR multiple (iqr, 1.5), MAD multiple (mad, 3.5) or share "
                                          "(isolation_forest, < 0.5)"}},
        coordinator="Extreme values may be errors or real patients: the expert decides.",
        worker="train, outliers = kt.handle_outliers(train, ...); test = outliers.apply(test).",
    ),
    Episode(
        id="label_issues", name="Label issues", stage="post_split", order=15,
        when={"finding_kinds": ("label_issues", "label_noise", "mislabeled"),
              "functions": ("handle_label_issues",)},
        gate="label_issues", function="handle_label_issues", report_var="label_fix",
        changes=("train",), expect={"target_changes": True}, budget=180.0, entity_param="groups",
        coordinator="Suspected label errors are fixed on train only; the test labels stay as "
        "they are so the score stays honest.",
        worker="train, label_fix = kt.handle_label_issues(train, ..., groups=id): out-of-fold by entity.",
    ),
    Episode(
        id="train_evaluate", name="Train and evaluate", stage="model", order=20,
        when={"always": True}, function="fit_evaluate", report_var="model", changes=("model",),
        fallback_params=({"cv": 3},), required=True, budget=300.0,
        edit_params={"candidates": {"kind": "names", "max_items": 10,
                                    "doc": "the model candidates to cross-validate"}},
        coordinator="Fit on train with the task's metric (AUROC, R², C-index), grouped CV when "
        "an entity id exists, then score once on test.",
        worker="model = kt.fit_evaluate(train, target=..., task=..., test=test, preprocess=[...]).",
    ),
    Episode(
        id="explain", name="Explain", stage="final", order=21, when={"always": True},
        changes=(), report_var="importance", source="pd.DataFrame(model.importance).head(15)",
        coordinator="Show which features drive the model so the expert can spot a leak.",
        worker="pd.DataFrame(model.importance).head(15).",
    ),
    Episode(
        id="report", name="Report", stage="final", order=22, when={"always": True}, changes=(),
        runs="report", required=True, not_addable="the report is always the last step",
        coordinator="Summarise what was done, what was decided and by whom, and the score.",
        worker="A markdown cell.",
    ),
)

CUSTOM = Episode(
    id="custom", name="Custom step", stage="pre_split", order=9, when={}, gate="custom_code",
    changes=("df",), only_expert_drops=True,
    not_addable="custom code comes from a free-text instruction to the Claude planner",
    coordinator="Free-text instruction turned into code: shown and gated.",
    worker="The code as written, after the expert approved it.",
)


# What a kernel_tools call may do to the frame when a decision picks it instead of its
# episode's own call: the post-step checks allow it (the generic checks still apply).
CALL_EXPECT: dict[str, dict[str, Any]] = {
    "to_intervals": {"target_changes": True},  # the event moves to the interval that ends in it
}


def library(extra: tuple[Episode, ...] = ()) -> dict[str, Episode]:
    """The episodes by id (the built-in ones plus ``extra``)."""
    episodes = {e.id: e for e in EPISODES + (CUSTOM,)}
    episodes.update({e.id: e for e in extra})
    return episodes


def stage_of(episodes: dict[str, Episode], episode_id: str) -> str | None:
    """The stage of an episode by id; None for an episode the library does not hold."""
    ep = episodes.get(episode_id)
    return ep.stage if ep is not None else None


def step_title(episode: Episode, found: list[Finding]) -> str:
    """What a step of ``episode`` does to ``found``, and the columns it acts on: named by the
    findings' kind (``Drop redundant copies: x_last (kept: x)``), else by the episode."""
    names = list(dict.fromkeys(episode.titles.get(f.kind, episode.name) for f in found))
    verb = names[0].split(" ", 1)[0]
    if len(names) > 1 and all(n.startswith(f"{verb} ") for n in names):  # "Drop identifiers and redundant copies"
        name = f"{verb} " + " and ".join(n.split(" ", 1)[1] for n in names)
    else:
        name = names[0] if len(names) == 1 else episode.name
    acted = {c: None for f in found for c in _acts_on(episode, f)}
    if len(found) > 1:
        acted = dict.fromkeys(sorted(acted))
    kept = [c for f in found for c in f.columns if c not in acted]
    columns = ", ".join(acted) + (f" (kept: {', '.join(dict.fromkeys(kept))})" if kept and acted else "")
    return f"{name}: {columns}" if columns else name


def _acts_on(episode: Episode, finding: Finding) -> list[str]:
    """The columns the finding's recommended call of the episode's function acts on when they are
    part of the finding's (a redundant pair drops one of its two), else the finding's columns."""
    action = recommended_action(finding) or {}
    columns = (action.get("params") or {}).get("columns") if action.get("function") == episode.function else None
    if isinstance(columns, list) and columns and set(columns) < set(finding.columns):
        return [str(c) for c in columns]
    return list(finding.columns)


def episode_for(finding: Finding, episodes: dict[str, Episode]) -> Episode | None:
    """The episode that handles a finding: by kind first, then by its recommended call."""
    ordered = sorted(episodes.values(), key=lambda e: e.order)
    for ep in ordered:
        if ep.matches_kind(finding):
            return ep
    for ep in ordered:
        if ep.matches_action(finding):
            return ep
    return None
