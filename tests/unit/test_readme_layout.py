"""The layout block of the contributing page (docs/contributing.md) names every module of
``src/hope`` under its folder's entry, and names no module that is gone (issue #17: "the layout
section matches the tree"; the block moved from the README to the docs in issue #31)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src" / "hope"
# A file name standing on its own: bench/bench_validity.py is a path outside src/hope.
PY_NAME = re.compile(r"(?<![/\w])(\w+)\.py\b")


def layout_entries(page: str) -> dict[str, str]:
    """``src/hope``'s entries in the layout block: name (``metrics/``, ``io.py``) -> its text."""
    block = page.split("\n## Layout\n", 1)[1].split("```", 2)[1]
    lines = block.splitlines()
    entries: dict[str, str] = {}
    current = None
    for line in lines[lines.index("src/hope/") + 1 :]:
        if not line.startswith("  "):  # back at the repository's level
            break
        if line.startswith("   "):  # a continuation of the current entry
            assert current is not None, f"layout line before any entry: {line!r}"
            entries[current] += " " + line.strip()
        else:
            current, _, text = line.strip().partition(" ")
            entries[current] = text.strip()
    return entries


def packages() -> list[Path]:
    """Every package under src/hope, nested ones too (``core/metrics``)."""
    return sorted(p.parent for p in SRC.rglob("*/__init__.py"))


def modules(folder: Path) -> list[str]:
    return sorted(p.stem for p in folder.glob("*.py") if p.name != "__init__.py")


def unnamed(entries: dict[str, str]) -> list[str]:
    """Modules of src/hope the layout does not name by file name: a package's in its entry, a
    top-level module's anywhere in src/hope's entries."""
    missing = []
    for package in packages():
        name = package.relative_to(SRC).as_posix()
        text = entries.get(f"{name}/")
        if text is None:
            missing.append(f"{name}/ (no entry)")
            continue
        named = set(PY_NAME.findall(text))
        missing += [f"{name}/{stem}.py" for stem in modules(package) if stem not in named]
    named = set(PY_NAME.findall(" ".join(f"{name} {text}" for name, text in entries.items())))
    return missing + [f"{stem}.py" for stem in modules(SRC) if stem not in named]


def not_in_tree(entries: dict[str, str]) -> list[str]:
    """Names in the layout that src/hope does not have. A file named in a package's entry lives
    in that package or at the top level (prompts/ names prompting.py, which renders them)."""
    top = set(modules(SRC))
    gone = []
    for name, text in entries.items():
        path = SRC / name.rstrip("/")
        if not path.exists():
            gone.append(name)
        here = set(modules(path)) if name.endswith("/") and path.is_dir() else set()
        gone += [f"{name}: {stem}.py" for stem in PY_NAME.findall(text) if stem not in here | top]
    return gone


@pytest.fixture(scope="module")
def readme() -> str:
    """The page that holds the layout block."""
    return (REPO / "docs" / "contributing.md").read_text(encoding="utf-8")


def test_the_layout_names_every_module(readme: str) -> None:
    entries = layout_entries(readme)
    assert {"core/", "core/metrics/", "stages/", "pipeline/", "testing.py"} <= set(entries)
    missing = unnamed(entries)
    assert not missing, f"docs/contributing.md layout does not name: {missing}"


def test_the_layout_names_only_what_exists(readme: str) -> None:
    entries = layout_entries(readme)
    gone = not_in_tree(entries)
    assert not gone, f"docs/contributing.md layout names what is gone: {gone}"


def test_a_module_left_out_or_gone_is_caught(readme: str) -> None:
    left_out = layout_entries(readme.replace(" lock.py", " "))
    assert unnamed(left_out) == ["pipeline/lock.py"]
    gone = layout_entries(readme.replace("lock.py", "locks.py"))
    assert not_in_tree(gone) == ["pipeline/: locks.py"]
