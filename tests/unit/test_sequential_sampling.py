"""``hope.sampling.mode: sequential``: seeded rounds, the stopping reasons, the lockstep of the
chunkings of one document, and ``paper`` left as it was."""

import asyncio

import pytest

from hope.core.evaluator import HopeEvaluator
from hope.core.hope_settings import ConfigError, HopeSettings, load_profile
from hope.core.sequential_sampling import RoundBoard, SequentialState, decided, draw_order
from hope.models.embeddings import HashingEmbedder
from hope.testing import schema_responder

from .fakes import make_llm

DOC = " ".join(
    f"Fact number {i} says that the {['mill', 'glacier', 'harbour'][i % 3]} item {i} weighs "
    f"{i * 3} grams."
    for i in range(40)
)
PASSAGES = [DOC[i : i + 120] for i in range(0, len(DOC), 120)]


def settings(mode="sequential", **sampling):
    return load_profile(
        "paper",
        progress=False,
        concept_unity={"n_items": 3},
        semantic_independence={"n_questions": 1},
        information_preservation={"n_segments": 8},
        sampling={"mode": mode, **sampling},
    )


def evaluate(s, passages=PASSAGES):
    llm, client = make_llm(schema_responder)
    return HopeEvaluator(llm, HashingEmbedder(), s).evaluate(DOC, passages), client


def test_paper_profile_records_no_sampling_and_keeps_its_settings_bytes():
    paper = load_profile("paper")
    assert paper.sampling.mode == "all"
    assert "sampling" not in paper.model_dump(mode="json")
    result, _ = evaluate(settings(mode="all"))
    assert result.sampling is None and "sampling" not in result.to_dict()


def test_the_profiles_first_round_draws_every_segment_of_the_papers_20_and_8_focus_passages():
    for profile in ("paper", "reference", "robust"):
        s = load_profile(profile, progress=False)
        assert s.sampling.round_focus_passages == 8
        assert s.sampling.round_segments == s.information_preservation.n_segments == 20
    state = SequentialState(settings(), list(range(30)), [f"segment {i}" for i in range(20)])
    focus, segments = state.next_round()
    assert focus == list(range(8)) and len(segments) == 20
    focus, segments = state.next_round()
    assert focus == list(range(8, 16)) and segments == []


