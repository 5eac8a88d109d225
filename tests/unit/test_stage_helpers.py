"""The shared helpers of the stages: atomic writes, JSON-lines reading, record checks, bounded
concurrency and the stage runner."""

import asyncio
import json
import os
import re
import stat
from pathlib import Path

import pytest

from hope.core.concurrency import gather_bounded
from hope.core.io import InputFileError, atomic_path, read_jsonl, write_atomic
from hope.core.stage_records import check_documents, check_passages, check_questions, group_passages
from hope.pipeline.stage_support import StageOutput, read_records, run_stage


def _temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_write_atomic_streams_pieces_with_the_umask_mode(tmp_path: Path):
    target = tmp_path / "sub" / "out.jsonl"
    write_atomic(target, (f"{n}\n" for n in range(3)))
    assert target.read_text() == "0\n1\n2\n"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
    assert _temporaries(target.parent) == []


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path: Path):
    target = tmp_path / "out.txt"
    write_atomic(target, "complete\n")

    def pieces():
        yield "half"
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError, match="disk on fire"):
        write_atomic(target, pieces())
    assert target.read_text() == "complete\n"
    with pytest.raises(ValueError), atomic_path(target, suffix=".part") as tmp:
        tmp.write_text("never published")
        raise ValueError("checksum mismatch")
    assert target.read_text() == "complete\n"
    assert _temporaries(tmp_path) == []


def test_read_jsonl_names_file_and_line(tmp_path: Path):
    path = tmp_path / "docs.jsonl"
    path.write_text('{"a": 1}\n\n[1, 2]\n')
    with pytest.raises(InputFileError, match=r"documents file .*docs\.jsonl, line 3: expected"):
        read_jsonl(path, "documents file")
    path.write_text('{"a": 1}\n\n{"b": 2}\n')
    assert read_jsonl(path) == [{"a": 1}, {"b": 2}]
    # A missing input is an input error and, for callers that expect it, the OS error.
    with pytest.raises(
        FileNotFoundError, match=r"documents file .*absent\.jsonl: no such file"
    ) as exc:
        read_jsonl(tmp_path / "absent.jsonl", "documents file")
    assert isinstance(exc.value, InputFileError)


def test_record_checks_name_source_record_and_field():
    doc = {"doc_id": "d1", "text": "t", "domain": "news"}
    check_documents([doc, {**doc, "doc_id": "d2"}])
    with pytest.raises(ValueError, match=r"in\.jsonl: document #2 lacks field\(s\) \['domain'\]"):
        check_documents([doc, {"doc_id": "d2", "text": "t"}], "in.jsonl")
    with pytest.raises(ValueError, match="duplicate doc_id 'd1'"):
        check_documents([doc, doc])
    with pytest.raises(ValueError, match="document 'd1' has a non-string text"):
        check_documents([{**doc, "text": 3}])
    question = {"question_id": "q", "domain": "x", "doc_id": "d1", "question": "?", "reference": ""}
    with pytest.raises(ValueError, match="duplicate question_id 'q'"):
        check_questions([question, question])
    with pytest.raises(ValueError, match=r"passage #1 lacks field\(s\) \['domain'\]"):
        check_passages([{"passage_id": "p", "doc_id": "d1", "chunker": "c", "text": "t"}])


def test_group_passages_orders_by_index_and_rejects_strangers():
    passages = [
        {"passage_id": f"d::{c}::{i}", "doc_id": "d", "chunker": c, "index": i, "text": str(i)}
        for c in ("c2", "c1")
        for i in (10, 2, 1)
    ]
    grouped = group_passages(passages, {"d"})
    assert list(grouped) == [("d", "c2"), ("d", "c1")]  # first seen
    assert [p["index"] for p in grouped[("d", "c1")]] == [1, 2, 10]  # numeric, not text order
    with pytest.raises(ValueError, match="'d::c2::10' belongs to unknown document 'd'"):
        group_passages(passages, {"other"})


def test_gather_bounded_keeps_order_and_the_bound():
    in_flight = 0
    peak = 0

    async def work(n: int) -> int:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.001 * (10 - n))  # later items finish first
        in_flight -= 1
        return n * n

    assert asyncio.run(gather_bounded(work, range(10), limit=3)) == [n * n for n in range(10)]
    assert peak == 3
    peak = 0
    asyncio.run(gather_bounded(work, range(10)))
    assert peak == 10


def test_gather_bounded_propagates_the_first_error():
    async def work(n: int) -> int:
        if n == 2:
            raise ValueError("item 2 failed")
        return n

    with pytest.raises(ValueError, match="item 2 failed"):
        asyncio.run(gather_bounded(work, [0, 1, 2, 3], limit=2, progress="test"))


def test_gather_bounded_reads_a_generator_only_as_slots_free():
    taken = 0
    held = []  # items taken but not finished when each item is taken

    def items():
        nonlocal taken
        for n in range(12):
            taken += 1
            held.append(taken - finished)
            yield n

    finished = 0

    async def work(n: int) -> int:
        nonlocal finished
        await asyncio.sleep(0.001 * (n % 3))
        finished += 1
        return -n

    assert asyncio.run(gather_bounded(work, items(), limit=3, total=12)) == [-n for n in range(12)]
    assert max(held) == 3  # never more than the bound's worth of items built ahead


def test_gather_bounded_cancels_the_rest_after_an_error():
    started = []

    async def work(n: int) -> int:
        started.append(n)
        if n == 0:
            raise ValueError("item 0 failed")
        await asyncio.sleep(0.01)
        return n

    with pytest.raises(ValueError, match="item 0 failed"):
        asyncio.run(gather_bounded(work, iter(range(100)), limit=2))
    assert len(started) < 10  # the generator was not drained after the failure


def test_run_stage_writes_everything_or_nothing(tmp_path: Path, capsys):
    out = tmp_path / "out"

    def bad() -> StageOutput:
        read_records(tmp_path / "empty.jsonl", "questions")
        raise AssertionError("not reached")

    (tmp_path / "empty.jsonl").write_text("\n")
    assert run_stage("demo", bad) == 1
    assert capsys.readouterr().err == (
        f"demo: error: questions file {tmp_path / 'empty.jsonl'}: no questions\n"
    )
    assert not out.exists()

    def good() -> StageOutput:
        return StageOutput({out / "a.jsonl": ["x\n"], out / "b.csv": "h\n"}, "2 files", {"n": 2})

    assert run_stage("demo", good) == 0
    assert (out / "a.jsonl").read_text() == "x\n" and (out / "b.csv").read_text() == "h\n"
    # The wall time is logged, never written into the DVC output (the same bytes on every run).
    assert json.loads((out / "summary.json").read_text()) == {"n": 2}
    assert re.fullmatch(r"demo: 2 files \(\d+\.\d s\)\n", capsys.readouterr().err)


def test_run_timings_are_removed_at_any_depth_and_nothing_else():
    from hope.core.io import without_run_timings

    record = {
        "n": 2,
        "usage": {"llm": {"requests": 3, "latency_s": 0.4}, "wall_time_s": 1.0},
        "items": [{"wall_s": 2, "kept": [1, {"latency_s": 1, "x": None}]}],
        "embedder_process_totals": {"texts_computed": 4},
    }
    assert without_run_timings(record) == {
        "n": 2,
        "usage": {"llm": {"requests": 3}},
        "items": [{"kept": [1, {"x": None}]}],
    }
    assert record["usage"]["llm"]["latency_s"] == 0.4  # the input is not modified
