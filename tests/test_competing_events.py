"""A status of several codes next to a follow-up time is survival with competing events, asked
(issue 26): the censoring code is the one whose rows were followed longest (or 0 by convention
under a follow-up name), named with the other readings ranked; a 0/1 event stays plain; classes
next to a time that is not a follow-up stay classes. Generated data and the development-half
table ss_cgvhd (benchmarks/halves.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kernel_tools.diagnosis.event_codes import censoring_code

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import halves  # noqa: E402
from dev_tables import quiet_diagnose, run_recommended  # noqa: E402


def registry(codes: dict[int, float], censored: int, n: int = 400, seed: int = 0, time: str = "time") -> pd.DataFrame:
    """A cohort whose status takes ``codes`` (code -> share of rows); the rows of ``censored``
    are followed until the study ends (up to 10 years), the others until their event."""
    rng = np.random.default_rng(seed)
    status = rng.choice(list(codes), n, p=list(codes.values()))
    event_time = rng.exponential(2.0, n)
    end_of_study = rng.uniform(4, 10, n)
    follow_up = np.where(status == censored, end_of_study, np.minimum(event_time, end_of_study))
    return pd.DataFrame({"age": rng.normal(60, 10, n).round(), "sex": rng.choice(["f", "m"], n),
                         time: follow_up.round(3) + 0.01, "status": status})


def test_a_status_0_1_2_with_0_not_the_most_common_is_survival_asked_with_0_censored():
    d = quiet_diagnose(registry({0: 0.2, 1: 0.5, 2: 0.3}, censored=0), target="status")
    task = d.inference("task")
    assert d.task["kind"] == "survival" and d.task["time"] == "time"
    assert task.confidence == "low"
    assert task.details["censored"] == "0" and task.details["events"] == ["1", "2"]
    assert task.details["competing"] == "any event" and task.details["censoring_stands_out"] is True
    assert "followed longest" in task.evidence[1] and "'any event'" in task.evidence[0]
    # the other readings, ranked by follow-up, then the codes as classes; never regression for codes
    assert [a.value for a in task.alternatives][-1] == "classification"
    assert {a.value for a in task.alternatives[:-1]} == {"survival with 1 censored", "survival with 2 censored"}
    assert [a.score for a in task.alternatives] == sorted((a.score for a in task.alternatives), reverse=True)


def test_a_censoring_code_in_the_middle_is_survival_asked_and_recoded_to_0_1():
    # "1 died of the disease, 2 alive, 3 died of other causes": the models read 0 as censored
    df = registry({1: 0.3, 2: 0.45, 3: 0.25}, censored=2, seed=1)
    d = quiet_diagnose(df, target="status")
    task = d.inference("task")
    assert d.task["kind"] == "survival" and d.task["censored"] == "2" and task.confidence == "low"
    assert task.details["censored"] == "2" and task.details["events"] == ["1", "3"]
    assert "2 censored" in task.evidence[0] and "followed longest" in task.evidence[1]
    assert [a.value for a in task.alternatives] == ["survival with 1 censored", "survival with 3 censored",
                                                    "classification"]  # 1 followed longer than 3; no regression
    (setup,) = d.by_kind("survival_setup")
    assert setup.recommended.action == {"function": "recode_status", "params": {"column": "status", "censored": 2}}
    assert setup.evidence["censored_code"] == "2"


def test_a_status_given_as_survival_is_read_as_when_inferred_and_only_a_0_is_not_asked():
    df = registry({1: 0.3, 2: 0.45, 3: 0.25}, censored=2, seed=1)
    d = quiet_diagnose(df, target="status", task="survival", time="time")
    assert d.task["censored"] == "2" and d.inference("task").confidence == "low"  # survival said, not the code
    assert d.by_kind("survival_setup")[0].recommended.action["params"]["censored"] == 2
    zero = quiet_diagnose(registry({0: 0.5, 1: 0.3, 2: 0.2}, censored=0, seed=5), target="status", task="survival",
                          time="time")
    assert zero.task["censored"] == "0" and zero.inference("task").confidence == "given"


def test_the_censoring_code_is_the_longest_followed_whatever_its_value_or_share():
    for censored, codes in [(0, {0: 0.1, 1: 0.6, 2: 0.3}), (3, {1: 0.3, 2: 0.3, 3: 0.2, 4: 0.2}),
                            (1, {0: 0.3, 1: 0.4, 2: 0.3})]:
        df = registry(codes, censored=censored, seed=censored)
        coding = censoring_code(df["status"].to_numpy(float), df["time"].to_numpy(), named_follow_up=False)
        assert coding is not None and coding.censored == censored and coding.stands_out
    days = registry({0: 0.5, 1: 0.3, 2: 0.2}, censored=0, seed=5).assign(time=lambda d: d["time"] * 1000)
    coding = censoring_code(days["status"].to_numpy(float), days["time"].to_numpy(), named_follow_up=False)
    assert coding is not None and "e+" not in coding.evidence[0] and "," in coding.evidence[0]  # 2,997, not 3e+03


def test_under_a_follow_up_name_0_is_censored_by_convention_when_no_code_stands_out_and_still_asked():
    rng = np.random.default_rng(2)
    n = 300
    df = pd.DataFrame({"futime": rng.exponential(300, n).round() + 1, "status": rng.choice([0, 1, 1, 2], n),
                       "age": rng.normal(60, 10, n).round()})
    d = quiet_diagnose(df, target="status")
    task = d.inference("task")
    assert d.task["kind"] == "survival" and task.confidence == "low"
    assert task.details["censoring_stands_out"] is False and "by convention only" in task.evidence[1]


def test_a_plain_0_1_event_next_to_a_time_stays_high_confidence():
    d = quiet_diagnose(registry({0: 0.6, 1: 0.4}, censored=0, seed=3), target="status")
    assert d.task["kind"] == "survival" and d.inference("task").confidence == "high"
    assert "censored" not in d.inference("task").details


def test_three_classes_next_to_a_time_of_day_are_not_survival():
    rng = np.random.default_rng(4)
    n = 600
    x = rng.normal(size=n)
    outcome = np.digitize(x + rng.normal(0, 0.7, n), [-0.5, 0.8])  # 0 most common: an old trap
    df = pd.DataFrame({"x": x, "time_of_day": rng.uniform(0, 24, n).round(2), "severity": outcome})
    d = quiet_diagnose(df, target="severity")
    # three codes that 'x' follows in order: an ordered score, asked (session 17); never survival
    assert d.task["kind"] == "regression" and "censored" not in d.inference("task").details
    assert censoring_code(outcome.astype(float), df["time_of_day"].to_numpy(), named_follow_up=False) is None


def _cgvhd() -> pd.DataFrame:
    sd = pytest.importorskip("sksurv.datasets")
    assert halves.half("ss_cgvhd") == "dev"
    X, y = sd.load_cgvhd()
    out = X.copy()
    for name in y.dtype.names:
        out[name] = y[name]
    return out


def test_the_dev_table_cgvhd_is_survival_with_its_censoring_code_asked():
    d = quiet_diagnose(_cgvhd(), target="status")
    task = d.inference("task")
    assert d.task["kind"] == "survival" and d.task["time"] == "ftime" and task.confidence == "low"
    assert task.details["censored"] == "0" and task.details["events"] == ["1", "2", "3"]


@pytest.mark.slow
def test_cgvhd_under_the_recommended_policy_is_survival_and_names_the_task_coding(tmp_path):
    report = run_recommended(_cgvhd(), "status", tmp_path)
    assert report["task"]["kind"] == "survival" and report["model"]["metric"] == "c_index"
    checks = {c["check"]: c for c in report["validity"]}
    assert not checks["structure_confirmed"]["passed"] and report["valid"] is False
    assert "0 censored, codes 1, 2, 3 merged as 'any event'" in checks["structure_confirmed"]["detail"]
    assert checks["task_metric"]["passed"]
    import nbformat

    (notebook,) = (tmp_path / "out").glob("*.ipynb")
    cells = [c.source for c in nbformat.read(notebook, 4).cells if c.cell_type == "code"]
    assert sum("df, status_coding = kt.recode_status(df, column='status', censored=0)" in c for c in cells) == 1


@pytest.mark.slow
def test_a_status_coded_1_2_3_runs_as_survival_after_a_recode_cell_that_undo_takes_back(tmp_path):
    import asyncio

    from jupyter_dcpilot.engine.coordinator import ApprovalPolicy, Coordinator
    from jupyter_dcpilot.engine.hosts import HeadlessHost
    from jupyter_dcpilot.engine.session import Session, sidecar_path
    from jupyter_dcpilot.engine.task import Given, Inputs, Task

    registry({1: 0.3, 2: 0.45, 3: 0.25}, censored=2, n=300, seed=1).to_csv(tmp_path / "data.csv", index=False)
    notebook = tmp_path / "nb.ipynb"
    session = Session(notebook=str(notebook), path=str(sidecar_path(notebook)),
                      task=Task(given=Given(target="status")), inputs=Inputs(frames=["df"]))
    codes = "__import__('json').dumps(sorted(float(c) for c in df['status'].dropna().unique()))"

    async def run() -> tuple[str, list[str], dict, list[float], list[float]]:
        async with HeadlessHost(notebook) as host:
            await host.run_cell(f"import pandas as pd\ndf = pd.read_csv({str(tmp_path / 'data.csv')!r})", {})
            coord = Coordinator(session, host, host, policy=ApprovalPolicy.from_spec("recommended"))
            state = await coord.run_until_blocked()
            sources = [c.source for c in host.notebook.cells]
            report = coord.report()
            recoded = await host.evaluate(codes)
            recode = next(s for s in session.plan if s.episode == "recode_status")
            await coord.undo(recode.checkpoint_id)
            return state, sources, report, recoded, await host.evaluate(codes)

    state, sources, report, recoded, undone = asyncio.run(run())
    assert state == "finished"
    assert session.task.kind == "survival" and session.task.censored == "2"
    cells = [s for s in sources if "kt.recode_status(" in s]
    assert len(cells) == 1 and "df, status_coding = kt.recode_status(df, column='status', censored=2)" in cells[0]
    assert any("model = kt.fit_evaluate(train, target='status', task='survival', time='time'" in s for s in sources)
    assert report["model"]["metric"] == "c_index" and report["task"]["kind"] == "survival"
    assert recoded == [0.0, 1.0] and undone == [1.0, 2.0, 3.0]  # undo restores the codes
    checks = {c["check"]: c for c in report["validity"]}
    assert checks["task_metric"]["passed"] and not checks["structure_confirmed"]["passed"]
    assert "2 censored" in checks["structure_confirmed"]["detail"]


def staggered(medians: dict[int, float], counts: dict[int, int], seed: int = 0) -> pd.DataFrame:
    """A status whose code k has ``counts[k]`` rows followed about ``medians[k]`` (spread 20%)."""
    rng = np.random.default_rng(seed)
    status = np.concatenate([np.full(n, k) for k, n in counts.items()])
    time = np.concatenate([medians[k] * rng.uniform(0.8, 1.2, n) for k, n in counts.items()])
    return pd.DataFrame({"age": rng.normal(60, 10, len(status)).round(), "time": time.round(3), "status": status})


def test_0_followed_longest_by_a_margin_is_taken_whatever_the_rank_test_says():
    # nearly everyone had an event: 4 censored rows (two of them lost early) are too few for
    # p < 0.05, not for the margin
    df = staggered({0: 9.0, 1: 2.0, 2: 1.5}, {0: 4, 1: 89, 2: 7})
    df.loc[df.index[:2], "time"] = [0.5, 1.0]
    coding = censoring_code(df["status"].to_numpy(float), df["time"].to_numpy(), named_follow_up=False)
    assert coding is not None and coding.censored == 0 and not coding.uncertain and coding.stands_out
    assert float(coding.evidence[0].split("p = ")[1].split(")")[0]) >= 0.05


def test_another_code_than_0_needs_strong_evidence_else_0_is_taken_and_flagged_uncertain():
    # 1's rows followed longest, beyond chance, but only 1.3x 0's: not enough to overrule the convention
    df = staggered({0: 5.0, 1: 6.5, 2: 2.0}, {0: 150, 1: 60, 2: 150}, seed=1)
    coding = censoring_code(df["status"].to_numpy(float), df["time"].to_numpy(), named_follow_up=False)
    assert coding is not None and coding.censored == 0 and coding.uncertain and not coding.stands_out
    assert "not clearly enough to overrule the convention" in coding.evidence[0]
    strong = staggered({0: 3.0, 1: 6.5, 2: 2.0}, {0: 150, 1: 60, 2: 150}, seed=1)
    coding = censoring_code(strong["status"].to_numpy(float), strong["time"].to_numpy(), named_follow_up=False)
    assert coding is not None and coding.censored == 1 and not coding.uncertain


def test_an_uncertain_coding_is_asked_even_where_survival_was_given():
    df = staggered({0: 5.0, 1: 6.5, 2: 2.0}, {0: 150, 1: 60, 2: 150}, seed=1)
    d = quiet_diagnose(df, target="status", task="survival", time="time")
    task = d.inference("task")
    assert d.task["censored"] == "0" and task.confidence == "low" and task.details["censoring_uncertain"] is True
    assert "survival with 1 censored" in [a.value for a in task.alternatives]
    sure = quiet_diagnose(staggered({0: 9.0, 1: 2.0, 2: 1.5}, {0: 40, 1: 90, 2: 30}), target="status",
                          task="survival", time="time")
    assert sure.task["censored"] == "0" and sure.inference("task").confidence == "given"


def test_the_censoring_code_of_cgvhd_is_0_on_its_subsamples():
    df = _cgvhd()
    status, time = df["status"].to_numpy(float), df["ftime"].to_numpy(float)
    for seed in range(10):
        rows = np.random.default_rng(seed).choice(len(df), int(0.8 * len(df)), replace=False)
        coding = censoring_code(status[rows], time[rows], named_follow_up=False)
        assert coding is not None and coding.censored == 0, seed


def test_a_status_of_seven_codes_a_registry_s_causes_is_survival_asked_with_0_censored():
    # 0 alive, 1-6 the cause of death or failure: a transplant registry's grouping
    causes = {0: 0.4, **{c: 0.1 for c in range(1, 7)}}
    d = quiet_diagnose(registry(causes, censored=0, n=700, seed=6, time="futime"), target="status")
    task = d.inference("task")
    assert d.task["kind"] == "survival" and d.task["time"] == "futime"
    assert task.confidence == "low" and task.details["censored"] == "0"
    assert task.details["events"] == [str(c) for c in range(1, 7)]


def test_a_seven_point_score_beside_a_duration_stays_classes():
    # a Likert answer next to how long the interview took: no code is followed longest
    rng = np.random.default_rng(7)
    n = 700
    x = rng.normal(size=n)
    score = np.digitize(x + rng.normal(0, 0.8, n), [-1.5, -0.9, -0.3, 0.3, 0.9, 1.5]) + 1
    df = pd.DataFrame({"x": x, "interview_minutes": rng.gamma(4, 10, n).round(1), "agreement": score})
    assert censoring_code(score.astype(float), df["interview_minutes"].to_numpy(), named_follow_up=False) is None
    assert d_kind(df, "agreement") != "survival"


def d_kind(df: pd.DataFrame, target: str) -> str:
    return str(quiet_diagnose(df, target=target).task["kind"])
