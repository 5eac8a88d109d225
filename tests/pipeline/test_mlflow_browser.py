"""Issue #33 in a browser: the ``hope`` experiment opens on its runs, and MLflow's compare view of
the HOPE chunker runs shows their headline metrics side by side.

Playwright for Python drives a headless Chromium (Debian's ``chromium`` package, or Playwright's
own browser) against a real ``mlflow server`` (the fixture of ``test_mlflow_server``) holding the
runs the ``hope`` stage's tracking logs. Skipped, with the reason, where the ``playwright``
package or a Chromium is missing (``pip install playwright`` and ``apt-get install chromium``).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

try:
    from playwright.sync_api import sync_playwright
except ImportError:  # before the server starts
    pytest.skip(
        "no playwright: the browser test needs `pip install playwright` and a Chromium "
        "(`apt-get install chromium`)",
        allow_module_level=True,
    )

from .test_mlflow_server import Rest, server  # noqa: F401 (the server fixture)

pytestmark = pytest.mark.slow

HEADLINE = ("hope", "concept_unity", "semantic_independence", "information_preservation", "bleu")
CHROMIUM = ("/usr/bin/chromium", "/usr/bin/chromium-browser")


def _chromium() -> str | None:
    """Debian's Chromium where installed, else None (Playwright's own browser, if downloaded)."""
    found = next((p for p in CHROMIUM if Path(p).is_file()), None)
    return found or shutil.which("chromium") or shutil.which("chromium-browser")


def _log_stage_runs(base: str, tmp_path: Path, monkeypatch) -> None:
    """The ``hope`` stage's run (two chunkers) by the stage's own tracking, on the server."""
    import yaml

    from hope.tracking.stage import record_score_stage

    monkeypatch.setenv("MLFLOW_TRACKING_URI", base)
    out = tmp_path / "data" / "hope"
    out.mkdir(parents=True)
    (out / "scores.csv").write_text(
        "doc_id,domain,chunker,n_passages,hope,concept_unity,semantic_independence,"
        "information_preservation\n"
        "a,news,halves,2,0.6,0.7,0.5,0.5\n"
        "a,news,thirds,3,0.4,0.5,0.3,0.5\n"
    )
    (out / "summary.json").write_text(json.dumps({"usage": {"requests": 4}}))
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"tracking": {"enabled": True, "uri": base}}))
    assert record_score_stage(params, out, [], wall_s=3.0, repo=tmp_path)


def _screenshot(page, name: str) -> None:
    """With HOPE_SCREENSHOTS set to a folder (docs/img for the docs), the page as a PNG there."""
    folder = os.environ.get("HOPE_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / name))


def test_the_compare_view_of_the_hope_chunker_runs_shows_their_headline_metrics(
    server,  # noqa: F811
    tmp_path: Path,
    monkeypatch,
):
    executable = _chromium()
    base, _ = server
    _log_stage_runs(base, tmp_path, monkeypatch)
    from mlflow import MlflowClient

    from hope.tracking.views import experiment_views

    # The links `hope ui` prints: the HOPE chunker runs filtered, and their compare view.
    exp_id, views = experiment_views(MlflowClient(tracking_uri=base), "hope", base)
    hope_view = next(v for v in views if v.kind == "chunker")
    assert hope_view.chunkers == ("hope/halves", "hope/thirds")
    assert hope_view.compare is not None
    with sync_playwright() as playwright:
        try:
            browser = playwright.chromium.launch(executable_path=executable, headless=True)
        except Exception as exc:  # no browser Playwright can start
            pytest.skip(f"no Chromium Playwright can start: {exc}")
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            # MLflow 3.17's UI opens every experiment in its GenAI mode (a browser setting,
            # localStorage `mlflow.workflowType`, whatever the experiment's kind tag says); the
            # link the docs give carries the mode, so the experiment opens on its runs.
            page.goto(f"{base}/#/experiments/{exp_id}?workflowType=machine_learning")
            page.get_by_role("heading", name="Runs").first.wait_for(timeout=60_000)
            # The parent run's row: its chunker runs are nested under it, behind its `+`.
            page.get_by_text("dvc hope:").first.wait_for(timeout=60_000)
            # The filtered link `hope ui` prints: the runs table shows the HOPE chunker runs,
            # nested under their parent run's row; its `+` unfolds them.
            page.goto(hope_view.runs)
            page.get_by_text("dvc hope:").first.wait_for(timeout=60_000)
            page.locator("[data-component-id*='runnamecellrenderer']").first.click()
            page.get_by_text("hope/thirds").first.wait_for(timeout=30_000)
            page.get_by_text("hope/halves").first.wait_for(timeout=30_000)
            _screenshot(page, "mlflow-runs.png")
            page.goto(hope_view.compare)
            page.get_by_text("hope/halves").first.wait_for(timeout=60_000)
            for key in HEADLINE:
                page.get_by_text(key, exact=True).first.wait_for(timeout=30_000)
            # The metrics table of the compare view: a row per headline key, a column per run.
            page.get_by_text("concept_unity", exact=True).last.scroll_into_view_if_needed()
            _screenshot(page, "mlflow-compare.png")
        finally:
            browser.close()
