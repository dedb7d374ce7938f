import numpy as np
import pandas as pd
import pytest
from _purity import run_pure

from kernel_tools.transforms import CategoryNormalizer, UnitConverter, convert_units, fix_dtypes, normalize_categories


@pytest.fixture
def messy():
    return pd.DataFrame(
        {
            "n": ["1", "2.5", "?", "1,234", "n/a", " 7 "],
            "b": ["yes", "No", "", "y", "N", "TRUE"],
            "d": ["2020-01-01", "2020-02-03", None, "2021-12-31", "NA", "2022-05-06"],
            "s": ["a", "b", "-", "c", "d", "e"],
            "code": [1, 999, 3, 4, -1, 6],
            "pct": ["5%", "10%", "3", "4", "NA", "$6"],
        }
    )


def test_fix_dtypes_parses_text_types(messy):
    out, report = run_pure(fix_dtypes, messy, sentinels={"code": [999, -1]})
    assert out["n"].tolist()[:2] == [1.0, 2.5] and out["n"].iloc[3] == 1234.0 and out["n"].iloc[5] == 7.0
    assert out["n"].isna().sum() == 2
    assert str(out["b"].dtype) == "boolean" and out["b"].tolist()[:2] == [True, False] and out["b"].isna().sum() == 1
    assert pd.api.types.is_datetime64_any_dtype(out["d"]) and out["d"].isna().sum() == 2
    assert out["s"].isna().sum() == 1 and out["s"].dtype == object
    assert out["code"].isna().sum() == 2
    assert out["pct"].tolist()[:2] == [5.0, 10.0] and out["pct"].iloc[5] == 6.0
    d = report.details
    assert d["kinds"] == {"n": "numeric", "b": "boolean", "d": "datetime", "s": "text", "pct": "numeric"}
    assert d["per_column"]["n"]["na_tokens"] == 2 and d["per_column"]["code"]["sentinels"] == 2
    assert d["per_column"]["pct"]["percent_signs_stripped"] == 2


def test_fix_dtypes_unparsed_values_are_reported():
    df = pd.DataFrame({"x": [str(i) for i in range(40)] + ["oops"]})
    out, report = fix_dtypes(df)
    assert out["x"].dtype == float and out["x"].isna().sum() == 1
    assert report.details["per_column"]["x"]["unparsed_examples"] == ["oops"]
    assert any("oops" in w for w in report.warnings)
    mostly_text = pd.DataFrame({"x": ["1", "2", "abc", "def"]})
    assert fix_dtypes(mostly_text)[0]["x"].dtype == object


def test_dtype_rules_replay_unchanged_on_test():
    train = pd.DataFrame({"x": ["1", "2", "3"], "flag": ["yes", "no", "yes"]})
    _, report = fix_dtypes(train)
    test = pd.DataFrame({"x": ["a", "b", "4"], "flag": ["no", "maybe", "yes"]})
    out = report.apply(test)
    assert out["x"].tolist()[2] == 4.0 and out["x"].isna().sum() == 2  # still numeric, as learned
    assert out["flag"].tolist()[0] is False and pd.isna(out["flag"].iloc[1])


def test_fix_dtypes_bad_input(messy):
    with pytest.raises(KeyError, match="'zz'"):
        fix_dtypes(messy, columns=["zz"])
    with pytest.raises(ValueError, match="min_parse_rate"):
        fix_dtypes(messy, min_parse_rate=0)
    with pytest.raises(TypeError, match="na_tokens"):
        fix_dtypes(messy, na_tokens="?")
    with pytest.raises(KeyError, match="'nope'"):
        fix_dtypes(messy, sentinels={"nope": [1]})


@pytest.fixture
def cities():
    return pd.DataFrame(
        {
            "city": ["New York"] * 10 + ["new york", "NEW YORK ", "New-York", "New Yrok"] + ["Boston"] * 6 + ["Bostn"],
            "kind": ["Type 1"] * 8 + ["Type 2"] * 2 + ["type 1"] + ["Type 2"] * 10,
            "sex": ["male"] * 15 + ["female"] * 6,
        }
    )


def test_normalize_categories_merges_variants_only(cities):
    out, report = run_pure(normalize_categories, cities)
    assert sorted(out["city"].unique()) == ["Boston", "New York"]
    assert report.details["mapping"]["city"] == {
        "new york": "New York", "NEW YORK ": "New York", "New-York": "New York", "New Yrok": "New York", "Bostn": "Boston"
    }
    assert report.details["mapping"]["kind"] == {"type 1": "Type 1"}  # Type 1 never becomes Type 2
    assert report.details["mapping"]["sex"] == {}  # male/female stay apart
    assert report.details["values_changed"]["city"] == 5


def test_category_map_is_learned_on_train_only(cities):
    _, report = normalize_categories(cities)
    test = pd.DataFrame({"city": ["BOSTON", "Bostn", "Chicago", "Chicgo", "Chicgo"], "kind": ["x"] * 5, "sex": ["male"] * 5})
    out = report.apply(test)
    assert out["city"].tolist() == ["Boston", "Boston", "Chicago", "Chicgo", "Chicgo"]  # no new typo map from test
    assert isinstance(report.transformer, CategoryNormalizer)


def test_normalize_categories_keeps_category_dtype_and_bad_input(cities):
    cat = cities.astype({"city": "category"})
    out, _ = normalize_categories(cat, columns=["city"])
    assert isinstance(out["city"].dtype, pd.CategoricalDtype) and len(out["city"].cat.categories) == 2
    with pytest.raises(KeyError, match="'town'"):
        normalize_categories(cities, columns=["town"])
    with pytest.raises(ValueError, match="threshold"):
        normalize_categories(cities, threshold=0)


