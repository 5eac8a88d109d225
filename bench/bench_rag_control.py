"""Context-recall control of the RAG side (issue 12): do the indicators move with retrieval?

For every question of the questions stage (data/questions/questions.jsonl, on the sample: one per
document), ragas' context recall is scored by the configured judge (params.yaml ``rag``, the same
code as the ragas stage: hope.rag.ragas_scoring) under two retrievals:

* ``reference``: the retrieved contexts are the question's reference contexts;
* ``other_document``: as many passages of another document (the next one in a seeded
  derangement of the documents), cut like the reference contexts (hope.rag.question_generation.
  excerpt_windows) and chosen as those sharing the most content words with the question (hard
  negatives).

A judge that reads the contexts must score ``reference`` higher. Recorded: per question both
values and their errors, the mean of each condition and of the paired difference with 95 %
bootstrap intervals over questions, wins/ties/losses, the judge's requests and wall time. The
same is recorded under ``judge_free`` for the reference-span recall (hope.rag.span_recall: the
share of the reference answer's characters inside the contexts, located in their documents), the
ground truth the judged indicator is checked against. The section is merged into
bench/results/validity.json under ``rag_context_recall_control`` (the rest of that file is left
as it is).

    python bench/bench_rag_control.py
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import time
from pathlib import Path
from typing import Any

import harness
from harness import REPO
from hope.core.io import read_jsonl
from hope.core.seeding import derive_seed
from hope.labelled.labelled_inputs import ChunkPassage, locate_passages
from hope.models.factory import open_cache
from hope.rag import gates, span_recall
from hope.rag.question_generation import excerpt_windows
from hope.rag.ragas_scoring import build_metrics, score_item
from hope.validity.ladder_stats import mean_with_ci
from workloads import rag_config

KEY = "rag_context_recall_control"
INDICATORS = ("context_recall", span_recall.NAME)


def other_document(doc_ids: list[str], seed: int) -> dict[str, str]:
    """A seeded derangement: every document is paired with a different one."""
    order = sorted(doc_ids)
    random.Random(derive_seed(seed, "rag-control")).shuffle(order)
    return {d: order[(i + 1) % len(order)] for i, d in enumerate(order)}


def negative_contexts(question: dict[str, Any], text: str, context_chars: int) -> list[str]:
    windows = excerpt_windows(text, context_chars)
    words = set(gates.content_words(question["question"]))
    ranked = sorted(
        enumerate(windows),
        key=lambda iw: (-len(words & set(gates.content_words(iw[1]))), iw[0]),
    )
    count = max(1, len(question["reference_contexts"]))
    return [w for _, w in ranked[:count]]


def located(
    doc_id: str, text: str, contexts: list[str]
) -> list[tuple[str, int | None, int | None]]:
    """``(doc_id, start, end)`` of each context in its document (hope.labelled's locator); no
    offsets for any of them if one cannot be placed, so the span recall is NaN with its reason."""
    spans, _why_not = locate_passages(text, [ChunkPassage(text=c) for c in contexts])
    if spans is None:
        return [(doc_id, None, None) for _ in contexts]
    return [(doc_id, start, end) for start, end in spans]


def paired(rows: list[dict[str, Any]], name: str, seed: int) -> dict[str, Any]:
    """Means of both conditions and of their paired difference for one indicator."""
    ref, other = f"reference:{name}", f"other_document:{name}"
    both = [r for r in rows if not (math.isnan(r[ref]) or math.isnan(r[other]))]
    diffs = [r[ref] - r[other] for r in both]
    return {
        "reference": mean_with_ci([r[ref] for r in rows], seed=seed),
        "other_document": mean_with_ci([r[other] for r in rows], seed=seed),
        "paired_difference": mean_with_ci(diffs, seed=seed),
        "wins": sum(d > 0 for d in diffs),
        "ties": sum(d == 0 for d in diffs),
        "losses": sum(d < 0 for d in diffs),
        "undefined": len(rows) - len(both),
        "reference_higher": bool(diffs) and sum(diffs) > 0,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=Path, default=REPO / "data/questions/questions.jsonl")
    parser.add_argument("--documents", type=Path, default=REPO / "data/prepared/documents.jsonl")
    parser.add_argument("--params", type=Path, default=REPO / "params.yaml")
    parser.add_argument("--cache", default=None)
    parser.add_argument("--out", type=Path, default=REPO / "bench/results/validity.json")
    args = parser.parse_args()
    bench_run = harness.start()
    for path in (args.questions, args.documents):
        if not path.is_file():
            parser.error(f"{path}: no such file (run the questions stage first)")
    questions = read_jsonl(args.questions, "questions file")
    documents = {d["doc_id"]: d for d in read_jsonl(args.documents, "documents file")}
    config, _profile = rag_config(args.params, {"ragas": {"metrics": ["context_recall"]}})
    from hope.pipeline import stage_support as runner
    from hope.rag import rag_models as models

    endpoint = models.role_endpoint(config, "judge")
    llm, caching, embeddings = runner.ragas_models(
        config, endpoint, open_cache(args.cache), purpose="ragas-metrics"
    )
    metrics = build_metrics(llm, embeddings, config.ragas)
    pairing = other_document(list(documents), config.seed)
    items = []
    for q in questions:
        other = pairing[q["doc_id"]]
        negatives = negative_contexts(q, documents[other]["text"], config.questions.context_chars)
        conditions = {
            "reference": (q["reference_contexts"], q["doc_id"]),
            "other_document": (negatives, other),
        }
        items.append((q, other, conditions))

    async def score_all() -> list[dict[str, Any]]:
        rows = []
        for q, other, conditions in items:
            row: dict[str, Any] = {
                "question_id": q["question_id"],
                "doc_id": q["doc_id"],
                "generator": q["generator"],
                "other_doc_id": other,
            }
            for name, (contexts, doc_id) in conditions.items():
                item = {"question_id": q["question_id"], "chunker": name, "answer": None}
                spans = located(doc_id, documents[doc_id]["text"], contexts)
                scored = await score_item(
                    {**item, "retrieved_contexts": contexts, "retrieved_spans": spans},
                    q,
                    metrics,
                    timeout_s=config.ragas.timeout_s,
                )
                for indicator in INDICATORS:
                    row[f"{name}:{indicator}"] = scored[indicator]
                    row[f"{name}:{indicator}_error"] = scored[f"{indicator}_error"]
            rows.append(row)
        return rows

    started = time.perf_counter()
    rows = asyncio.run(score_all())
    wall = time.perf_counter() - started
    section = {
        "what": (
            "ragas context recall when retrieval returns the reference context vs passages of "
            "another document (issue 12): a judge that reads the contexts scores the first higher"
        ),
        "questions": shown(args.questions),
        "n_questions": len(rows),
        "judge": endpoint.identity,
        "ragas_settings": {
            k: config.ragas.model_dump()[k] for k in ("few_shot_examples", "schema_bounds")
        },
        "negatives": "seeded derangement of documents; the windows of the other document "
        "sharing the most content words with the question",
        **paired(rows, "context_recall", config.seed),
        "judge_free": {
            "indicator": span_recall.NAME,
            "what": "share of the reference answer's characters inside the contexts (located in "
            "their documents); no judge",
            **paired(rows, span_recall.NAME, config.seed),
        },
        "per_question": rows,
        "judge_usage": caching.usage(),
        "wall_time_s": round(wall, 1),
        "repeats_note": "temperature 0 and a fixed seed: a rerun returns the same values (from "
        "the response cache); the intervals are bootstrap over questions",
    }
    # The section carries this run's provenance block; the rest of the file keeps its own.
    bench_run.merge_section(args.out, KEY, section)
    for label, part in (("context recall", section), (span_recall.NAME, section["judge_free"])):
        print(
            f"{label}: reference {part['reference']['mean']:.3f}, other document "
            f"{part['other_document']['mean']:.3f}; wins/ties/losses {part['wins']}/"
            f"{part['ties']}/{part['losses']}"
        )
    print(f"-> {args.out} [{KEY}]")
    return 0


def shown(path: Path) -> str:
    """``path`` relative to the repository when it lies inside it, else as given."""
    resolved = path.resolve()
    return str(resolved.relative_to(REPO)) if resolved.is_relative_to(REPO) else str(path)


if __name__ == "__main__":
    raise SystemExit(main())
