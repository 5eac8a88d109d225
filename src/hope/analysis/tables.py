"""Tables 1 and 2 and the chunker leaderboard as CSV, markdown and LaTeX strings.

Undefined statistics print as ``NaN`` with the number of pairs behind them, never as a number.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from hope.analysis.leaderboard import OVERALL, recommendation
from hope.analysis.paper import (
    HOPE_METRICS,
    INDICATORS,
    MATH_LABELS,
    PAPER_TABLE2,
    PREDICTORS,
    SIGNIFICANCE_LEVEL,
)
from hope.analysis.probe_board import probe_sentence
from hope.analysis.stats import CORRELATION_COLUMNS

# correlation_table's columns with labels first, significance after p, the paper's r before reason.
_P = CORRELATION_COLUMNS.index("pearson_p") + 1
TABLE2_COLUMNS = (
    "indicator",
    "metric",
    *CORRELATION_COLUMNS[:_P],
    "significant",
    *CORRELATION_COLUMNS[_P:-1],
    "paper_r",
    "paper_significant",
    "r_minus_paper",
    CORRELATION_COLUMNS[-1],
)

_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: object) -> str:
    return "".join(_LATEX_SPECIALS.get(ch, ch) for ch in str(text))


def _isnan(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _num(value: float, spec: str = ".3f") -> str:
    return "NaN" if _isnan(value) else f"{value:{spec}}"


def _true(value: object) -> bool:
    """A flag that may be NA (unknown) is set only when it is a real True."""
    return value is not pd.NA and not _isnan(value) and bool(value)


def _star(p: float) -> str:
    return "*" if not _isnan(p) and p < SIGNIFICANCE_LEVEL else ""


def table2_frame(correlations: pd.DataFrame) -> pd.DataFrame:
    """The correlation table with labels, significance and the paper's values beside ours."""
    df = correlations.copy()
    df["indicator"] = df["row"].map(lambda r: INDICATORS.get(r, r))
    df["metric"] = df["col"].map(lambda c: PREDICTORS.get(c, c))
    # Significance is undefined where p is; a blank cell in the CSV says so.
    df["significant"] = [
        pd.NA if _isnan(p) else bool(p < SIGNIFICANCE_LEVEL) for p in df["pearson_p"]
    ]
    keys = zip(df["row"], df["col"], strict=True)
    paper = [PAPER_TABLE2.get(key, (math.nan, None)) for key in keys]
    df["paper_r"] = [v for v, _ in paper]
    df["paper_significant"] = [pd.NA if s is None else s for _, s in paper]
    df["r_minus_paper"] = df["pearson_r"] - df["paper_r"]
    return df[list(TABLE2_COLUMNS)]


def _pearson_cell(row: pd.Series) -> str:
    if _isnan(row["pearson_r"]):
        return f"NaN (n={int(row['n'])})"
    return f"{row['pearson_r']:.3f}{_star(row['pearson_p'])}"


def _paper_cell(row: pd.Series) -> str:
    if _isnan(row["paper_r"]):
        return "–"
    return f"{row['paper_r']:.3f}{'*' if _true(row['paper_significant']) else ''}"


def _ci(low: float, high: float) -> str:
    return "NaN" if _isnan(low) or _isnan(high) else f"[{low:.3f}, {high:.3f}]"


def _n_note(table: pd.DataFrame) -> str:
    ns = sorted(set(int(n) for n in table["n"]))
    if len(ns) == 1:
        return f"n = {ns[0]} pairs in every cell"
    return f"n = {ns[0]}–{ns[-1]} pairs per cell (missing values dropped pairwise)"


