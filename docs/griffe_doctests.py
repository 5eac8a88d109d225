"""A griffe extension for the API reference: doctest examples in a docstring become code blocks.

The docstrings of ``src/hope`` are prose with doctest examples (``>>>`` lines and their output)
in the running text, not in Google or NumPy sections. Read as Markdown, a ``>>>`` line is a
block quote and an output such as ``[('qa_pairs', 2)]`` a link reference, which fails
``mkdocs build --strict``. This extension fences every doctest run (from a ``>>>`` line to the
next blank line) as a ``pycon`` code block before mkdocstrings renders it. The source files are
not changed.
"""

from __future__ import annotations

from typing import Any

import griffe

FENCE = "```"


def fence_doctests(text: str) -> str:
    """``text`` with each doctest run wrapped in a ``pycon`` fence; text already fenced is kept."""
    out: list[str] = []
    in_fence = in_doctest = False
    indent = ""
    for line in text.splitlines():
        stripped = line.lstrip()
        if in_doctest and not stripped:
            out += [f"{indent}{FENCE}", line]
            in_doctest = False
            continue
        if not in_doctest and stripped.startswith(FENCE):
            in_fence = not in_fence
        elif not in_fence and not in_doctest and stripped.startswith(">>>"):
            indent = line[: len(line) - len(stripped)]
            out.append(f"{indent}{FENCE}pycon")
            in_doctest = True
        out.append(line)
    if in_doctest:
        out.append(f"{indent}{FENCE}")
    return "\n".join(out)


class FenceDoctests(griffe.Extension):
    """Fence doctest examples in every docstring griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and ">>>" in obj.docstring.value:
            obj.docstring.value = fence_doctests(obj.docstring.value)
