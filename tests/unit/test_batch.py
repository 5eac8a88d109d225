"""Batch engines: export rounds, answer them with the simulated server, import, score from cache."""

import json
from pathlib import Path

import httpx
import pytest

from hope.cli.hope_command import main
from hope.core.response_cache import ResponseCache
from hope.models.llm import CACHE_NAMESPACE
from hope.pipeline.batch_engine import (
    BATCH_NAMESPACE,
    PENDING,
    attempt_seed,
    import_results,
    read_manifest,
)
from hope.testing import SimulatedServer, schema_responder

DOCS = [
    "The ferry leaves the harbour at seven. It crosses the bay in forty minutes. "
    "Tickets cost four euros. Bicycles travel free on weekdays. The last boat returns at nine. "
    "In winter the timetable has two crossings fewer. Dogs must stay on a leash on deck.",
    "The orchard grows twelve kinds of apple. Picking starts in late August. "
    "The cider press runs every Saturday in October. Visitors may pick their own fruit. "
    "A small shop sells juice and honey. The orchard closes for the season in November.",
]
ROUND1_KINDS = {"concept_statements", "question_generation", "quadruple_generation"}
LATER_KINDS = {"answer_question", "truth_choice"}


@pytest.fixture(scope="module")
def server():
    bodies: list[dict] = []

    def recording(body):
        bodies.append(body)
        return schema_responder(body)

    with SimulatedServer(latency_s=0.0, responder=recording) as srv:
        srv.bodies = bodies
        yield srv