def table2_markdown(table: pd.DataFrame, *, min_n: int, n_boot: int, seed: int) -> str:
    rows = list(dict.fromkeys(table["row"]))
    cols = list(dict.fromkeys(table["col"]))
    cell = {(r["row"], r["col"]): r for _, r in table.iterrows()}
    head = "| | " + " | ".join(PREDICTORS.get(c, c) for c in cols) + " |"
    rule = "|---|" + "---:|" * len(cols)
    lines = [
        "Table 2. Pearson correlations between the RAG indicators and BLEU, HOPE and its "
        f"sub-metrics; * p < {SIGNIFICANCE_LEVEL}; {_n_note(table)}. Each cell: ours (paper).",
        "",
        head,
        rule,
    ]
    for r in rows:
        values = [f"{_pearson_cell(cell[r, c])} ({_paper_cell(cell[r, c])})" for c in cols]
        lines.append(f"| {INDICATORS.get(r, r)} | " + " | ".join(values) + " |")
    lines += [
        "",
        f"Details: bootstrap 95 % percentile intervals over {n_boot} paired resamples "
        f"(seed {seed}); NaN where fewer than {min_n} complete pairs or a constant column.",
        "",
        "| Indicator | Metric | n | Pearson r | p | 95 % CI | Spearman ρ | p | 95 % CI "
        "| Paper r | Note |",
        "|---|---|---:|---:|---:|---|---:|---:|---|---:|---|",
    ]
    for _, row in table.iterrows():
        lines.append(
            f"| {row['indicator']} | {row['metric']} | {int(row['n'])} | "
            f"{_num(row['pearson_r'])}{_star(row['pearson_p'])} | "
            f"{_num(row['pearson_p'], '.3g')} | "
            f"{_ci(row['pearson_ci_low'], row['pearson_ci_high'])} | "
            f"{_num(row['spearman_rho'])}{_star(row['spearman_p'])} | "
            f"{_num(row['spearman_p'], '.3g')} | "
            f"{_ci(row['spearman_ci_low'], row['spearman_ci_high'])} | {_paper_cell(row)} | "
            f"{row['reason']} |"
        )
    return "\n".join(lines) + "\n"


def _latex_table(size: str, spec: str, body: Sequence[str], caption: str, label: str) -> str:
    """A booktabs table: ``body`` (header, rules and rows) between the frame every table shares."""
    head = [
        r"\begin{table}[t]",
        r"\centering",
        "\\" + size,
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
    ]
    tail = [
        r"\bottomrule",
        r"\end{tabular}",
        rf"\caption{{{caption}}}",
        rf"\label{{{label}}}",
        r"\end{table}",
    ]
    return "\n".join([*head, *body, *tail]) + "\n"


def _tex_num(value: float, star: str = "") -> str:
    if _isnan(value):
        return "NaN"
    sup = r"^{*}" if star else ""
    return f"${value:.3f}{sup}$"


def table2_latex(table: pd.DataFrame, *, n_boot: int) -> str:
    """Four lines per indicator: our Pearson r, its bootstrap CI, Spearman rho, the paper's r."""
    rows = list(dict.fromkeys(table["row"]))
    cols = list(dict.fromkeys(table["col"]))
    cell = {(r["row"], r["col"]): r for _, r in table.iterrows()}
    header = " & ".join(MATH_LABELS.get(c, c) for c in cols)
    out = [rf" & & {header} \\", r"\midrule"]
    for i, r in enumerate(rows):
        cells = [cell[r, c] for c in cols]
        ours = [
            _tex_num(x["pearson_r"], _star(x["pearson_p"]))
            if not _isnan(x["pearson_r"])
            else rf"NaN ($n{{=}}{int(x['n'])}$)"
            for x in cells
        ]
        cis = [
            "--"
            if _isnan(x["pearson_ci_low"])
            else rf"\scriptsize[${x['pearson_ci_low']:.2f}$, ${x['pearson_ci_high']:.2f}$]"
            for x in cells
        ]
        rho = [_tex_num(x["spearman_rho"], _star(x["spearman_p"])) for x in cells]
        paper = [
            "--"
            if _isnan(x["paper_r"])
            else _tex_num(x["paper_r"], "*" if _true(x["paper_significant"]) else "")
            for x in cells
        ]
        label = latex_escape(INDICATORS.get(r, r))
        out += [
            rf"{label} & Pearson $r$ & " + " & ".join(ours) + r" \\",
            r" & 95\,\% CI & " + " & ".join(cis) + r" \\",
            r" & Spearman $\rho$ & " + " & ".join(rho) + r" \\",
            r" & paper $r$ & " + " & ".join(paper) + r" \\",
        ]
        if i < len(rows) - 1:
            out.append(r"\midrule")
    caption = (
        "Correlations between RAG indicators and HOPE metrics and BLEU ("
        + latex_escape(_n_note(table))
        + rf"). $^{{*}}$: $p<{SIGNIFICANCE_LEVEL}$. CI: bootstrap percentile, {n_boot} "
        "resamples. NaN: too few pairs or a constant column."
    )
    return _latex_table("small", "ll" + "r" * len(cols), out, caption, "tab:correlations")


