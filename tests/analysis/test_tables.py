"""Table 2 beside the paper, Table 1 and the leaderboard as CSV, markdown and LaTeX."""

from __future__ import annotations

import io
import math

import pandas as pd
import pytest

from hope.analysis.leaderboard import leaderboard
from hope.analysis.paper import INDICATORS, PAPER_TABLE2, PREDICTORS
from hope.analysis.stats import correlation_table
from hope.analysis.tables import (
    latex_escape,
    leaderboard_latex,
    leaderboard_markdown,
    table1_latex,
    table1_markdown,
    table2_frame,
    table2_latex,
    table2_markdown,
)


@pytest.fixture
def table2(pairs) -> pd.DataFrame:
    return table2_frame(
        correlation_table(pairs, list(INDICATORS), list(PREDICTORS), n_boot=100, seed=1)
    )


def test_paper_values_sit_beside_ours(table2):
    assert len(table2) == 20 == len(PAPER_TABLE2)
    row = table2[(table2["indicator"] == "FC") & (table2["metric"] == "ζ_sem")].iloc[0]
    assert row["paper_r"] == 0.136 and bool(row["paper_significant"]) is True
    assert row["r_minus_paper"] == pytest.approx(row["pearson_r"] - 0.136)
    assert bool(row["significant"]) == (row["pearson_p"] < 0.05)
    ac_bleu = table2[(table2["indicator"] == "AC") & (table2["metric"] == "BLEU")].iloc[0]
    assert ac_bleu["paper_r"] == -0.010 and bool(ac_bleu["paper_significant"]) is False


def test_markdown_marks_significance_and_shows_the_paper(table2):
    md = table2_markdown(table2, min_n=10, n_boot=100, seed=1)
    fc = next(line for line in md.splitlines() if line.startswith("| FC |"))
    cells = [c.strip() for c in fc.strip("|").split("|")]
    # Our FC-ζ_sem correlation is strong in the synthetic data, so starred; the paper's too.
    assert cells[4].endswith("(0.136*)") and cells[4].split(" ")[0].endswith("*")
    assert cells[1].endswith("(-0.015)")
    assert "n = 53–56 pairs per cell" in md


def test_small_samples_print_nan_with_n(pairs):
    few = pairs.dropna().head(8)  # fewer pairs than min_n
    table = table2_frame(
        correlation_table(few, list(INDICATORS), list(PREDICTORS), n_boot=50, min_n=10)
    )
    assert table["pearson_r"].isna().all()
    assert table["significant"].isna().all()
    md = table2_markdown(table, min_n=10, n_boot=50, seed=0)
    assert "NaN (n=8) (-0.010)" in md
    assert "n=8 < min_n=10" in md
    tex = table2_latex(table, n_boot=50)
    assert r"NaN ($n{=}8$)" in tex
    csv = table.to_csv(index=False)
    back = pd.read_csv(io.StringIO(csv))
    assert back["pearson_r"].isna().all() and (back["n"] == 8).all()


def test_latex_is_a_complete_booktabs_table(table2):
    tex = table2_latex(table2, n_boot=100)
    assert tex.startswith(r"\begin{table}") and tex.rstrip().endswith(r"\end{table}")
    assert tex.count(r"\begin{tabular}") == tex.count(r"\end{tabular}") == 1
    assert r"$\zeta_{sem}$" in tex
    body = [line for line in tex.splitlines() if line.endswith(r"\\")]
    # Header plus four lines per indicator, each with 2 + 5 cells.
    assert len(body) == 1 + 4 * 4
    assert all(line.count("&") == 6 for line in body)
    assert "$0.136^{*}$" in tex


def test_latex_escape():
    assert latex_escape("a_b & 50% #1") == r"a\_b \& 50\% \#1"


def test_table1_formats(tables):
    t1 = tables["table1"]
    md = table1_markdown(t1)
    assert "| **Total** | **7** | 70 |" in md
    assert "| News | 1 | 10 | synthetic & test_source | 2,500.5 |" in md
    tex = table1_latex(t1)
    assert r"synthetic \& test\_source" in tex
    assert r"\textbf{Total} & \textbf{7} & \textbf{70}" in tex
    with pytest.raises(KeyError, match="documents"):
        table1_markdown(t1.drop(columns="documents"))


def test_table1_renders_the_prepared_table(repo_root, tmp_path, monkeypatch):
    # Built here by the corpora stages on the shipped sample corpus, as `dvc repro table1` does.
    from hope.corpora.document_schema import DOMAINS
    from hope.stages import download_stage as download
    from hope.stages import prepare_stage as prepare
    from hope.stages import table1_stage as table1

    params = str(repo_root / "params.yaml")
    monkeypatch.chdir(repo_root)  # mirror_path in params.yaml is relative to the repository
    for domain in DOMAINS:
        out = str(tmp_path / domain)
        assert download.main(["--domain", domain, "--params", params, "--out", out]) == 0
    prep = str(tmp_path / "prep")
    assert prepare.main(["--params", params, "--raw", str(tmp_path), "--out", prep]) == 0
    assert table1.main(["--prepared", prep]) == 0
    t1 = pd.read_csv(tmp_path / "prep" / "table1.csv")
    md = table1_markdown(t1)
    assert md.count("\n| ") == len(t1) + 1
    assert "Total" in md and "Newspapers" in md
    assert table1_latex(t1).count(r"\\") == len(t1) + 1


def test_leaderboard_formats(pairs):
    board = leaderboard(pairs)
    md = leaderboard_markdown(board)
    assert md.index("### overall") < md.index("### arxiv")
    assert "pick **" in md
    assert "(n=1, no CI)" in md  # one document per domain: no interval
    tex = leaderboard_latex(board)
    assert tex.count(r"\textbf{") == board["scope"].nunique()
    assert not math.isnan(board.loc[board["scope"] == "overall", "hope_ci_low"].iloc[0])