def test_convert_units_volume_and_fluid_ounces():
    df = pd.DataFrame({"v": ["12 oz", "355 ml", "12.0 oz.", "16 OZ", "500ml", "12", None, "abc"]})
    out, report = run_pure(convert_units, df, "v")
    assert report.details["target_unit"] == "fluid_ounce"
    assert out["v"].iloc[0] == 12.0 and out["v"].iloc[1] == pytest.approx(12.004, abs=1e-3)
    assert out["v"].iloc[5] == 12.0  # bare number fits only the ounce range
    assert out["v"].iloc[6:].isna().all()
    assert report.details["status_counts"] == {"converted": 5, "assumed": 1, "missing": 1, "unparsed": 1}
    assert report.details["examples"]["unparsed"] == ["abc"]


def test_convert_units_compound_heights_and_ambiguous_weights():
    df = pd.DataFrame({
        "h": ["5 ft 10 in", "178 cm", "180cm", "5'8\"", "170", "71", "6 ft", "n/a"],
        "w": ["70 kg", "154 lb", "80kg", "110", "90 kg", "200 lbs", "60 kg", "75 kg"],
    })
    out, report = convert_units(df, "h", target_unit="cm")
    assert out["h"].iloc[0] == pytest.approx(177.8) and out["h"].iloc[3] == pytest.approx(172.72)
    assert out["h"].iloc[4] == 170.0 and np.isnan(out["h"].iloc[5])  # 71: no unit range fits
    out, report = convert_units(df, "w")
    assert report.details["target_unit"] == "kilogram"
    assert out["w"].iloc[1] == pytest.approx(69.85, abs=0.01)
    assert np.isnan(out["w"].iloc[3]) and report.details["examples"]["ambiguous"] == ["110"]
    assert any("ambiguous" in w for w in report.warnings)


def test_unit_rules_replay_and_bad_input():
    train = pd.DataFrame({"t": ["37 C", "98.6 F", "36.5 °C", "38"]})
    out, report = convert_units(train, "t")
    assert out["t"].tolist()[:3] == pytest.approx([37.0, 37.0, 36.5]) and out["t"].iloc[3] == 38.0
    test = pd.DataFrame({"t": ["212 F", "40"]})
    applied = report.apply(test)
    assert applied["t"].tolist() == pytest.approx([100.0, 40.0])
    assert isinstance(report.transformer, UnitConverter)
    with pytest.raises(KeyError, match="'zz'"):
        convert_units(train, "zz")
    with pytest.raises(ValueError, match="no values with a unit"):
        convert_units(pd.DataFrame({"x": [1.0, 2.0]}), "x")
    with pytest.raises(ValueError, match="not a unit"):
        convert_units(train, "t", target_unit="furlongs per blorp")
    plain, _ = convert_units(pd.DataFrame({"x": [1.0, 2.0]}), "x", target_unit="cm", assume_unit="in")
    assert plain["x"].tolist() == pytest.approx([2.54, 5.08])


def test_convert_units_ignores_a_few_trailing_words():
    df = pd.DataFrame({"v": ["12.0 oz. Alumi-Tek", "16 oz", "12 oz can", "twelve ounces"]})
    out, report = convert_units(df, "v")
    assert out["v"].tolist()[:3] == [12.0, 16.0, 12.0] and np.isnan(out["v"].iloc[3])
    assert report.details["status_counts"] == {"trailing_text_ignored": 2, "converted": 1, "unparsed": 1}


def test_codes_with_leading_zeros_stay_text():
    df = pd.DataFrame({"zip": ["02139", "10001", "94105"], "n": ["0.5", "10", "-3"]})
    out, report = fix_dtypes(df)
    assert out["zip"].tolist() == ["02139", "10001", "94105"] and report.details["kinds"]["zip"] == "text"
    assert out["n"].tolist() == [0.5, 10.0, -3.0]


def test_object_columns_of_booleans_and_mixed_values():
    df = pd.DataFrame({
        "flag": [True, False, np.nan, True],
        "mixed": [1, "2", 3.5, "?"],
        "empty": [np.nan, None, np.nan, None],
    }).astype(object)
    out, report = run_pure(fix_dtypes, df)
    assert str(out["flag"].dtype) == "boolean" and out["flag"].tolist()[:2] == [True, False]
    assert out["mixed"].tolist()[:3] == [1.0, 2.0, 3.5] and np.isnan(out["mixed"].iloc[3])
    assert report.details["kinds"]["empty"] == "text" and out["empty"].isna().all()


def test_unconverted_columns_are_shared_not_copied_and_the_input_is_untouched():
    """A wide frame with one date stored as text: only that column is new; the others are the
    input's arrays (no second copy of the frame), and the input keeps its values and types."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({f"x{i}": rng.normal(size=1000) for i in range(20)})
    df["when"] = pd.date_range("2020-01-01", periods=1000).strftime("%Y-%m-%d")
    df["code"] = ["?" if i % 7 == 0 else str(i) for i in range(1000)]
    before = df.copy()
    out, report = fix_dtypes(df, columns=["when", "code"], na_tokens=["?"])
    assert report.details["kinds"] == {"when": "datetime", "code": "numeric"}
    pd.testing.assert_frame_equal(df, before)
    assert all(np.shares_memory(out[c].to_numpy(), df[c].to_numpy()) for c in before.columns[:20])
    assert not np.shares_memory(out["code"].to_numpy(), df["code"].to_numpy())
    assert out["code"].isna().sum() == 143 and str(out["when"].dtype).startswith("datetime64")
