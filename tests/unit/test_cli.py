"""`hope score`: happy path against a local simulated server, and every bad-input rule."""

import json

import pytest

from hope.cli.hope_command import main
from hope.testing import SimulatedServer
from tests.unit.score_files import write_score_inputs

DOC = (
    "The ferry leaves the harbour at seven. It crosses the bay in forty minutes. "
    "Tickets cost four euros. Bicycles travel free on weekdays. The last boat returns at nine."
)
PASSAGES = [DOC[:80], DOC[80:]]


@pytest.fixture
def files(tmp_path):
    doc, passages = write_score_inputs(tmp_path, DOC, PASSAGES)
    return doc, passages, tmp_path


@pytest.fixture(scope="module")
def server():
    with SimulatedServer(latency_s=0.0) as srv:
        yield srv


def overrides(server, tmp_path):
    return [
        "llm=llamacpp_server",
        f"llm.base_url={server.base_url}",
        "embedder=hashing",
        f"cache.path={tmp_path / 'cache.sqlite'}",
        "hope.progress=false",
        "hope.information_preservation.n_segments=2",
    ]


def test_score_writes_the_result_json(files, server, capsys):
    doc, passages, tmp = files
    out = tmp / "out" / "result.json"
    code = main(
        [
            "score",
            "--document",
            str(doc),
            "--passages",
            str(passages),
            "--output",
            str(out),
            *overrides(server, tmp),
        ]
    )
    assert code == 0
    data = json.loads(out.read_text())
    for key in (
        "hope",
        "concept_unity",
        "semantic_independence",
        "information_preservation",
        "passages",
        "failures",
        "usage",
    ):
        assert key in data
    assert [p["passage_id"] for p in data["passages"]] == ["p0", "p1"]
    assert data["usage"]["llm"]["requests"] > 0
    assert data["settings"]["profile"] == "paper"
    assert "wrote" in capsys.readouterr().out


def test_score_prints_json_to_stdout_and_warm_rerun_makes_no_requests(files, server, capsys):
    doc, passages, tmp = files
    args = ["score", "--document", str(doc), "--passages", str(passages), *overrides(server, tmp)]
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(args) == 0
    second = json.loads(capsys.readouterr().out)
    assert second["usage"]["llm"]["requests"] == 0
    assert second["usage"]["reused_result"] is True  # the kept result, read back
    assert main([*args, "cache.reuse_results=false"]) == 0
    third = json.loads(capsys.readouterr().out)
    assert third["usage"]["llm"]["requests"] == 0
    assert third["usage"]["llm"]["cache_hits"] > 0  # recomputed from the cached answers
    assert third["passages"] == first["passages"] and third["segments"] == first["segments"]
    for key in ("hope", "concept_unity", "semantic_independence", "information_preservation"):
        assert first[key] == second[key]


def test_a_passage_not_in_the_document_is_a_warning_counted_and_printed_once(files, server, capsys):
    doc, passages, tmp = files
    rows = [
        {"passage_id": "p0", "text": PASSAGES[0]},
        {"passage_id": "stray", "text": "A passage from another document about goats."},
        {"passage_id": "p1", "text": "  " + PASSAGES[1].replace(" ", "\n  ") + "\n"},
        {"passage_id": "stray2", "text": "The ferry leaves the harbour at eight."},
    ]
    passages.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp / "result.json"
    args = ["score", "--document", str(doc), "--passages", str(passages), "--output", str(out)]
    assert main([*args, *overrides(server, tmp)]) == 0
    # p1 only differs in whitespace: it is the document's text, re-wrapped
    expected = (
        "2 of 4 passages do not occur in the document (whitespace aside): 'stray', 'stray2'; "
        "they are scored as given"
    )
    assert json.loads(out.read_text())["warnings"] == [expected]
    err = capsys.readouterr().err
    assert err.count("do not occur in the document") == 1
    assert f"warning: {expected}" in err


