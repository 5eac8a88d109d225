"""DVC stage ``notebooks``: execute the jupytext notebooks of ``notebooks/`` headless. This module
is the stage's work; ``hope.stages.notebooks_stage`` is its ``main`` (arguments, the files it
reads and writes), and ``hope-run``, the dry-run estimate and batch call the same functions.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hope.core.io import atomic_path

DEFAULT_NOTEBOOKS = Path("notebooks")

DEFAULT_OUT_DIR = Path("paper_figures/notebooks")

KERNEL_NAME = "python3"

TEMP_KERNEL_NAME = "hope-venv"


def load_notebook(source: str | Path):
    """The jupytext script as a notebook, with every output and execution count cleared."""
    import jupytext

    notebook = jupytext.read(source)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    if not any("parameters" in cell.metadata.get("tags", []) for cell in notebook.cells):
        raise ValueError(f"notebook {source}: no cell tagged 'parameters' for papermill")
    return notebook


def _runs_this_python(argv: Sequence[str]) -> bool:
    if not argv:
        return False
    # jupyter_client launches 'python', 'python3' and 'python3.X' as sys.executable.
    major, minor = sys.version_info[:2]
    if argv[0] in {"python", f"python{major}", f"python{major}.{minor}"}:
        return True
    try:
        return Path(argv[0]).resolve() == Path(sys.executable).resolve()
    except OSError:
        return False


@contextmanager
def resolve_kernel(kernel_name: str | None = None) -> Iterator[str]:
    """``kernel_name`` if given, else a kernel that runs this interpreter (where ``hope`` is).

    The registered ``python3`` spec is used when it launches this interpreter; otherwise a
    spec for ``sys.executable`` is written to a temporary folder put first on ``JUPYTER_PATH``
    for the duration, so nothing is installed into the user's home.
    """
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    if kernel_name is not None:
        yield kernel_name
        return
    try:
        spec = KernelSpecManager().get_kernel_spec(KERNEL_NAME)
    except NoSuchKernel:
        spec = None
    if spec is not None and _runs_this_python(spec.argv):
        yield KERNEL_NAME
        return
    with tempfile.TemporaryDirectory(prefix="hope-kernels-") as tmp:
        folder = Path(tmp) / "kernels" / TEMP_KERNEL_NAME
        folder.mkdir(parents=True)
        (folder / "kernel.json").write_text(
            json.dumps(
                {
                    "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                    "display_name": f"Python ({sys.prefix})",
                    "language": "python",
                }
            ),
            encoding="utf-8",
        )
        old = os.environ.get("JUPYTER_PATH")
        os.environ["JUPYTER_PATH"] = os.pathsep.join(filter(None, [tmp, old]))
        try:
            yield TEMP_KERNEL_NAME
        finally:
            if old is None:
                os.environ.pop("JUPYTER_PATH", None)
            else:
                os.environ["JUPYTER_PATH"] = old


# What papermill and the kernel record about one execution rather than about its results: clock
# times, durations, and the (temporary, absolute) file names. A DVC output keeps none of them, so
# the executed notebook has the same bytes in every clone and on every rerun.
RUN_KEYS = ("start_time", "end_time", "duration", "input_path", "output_path")


def scrub_run_metadata(notebook) -> None:
    """Drop time stamps, durations, paths, random cell ids and the kernel's registry name."""
    metadata = notebook.metadata
    for key in RUN_KEYS:
        metadata.get("papermill", {}).pop(key, None)
    # The kernel that ran it may be a temporary spec named after sys.prefix (resolve_kernel).
    metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    for index, cell in enumerate(notebook.cells):
        # jupytext and papermill give cells random ids; these depend on position and source only.
        cell.id = hashlib.sha1(f"{index}\x1f{cell.source}".encode()).hexdigest()[:8]
        cell.metadata.pop("execution", None)
        for key in RUN_KEYS:
            cell.metadata.get("papermill", {}).pop(key, None)


def execute_notebook(
    source: str | Path,
    output: str | Path,
    parameters: Mapping[str, Any] | None = None,
    *,
    kernel_name: str | None = None,
    cwd: str | Path | None = None,
    timeout: int = 1800,
) -> Path:
    """Run ``source`` with ``parameters`` and write the executed notebook to ``output``.

    The notebook is written under a temporary name and renamed when it ran through, so
    ``output`` is never a half-executed notebook; on failure it becomes ``*.failed.ipynb`` and
    papermill's error (naming the failing cell) propagates.
    """
    import nbformat
    import papermill

    output = Path(output)
    notebook = load_notebook(source)
    failed = output.with_suffix(".failed.ipynb")
    with atomic_path(output, suffix=".ipynb") as tmp:
        try:
            with resolve_kernel(kernel_name) as name:
                papermill.execute_notebook(
                    notebook,
                    str(tmp),
                    parameters=dict(parameters or {}),
                    kernel_name=name,
                    cwd=str(cwd) if cwd is not None else None,
                    progress_bar=False,
                    log_output=False,
                    execution_timeout=timeout,
                )
        except BaseException:
            if tmp.exists() and tmp.stat().st_size:
                os.replace(tmp, failed)
            raise
        # Validate before publishing: a notebook nbformat cannot read is not an output.
        executed = nbformat.read(tmp, as_version=4)
        scrub_run_metadata(executed)
        nbformat.validate(executed)
        nbformat.write(executed, str(tmp))
    failed.unlink(missing_ok=True)
    return output