@pytest.fixture
def inputs(tmp_path):
    args = []
    for i, doc in enumerate(DOCS):
        (tmp_path / f"doc{i}.txt").write_text(doc, encoding="utf-8")
        cut = doc.index(". ", len(doc) // 2) + 2
        lines = [{"passage_id": f"p{j}", "text": t} for j, t in enumerate([doc[:cut], doc[cut:]])]
        (tmp_path / f"passages{i}.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8"
        )
        args += ["--document", str(tmp_path / f"doc{i}.txt")]
        args += ["--passages", str(tmp_path / f"passages{i}.jsonl")]
    return args


def overrides(server, cache_path):
    return [
        "llm=llamacpp_server",
        f"llm.base_url={server.base_url}",
        "embedder=hashing",
        f"cache.path={cache_path}",
        "hope.progress=false",
        "hope.information_preservation.n_segments=2",
    ]


def answer_round(server, round_dir: Path, out: Path, fmt: str = "openai") -> int:
    """The batch engine: each request body POSTed to the simulated server, answers written in
    the engine's output format."""
    lines = []
    for path in sorted(round_dir.glob("requests-*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            request = json.loads(line)
            assert request["method"] == "POST" and request["url"] == "/v1/chat/completions"
            reply = httpx.post(server.base_url + "/chat/completions", json=request["body"])
            envelope = {
                "id": f"batch_req_{number}",
                "custom_id": request["custom_id"],
                "response": {
                    "status_code": reply.status_code,
                    "request_id": f"req_{number}",
                    "body": reply.json(),
                },
                "error": None,
            }
            if fmt == "vllm":  # vLLM's ChatCompletionResponse carries more fields
                envelope["id"] = f"vllm-{number}"
                envelope["response"]["body"]["prompt_logprobs"] = None
            lines.append(json.dumps(envelope))
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)


def score(inputs, server, cache_path, out, capsys, extra=()):
    doc, passages = inputs[1], inputs[3]
    code = main(
        [
            "score",
            "--document",
            doc,
            "--passages",
            passages,
            "--output",
            str(out),
            *overrides(server, cache_path),
            *extra,
        ]
    )
    assert code == 0, capsys.readouterr().err
    return json.loads(out.read_text())


def run_rounds(inputs, server, tmp_path, capsys, fmt="openai", extra=()):
    cache = tmp_path / "batch.sqlite"
    kinds_per_round = []
    for number in range(1, 10):
        round_dir = tmp_path / f"round{number}"
        code = main(
            [
                "batch",
                "export",
                "--out",
                str(round_dir),
                *inputs,
                *overrides(server, cache),
                *extra,
            ]
        )
        assert code == 0, capsys.readouterr().err
        summary = json.loads((round_dir / "summary.json").read_text())
        if summary["done"]:
            return cache, kinds_per_round, summary
        kinds_per_round.append(set(summary["exported_by_kind"]))
        results = tmp_path / f"results{number}.jsonl"
        answered = answer_round(server, round_dir, results, fmt)
        assert answered == summary["exported"]
        assert (
            main(
                [
                    "batch",
                    "import",
                    "--round",
                    str(round_dir),
                    "--results",
                    str(results),
                    *overrides(server, cache),
                    *extra,
                ]
            )
            == 0
        )
        assert f"{answered} imported" in capsys.readouterr().out
    raise AssertionError("rounds did not converge")


@pytest.mark.slow  # about 10 s: several rounds over two documents, then two scorings
def test_rounds_then_score_from_cache_equal_a_direct_run(inputs, server, tmp_path, capsys):
    cache, kinds_per_round, final = run_rounds(inputs, server, tmp_path, capsys)
    # Round 1 holds what the inputs determine; answers and choices wait for it.
    assert kinds_per_round[0] == ROUND1_KINDS
    assert set().union(*kinds_per_round[1:]) >= LATER_KINDS
    assert final["exported"] == 0 and final["waiting"] == 0 and final["pairs"] == 2
    exported = []
    for number in range(1, len(kinds_per_round) + 1):
        for path in sorted((tmp_path / f"round{number}").glob("requests-*.jsonl")):
            exported += [json.loads(line)["body"] for line in path.read_text().splitlines()]
    assert not any(PENDING in json.dumps(body) for body in exported)

    before = server.requests
    from_batch = score(inputs, server, cache, tmp_path / "batch.json", capsys)
    assert server.requests == before  # zero network requests: everything came from the cache
    assert from_batch["usage"]["llm"]["requests"] == 0

    server.bodies.clear()
    direct = score(inputs, server, tmp_path / "direct.sqlite", tmp_path / "direct.json", capsys)
    assert direct["usage"]["llm"]["requests"] > 0
    for name in ("hope", "concept_unity", "semantic_independence", "information_preservation"):
        assert from_batch[name] == direct[name], name
    assert from_batch["counts"] == direct["counts"]
    # The exported bodies are exactly what the live client sent for this document.
    sent = {json.dumps(b, sort_keys=True) for b in server.bodies}
    assert sent <= {json.dumps(b, sort_keys=True) for b in exported}


SEQUENTIAL = (
    "hope.sampling.mode=sequential",
    "hope.sampling.round_focus_passages=1",
    "hope.sampling.round_segments=1",
    "hope.sampling.epsilon=0",
)


@pytest.mark.slow  # about 10 s: the sampling rounds of one document, each over export rounds
def test_sequential_sampling_exports_round_by_round_and_only_what_a_live_run_sends(
    inputs, server, tmp_path, capsys
):
    # One focus passage and one segment per sampling round: a round's items are exported only
    # once the previous round's answers are imported, so nothing is asked that a live run
    # would not ask, and the result from the cache is the live run's.
    one_doc = inputs[:4]
    cache, kinds_per_round, final = run_rounds(one_doc, server, tmp_path, capsys, extra=SEQUENTIAL)
    assert final["exported"] == 0 and final["waiting"] == 0
    exported = []
    for number in range(1, len(kinds_per_round) + 1):
        for path in sorted((tmp_path / f"round{number}").glob("requests-*.jsonl")):
            exported += [json.loads(line)["body"] for line in path.read_text().splitlines()]
    from_batch = score(one_doc, server, cache, tmp_path / "b.json", capsys, SEQUENTIAL)
    assert from_batch["usage"]["llm"]["requests"] == 0
    assert from_batch["sampling"]["stopped"] == "exhausted"
    server.bodies.clear()
    direct = score(one_doc, server, tmp_path / "d.sqlite", tmp_path / "d.json", capsys, SEQUENTIAL)
    assert from_batch["sampling"] == direct["sampling"]
    assert from_batch["hope"] == direct["hope"]
    sent = sorted(json.dumps(b, sort_keys=True) for b in server.bodies)
    assert sorted(json.dumps(b, sort_keys=True) for b in exported) == sent
    # more export rounds than the full run's: the second sampling round waits for the first
    assert len(kinds_per_round) > 3


@pytest.mark.slow  # about 5 s: every round of one document
def test_vllm_output_format_imports_the_same(inputs, server, tmp_path, capsys):
    _cache, kinds_per_round, final = run_rounds(inputs[:4], server, tmp_path, capsys, fmt="vllm")
    assert final["done"] and kinds_per_round[0] == ROUND1_KINDS


def export_one_round(inputs, server, tmp_path, capsys, cache):
    round_dir = tmp_path / "r"
    assert (
        main(
            [
                "batch",
                "export",
                "--out",
                str(round_dir),
                *inputs[:4],
                "--max-per-file",
                "3",
                *overrides(server, cache),
            ]
        )
        == 0
    )
    capsys.readouterr()
    return round_dir


def test_bad_lines_are_counted_and_never_cached(inputs, server, tmp_path, capsys):
    cache_path = tmp_path / "c.sqlite"
    round_dir = export_one_round(inputs, server, tmp_path, capsys, cache_path)
    entries, _ = read_manifest(round_dir)
    files = sorted(round_dir.glob("requests-*.jsonl"))
    assert len(files) == -(-len(entries) // 3)  # split at --max-per-file
    answer_round(server, round_dir, tmp_path / "good.jsonl")
    good = [json.loads(line) for line in (tmp_path / "good.jsonl").read_text().splitlines()]
    ok, failed, invalid, cut, *_ = good
    ok["response"]["body"]["system_fingerprint"] = "fp_batch"  # as OpenAI's Batch API sends
    failed["response"] = {"status_code": 500, "request_id": "x", "body": {"error": "boom"}}
    invalid["response"]["body"]["choices"][0]["message"]["content"] = '{"statements": 3}'
    cut["response"]["body"]["choices"][0]["finish_reason"] = "length"
    unknown = {**ok, "custom_id": "not-a-key"}
    errored = {
        "id": "e",
        "custom_id": ok["custom_id"],
        "response": None,
        "error": {"code": "batch_expired", "message": "expired"},
    }
    lines = [ok, failed, invalid, cut, unknown, errored]
    (tmp_path / "mixed.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    cache = ResponseCache(cache_path)
    summary = import_results(cache, round_dir, [tmp_path / "mixed.jsonl"], max_retries=4)
    assert summary.imported == 1 and summary.invalid == 2
    assert summary.errors == {"status 500": 1, "unknown custom_id": 1, "duplicate custom_id": 1}
    stored = cache.get_json(CACHE_NAMESPACE, ok["custom_id"])
    assert stored["content"] and stored["fingerprint"] == "fp_batch"  # kept, as the live client
    for line in (failed, invalid, cut):
        assert cache.get_json(CACHE_NAMESPACE, line["custom_id"]) is None
    assert cache.get_json(BATCH_NAMESPACE, invalid["custom_id"]) == {"invalid": 1}

    # The next round asks the failed request again as it was, the invalid ones with the seed
    # the live client derives for its first retry.
    again = export_one_round(inputs, server, tmp_path, capsys, cache_path)
    next_entries, _ = read_manifest(again)
    assert ok["custom_id"] not in next_entries
    assert next_entries[failed["custom_id"]]["attempt"] == 0
    for line in (invalid, cut):
        entry = next_entries[line["custom_id"]]
        first = entries[line["custom_id"]]
        assert entry["attempt"] == 1
        assert entry["seed"] == attempt_seed(first["seed"], 1) != first["seed"]


def test_invalid_past_max_retries_is_cached_as_failure(inputs, server, tmp_path, capsys):
    cache_path = tmp_path / "c.sqlite"
    round_dir = export_one_round(inputs, server, tmp_path, capsys, cache_path)
    answer_round(server, round_dir, tmp_path / "out.jsonl")
    first = json.loads((tmp_path / "out.jsonl").read_text().splitlines()[0])
    first["response"]["body"]["choices"][0]["message"]["content"] = "not json"
    (tmp_path / "bad.jsonl").write_text(json.dumps(first) + "\n")
    cache = ResponseCache(cache_path)
    summary = import_results(cache, round_dir, [tmp_path / "bad.jsonl"], max_retries=0)
    assert summary.invalid == 1 and summary.failures_cached == 1 and summary.imported == 0
    assert "invalid response" in cache.get_json(CACHE_NAMESPACE, first["custom_id"])["error"]


def test_import_names_a_missing_round(tmp_path):
    with pytest.raises(ValueError, match=r"manifest\.jsonl: not found"):
        import_results(ResponseCache(None), tmp_path, [], max_retries=1)


def test_export_argument_errors(tmp_path, capsys):
    code = main(["batch", "export", "--out", str(tmp_path), "--document", "a.txt"])
    assert code == 2
    assert "--document and --passages" in capsys.readouterr().err
