"""Every DVC stage depends on all the code it runs: a change to any module a stage imports makes
`dvc status` report the stage changed, so a committed dvc.lock cannot describe outputs that the
code at that commit would not produce."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

from hope.pipeline import REPO_ROOT

SRC = REPO_ROOT / "src"


def _module_file(name: str) -> Path | None:
    base = SRC.joinpath(*name.split("."))
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def _imported_modules(path: Path) -> set[str]:
    # a module's relative imports start from its package; an __init__'s package is its folder
    package = (
        list(path.relative_to(SRC).with_suffix("").parts)[:-1] if path.is_relative_to(SRC) else []
    )
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package[: len(package) - node.level + 1]
                module = ".".join(anchor + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            # `from hope.x import y` may import the module hope.x.y
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return {m for m in found if m == "hope" or m.startswith("hope.")}


def import_closure(*modules: str) -> set[Path]:
    """The project's files that importing ``modules`` can load (their packages' __init__ too)."""
    seen: set[Path] = set()
    todo = list(modules)
    while todo:
        name = todo.pop()
        path = _module_file(name)
        if path is None or path in seen:
            continue
        seen.add(path)
        dotted = name.split(".")
        todo.extend(".".join(dotted[:i]) for i in range(1, len(dotted)))
        todo.extend(_imported_modules(path))
    return seen


def _stages() -> list[tuple[str, dict]]:
    stages = yaml.safe_load((REPO_ROOT / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    return [(name, spec.get("do", spec)) for name, spec in stages.items()]


def _code_run_by(spec: dict) -> set[Path]:
    """The module after ``-m`` and the project modules imported by a script it is given (the
    paper-outputs notebook), with their closures."""
    words = spec["cmd"].split()
    modules = {words[words.index("-m") + 1]}
    scripts = [REPO_ROOT / w for w in words if w.endswith(".py") and (REPO_ROOT / w).is_file()]
    for script in scripts:
        modules |= _imported_modules(script)
    return import_closure(*modules) | set(scripts)


def test_the_closure_follows_relative_and_package_imports():
    files = {p.relative_to(SRC).as_posix() for p in import_closure("hope.stages.bleu_stage")}
    assert {"hope/__init__.py", "hope/stages/__init__.py", "hope/stages/bleu_stage.py"} <= files
    assert "hope/chunking/bleu_baseline.py" in files


@pytest.mark.parametrize(("name", "spec"), _stages(), ids=[n for n, _ in _stages()])
def test_each_stage_depends_on_every_module_it_imports(name, spec):
    deps = [Path(d if isinstance(d, str) else next(iter(d))) for d in spec["deps"]]
    uncovered = sorted(
        path.relative_to(REPO_ROOT).as_posix()
        for path in _code_run_by(spec)
        if not any(path.relative_to(REPO_ROOT).is_relative_to(dep) for dep in deps)
    )
    assert not uncovered, f"dvc.yaml stage {name} runs code it does not depend on: {uncovered}"
