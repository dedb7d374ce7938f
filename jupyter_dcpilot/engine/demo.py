"""Demo data: lifelines' Rossi recidivism data with documented, injected problems.

``load_rossi`` (432 released prisoners followed for 52 weeks; ``week`` = weeks until re-arrest or
censoring, ``arrest`` = event) is shipped with lifelines, so the demo needs no download. Injected
(see docs/demo.md), with a fixed seed:

- repeated rows per subject: a ``subject`` id and 1–4 parole check-ins each (``checkin``,
  ``employed_at_checkin``), the outcome repeated on every row;
- a leaked column: ``rearrest_report_filed`` — filed after a re-arrest, equal to ``arrest``
  except on 2% of subjects;
- missing values: 12% of ``prio`` and 8% of ``age``;
- a sentinel: five ``age`` values typed as 999 ("unknown" in the source system);
- outliers: four ``prio`` counts typed with two extra zeros (e.g. 3 → 300).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

TARGET, TIME, ENTITY = "arrest", "week", "subject"


def demo_frame(seed: int = 0) -> pd.DataFrame:
    """The Rossi data with the problems listed in the module docstring."""
    from lifelines.datasets import load_rossi

    rng = np.random.default_rng(seed)
    base = load_rossi().reset_index(drop=True)
    base.insert(0, ENTITY, [f"S{i:04d}" for i in range(1, len(base) + 1)])
    flips = rng.random(len(base)) < 0.02
    base["rearrest_report_filed"] = np.where(flips, 1 - base[TARGET], base[TARGET])
    base["age"] = base["age"].astype(float)
    base["prio"] = base["prio"].astype(float)
    base.loc[rng.random(len(base)) < 0.12, "prio"] = np.nan
    base.loc[rng.random(len(base)) < 0.08, "age"] = np.nan
    base.loc[rng.choice(len(base), size=5, replace=False), "age"] = 999.0
    typo = rng.choice(np.flatnonzero(base["prio"].between(2, 9)), size=4, replace=False)
    base.loc[typo, "prio"] = base.loc[typo, "prio"] * 100
    visits = rng.integers(1, 5, size=len(base))
    rows = base.loc[base.index.repeat(visits)].reset_index(drop=True)
    rows.insert(1, "checkin", rows.groupby(ENTITY).cumcount() + 1)
    rows["employed_at_checkin"] = (rng.random(len(rows)) < 0.45 + 0.2 * rows["wexp"]).astype(int)
    return rows


DEMO_FILE = "rossi_checkins.csv"


def write_demo(out_dir: str | Path, seed: int = 0) -> Path:
    """Write the demo CSV into ``out_dir`` and return its path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / DEMO_FILE
    demo_frame(seed).to_csv(path, index=False)
    return path
