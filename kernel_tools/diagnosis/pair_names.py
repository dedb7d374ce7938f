"""What a column's name says of its part in a pair: the time or the indicator of one event
(``ptime`` / ``pstat``, ``ta`` / ``da``, ``srv`` / ``srvstat``, ``rec`` / ``rec.s``), or a bound of
one quantity (``lower`` / ``upper``). Names only: the data must agree before a pair counts."""

from __future__ import annotations

import re

# prefix forms (ta / da, T1 / D1) and suffix forms (ptime / pstat)
TIME_PREFIX = re.compile(r"^(?:t|time|days?|weeks?|months?|years?|dur)[_.]?(?P<stem>[A-Za-z0-9]+)$", re.IGNORECASE)
FLAG_PREFIX = re.compile(r"^(?:d|delta|ind|status|event)[_.]?(?P<stem>[A-Za-z0-9]+)$", re.IGNORECASE)
TIME_SUFFIX = re.compile(r"^(?P<stem>[A-Za-z][A-Za-z0-9]*?)[_.]?(?:time|t|days|dur)$", re.IGNORECASE)
FLAG_SUFFIX = re.compile(r"^(?P<stem>[A-Za-z][A-Za-z0-9]*?)[_.]?(?:s|stat|status|flag|ind|event|e|d)$",
                         re.IGNORECASE)
BOUND = re.compile(r"^(?P<stem>.*?)[_.]?(?P<side>lower|upper|min|max)$|^(?P<side2>lower|upper|min|max)[_.]?"
                   r"(?P<stem2>.*)$", re.IGNORECASE)


def pair_roles(name: str) -> list[tuple[str, str]]:
    """(stem, role) readings of a column name: role "time", "flag" or "bound"."""
    out = []
    for pattern, role in ((TIME_PREFIX, "time"), (FLAG_PREFIX, "flag"), (TIME_SUFFIX, "time"),
                          (FLAG_SUFFIX, "flag")):
        if m := pattern.match(name):
            out.append((m["stem"].lower(), role))
    if m := BOUND.match(name):
        out.append(((m["stem"] if m["side"] else m["stem2"]).strip("._").lower(), "bound"))
    out.append((name.lower(), "time"))  # a bare time whose flag is the name with a suffix (rec, rec.s)
    return out


def time_of_flag(flag: str, name: str) -> bool:
    """Whether the names make ``name`` the time of the indicator ``flag`` (``srv`` of ``srvstat``)."""
    flags = {stem for stem, role in pair_roles(flag) if role == "flag"}
    return name != flag and any(role == "time" and stem in flags for stem, role in pair_roles(name))
