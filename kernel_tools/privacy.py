"""Columns whose values never leave the kernel, whatever the user chose to share with an LLM.

A codebook can say a column identifies a person (REDCap's ``Identifier?`` = y, a label such as
"Patient surname" or "Date of birth"). Such a column is never a feature, and none of its values
may reach an LLM even when the user shares sample rows. Reading or diagnosing with a codebook
marks those columns here, by name, for the life of the kernel; the probes that read values for
the co-pilot (:func:`kernel_tools.frames.sample_rows`, :func:`kernel_tools.frames.profile`)
withhold them. A name is marked in every frame of the kernel: withholding too much is safe.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kernel_tools.dictionary import Dictionary, Field

WITHHELD = "<private>"  # what a probe shows instead of a private value

_PRIVATE: dict[str, str] = {}  # column name -> why it is private

# what a codebook says is personal data: HIPAA's identifiers, as labels, names and REDCap validations
PHI_LABEL = re.compile(
    r"\b(first|last|given|family|middle|full|maiden|patient'?s?|participant'?s?|subject'?s?|mother'?s?|"
    r"father'?s?|contact|parent'?s?|guardian'?s?)\s+name\b|\bsurname\b|\bforename\b|\binitials\b|date of birth|"
    r"\bbirth ?date\b|\bd\.?o\.?b\b|medical record (number|no)|\bmrn\b|hospital (number|no\b)|health record number|"
    r"social security|\bssn\b|national (insurance|id)|\bnhs (number|no\b)|passport|driver'?s? licen[cs]e|"
    r"(street|home|postal|mailing|e-?mail) address|\baddress\b|\bzip ?code\b|\bpost ?code\b|\bpostal code\b|"
    r"\b(tele)?phone\b|\bmobile (number|phone)\b|\bfax\b|\be-?mail\b|\bip address\b|licen[cs]e plate|"
    r"account number|health plan (number|id)|beneficiary (number|id)", re.I)
PHI_NAME = re.compile(r"^(dob|date_?of_?birth|birth_?date|b_?date|surname|last_?name|first_?name|full_?name|"
                      r"given_?name|family_?name|initials|mrn|ssn|nhs_?(no|num|number)|phone\w*|telephone|mobile|"
                      r"e_?mail|address\w*|street|zip|zip_?code|post_?code)$", re.I)
PHI_VALIDATION = re.compile(r"^(email|phone\w*|zipcode|postalcode\w*|ssn|vmrn|mrn\w*)$", re.I)


def mark_private(columns: Mapping[str, str]) -> None:
    """Mark columns (name -> the reason, e.g. the codebook line) as private in this kernel."""
    for name, reason in columns.items():
        _PRIVATE.setdefault(str(name), str(reason))


def private_columns() -> dict[str, str]:
    """Every column marked private in this kernel, with why."""
    return dict(_PRIVATE)


def is_private(column: Any) -> bool:
    return str(column) in _PRIVATE


def forget_private() -> None:
    """Unmark every column (a new analysis in the same kernel; tests)."""
    _PRIVATE.clear()


def personal_data(column: str, f: Field) -> str | None:
    """Why the codebook's field ``f`` of ``column`` identifies a person, or None: REDCap's
    ``Identifier?`` flag, a validation (email, phone, postcode), a label or name that names
    personal data (names, dates of birth, record numbers, addresses, phone numbers)."""
    if f.identifier:
        return "flagged as an identifier in the codebook"
    if f.validation and PHI_VALIDATION.match(f.validation):
        return f"validated as {f.validation}: personal data"
    by_label = PHI_LABEL.search(f.label or "")
    match = by_label or PHI_NAME.match(column)
    if match:
        return f"its {'label' if by_label else 'name'} names personal data ('{match.group(0)}')"
    return None


def private_fields(dictionary: Dictionary, columns: list[str]) -> dict[str, str]:
    """Columns (of ``columns``) the codebook says identify a person, with why."""
    out = {}
    for c in columns:
        f = dictionary.field(c)
        why = personal_data(c, f) if f is not None else None
        if why:
            out[c] = why
    return out