# --- Table 1 -----------------------------------------------------------------------------------

TABLE1_REQUIRED = ("data_type", "documents")
# Columns Table 1 shows where the frame has them, with their headings, in this order.
TABLE1_OPTIONAL = {"paper_documents": "Paper", "source": "Source", "mean_chars": "Mean chars"}


def _count(value: object) -> str:
    if _isnan(value):
        return "–"
    number = float(value)
    return f"{number:,.0f}" if number.is_integer() else f"{number:,.1f}"


def _table1_cell(row: pd.Series, column: str) -> str:
    """An optional column's cell: the source as text (blank where missing), counts formatted."""
    if column == "source":
        return "" if _isnan(row["source"]) else str(row["source"])
    return _count(row[column])


def table1_markdown(table1: pd.DataFrame) -> str:
    absent = [c for c in TABLE1_REQUIRED if c not in table1.columns]
    if absent:
        raise KeyError(f"table1 lacks column(s) {absent}")
    optional = [c for c in TABLE1_OPTIONAL if c in table1.columns]
    head = ["Data type", "Documents", *(TABLE1_OPTIONAL[c] for c in optional)]
    lines = [
        "Table 1. Documents per domain (reproduction, and the paper's count).",
        "",
        "| " + " | ".join(head) + " |",
        "|---|" + "|".join("---:" if h != "Source" else "---" for h in head[1:]) + "|",
    ]
    for _, row in table1.iterrows():
        bold = "**" if str(row.get("domain", "")) == "total" else ""
        cells = [f"{bold}{row['data_type']}{bold}", f"{bold}{_count(row['documents'])}{bold}"]
        cells += [_table1_cell(row, c) for c in optional]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def table1_latex(table1: pd.DataFrame) -> str:
    # The printed table leaves the mean length out.
    optional = [c for c in ("paper_documents", "source") if c in table1.columns]
    spec = "lr" + "".join("l" if c == "source" else "r" for c in optional)
    head = ["Data type", "Documents", *(TABLE1_OPTIONAL[c] for c in optional)]
    out = [" & ".join(head) + r" \\", r"\midrule"]
    for _, row in table1.iterrows():
        total = str(row.get("domain", "")) == "total"
        if total:
            out.append(r"\midrule")
        cells = [latex_escape(row["data_type"]), _count(row["documents"])]
        cells += [latex_escape(_table1_cell(row, c)) for c in optional]  # counts: no specials
        if total:
            cells = [rf"\textbf{{{c}}}" if c else c for c in cells]
        out.append(" & ".join(cells) + r" \\")
    caption = (
        "An overview of the datasets used for evaluating the HOPE metric "
        r"(reproduction; \emph{Paper}: the paper's count)."
    )
    return _latex_table("small", spec, out, caption, "tab:datasets")


# --- Leaderboard ------------------------------------------------------------------------------


def _mean_ci_cell(row: pd.Series, metric: str) -> str:
    mean = row[metric]
    if _isnan(mean):
        return f"NaN (n={int(row[f'{metric}_n'])})"
    if _isnan(row[f"{metric}_ci_low"]):
        return f"{mean:.3f} (n={int(row[f'{metric}_n'])}, no CI)"
    return f"{mean:.3f} [{row[f'{metric}_ci_low']:.3f}, {row[f'{metric}_ci_high']:.3f}]"


def _gap_cell(row: pd.Series) -> str:
    if row["rank"] == 1:
        return "best"
    if _isnan(row["gap_to_best"]):
        return "NaN"
    p = "" if _isnan(row["p_vs_best"]) else f", p={row['p_vs_best']:.3g}"
    return f"{row['gap_to_best']:+.3f} (n={int(row['gap_n'])}{p})"


def _scope_order(board: pd.DataFrame) -> list[str]:
    scopes = list(dict.fromkeys(board["scope"]))
    return [OVERALL, *[s for s in scopes if s != OVERALL]] if OVERALL in scopes else scopes