def test_epsilon_zero_draws_every_item_and_gives_the_full_runs_scores_and_requests():
    full, full_client = evaluate(settings(mode="all"))
    seq, seq_client = evaluate(settings(epsilon=0.0, round_focus_passages=4, round_segments=3))
    assert seq.sampling["stopped"] == "exhausted"
    assert seq.sampling["drawn"] == {"focus_passages": len(PASSAGES), "segments": 8}
    assert seq.sampling["rounds"] == -(-len(PASSAGES) // 4)  # ceil: the passages take longest
    for name in ("hope", "concept_unity", "semantic_independence", "information_preservation"):
        assert getattr(seq, name) == pytest.approx(getattr(full, name))
        low, high = seq.sampling["intervals"][name]
        assert low == pytest.approx(getattr(full, name)) == pytest.approx(high)
    # the same items with the same seeds: the same requests, only in another order
    assert len(seq_client.requests) == len(full_client.requests)
    assert seq.passages == full.passages and seq.segments == full.segments


def test_a_wide_epsilon_stops_after_the_first_round_and_says_why():
    result, _ = evaluate(settings(epsilon=1.0, round_focus_passages=3, round_segments=2))
    assert result.sampling["stopped"] == "epsilon" and result.sampling["rounds"] == 1
    assert result.sampling["drawn"] == {"focus_passages": 3, "segments": 2}
    assert result.counts["concept_unity"].total == 3
    assert len(result.segments) == 2
    skipped = [p for p in result.passages if p["concept_unity"]["status"] == "not_sampled"]
    assert len(skipped) == len(PASSAGES) - 3
    assert skipped[0]["concept_unity"]["reason"] == (
        "sampling.mode sequential: stopped after round 1 (epsilon)"
    )
    low, high = result.sampling["intervals"]["hope"]
    assert low <= result.hope <= high
    history = result.sampling["history"]
    assert [h["round"] for h in history] == [1] and history[0]["focus_passages"] == 3


def test_the_draw_order_is_seeded_and_every_round_nests_in_the_next():
    first = evaluate(settings(epsilon=1.0, round_focus_passages=3))[0]
    again = evaluate(settings(epsilon=1.0, round_focus_passages=3))[0]
    longer = evaluate(settings(epsilon=0.0, round_focus_passages=3))[0]
    drawn = [p["index"] for p in first.passages if p["concept_unity"]["status"] == "ok"]
    assert drawn == [p["index"] for p in again.passages if p["concept_unity"]["status"] == "ok"]
    assert drawn != [0, 1, 2]  # a random draw, not the document's first passages
    assert first.to_dict()["sampling"] == again.to_dict()["sampling"]
    assert longer.sampling["history"][0]["hope"] == first.sampling["history"][0]["hope"]
    assert draw_order(list(range(10)), 0, "x") != draw_order(list(range(10)), 1, "x")


def test_another_order_seed_draws_other_items_with_the_answers_of_the_run_seed():
    def drawn(result):
        return {
            p["index"]: (p["concept_unity"]["score"], p["semantic_independence"]["score"])
            for p in result.passages
            if p["concept_unity"]["status"] == "ok"
        }

    full = drawn(evaluate(settings(mode="all"))[0])
    default = evaluate(settings(epsilon=1.0, round_focus_passages=3))[0]
    own_seed = evaluate(settings(epsilon=1.0, round_focus_passages=3, order_seed=0))[0]
    other = evaluate(settings(epsilon=1.0, round_focus_passages=3, order_seed=7))[0]
    # None is the run's seed (0 here): the same draw, record for record
    assert default.to_dict()["sampling"] == own_seed.to_dict()["sampling"]
    assert set(drawn(other)) != set(drawn(default))
    # every item drawn under either order scores what the full run gave it
    for result in (default, other):
        assert drawn(result) == {i: full[i] for i in drawn(result)}
    assert other.sampling["drawn"] == default.sampling["drawn"]


def test_settings_that_break_hopes_interval_are_refused_by_name():
    with pytest.raises(ConfigError, match=r"sampling\.mode sequential needs"):
        load_profile("reference", sampling={"mode": "sequential"})
    data = load_profile("paper").model_dump(mode="json")
    with pytest.raises(Exception, match="alpha"):
        HopeSettings.model_validate({**data, "sampling": {"mode": "sequential", "alpha": 1.5}})


def _state(hope_interval, exhausted=False):
    state = SequentialState(settings(epsilon=0.01), list(range(10)), list(range(4)))
    if exhausted:
        state.focus_drawn, state.segments_drawn = 10, 4
    state.history.append({"round": 1, "hope": list(hope_interval)})
    return state


def test_the_board_stops_a_chunking_once_every_comparison_is_decided():
    async def one_round(intervals):
        board = RoundBoard(list(intervals))
        verdicts = await asyncio.gather(
            *(board.report(name, _state(iv)) for name, iv in intervals.items())
        )
        return dict(zip(intervals, verdicts, strict=True))

    # a is above both others; b and c overlap, so each has a comparison still open
    verdicts = asyncio.run(one_round({"a": (0.8, 0.9), "b": (0.3, 0.5), "c": (0.4, 0.6)}))
    assert verdicts == {"a": "decided", "b": None, "c": None}
    assert decided((0.8, 0.9), (0.3, 0.5)) and not decided((0.3, 0.5), (0.4, 0.6))
    # alone on its board, a chunking stops only by its own reasons
    assert asyncio.run(one_round({"a": (0.1, 0.9)})) == {"a": None}


def test_chunkings_of_one_document_sample_in_lockstep_and_record_their_reasons():
    s = settings(epsilon=0.0, round_focus_passages=2, round_segments=2)
    llm, _ = make_llm(schema_responder)
    evaluator = HopeEvaluator(llm, HashingEmbedder(), s)
    halves = [DOC[: len(DOC) // 2], DOC[len(DOC) // 2 :]]
    chunkings = {"small": (PASSAGES, None), "halves": (halves, None)}
    results = asyncio.run(evaluator.aevaluate_chunkings(DOC, chunkings))
    assert set(results) == {"small", "halves"}
    # two passages are one round for "halves"; it stops exhausted or decided, never waits
    assert results["halves"].sampling["rounds"] == 4  # its 8 segments take four rounds
    assert results["halves"].sampling["stopped"] in {"exhausted", "decided"}
    rounds_small = results["small"].sampling["rounds"]
    assert results["small"].sampling["stopped"] in {"exhausted", "decided"}
    assert rounds_small >= 4
    again = asyncio.run(
        HopeEvaluator(make_llm(schema_responder)[0], HashingEmbedder(), s).aevaluate_chunkings(
            DOC, chunkings
        )
    )
    assert {k: r.to_dict()["sampling"] for k, r in again.items()} == {
        k: r.to_dict()["sampling"] for k, r in results.items()
    }


def test_the_hope_stage_scores_each_documents_chunkings_together_under_sequential():
    from hope.pipeline.score_step import score_pairs

    s = settings(epsilon=0.0, round_focus_passages=2, round_segments=2)
    docs = [
        {"doc_id": d, "domain": "test", "text": text, "title": d, "n_chars": len(text)}
        for d, text in (("d1", DOC), ("d2", DOC[: len(DOC) // 2]))
    ]
    chunkings = {
        "small": lambda text: [text[i : i + 120] for i in range(0, len(text), 120)],
        "halves": lambda text: [text[: len(text) // 2], text[len(text) // 2 :]],
    }
    records = [
        {
            "passage_id": f"{d['doc_id']}-{c}-{i}",
            "doc_id": d["doc_id"],
            "chunker": c,
            "index": i,
            "text": t,
        }
        for d in docs
        for c, cut in chunkings.items()
        for i, t in enumerate(cut(d["text"]))
    ]
    llm, _ = make_llm(schema_responder)
    scored = asyncio.run(
        score_pairs(HopeEvaluator(llm, HashingEmbedder(), s), docs, records, progress=False)
    )
    assert [(doc["doc_id"], chunker) for doc, chunker, _ in scored] == [
        ("d1", "halves"),
        ("d1", "small"),
        ("d2", "halves"),
        ("d2", "small"),
    ]
    alone = evaluate(s)[0]  # d1's small chunking without the other chunking on its board
    together = scored[1][2]
    assert together.sampling["stopped"] == "decided"
    assert alone.sampling["stopped"] == "exhausted"
    assert together.sampling["drawn"]["focus_passages"] < alone.sampling["drawn"]["focus_passages"]
