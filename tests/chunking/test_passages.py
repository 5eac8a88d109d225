from __future__ import annotations

import pytest

from hope.chunking import ChunkingError, Passage, build_passages, passage_id


def test_passage_ids_are_deterministic_and_sort_in_order():
    ids = [passage_id("wiki:7", "fixed_500_o0", i) for i in (0, 9, 10, 123)]
    assert ids[0] == "wiki:7::fixed_500_o0::0000"
    assert ids == sorted(ids)


def test_strings_are_located_forward_so_repeats_map_to_later_occurrences():
    document = "Terms apply. Intro. Terms apply. End."
    passages = build_passages(
        ["Terms apply.", "Intro.", "Terms apply.", "End."], document, "d", "c"
    )
    assert [(p.start, p.end) for p in passages] == [(0, 12), (13, 19), (20, 32), (33, 37)]
    assert all(document[p.start : p.end] == p.text for p in passages)


def test_rewritten_text_keeps_no_span():
    passages = build_passages(["A summary not in the text."], "Original text.", "d", "c")
    assert passages[0].start is None and passages[0].end is None


def test_a_wrong_span_is_reported_with_chunker_and_document():
    with pytest.raises(ChunkingError, match=r"chunker 'c' on document 'doc-1'.*span \[0, 3\)"):
        build_passages([{"text": "xyz", "start": 0, "end": 3}], "abcdef", "doc-1", "c")


def test_given_passages_are_renumbered_for_this_document_and_chunker():
    foreign = Passage("x::y::0007", "x", "y", 7, "def", 3, 6)
    (passage,) = build_passages([foreign], "abcdef", "doc", "mine")
    assert passage == Passage("doc::mine::0000", "doc", "mine", 0, "def", 3, 6)


def test_whitespace_only_items_are_dropped_and_bad_items_rejected():
    assert [p.text for p in build_passages(["a", "  \n", "b"], "a b", "d", "c")] == ["a", "b"]
    with pytest.raises(TypeError, match="got int"):
        build_passages([42], "42", "d", "c")


def test_passage_round_trips_through_dict_and_checks_its_span():
    passage = Passage("d::c::0000", "d", "c", 0, "abc", 0, 3)
    assert Passage.from_dict(passage.to_dict()) == passage
    with pytest.raises(ValueError, match="both be set"):
        Passage("d::c::0000", "d", "c", 0, "abc", 0, None)
    with pytest.raises(ValueError, match="invalid span"):
        Passage("d::c::0000", "d", "c", 0, "abc", 5, 2)
