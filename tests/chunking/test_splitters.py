"""Properties of the six character-based setups of conf/chunker on real documents."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from hope.chunking import FixedSizeChunker, Passage, RecursiveChunker, load_chunker

FIXED = {
    "fixed_2000_o500": (2000, 500),
    "fixed_2000_o0": (2000, 0),
    "fixed_500_o125": (500, 125),
    "fixed_500_o0": (500, 0),
}
RECURSIVE = {"recursive_2000": 2000, "recursive_500": 500}


def uncovered_non_whitespace(document: str, passages: list[Passage]) -> list[int]:
    covered = bytearray(len(document))
    for p in passages:
        assert p.start is not None and p.end is not None
        covered[p.start : p.end] = b"\x01" * (p.end - p.start)
    return [i for i, ch in enumerate(document) if not covered[i] and not ch.isspace()]


def assert_common_properties(document: str, doc_id: str, name: str, passages: list[Passage]):
    assert passages, f"{name} gave no passages for {doc_id}"
    for i, p in enumerate(passages):
        assert p.index == i
        assert p.passage_id == f"{doc_id}::{name}::{i:04d}"
        assert p.doc_id == doc_id and p.chunker == name
        assert p.start is not None and document[p.start : p.end] == p.text
        assert p.text.strip()
    starts = [p.start for p in passages]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
    missing = uncovered_non_whitespace(document, passages)
    assert not missing, f"{name} lost {len(missing)} characters of {doc_id}, first at {missing[0]}"


@pytest.mark.parametrize("name", sorted(FIXED))
def test_fixed_size_windows_on_real_documents(name, conf_dir: Path, real_documents):
    size, overlap = FIXED[name]
    step = size - overlap
    chunker = load_chunker(name, conf_dir)
    assert isinstance(chunker.fn, FixedSizeChunker)
    for doc_id, document in real_documents.items():
        passages = chunker.chunk(document, doc_id)
        assert_common_properties(document, doc_id, name, passages)
        for i, p in enumerate(passages):
            assert p.start == i * step, f"{doc_id} passage {i} starts at {p.start}"
            if i < len(passages) - 1:
                assert len(p.text) == size
            else:
                assert 0 < len(p.text) <= size and p.end == len(document)
        for left, right in itertools.pairwise(passages):
            shared = left.end - right.start
            assert shared == overlap
            if overlap:
                assert left.text[-overlap:] == right.text[:overlap]
        # No window is redundant: dropping the last would lose the document's end.
        assert len(passages) == max(1, -(-(len(document) - overlap) // step))


@pytest.mark.parametrize("name", sorted(RECURSIVE))
def test_recursive_on_real_documents(name, conf_dir: Path, real_documents):
    size = RECURSIVE[name]
    chunker = load_chunker(name, conf_dir)
    assert isinstance(chunker.fn, RecursiveChunker)
    for doc_id, document in real_documents.items():
        passages = chunker.chunk(document, doc_id)
        assert_common_properties(document, doc_id, name, passages)
        assert max(len(p.text) for p in passages) <= size
        for left, right in itertools.pairwise(passages):
            assert left.end <= right.start, f"{doc_id}: overlapping passages without overlap"
            # Only whitespace lies between neighbours: the splitter strips, never drops.
            assert not document[left.end : right.start].strip()
        # Stripping only trims whitespace, so the first passage starts at the first visible char.
        assert passages[0].start == len(document) - len(document.lstrip())


def test_recursive_prefers_paragraph_boundaries():
    paragraphs = ["Alpha beta gamma delta.", "Epsilon zeta eta theta.", "Iota kappa lambda mu."]
    document = "\n\n".join(paragraphs)
    passages = RecursiveChunker(chunk_size=30, chunk_overlap=0)(document, "d", "r")
    assert [p.text for p in passages] == paragraphs


def test_recursive_overlap_repeats_words():
    document = "one two three four five six seven eight nine ten"
    passages = RecursiveChunker(chunk_size=20, chunk_overlap=8)(document, "d", "r")
    # Pieces keep their leading space: "one"=3, " two"=4, " three"=6, " four"=5, ...; a passage
    # closes before the piece that would pass 20 characters, and the next one restarts from the
    # trailing pieces worth at most 8 characters (" four"=5, " seven"=6, " nine"=5).
    assert [(p.text, p.start, p.end) for p in passages] == [
        ("one two three four", 0, 18),
        ("four five six seven", 14, 33),
        ("seven eight nine", 28, 44),
        ("nine ten", 40, 48),
    ]


def test_fixed_size_hand_checked_windows():
    passages = FixedSizeChunker(chunk_size=4, chunk_overlap=1)("abcdefghij", "d", "f")
    assert [(p.text, p.start, p.end) for p in passages] == [
        ("abcd", 0, 4),
        ("defg", 3, 7),
        ("ghij", 6, 10),
    ]


def test_fixed_size_keeps_whitespace_but_drops_blank_windows():
    document = "abc" + " " * 6 + "def"
    passages = FixedSizeChunker(chunk_size=3, chunk_overlap=0)(document, "d", "f")
    # The two all-space windows carry nothing to retrieve and are dropped.
    assert [(p.text, p.start) for p in passages] == [("abc", 0), ("def", 9)]
    assert [p.index for p in passages] == [0, 1]


def test_chunkers_are_deterministic(conf_dir: Path, real_documents):
    doc_id = "tos:Mozilla"
    for name in (*FIXED, *RECURSIVE):
        first = load_chunker(name, conf_dir).chunk(real_documents[doc_id], doc_id)
        second = load_chunker(name, conf_dir).chunk(real_documents[doc_id], doc_id)
        assert first == second