def _probe_cell(row: pd.Series) -> str:
    """The probe's mean [interval] and its place in the probe's ranking; "–" where not measured."""
    if _isnan(row.get("probe", math.nan)):
        return "–"
    interval = (
        ""
        if _isnan(row["probe_ci_low"])
        else f" [{row['probe_ci_low']:.3f}, {row['probe_ci_high']:.3f}]"
    )
    return f"{row['probe']:.3f}{interval} (#{int(row['probe_rank'])})"


def _has_probe(board: pd.DataFrame) -> bool:
    return "probe_rank" in board.columns and bool(board["probe_rank"].notna().any())


def leaderboard_markdown(board: pd.DataFrame, metrics: Sequence[str] = tuple(HOPE_METRICS)) -> str:
    probe = _has_probe(board)
    lines = [
        "Chunker leaderboard: mean and 95 % percentile-bootstrap interval over documents, "
        "ranked by "
        f"{PREDICTORS.get(metrics[0], metrics[0])}; 'vs best' is the paired difference to the "
        "scope's top chunker over the documents both scored, with a paired t-test p-value.",
    ]
    if probe:
        measure = board.loc[board["probe_rank"].notna(), "probe_measure"].iloc[0]
        lines[0] += (
            " 'Retrieval (probe)' is the label-free retrieval ranking of the probe stage beside "
            f"HOPE: {measure} on questions written from the scope's documents with known gold "
            "spans, mean [95 % bootstrap interval over the questions] and the chunker's place "
            "(#) in that ranking; rankings of written questions, not users' recall."
        )
    for scope in _scope_order(board):
        rows = board[board["scope"] == scope]
        header = " | ".join(PREDICTORS.get(m, m) for m in metrics)
        lines += [
            "",
            f"### {scope}",
            "",
            recommendation(board, scope, metrics),
            *(["", probe_sentence(board, scope)] if probe else []),
            "",
            f"| Rank | Chunker | Docs | {header} | vs best |"
            + (" Retrieval (probe) |" if probe else ""),
            "|---:|---|---:|" + "---|" * len(metrics) + "---|" + ("---|" if probe else ""),
        ]
        for _, row in rows.iterrows():
            rank = "–" if _isnan(row["rank"]) else str(int(row["rank"]))
            cells = [_mean_ci_cell(row, m) for m in metrics]
            lines.append(
                f"| {rank} | {row['chunker']} | {int(row['documents'])} | "
                + " | ".join(cells)
                + f" | {_gap_cell(row)} |"
                + (f" {_probe_cell(row)} |" if probe else "")
            )
    return "\n".join(lines) + "\n"


def leaderboard_latex(board: pd.DataFrame, metrics: Sequence[str] = tuple(HOPE_METRICS)) -> str:
    probe = _has_probe(board)
    header = " & ".join(MATH_LABELS.get(m, m) for m in metrics)
    header += " & Retrieval (probe)" if probe else ""
    out = [rf"Scope & Chunker & Docs & {header} \\"]
    for scope in _scope_order(board):
        out.append(r"\midrule")
        for i, (_, row) in enumerate(board[board["scope"] == scope].iterrows()):
            cells = [latex_escape(_mean_ci_cell(row, m)) for m in metrics]
            cells += [latex_escape(_probe_cell(row))] if probe else []
            name = latex_escape(row["chunker"])
            if row["rank"] == 1:
                name = rf"\textbf{{{name}}}"
            first = latex_escape(scope) if i == 0 else ""
            out.append(
                f"{first} & {name} & {int(row['documents'])} & " + " & ".join(cells) + r" \\"
            )
    caption = (
        r"Chunkers ranked by mean HOPE per domain and overall; mean [95\,\% bootstrap interval] "
        "over documents."
    )
    if probe:
        caption += (
            r" Retrieval (probe): the probe stage's label-free retrieval measure on questions "
            r"written from the documents, mean [95\,\% interval over the questions] (\#place in "
            "its ranking)."
        )
    columns = len(metrics) + (1 if probe else 0)
    return _latex_table("scriptsize", "llr" + "l" * columns, out, caption, "tab:leaderboard")
