"""Write the API reference at build time: one page per public module of ``src/hope``.

Run by the mkdocs-gen-files plugin (``mkdocs.yml``). The pages are never committed, so a module
that is added, moved or renamed appears under its own name at the next build. Left out: package
``__main__`` modules, private modules (``_name``) and ``hope.conf``, which holds YAML, not code.
"""

from __future__ import annotations

from pathlib import Path

import mkdocs_gen_files

SRC = Path(__file__).resolve().parents[1] / "src"
SKIP_PACKAGES = {("hope", "conf")}


def public_modules(src: Path = SRC) -> list[tuple[str, ...]]:
    """The dotted names (as tuples) of every public module under ``src/hope``, sorted."""
    names = []
    for path in sorted((src / "hope").rglob("*.py")):
        parts = path.relative_to(src).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts[-1] == "__main__" or any(p.startswith("_") for p in parts):
            continue
        if any(parts[: len(skip)] == skip for skip in SKIP_PACKAGES):
            continue
        names.append(parts)
    return sorted(names)


def main() -> None:
    modules = public_modules()
    index = ["# API reference", "", "Generated from the docstrings at build time.", ""]
    for parts in modules:
        name = ".".join(parts)
        page = Path("reference", *parts).with_suffix(".md")
        with mkdocs_gen_files.open(page, "w") as out:
            out.write(f"# `{name}`\n\n::: {name}\n")
        depth = len(parts) - 1
        index.append(f"{'    ' * depth}- [`{name}`]({Path(*parts).with_suffix('.md').as_posix()})")
    with mkdocs_gen_files.open("reference/index.md", "w") as out:
        out.write("\n".join(index) + "\n")


main()
