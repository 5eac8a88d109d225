"""The README stays short and the documentation site is whole (issue #31): the README has at most
200 lines, no user-facing page points outside the repository (``../shared``), and every page that
mkdocs.yml's navigation names exists (generated pages come from docs/gen_*.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
# Pages that docs/gen_ref_pages.py and docs/gen_results.py write at build time.
GENERATED = {"reference/index.md": "gen_ref_pages.py", "results/index.md": "gen_results.py"}
# A Markdown link or image whose target is a path under ../shared.
SHARED_LINK = re.compile(r"\]\(\s*(?:\.\./)+shared\b")


def nav_pages(nav: list) -> list[str]:
    """Every page file that a navigation tree names."""
    pages: list[str] = []
    for entry in nav:
        items = entry.values() if isinstance(entry, dict) else [entry]
        for item in items:
            pages += nav_pages(item) if isinstance(item, list) else [item]
    return pages


def user_pages() -> list[Path]:
    return [REPO / "README.md", *sorted(DOCS.rglob("*.md"))]


def test_the_readme_has_at_most_200_lines() -> None:
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines"


def test_the_readme_keeps_the_two_quick_start_commands() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "make repro" in readme and "make test" in readme


@pytest.mark.parametrize("page", user_pages(), ids=lambda p: str(p.relative_to(REPO)))
def test_no_page_links_outside_the_repository(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert not SHARED_LINK.search(text), f"{page.name} links to ../shared"


@pytest.mark.parametrize("page", user_pages(), ids=lambda p: str(p.relative_to(REPO)))
def test_no_page_names_a_shared_path(page: Path) -> None:
    """Where data lives outside the repository, the page says what it is and how to get it."""
    assert "../shared" not in page.read_text(encoding="utf-8"), page.name


def test_every_page_in_the_navigation_exists() -> None:
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    pages = nav_pages(config["nav"])
    assert "index.md" in pages and "contributing.md" in pages
    missing = [
        page
        for page in pages
        if not (DOCS / page).is_file() and not (DOCS / GENERATED.get(page, "-")).is_file()
    ]
    assert not missing, f"mkdocs.yml names pages that do not exist: {missing}"


def test_the_links_between_pages_resolve() -> None:
    """Relative links between hand-written pages point at files (mkdocs --strict checks all)."""
    link = re.compile(r"\]\(([^)#:\s]+\.md)(?:#[^)]*)?\)")
    broken = []
    for page in sorted(DOCS.glob("*.md")):
        for target in link.findall(page.read_text(encoding="utf-8")):
            if target.startswith(("results/", "reference/")):
                continue  # generated at build time
            if not (page.parent / target).is_file():
                broken.append(f"{page.name} -> {target}")
    assert not broken, broken
