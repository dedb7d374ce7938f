"""polars and other Arrow PyCapsule tables: listed for the panel from their schema, accepted by
diagnose, and converted to pandas once by the co-pilot, undoably."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import kernel_tools as kt
from jupyter_dcpilot.engine.coordinator import ApprovalPolicy, Coordinator
from jupyter_dcpilot.engine.hosts import HeadlessHost
from jupyter_dcpilot.engine.session import Session, sidecar_path
from jupyter_dcpilot.engine.task import Given, Inputs, Task
from jupyter_dcpilot.probe import probe_expression
from kernel_tools.frames import is_arrow_frame, list_frames, profile, sample_rows, to_pandas


@pytest.fixture
def frame() -> pl.DataFrame:
    return pl.DataFrame({
        "age": [40.0, 51.0, None, 63.0],
        "sex": ["f", "m", "m", None],
        "admitted": pl.Series(["2020-01-01", "2020-02-01", "2020-03-01", "2020-04-01"]).str.to_date(),
        "smoker": [True, False, True, False],
        "grade": pl.Series(["a", "b", "a", "c"]).cast(pl.Categorical),
    })


def test_polars_and_pyarrow_tables_are_listed_like_pandas_frames(frame) -> None:
    table = pa.table(frame)
    reader = pa.RecordBatchReader.from_stream(table)  # a one-shot stream: not a frame
    namespace = {"p": frame, "t": table, "d": frame.to_pandas(), "lazy": frame.lazy(), "reader": reader,
                 "series": frame["age"], "polars_type": pl.DataFrame}
    listed = {f["name"]: f for f in list_frames(namespace)}
    assert sorted(listed) == ["d", "p", "t"]
    kinds = {"bool": 1, "category": 1, "datetime": 1, "number": 1, "text": 1}
    for name, library in (("p", "polars"), ("t", "pyarrow"), ("d", "pandas")):
        assert (listed[name]["library"], listed[name]["rows"], listed[name]["columns"]) == (library, 4, 5)
        assert listed[name]["dtypes"] == kinds, name
        assert listed[name]["memory_bytes"] > 0
    assert reader.read_all().num_rows == 4  # listing did not consume the stream
    json.dumps(list(listed.values()))


def test_profile_and_samples_convert_at_the_boundary(frame) -> None:
    described = profile(frame)
    assert (described["rows"], described["columns"], described["missing_share"]) == (4, 5, 0.1)
    assert {c["name"]: c["kind"] for c in described["columns_detail"]} == {
        "age": "number", "sex": "text", "admitted": "datetime", "smoker": "bool", "grade": "category"}
    assert sample_rows(frame, 2) == sample_rows(to_pandas(frame), 2)
    converted = to_pandas(frame)
    assert isinstance(converted, pd.DataFrame) and isinstance(converted["grade"].dtype, pd.CategoricalDtype)
    assert to_pandas(converted) is converted  # pandas passes through untouched
    assert not is_arrow_frame(frame.lazy()) and not is_arrow_frame(pl.DataFrame)
    with pytest.raises(TypeError, match=r"cohort must be a pandas DataFrame or a table with the Arrow PyCapsule"):
        to_pandas([[1, 2]], "cohort")


def visits(n: int = 300, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.normal(50, 10, n)
    bmi = rng.normal(27, 4, n)
    y = (rng.random(n) < 1 / (1 + np.exp(-0.05 * (age - 50)))).astype(int)
    frame = pd.DataFrame({"age": age.round(), "bmi": bmi.round(1), "leak": y, "outcome": y})
    frame.loc[rng.random(n) < 0.1, "bmi"] = np.nan
    return frame


def test_diagnose_takes_a_polars_frame_and_finds_what_it_finds_in_pandas() -> None:
    data = visits()
    from_polars = kt.diagnose(pl.from_pandas(data), target="outcome")
    from_pandas = kt.diagnose(data, target="outcome")
    assert [(f.kind, f.columns) for f in from_polars.findings] == [(f.kind, f.columns) for f in from_pandas.findings]
    assert any(f.kind == "target_leakage" and f.columns == ["leak"] for f in from_polars.findings)
    joined = kt.diagnose_join({"left": pl.from_pandas(data.assign(key=range(300))),
                               "right": pa.table({"key": list(range(300)), "x": [1.0] * 300})})
    assert joined is not None


def test_the_co_pilot_converts_a_polars_frame_once_and_undo_brings_it_back(tmp_path) -> None:
    visits().to_csv(tmp_path / "data.csv", index=False)
    notebook = tmp_path / "nb.ipynb"
    session = Session(notebook=str(notebook), path=str(sidecar_path(notebook)),
                      task=Task(given=Given(target="outcome")), inputs=Inputs(frames=["df"]))

    async def run() -> tuple[str, dict, dict, list[str]]:
        async with HeadlessHost(notebook) as host:
            await host.run_cell(f"import polars as pl\ndf = pl.read_csv({str(tmp_path / 'data.csv')!r})", {})
            coord = Coordinator(session, host, host, policy=ApprovalPolicy.from_spec("recommended"))
            state = await coord.run_until_blocked()
            after = await host.evaluate(probe_expression("frame_info_json", ["df", "model"]))
            sources = [c.source for c in host.notebook.cells]
            first = next(c for c in session.checkpoints)
            await coord.undo(first.id)
            undone = await host.evaluate(probe_expression("frame_info_json", ["df"]))
            return state, after, undone, sources

    state, after, undone, sources = asyncio.run(run())
    assert state == "finished"
    conversions = [s for s in sources if "df = kt.to_pandas(df)" in s]
    assert len(conversions) == 1 and "polars to pandas" in conversions[0]
    assert after["df"]["library"] == "pandas" and after["model"]["type"] == "ModelReport"
    assert "leak" not in after["df"]["columns"]  # the leaked column was found in the polars frame
    assert undone["df"]["library"] == "polars"  # undo to the start: the user's polars frame again


def test_without_pyarrow_a_polars_frame_is_listed_and_its_conversion_says_what_is_missing() -> None:
    """pyarrow is the [arrow] extra of the kernel side: without it, listing still works."""
    import subprocess
    import sys

    code = (
        "import sys, json; sys.modules['pyarrow'] = None\n"
        "import polars as pl\n"
        "from kernel_tools.frames import list_frames, to_pandas\n"
        "df = pl.DataFrame({'a': [1, 2], 'b': ['x', 'y']})\n"
        "listed = list_frames({'df': df})[0]\n"
        "try:\n"
        "    to_pandas(df)\n"
        "except ImportError as error:\n"
        "    message = str(error)\n"
        "print(json.dumps([listed['library'], listed['rows'], listed['dtypes'], message]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    library, rows, dtypes, message = json.loads(done.stdout.strip().splitlines()[-1])
    assert (library, rows, dtypes) == ("polars", 2, {"other": 2})
    assert "needs pyarrow" in message and "[arrow]" in message
