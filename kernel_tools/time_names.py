"""Column names that read as a time to an event (``futime``, ``os``, ``time_to_death``, ``days``):
shared by the diagnosis and the command line's input checks, which read headers before pandas is
imported."""

from __future__ import annotations

import re

DURATION_NAME = re.compile(
    r"(^|[_\W])(time|times|duration|spell|follow|followup|futime|survival|surv|survtime|tte|os|pfs|dfs|fu)"
    r"\d?([_\W]|$)|time_?\d?$|duration$|^surv|futime|follow_?up|time_?to|days_?to|len_?fol|"
    r"[_\W]days$|^(n_?days|days|weeks?|months?|years?|stop|t|t_?stop|life|lifetime|lifespan)$|"
    # the same in other languages, as a whole name or its last word (tiempo, jours, tage_bis_tod is left out)
    r"(^|[_\W])(d[ií]as|jours|tage|giorni|dagen|semanas|semaines|wochen|meses|mois|monate|tiempo|temps|"
    r"duraci[oó]n|dur[eé]e|dauer|seguimiento|suivi)$",
    re.IGNORECASE,
)

# the one value of a status on which every row is the event (1, True; as text in a CSV)
EVENT_VALUES = ("1", "1.0", "true")


def all_events_status(value: object, time: str | None, others: list[str]) -> bool:
    """Whether a target with the single ``value`` may be a status on which every row is the event
    (a trial where every patient died): the value is an event code and a time goes with it, given
    (``time``) or named among the ``others`` columns. The diagnosis decides; this only keeps it from
    being refused as "nothing to predict"."""
    return str(value).strip().lower() in EVENT_VALUES and (
        time is not None or any(DURATION_NAME.search(c) for c in others))
