"""The paper outputs from files to files (what the paper_outputs notebook runs), on synthetic
pipeline outputs."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from hope.analysis import AnalysisConfig, JoinError
from hope.analysis import paper_files as stage
from hope.core.io import InputFileError

from .synthetic import make_tables, write_tables

EXPECTED = {
    "pairs.csv",
    "table1.csv",
    "table1.md",
    "table1.tex",
    "table2.csv",
    "table2.md",
    "table2.tex",
    "leaderboard.csv",
    "leaderboard.md",
    "leaderboard.tex",
    "figure6.png",
    "figure6.pdf",
    "figure6_by_chunker.png",
    "figure6_by_chunker.pdf",
    "figure7.png",
    "figure7.pdf",
    "figure7_bins.csv",
    "figure7_series.csv",
    "figure7_gains.csv",
    "metrics.json",
}


def _run(paths, out, **config):
    inputs = {name: paths[name] for name in ("scores", "bleu", "ragas", "table1")}
    return stage.run(out_dir=out, config=AnalysisConfig(n_boot=200, **config), **inputs)


def test_run_writes_every_output(tmp_path):
    paths = write_tables(make_tables(1, seed=2, nan_scores=2), tmp_path)
    out = tmp_path / "paper_figures"
    _, written = _run(paths, out)
    produced = {p.name for p in out.iterdir()}
    assert sorted(written) == sorted(out / name for name in produced)
    assert produced == EXPECTED
    assert all((out / name).stat().st_size > 0 for name in produced)
    assert not list(out.glob(".*.tmp"))
    metrics = json.loads((out / "metrics.json").read_text())
    assert (metrics["pairs"], metrics["documents"], metrics["chunkers"]) == (56, 7, 8)
    # Few keys for `dvc metrics show`: Table 2's cells are table2.csv, the settings params.
    assert "table2" not in metrics and "settings" not in metrics
    gains = pd.read_csv(out / "figure7_gains.csv").set_index("indicator")
    assert metrics["figure7_gain_pct"]["FC"] == pytest.approx(gains.loc["FC", "gain_pct"])
    assert gains.loc["FC", "paper_gain_pct"] == 56.2
    assert metrics["best_chunker"] in set(make_tables(1)["scores"]["chunker"])
    table2 = pd.read_csv(out / "table2.csv")
    assert len(table2) == 20 and table2["pearson_r"].notna().all()
    cells = table2.set_index(["indicator", "col"])["n"]
    assert cells["FC", "semantic_independence"] == 56 and cells["FC", "hope"] == 54
    assert "Table 2." in (out / "table2.md").read_text()


def test_sample_profile_with_sparse_ragas_prints_nan_with_n(tmp_path):
    # As with the sample profile: one document per domain, and most RAGAS pairs undefined.
    tables = make_tables(1, seed=1)
    ragas = tables["ragas"]
    ragas.loc[ragas.index[6:], ["answer_correctness", "factual_correctness"]] = math.nan
    tables["ragas"] = ragas.iloc[:-4]  # and four pairs without questions
    paths = write_tables(tables, tmp_path)
    out = tmp_path / "out"
    _run(paths, out, min_n=10)
    table2 = pd.read_csv(out / "table2.csv")
    ac = table2[table2["indicator"] == "AC"]
    assert ac["pearson_r"].isna().all() and (ac["n"] == 6).all()
    assert (ac["reason"] == "n=6 < min_n=10").all()
    assert table2[table2["indicator"] == "CR"]["n"].eq(52).all()
    assert "NaN (n=6)" in (out / "table2.md").read_text()
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["missing_pairs"] == {"bleu": 0, "ragas": 4}
    with pytest.raises(JoinError):  # RAGAS required: a pair without its row stops the run
        _run(paths, tmp_path / "strict", allow_missing=())
    assert not (tmp_path / "strict").exists()


def test_input_errors_name_the_file_and_write_nothing(tmp_path):
    paths = write_tables(make_tables(1), tmp_path)
    paths["bleu"].write_text('{"doc_id": "x"\n')
    with pytest.raises(InputFileError, match=r"bleu file .*line 1: malformed JSON"):
        _run(paths, tmp_path / "out")
    paths = write_tables(make_tables(1), tmp_path)
    paths["scores"].unlink()
    with pytest.raises(InputFileError, match="scores file"):
        _run(paths, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_identifiers_stay_strings(tmp_path):
    tables = make_tables(1)
    numeric = {doc: f"{i:03d}" for i, doc in enumerate(tables["scores"]["doc_id"].unique())}
    for name in ("scores", "bleu", "ragas"):
        tables[name]["doc_id"] = tables[name]["doc_id"].map(numeric)
    paths = write_tables(tables, tmp_path)
    inputs = stage.read_inputs(paths["scores"], paths["bleu"], paths["ragas"], paths["table1"])
    for name in ("scores", "bleu", "ragas"):
        assert set(inputs[name]["doc_id"]) == set(numeric.values()), name
