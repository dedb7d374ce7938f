"""The model audit: a score too good to be true, and the verdict's checks kept in the session.

After each model step, :func:`suspected_leak` reads the score against what the diagnosis measured:
a near-perfect score carried by one feature the diagnosis did not clear is a suspected leak,
which the coordinator takes back to before the split and puts to the expert as a finding.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kernel_tools.findings import Finding, Option
from kernel_tools.vocabulary import RANKING_METRICS, Chart, FindingKind, Gate, Severity, StepStatus

from .episodes import Episode, stage_of
from .session import Session, Step
from .validity import Check, audit, verdict


@dataclass(frozen=True)
class Suspicion:
    """A suspected leak to ask about: the finding, the done split step to go back to, and why."""

    finding: Finding
    split: Step
    reason: str


def suspected_leak(session: Session, step: Step, episodes: dict[str, Episode], *,
                   suspicious_score: float, may_backtrack: bool) -> Suspicion | None:
    """A suspiciously perfect score of the model ``step``: a :class:`Suspicion` when its top
    feature should go to the expert (``may_backtrack``: the policy asks and backtracks are
    left), else None, with a warning in the session whenever the score was high."""
    s = session
    model = step.result.get("report") or {}
    scores = [v for v in (model.get("cv_score"), model.get("holdout_score")) if isinstance(v, (int, float))]
    perfect = any(v >= suspicious_score for v in scores) and model.get("metric") in RANKING_METRICS
    perfect |= any(str(w).startswith("suspect leakage") for w in model.get("warnings", []))
    if not perfect:
        return None
    # imported only now: the model module pulls in scikit-learn and lifelines (seconds of a
    # command-line run), which an honest score never needs here
    from kernel_tools.models.evaluate import DOMINANT_SHARE, top_importance_share

    split = next((st for st in s.plan if st.status == StepStatus.DONE and stage_of(episodes, st.episode) == "split"), None)
    top = next((i.get("feature") for i in model.get("importance", []) if i.get("feature")), None)
    share = top_importance_share(model.get("importance", []))
    if top is not None and share < DOMINANT_SHARE:
        # many features together can predict a well-defined outcome almost perfectly (a
        # class defined from measured quantities); a leak shows as one feature carrying it
        s.warnings.append(f"high score {scores} spread over several features (top {top!r} "
                          f"carries {share:.0%} of the importance): no single feature gives "
                          "the outcome away")
        return None
    cleared = cleared_by_diagnosis(s.diagnosis, top, model.get("metric"))
    if cleared is not None:
        s.handled.append(f"cleared_leakage:{top}")  # the report reads it: not a validity problem
        s.warnings.append(f"high score {scores}: the top feature {top!r} alone scores {cleared:.3f}, "
                          "and the diagnosis examined it: its values overlap between the outcomes "
                          "as a measured predictor's do, not as a recording of the outcome's")
        return None
    asked = top is not None and (f"suspected_leakage:{top}" in s.handled
                                 or any(top in st.columns and st.gate == Gate.LEAKAGE for st in s.plan
                                        if st.status in (StepStatus.DONE, StepStatus.SKIPPED)))
    if (split is None or top is None or asked or top not in (s.variables.get("columns") or [])
            or not may_backtrack or not split.checkpoint_id):
        s.warnings.append(f"suspiciously high score {scores}: check the top feature {top!r}")
        return None
    return Suspicion(finding=leak_finding(top, model, max(scores)), split=split,
                     reason=f"suspiciously perfect score ({model.get('metric')} {max(scores):.3f}); "
                            f"asking whether '{top}' leaks")


def leak_finding(top: str, model: dict[str, Any], score: float) -> Finding:
    """The finding put to the expert: drop the top feature before the split, or keep it."""
    return Finding(
        kind=FindingKind.SUSPECTED_LEAKAGE, columns=[top], severity=Severity.CRITICAL, gate=Gate.LEAKAGE,
        chart=Chart.MODEL_SCORE,  # said here: its declaration lives with the detectors, not loaded in this process
        summary=f"The model scores {score:.3f} ({model.get('metric')}), too good to be true; "
                f"its most important feature '{top}' may give the outcome away.",
        evidence={"metric": model.get("metric"), "cv_score": model.get("cv_score"),
                  "holdout_score": model.get("holdout_score")},
        options=[
            Option(id="drop", label=f"Drop {top}", description=f"Remove {top} before the split.",
                   risk="loses a real predictor if it is known at prediction time", recommended=True,
                   action={"function": "drop_columns",
                           "params": {"columns": [top], "reason": "may give the outcome away"}}),
            Option(id="keep", label="Keep it", description="It is known before the outcome.",
                   risk="a leaked column makes the score meaningless")],
    )


def cleared_by_diagnosis(diagnosis: dict[str, Any], top: str | None, metric: str | None) -> float | None:
    """The top feature's single-feature score when the diagnosis scored it as strong as a
    leak on the same metric and still did not flag it (e.g. petal width for iris species:
    near-perfect, yet the classes overlap where they meet); None otherwise."""
    from kernel_tools.diagnosis.leakage import ABSOLUTE

    single = (diagnosis.get("feature_scores") or {}).get(top)
    if (top is None or single is None or metric not in RANKING_METRICS
            or diagnosis.get("metric") != metric or top in (diagnosis.get("leakage") or [])):
        return None
    return float(single) if single >= (1 + ABSOLUTE) / 2 else None  # AUROC / C of that strength


def judge(session: Session, episodes: dict[str, Episode]) -> list[Check]:
    """The verdict's checks for the current model, kept in the session (panel, report)."""
    checks = audit(session, episodes=episodes)
    session.validity = [c.to_dict() for c in checks]
    session.changed("validity", checks=session.validity, valid=verdict(checks))
    return checks


def model_report(session: Session, episodes: dict[str, Episode]) -> dict[str, Any] | None:
    """The last trained model's report (``ModelReport.to_dict``), None before one."""
    return next((st.result.get("report") for st in reversed(session.plan)
                 if st.status == StepStatus.DONE and stage_of(episodes, st.episode) == "model"), None)

