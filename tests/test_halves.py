"""The committed split of the real tables into a development and a sealed half (benchmarks/halves.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

import halves  # noqa: E402
import sweep  # noqa: E402


def listing() -> dict[str, list[str]]:
    return halves.listing(halves.names(sweep.catalog()))


def test_the_committed_listing_is_the_hash_of_every_name() -> None:
    committed = json.loads(halves.LISTING.read_text())
    assert committed == listing(), "benchmarks/halves.json is stale: python benchmarks/halves.py --json"


def test_a_name_lands_in_the_same_half_every_time_and_both_halves_are_used() -> None:
    assert halves.half("survival/jasa") == halves.half("survival/jasa")
    split = listing()
    total = sum(len(v) for v in split.values())
    assert set(split) == {"dev", "sealed"}
    # a hash splits roughly in half; a constant function would not
    assert 0.3 * total < len(split["dev"]) < 0.7 * total
