"""The probe's retrieval ranking beside HOPE on the leaderboard and in its figure (issue #32):
rows from a hand-made probe report, the join onto the leaderboard, the tables, and the paper
outputs from files with and without a probe report."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from hope.analysis import AnalysisConfig
from hope.analysis import paper_files as stage
from hope.analysis.leaderboard import OVERALL, leaderboard
from hope.analysis.probe_board import ProbeReportError, probe_table, with_probe
from hope.analysis.tables import leaderboard_latex, leaderboard_markdown
from hope.core.io import InputFileError

from .synthetic import PROBE_MEASURE as MEASURE
from .synthetic import make_probe_report as probe_report
from .synthetic import make_tables, write_tables


def test_probe_rows_per_scope_with_rank_interval_and_nan_for_a_failed_chunker():
    table = probe_table(probe_report()).set_index(["scope", "chunker"])
    assert list(dict.fromkeys(s for s, _ in table.index)) == ["news", "wiki", OVERALL]
    news = table.loc[("news", "fixed_500_o0")]
    assert (news["probe"], news["probe_ci_low"], news["probe_ci_high"]) == (0.9, 0.8, 0.95)
    assert news["probe_rank"] == 1 and news["probe_questions"] == 10
    assert table.loc[("news", "semantic_minilm"), "probe_behind_best"] is True
    assert table.loc[(OVERALL, "fixed_500_o0"), "probe_behind_best"] is False
    assert table.loc[(OVERALL, "semantic_minilm"), "probe_behind_best"] is None
    assert news["probe_measure"] == MEASURE
    failed = table.loc[("wiki", "semantic_minilm")]
    assert math.isnan(failed["probe"]) and math.isnan(failed["probe_rank"])
    assert table.loc[(OVERALL, "semantic_minilm"), "probe_rank"] == 1
    assert table.loc[(OVERALL, "fixed_500_o0"), "probe_questions"] == 22


def test_a_report_without_its_ranking_measure_is_refused():
    report = probe_report()
    del report["primary_measure"]
    with pytest.raises(ProbeReportError, match="primary_measure"):
        probe_table(report)
    report = probe_report()
    del report["pooled"]["rankings"][MEASURE]
    with pytest.raises(ProbeReportError, match="scope 'overall'"):
        probe_table(report)


def _board() -> pd.DataFrame:
    tables = make_tables(2, ("fixed_500_o0", "semantic_minilm"), seed=3)
    return leaderboard(tables["scores"], n_boot=100)


def test_the_probe_columns_join_the_leaderboard_without_moving_its_rows():
    board = _board()
    joined = with_probe(board, probe_table(probe_report()))
    assert list(joined["scope"]) == list(board["scope"])
    assert list(joined["chunker"]) == list(board["chunker"])
    pd.testing.assert_frame_equal(joined[board.columns], board)
    row = joined[(joined["scope"] == "news") & (joined["chunker"] == "fixed_500_o0")].iloc[0]
    assert (row["probe"], row["probe_rank"]) == (0.9, 1)
    # a domain the probe did not measure gets NaN and no questions
    arxiv = joined[joined["scope"] == "arxiv"]
    assert arxiv["probe"].isna().all() and (arxiv["probe_questions"] == 0).all()


def test_the_tables_show_the_probe_beside_hope_and_say_whether_the_picks_agree():
    board = with_probe(_board(), probe_table(probe_report()))
    text = leaderboard_markdown(board)
    assert "'Retrieval (probe)' is the label-free retrieval ranking" in text
    assert "| vs best | Retrieval (probe) |" in text
    assert "| 0.900 [0.800, 0.950] (#1) |" in text
    overall_pick = board[(board["scope"] == OVERALL) & (board["rank"] == 1)]["chunker"].iloc[0]
    verb = "agrees with" if overall_pick == "semantic_minilm" else "differs from"
    assert (
        f"Retrieval probe ({MEASURE}, 22 questions written from the documents): "
        "**semantic_minilm** retrieves best (0.650 [0.550, 0.750]), no other chunker "
        f"significantly worse (paired bootstrap over the questions); its pick {verb} HOPE's."
        in text
    )
    news_pick = board[(board["scope"] == "news") & (board["rank"] == 1)]["chunker"].iloc[0]
    verb = "agrees with" if news_pick == "fixed_500_o0" else "differs from"
    assert (
        "**fixed_500_o0** retrieves best (0.900 [0.800, 0.950]), significantly better than "
        f"every other chunker (paired bootstrap); its pick {verb} HOPE's." in text
    )
    assert "Retrieval probe: no ranking for arxiv." in text
    # a chunker the probe could not evaluate shows a dash, not a number
    wiki = text[text.index("### wiki") :]
    assert "| – |" in wiki.split("### ")[1]
    latex = leaderboard_latex(board)
    assert "& Retrieval (probe) \\\\" in latex
    assert r"0.900 [0.800, 0.950] (\#1)" in latex
    assert "Retrieval (probe)" not in leaderboard_markdown(_board())
    assert "Retrieval (probe)" not in leaderboard_latex(_board())


def _paths(tmp_path, report):
    tables = make_tables(1, ("fixed_500_o0", "semantic_minilm"), seed=2)
    paths = write_tables(tables, tmp_path)
    paths["probe"] = tmp_path / "probe_results.json"
    paths["probe"].write_text(json.dumps(report), encoding="utf-8")
    return {name: paths[name] for name in ("scores", "bleu", "ragas", "table1", "probe")}


def test_paper_outputs_with_a_probe_report_write_its_figure_and_headline(tmp_path):
    out = tmp_path / "paper_figures"
    result, _ = stage.run(
        out_dir=out, config=AnalysisConfig(n_boot=100), **_paths(tmp_path, probe_report())
    )
    for name in ("figure_probe_vs_hope.png", "figure_probe_vs_hope.pdf"):
        assert (out / name).stat().st_size > 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["probe_best_chunker"] == "semantic_minilm"
    board = pd.read_csv(out / "leaderboard.csv")
    assert {"probe", "probe_ci_low", "probe_ci_high", "probe_rank"} <= set(board.columns)
    assert "Retrieval (probe)" in (out / "leaderboard.md").read_text()
    # the figure has a panel per scope, overall first
    titles = [
        ax.get_title() for ax in result.figures["figure_probe_vs_hope"].axes if ax.get_title()
    ]
    assert titles[0] == OVERALL and "news" in titles


def test_a_probe_report_that_cannot_be_read_stops_before_anything_is_written(tmp_path):
    report = probe_report()
    del report["primary_measure"]
    out = tmp_path / "out"
    with pytest.raises(InputFileError, match=r"probe report .*probe_results.json.*primary_measure"):
        stage.run(out_dir=out, config=AnalysisConfig(n_boot=100), **_paths(tmp_path, report))
    assert not out.exists()
    paths = _paths(tmp_path, probe_report())
    paths["probe"].write_text("{not json", encoding="utf-8")
    with pytest.raises(InputFileError, match="not JSON"):
        stage.run(out_dir=out, config=AnalysisConfig(n_boot=100), **paths)
    assert not out.exists()
