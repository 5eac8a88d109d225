"""The analysis stage end to end on synthetic pipeline outputs."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from hope.stages import analysis as stage

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


def _argv(paths, out, *extra):
    return [
        "--scores",
        str(paths["scores"]),
        "--bleu",
        str(paths["bleu"]),
        "--ragas",
        str(paths["ragas"]),
        "--table1",
        str(paths["table1"]),
        "--out",
        str(out),
        "--bootstrap",
        "200",
        *extra,
    ]


def test_stage_writes_every_output(tmp_path, capsys):
    paths = write_tables(make_tables(1, seed=2, nan_scores=2), tmp_path)
    out = tmp_path / "paper_figures"
    assert stage.main(_argv(paths, out)) == 0
    produced = {p.name for p in out.iterdir()}
    assert produced == EXPECTED
    assert all((out / name).stat().st_size > 0 for name in produced)
    assert not list(out.glob(".*.tmp"))
    metrics = json.loads((out / "metrics.json").read_text())
    assert (metrics["pairs"], metrics["documents"], metrics["chunkers"]) == (56, 7, 8)
    assert metrics["table2"]["FC"]["zeta_sem"]["n"] == 56
    assert metrics["table2"]["FC"]["HOPE"]["n"] == 54
    gains = pd.read_csv(out / "figure7_gains.csv").set_index("indicator")
    assert metrics["figure7_gain_pct"]["FC"] == pytest.approx(gains.loc["FC", "gain_pct"])
    assert gains.loc["FC", "paper_gain_pct"] == 56.2
    assert metrics["settings"]["n_boot"] == 200
    assert metrics["best_chunker"] in set(make_tables(1)["scores"]["chunker"])
    table2 = pd.read_csv(out / "table2.csv")
    assert len(table2) == 20 and table2["pearson_r"].notna().all()
    assert "Table 2." in capsys.readouterr().out


def test_sample_profile_with_sparse_ragas_prints_nan_with_n(tmp_path):
    # As with the sample profile: one document per domain, and most RAGAS pairs undefined.
    tables = make_tables(1, seed=1)
    ragas = tables["ragas"]
    ragas.loc[ragas.index[6:], ["answer_correctness", "factual_correctness"]] = math.nan
    tables["ragas"] = ragas.iloc[:-4]  # and four pairs without questions
    paths = write_tables(tables, tmp_path)
    out = tmp_path / "out"
    assert stage.main(_argv(paths, out, "--min-n", "10")) == 0
    table2 = pd.read_csv(out / "table2.csv")
    ac = table2[table2["indicator"] == "AC"]
    assert ac["pearson_r"].isna().all() and (ac["n"] == 6).all()
    assert (ac["reason"] == "n=6 < min_n=10").all()
    assert table2[table2["indicator"] == "CR"]["n"].eq(52).all()
    assert "NaN (n=6)" in (out / "table2.md").read_text()
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["table2"]["AC"]["HOPE"]["r"] is None
    assert metrics["missing_pairs"] == {"bleu": 0, "ragas": 4}
    assert stage.main(_argv(paths, tmp_path / "strict", "--require-ragas")) == 1


def test_stage_reports_input_errors(tmp_path, capsys):
    paths = write_tables(make_tables(1), tmp_path)
    paths["bleu"].write_text('{"doc_id": "x"\n')
    assert stage.main(_argv(paths, tmp_path / "out")) == 1
    err = capsys.readouterr().err
    assert "bleu file" in err and "line 1: malformed JSON" in err
    paths = write_tables(make_tables(1), tmp_path)
    paths["scores"].unlink()
    assert stage.main(_argv(paths, tmp_path / "out")) == 1
    assert "scores file" in capsys.readouterr().err
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


def test_parse_args():
    args = stage.parse_args(["--min-n", "5", "--bins", "4", "--binning", "width"])
    assert (args.min_n, args.bins, args.binning) == (5, 4, "width")
    with pytest.raises(SystemExit):
        stage.parse_args(["--binning", "log"])
