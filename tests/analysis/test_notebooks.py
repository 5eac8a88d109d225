"""The paper notebook: converted from its jupytext script and executed headless by papermill."""

from __future__ import annotations

import json
import os
import sys

import nbformat
import pytest

from hope.pipeline import notebooks_step as notebooks_work
from hope.stages import notebooks_stage as runner

from .synthetic import make_probe_report, make_tables, write_tables


@pytest.fixture
def notebook(repo_root):
    return repo_root / "notebooks" / "paper_outputs.py"


def test_script_converts_without_outputs_and_has_parameters(notebook):
    nb = notebooks_work.load_notebook(notebook)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.outputs == [] and c.execution_count is None for c in code)
    params = next(c for c in code if "parameters" in c.metadata.get("tags", []))
    for name in ("scores", "bleu", "ragas", "table1", "out_dir", "seed", "bootstrap", "min_n"):
        assert f"{name} = " in params.source
    # Kept in git as a script only: no executed copy beside it.
    assert not list(notebook.parent.glob("*.ipynb"))


def test_notebook_without_parameters_cell_is_refused(tmp_path):
    source = tmp_path / "bare.py"
    source.write_text("# %%\nx = 1\n")
    with pytest.raises(ValueError, match="no cell tagged 'parameters'"):
        notebooks_work.load_notebook(source)


def test_parse_parameter_reads_yaml_values():
    assert runner.parse_parameter("bootstrap=200") == ("bootstrap", 200)
    assert runner.parse_parameter("out_dir=paper_figures") == ("out_dir", "paper_figures")
    assert runner.parse_parameter("table1=") == ("table1", "")
    with pytest.raises(Exception, match="key=value"):
        runner.parse_parameter("nonsense")


def test_kernel_spec_for_this_interpreter_is_temporary(monkeypatch, tmp_path):
    from jupyter_client.kernelspec import KernelSpecManager

    monkeypatch.setattr(notebooks_work, "KERNEL_NAME", "no-such-kernel-for-hope-tests")
    before = os.environ.get("JUPYTER_PATH")
    with notebooks_work.resolve_kernel() as name:
        assert name == notebooks_work.TEMP_KERNEL_NAME
        spec = KernelSpecManager().get_kernel_spec(name)
        assert spec.argv[0] == sys.executable
    assert os.environ.get("JUPYTER_PATH") == before
    with notebooks_work.resolve_kernel("given") as name:
        assert name == "given"
    assert notebooks_work._runs_this_python(["python", "-m", "ipykernel_launcher"])
    assert not notebooks_work._runs_this_python(["/nonexistent/python9", "-m", "x"])


@pytest.mark.slow
def test_notebook_executes_headless_and_writes_the_outputs(notebook, tmp_path, monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")
    paths = write_tables(make_tables(1, seed=4, nan_scores=2), tmp_path)
    probe = tmp_path / "data/probe/results.json"
    probe.parent.mkdir(parents=True)
    probe.write_text(json.dumps(make_probe_report()), encoding="utf-8")
    out = tmp_path / "paper_figures"
    argv = [
        str(notebook),
        "--out-dir",
        str(out / "notebooks"),
        "--cwd",
        str(tmp_path),
        "-p",
        "scores=data/hope/scores.csv",
        "-p",
        "bleu=data/bleu/bleu.jsonl",
        "-p",
        "ragas=data/ragas/per_doc_chunker.csv",
        "-p",
        "table1=data/prepared/table1.csv",
        "-p",
        "probe=data/probe/results.json",
        "-p",
        f"out_dir={out}",
        "-p",
        "bootstrap=100",
        "--mlflow",
        "--mlflow-dir",
        str(out),
    ]
    monkeypatch.setenv("MLFLOW_TRACKING_URI", (tmp_path / "mlruns").as_uri())
    assert paths["scores"].is_file()
    assert runner.main(argv) == 0
    executed = out / "notebooks" / "paper_outputs.ipynb"
    nb = nbformat.read(executed, as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert sum("image/png" in o.get("data", {}) for o in outputs) == 4
    for name in ("figure6", "figure6_by_chunker", "figure7", "figure_probe_vs_hope"):
        for ext in ("png", "pdf"):
            assert (out / f"{name}.{ext}").stat().st_size > 0
    for name in ("table1", "table2", "leaderboard"):
        for ext in ("csv", "md", "tex"):
            assert (out / f"{name}.{ext}").stat().st_size > 0
    # The notebook's bootstrap parameter reached the analysis (the settings are the stage's
    # params, not metrics: dvc metrics show lists what a rerun can change).
    assert "over 100 paired resamples" in (out / "table2.md").read_text()
    assert "Retrieval (probe)" in (out / "leaderboard.md").read_text()
    assert "settings" not in json.loads((out / "metrics.json").read_text())
    assert (tmp_path / "mlruns").is_dir()


def test_failing_notebook_is_kept_for_inspection(tmp_path):
    source = tmp_path / "broken.py"
    source.write_text('# %% tags=["parameters"]\nx = 1\n\n# %%\nraise RuntimeError("boom")\n')
    out = tmp_path / "nb"
    assert runner.main([str(source), "--out-dir", str(out)]) == 1
    assert not (out / "broken.ipynb").exists()
    failed = nbformat.read(out / "broken.failed.ipynb", as_version=4)
    assert "boom" in json.dumps(failed.cells[-1].outputs)
