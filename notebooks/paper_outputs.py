# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # HOPE reproduction: paper outputs (sections 4.3 and 5)
#
# Tables 1 and 2, Figures 6 and 7 and the chunker leaderboard (with the probe's retrieval ranking
# beside HOPE), computed from the pipeline's per-(document, chunker) tables and the probe's report
# by `hope.analysis` and written to `out_dir` (the same files as
# `hope.analysis.paper_files.run`). Kept in git as a jupytext percent script without outputs;
# `python -m hope.stages.notebooks_stage` executes it headless with papermill.

# %%
from pathlib import Path

import pandas as pd
from IPython.display import Image, Markdown, display

from hope.analysis import AnalysisConfig
from hope.analysis.paper_files import run

# %% tags=["parameters"]
scores = "data/hope/scores.csv"
bleu = "data/bleu/bleu.jsonl"
ragas = "data/ragas/per_doc_chunker.csv"
table1 = "data/prepared/table1.csv"
probe = ""  # the probe stage's report (data/probe/results.json); "" leaves the probe out
out_dir = "paper_figures"
seed = 2025
bootstrap = 2000
min_n = 10
n_bins = 10
min_bin_size = 5
binning = "quantile"

# %%
config = AnalysisConfig(
    seed=seed,
    n_boot=bootstrap,
    min_n=min_n,
    n_bins=n_bins,
    min_bin_size=min_bin_size,
    binning=binning,
)
result, written = run(
    scores=scores,
    bleu=bleu,
    ragas=ragas,
    table1=table1 or None,
    probe=probe or None,
    out_dir=out_dir,
    config=config,
)
missing = {name: len(keys) for name, keys in result.join.missing.items()}
display(
    Markdown(
        f"**{result.join.n_pairs} pairs** ({result.pairs['doc_id'].nunique()} documents × "
        f"{result.pairs['chunker'].nunique()} chunkers); pairs without a row: {missing}."
    )
)

# %% [markdown]
# ## Table 1: corpora

# %%
if "table1.md" in result.texts:
    display(Markdown(result.texts["table1.md"]))

# %% [markdown]
# ## Table 2: correlations of the RAG indicators with BLEU, HOPE and its sub-metrics
#
# Ours beside the paper's; `*` marks p < 0.05. A cell with fewer than `min_n` complete pairs,
# or a constant column, is NaN with its n.

# %%
display(Markdown(result.texts["table2.md"]))

# %% [markdown]
# ## Figure 6: distributions of HOPE and its sub-metrics

# %%
display(Image(data=(Path(out_dir) / "figure6.png").read_bytes(), width=800))
display(Image(data=(Path(out_dir) / "figure6_by_chunker.png").read_bytes(), width=800))
display(result.range_fractions)

# %% [markdown]
# ## Figure 7: RAG indicators against semantic independence
#
# Gain = (mean in the top ζ_sem bin − mean in the bottom bin) / mean in the bottom bin × 100.

# %%
display(Image(data=(Path(out_dir) / "figure7.png").read_bytes(), width=800))
display(pd.DataFrame(result.gains).T)

# %% [markdown]
# ## Chunker leaderboard
#
# With the probe's report (`probe`, the DVC stage `probe`), each scope also shows the label-free
# retrieval ranking beside HOPE: the probe's measure on questions written from the documents,
# and the figure below plots one against the other per chunker.

# %%
display(Markdown(result.texts["leaderboard.md"]))
if "figure_probe_vs_hope" in result.figures:
    display(Image(data=(Path(out_dir) / "figure_probe_vs_hope.png").read_bytes(), width=800))

# %%
print("\n".join(str(path) for path in written))