def test_passages_found_in_the_document_give_no_warning(files, server, capsys):
    from hope.core.evaluator import absent_passages

    doc, passages, tmp = files
    args = ["score", "--document", str(doc), "--passages", str(passages)]
    assert main([*args, *overrides(server, tmp)]) == 0
    assert json.loads(capsys.readouterr().out)["warnings"] == []
    # overlapping, reordered and repeated passages all occur
    text = "one two. three four. one two."
    assert absent_passages(text, ["two. three", "one two.", "one two.", "one two.", "four."]) == []
    assert absent_passages(text, ["one  two.\nthree", "four. five", "two"]) == [1]


def test_reference_profile_by_override(files, server, capsys):
    doc, passages, tmp = files
    args = [
        "score",
        "--document",
        str(doc),
        "--passages",
        str(passages),
        *overrides(server, tmp),
        "hope=reference",
    ]
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["settings"]["profile"] == "reference"


@pytest.mark.parametrize(
    ("doc_bytes", "passages_text", "message"),
    [
        (b"   \n", '{"text": "a"}\n', "document is empty"),
        (b"\xff\xfe bad", '{"text": "a"}\n', "not valid UTF-8"),
        (DOC.encode(), '{"text": "a"}\n{"text": broken}\n', "line 2: malformed JSON"),
        (DOC.encode(), '{"text": "a"}\n["list"]\n', "line 2: expected a JSON object"),
        (DOC.encode(), '{"id": 3}\n', "line 1: no 'text' string"),
        (DOC.encode(), '{"text": "  "}\n', "line 1: the passage text is empty"),
        (DOC.encode(), "\n\n", "no passages"),
        (DOC.encode(), '{"text": "a", "id": 1}\n{"text": "b", "id": 1}\n', "not unique"),
    ],
)
def test_bad_input_fails_clearly_and_writes_nothing(
    tmp_path, capsys, doc_bytes, passages_text, message
):
    doc = tmp_path / "doc.txt"
    doc.write_bytes(doc_bytes)
    passages = tmp_path / "p.jsonl"
    passages.write_text(passages_text)
    out = tmp_path / "result.json"
    code = main(
        [
            "score",
            "--document",
            str(doc),
            "--passages",
            str(passages),
            "--output",
            str(out),
            "embedder=hashing",
            "llm.base_url=http://127.0.0.1:9/v1",
            "llm=llamacpp_server",
        ]
    )
    assert code == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_missing_file_is_named(tmp_path, capsys):
    code = main(["score", "--document", str(tmp_path / "nope.txt"), "--passages", "x.jsonl"])
    assert code == 2
    assert "nope.txt: no such file" in capsys.readouterr().err


def test_bad_override_is_a_configuration_error(files, capsys):
    doc, passages, _ = files
    code = main(["score", "--document", str(doc), "--passages", str(passages), "llm=nonexistent"])
    assert code == 2
    assert "configuration error" in capsys.readouterr().err


def test_invalid_setting_value_is_reported(files, capsys):
    doc, passages, _ = files
    code = main(
        [
            "score",
            "--document",
            str(doc),
            "--passages",
            str(passages),
            "hope.aggregation.clip=sometimes",
        ]
    )
    assert code == 2
    assert "clip" in capsys.readouterr().err


def test_the_readme_exit_code_table_lists_the_codes_the_commands_use():
    """The table under "Exit codes" in the README: one row per status the commands return, and
    each row names the cases the tests above and tests/unit/test_backend_errors.py check."""
    from pathlib import Path

    from hope.models.preflight import BACKEND_EXIT_CODE

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    table = readme.split("**Exit codes.**", 1)[1].split("\n\n", 2)[1]
    # "| 0 | hope's case | hope-run's case |": the code, then the command line's case
    rows = {
        int(line.split("|")[1]): line.split("|")[2]
        for line in table.splitlines()[2:]
        if line.startswith("| ")
    }
    assert sorted(rows) == [0, 1, 2, BACKEND_EXIT_CODE]
    assert "bad input" in rows[2] and "not in the corpus" in rows[2]
    assert "backend cannot answer" in rows[BACKEND_EXIT_CODE]
    assert "every LLM item failed" in rows[BACKEND_EXIT_CODE]
    assert "excluded" in rows[0]
