"""Names that say a column identifies something: a row, a subject, a unit a study measures again."""

from __future__ import annotations

import re

ID_NAME_WORDS = re.compile(
    r"(^|[_\W])(id|ids|key|uuid|guid|pk|no|nr|number|num|code|name)([_\W]|$)|"
    r"rownum|row_?number|patient|subject|customer|client|user|person|member|account|"
    r"participant|household|mrn|surname|"
    r"^(p|pt|pat|subj|rec|case|obs|enc)_?id$|"  # the usual short keys: pid, patid, subjid, caseid
    # a unit's name run into 'id' (childid, schoolid, hhid, famid, sid): the units studies measure again
    r"^(child|kid|school|sch|student|pupil|class|teacher|family|fam|hh|house|mother|infant|baby|twin|pair|indiv|ind|"
    r"resp|hosp|clinic|site|center|centre|ward|doctor|provider|study|trial|visit|adm|stay|episode|sample|animal|"
    r"plant|plot|herd|farm|village|cluster|firm|company|store|cust|acct|sub|s|u|h|f|c)id$",
    re.IGNORECASE,
)
ID_NAME_CASED = re.compile(r"[a-z0-9](Id|ID|Name|No)$")


def looks_like_id_name(name: str) -> bool:
    return bool(ID_NAME_WORDS.search(name) or ID_NAME_CASED.search(name))


# named as nothing but an identifier ("id", "user_id", "subjectID"): with an order within its
# rows that is enough (a name or code could be shared by chance, an id is not)
STRONG_ID_NAME = re.compile(r"^(?i:id|ids)$|[_\W](?i:id|ids)$|^(?i:id)[_\W]|[a-z0-9](Id|ID)$")
# a name for one of the units a study measures again and again: several rows under it are
# rows of one unit by the name alone (a column "patient" or "litter_id" that repeats)
ENTITY_NAME = re.compile(
    r"^(patient|subject|participant|person|individual|respondent|animal|rat|mouse|rabbit|chick|"
    r"dog|pig|cow|tree|litter|family|twin|household|student|pupil|worker|operator|rater)s?([_\W]?(id|ids|no|nr|num|number|code|key))?$",
    re.IGNORECASE,
)


# a row's own number, whatever its values (MIMIC numbers every file's rows 'row_id' from 1)
ROW_ID_NAME = re.compile(r"^row_?(id|num|number|no|nr|index|key)$", re.IGNORECASE)


def counts_units(name: str) -> bool:
    """A bare plural of a unit's name ("students", "PATIENTS") counts units (how many in a class,
    a ward): no unit's id, though the unit's name matches it."""
    name = name.strip()
    return name.lower().endswith("s") and ENTITY_NAME.fullmatch(name[:-1]) is not None

