"""``hope labelled``: results on a tiny corpus, and bad input (exit 2, file and line
named, nothing written)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hope.cli.hope_command import main

CORPUS = "Cats purr softly. Dogs bark loudly. Birds sing at dawn."


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    monkeypatch.setenv("HOPE_CACHE", "off")  # keep embeddings in memory, not in the repo's cache
    corpus = tmp_path / "pets.md"
    corpus.write_text(CORPUS, encoding="utf-8")
    questions = tmp_path / "questions.jsonl"
    rows = [
        {
            "corpus": "pets",
            "question": "what purrs?",
            "references": [{"start": 0, "end": 17, "text": "Cats purr softly."}],
        },
        {
            "corpus": "other",
            "question": "skipped",
            "references": [{"start": 0, "end": 1, "text": "x"}],
        },
        {
            "question": "who sings at dawn?",
            "references": [{"start": 36, "end": 55, "text": "Birds sing at dawn."}],
        },
    ]
    questions.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    passages = tmp_path / "passages.jsonl"
    passages.write_text(
        json.dumps({"text": "Cats purr softly.", "start": 0, "end": 17})
        + "\n"
        + json.dumps({"text": "Dogs bark loudly."})
        + "\n"
        + json.dumps({"text": "Birds sing at dawn."})
        + "\n",
        encoding="utf-8",
    )
    return {
        "corpus": corpus,
        "questions": questions,
        "passages": passages,
        "output": tmp_path / "out.json",
    }


def _argv(files: dict[str, Path], *extra: str) -> list[str]:
    return [
        "labelled",
        "--corpus",
        str(files["corpus"]),
        "--questions",
        str(files["questions"]),
        "--passages",
        str(files["passages"]),
        "--embedder",
        "hashing",
        "--output",
        str(files["output"]),
        *extra,
    ]


def test_scores_every_question_of_the_corpus(files, capsys):
    assert main(_argv(files, "--k", "1", "--budget", "19", "--resamples", "50")) == 0
    result = json.loads(files["output"].read_text())
    assert result["status"] == "ok"
    assert result["n_questions"] == 2  # the line of corpus "other" is skipped and counted
    assert result["inputs"]["questions_of_other_corpora_skipped"] == 1
    # Each gold span is exactly one passage; hashing retrieval finds it by its words.
    assert result["summary"]["recall"]["mean"] == 1.0
    assert result["summary"]["iou"]["mean"] == 1.0
    assert "budget_recall" in capsys.readouterr().out


def _rewrite(path: Path, line: int, record: dict) -> None:
    lines = path.read_text().splitlines()
    lines[line - 1] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize(
    ("which", "line", "record", "message"),
    [
        (
            "questions",
            3,
            {"question": "q", "references": [{"start": 50, "end": 90, "text": "x"}]},
            "line 3, reference 0: reference span [50, 90) is out of range",
        ),
        (
            "questions",
            1,
            {"question": "q", "references": [{"start": 0, "end": 4, "text": "Dogs"}]},
            "line 1, reference 0: reference text does not match the corpus at [0, 4)",
        ),
        (
            "questions",
            3,
            {"question": "q", "references": [{"start": "0", "end": 4, "text": "C"}]},
            "line 3, reference 0: 'start' must be an integer",
        ),
        ("questions", 1, {"question": "q", "references": []}, "line 1: 'references' must be"),
        (
            "passages",
            2,
            {"text": "Dogs bark loudly.", "start": 0, "end": 17},
            "line 2: passage text does not match the corpus at [0, 17)",
        ),
        (
            "passages",
            1,
            {"text": "Cats purr softly.", "start": 0, "end": 999},
            "line 1: passage span [0, 999) is out of range",
        ),
        (
            "passages",
            1,
            {"text": "Cats purr softly.", "start": 0},
            "line 1: give both 'start' and 'end'",
        ),
    ],
)
def test_bad_input_exits_2_naming_file_and_line(files, capsys, which, line, record, message):
    _rewrite(files[which], line, record)
    assert main(_argv(files)) == 2
    err = capsys.readouterr().err
    assert message in err
    assert str(files[which]) in err
    assert not files["output"].exists()


def test_malformed_json_line(files, capsys):
    files["passages"].write_text('{"text": "Cats purr softly."}\n{"text": \n')
    assert main(_argv(files)) == 2
    assert f"passages file {files['passages']}, line 2: malformed JSON" in capsys.readouterr().err
    assert not files["output"].exists()


def test_no_question_for_the_corpus(files, capsys):
    _rewrite(
        files["questions"],
        3,
        {"corpus": "pets", "question": "q", "references": [{"start": 0, "end": 4, "text": "Cats"}]},
    )
    assert main(_argv(files, "--corpus-name", "nothing")) == 2
    assert "no questions for corpus 'nothing'" in capsys.readouterr().err


def test_unmatched_passage_is_bad_input_not_scored(files, capsys):
    _rewrite(files["passages"], 2, {"text": "Dogs are loud barkers."})
    assert main(_argv(files)) == 2
    err = capsys.readouterr().err
    assert f"passages file {files['passages']}: 1 of 3 passages" in err
    assert "not evaluable" in err
    assert not files["output"].exists()


def test_runs_as_the_installed_hope_command(files):
    completed = subprocess.run(
        [Path(sys.executable).parent / "hope", *_argv(files, "--resamples", "20")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert files["output"].is_file()


def test_a_corpus_slice_keeps_only_questions_inside_it(files):
    from hope.labelled import LabelledInputError
    from hope.labelled.labelled_files import read_questions

    sliced = CORPUS[:20]  # "Cats purr softly. Do": the dawn question's span ends at 55
    with pytest.raises(LabelledInputError, match="out of range"):
        read_questions(files["questions"], sliced, "pets")
    questions, skipped = read_questions(files["questions"], sliced, "pets", outside_slice_ok=True)
    assert [q.question for q in questions] == ["what purrs?"]
    assert skipped == 2  # the other corpus' line and the question past the slice
