"""A hidden panel is asked (issue 26): rows that come in consecutive blocks of k records of one
entity with no id column (attributes the same within each block, a counter rising by one or a
year cycling) make the entity a low-confidence inference, the blocks in its evidence, so the
recommended run ends not valid with the entity to confirm instead of splitting the records of one
entity at random. Synthetic stores by month and schools by year (other names than any real
table); a table of independent rows sorted by a column, and a panel with its id, are left alone;
then the development-half table Ecdat::Wages. Blocks of unequal length (workers observed 3 to 9
years) are the runs of a counter rising by one; a sorted table and independent rows are not."""

from __future__ import annotations

import numpy as np
import pandas as pd
from dev_tables import dev_rdataset, quiet_diagnose


def stores(n: int = 150, months: int = 12, seed: int = 0, with_id: bool = False) -> pd.DataFrame:
    """``n`` stores, ``months`` consecutive rows each; region, size class and owner fixed per store."""
    rng = np.random.default_rng(seed)
    region = np.repeat(rng.choice(["north", "south", "east", "west"], n), months)
    size = np.repeat(rng.choice(["S", "M", "L"], n), months)
    owner = np.repeat(rng.choice(["chain", "franchise"], n), months)
    opened = np.repeat(rng.integers(1990, 2015, n), months)
    month = np.tile(np.arange(1, months + 1), n)
    level = np.repeat(rng.normal(100, 20, n), months)
    df = pd.DataFrame({"region": region, "size_class": size, "owner": owner, "opened": opened,
                       "month_no": month, "promo": rng.integers(0, 2, n * months),
                       "staff": rng.integers(3, 30, n * months),
                       "sales": (level + 5 * rng.normal(size=n * months)).round(1)})
    if with_id:
        df.insert(0, "store_id", np.repeat([f"ST{i:03d}" for i in range(n)], months))
    return df


def test_consecutive_blocks_of_one_entity_without_an_id_are_asked():
    d = quiet_diagnose(stores(), target="sales")
    entity = d.inference("entity")
    assert entity.value is None and entity.confidence == "low", entity
    assert entity.details["blocks"]["size"] == 12 and entity.details["blocks"]["counter"] == "month_no"
    assert {"region", "size_class", "owner", "opened"} <= set(entity.details["blocks"]["attributes"])
    assert entity.evidence[1].startswith("rows may be blocks of 12 records of one entity (150 blocks of 12 "
                                         "consecutive rows)")


def test_a_year_that_cycles_within_blocks_counts_as_the_counter():
    df = stores(n=80, months=5, seed=1).rename(columns={"month_no": "survey_year"})
    df["survey_year"] = 2008 + 2 * df["survey_year"]  # every other year: the sequence repeats
    blocks = quiet_diagnose(df, target="sales").inference("entity").details["blocks"]
    assert (blocks["size"], blocks["counter"], blocks["counter_kind"]) == (5, "survey_year", "repeats its sequence")


def test_independent_rows_sorted_by_a_column_are_not_blocks():
    rng = np.random.default_rng(2)
    n = 1200
    df = pd.DataFrame({"region": rng.choice(["north", "south", "east"], n), "tier": rng.choice(["a", "b"], n),
                       "age": rng.integers(20, 70, n), "visits": rng.integers(0, 9, n),
                       "spend": rng.normal(50, 10, n).round(2)})
    df = df.sort_values(["region", "tier", "age"]).reset_index(drop=True)
    df["row_no"] = np.arange(1, n + 1)  # rises by one everywhere, not within blocks
    entity = quiet_diagnose(df, target="spend").inference("entity")
    assert "blocks" not in entity.details and entity.confidence == "high", entity


def test_a_panel_with_its_id_keeps_the_id():
    entity = quiet_diagnose(stores(with_id=True), target="sales").inference("entity")
    assert entity.value == "store_id" and "blocks" not in entity.details


def test_wages_is_a_panel_of_seven_years_per_person():
    entity = quiet_diagnose(dev_rdataset("Ecdat", "Wages"), target="lwage").inference("entity")
    assert entity.confidence == "low" and entity.details["blocks"]["size"] == 7
    assert entity.details["blocks"]["counter"] == "exp"


def workers(n: int = 150, seed: int = 5) -> pd.DataFrame:
    """``n`` workers observed 3 to 9 consecutive years each (no id): county, gender and schooling
    fixed per worker, tenure rising by one from a start of 1 to 29 years."""
    rng = np.random.default_rng(seed)
    years = rng.integers(3, 10, n)

    def fixed(values: np.ndarray) -> np.ndarray:
        return np.repeat(values, years)
    school = fixed(rng.integers(6, 18, n))
    m = int(years.sum())
    return pd.DataFrame({"county": fixed(rng.choice(list("ABCDEFG"), n)), "gender": fixed(rng.choice(["f", "m"], n)),
                         "schooling": school,
                         "tenure_yrs": fixed(rng.integers(1, 30, n)) + np.concatenate([np.arange(k) for k in years]),
                         "hours": rng.integers(20, 60, m), "union": rng.choice(["y", "n"], m),
                         "log_pay": (1 + 0.1 * school + fixed(rng.normal(0, 0.3, n)) + rng.normal(0, 0.1, m)).round(3)})


def test_blocks_of_unequal_length_end_where_the_counter_does_not_rise_by_one():
    df = workers()
    entity = quiet_diagnose(df, target="log_pay").inference("entity")
    blocks = entity.details["blocks"]
    assert entity.confidence == "low" and blocks["size"] is None and blocks["counter"] == "tenure_yrs"
    assert set(blocks["attributes"]) == {"county", "gender", "schooling"} and blocks["strong"]
    runs = int((df["tenure_yrs"].diff() != 1).sum())  # a worker whose tenure goes on from the last one's runs on
    assert blocks["blocks"] == runs and 140 <= runs <= 150 and blocks["shortest"] == 3
    assert entity.evidence[1].startswith(f"rows may be blocks of one entity's records ({runs} blocks of 3 to ")


def test_unequal_blocks_have_a_sorted_and_an_independent_decoy():
    rng = np.random.default_rng(6)
    n = 900
    rows = pd.DataFrame({"county": rng.choice(list("ABC"), n), "gender": rng.choice(["f", "m"], n),
                         "tenure_yrs": rng.integers(1, 40, n), "hours": rng.integers(20, 60, n),
                         "log_pay": rng.normal(2, 0.3, n).round(3)})
    # sorted: tenure rises by 0 or 1 within each county and gender; shuffled: a panel's rows out of order
    for df in (rows.sort_values(["county", "gender", "tenure_yrs"]).reset_index(drop=True), rows,
               workers().sample(frac=1, random_state=0).reset_index(drop=True)):
        entity = quiet_diagnose(df, target="log_pay").inference("entity")
        assert "blocks" not in entity.details, entity
