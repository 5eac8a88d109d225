"""The package's shape (issue #31): every module name is unique and says what it holds, no loose
modules beside the layer packages, and the import contracts of pyproject.toml hold (the same check
`make lint` runs, here so that a layer broken by a change fails the tests too)."""

import subprocess
import sys
from collections import Counter
from pathlib import Path

import hope

PACKAGE = Path(hope.__file__).parent
# The public API lives in hope/__init__.py; hope.testing holds the test doubles users may import.
TOP_LEVEL_MODULES = {"__init__.py", "testing.py"}


def module_names() -> list[str]:
    """Every module's and package's last name (``hope.core.metrics.equations`` -> ``equations``)."""
    names = [p.stem for p in PACKAGE.rglob("*.py") if p.name != "__init__.py"]
    names += [p.parent.name for p in PACKAGE.rglob("__init__.py") if p.parent != PACKAGE]
    return names


def test_every_module_name_is_unique_in_the_package():
    repeated = {name: n for name, n in Counter(module_names()).items() if n > 1}
    assert not repeated, f"module names used more than once: {repeated}"


def test_no_loose_modules_beside_the_layer_packages():
    loose = {p.name for p in PACKAGE.glob("*.py")} - TOP_LEVEL_MODULES
    assert not loose, f"modules outside the layer packages: {sorted(loose)}"


def test_import_contracts_hold():
    linter = Path(sys.executable).with_name("lint-imports")
    repo = PACKAGE.parents[1]
    done = subprocess.run(
        [str(linter), "--config", str(repo / "pyproject.toml")],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "BROKEN" not in done.stdout
    assert done.stdout.count("KEPT") == 4


def test_the_real_models_are_what_the_metric_declares_it_needs():
    """The core imports no client: ``hope.core.model_interface`` declares what it calls, and the
    models of ``hope.models`` must provide it."""
    from hope.core.model_interface import ChatModel, Embedder
    from hope.models.embeddings import CachingEmbedder, HashingEmbedder
    from hope.models.factory import build_llm

    llm = build_llm(backend="openai", model="m", base_url="http://127.0.0.1:9/v1", cache=None)
    assert isinstance(llm, ChatModel)
    assert isinstance(CachingEmbedder(HashingEmbedder(), None), Embedder)
    assert not isinstance(object(), ChatModel)
